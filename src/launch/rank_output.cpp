#include "launch/rank_output.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

namespace chorus::launch {

void write_all_fd(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the reader went away: the rank's output is dropped, the job goes on
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return out;
}

void MergedLines::add(int rank, std::string line, Clock::time_point now) {
  for (Pending& p : pending_)
    if (!p.ranks.empty() && p.text == line && std::find(p.ranks.begin(), p.ranks.end(), rank) == p.ranks.end()) {
      p.ranks.push_back(rank);
      return;
    }
  pending_.push_back({std::move(line), {rank}, now});
}

void MergedLines::note(std::string line, Clock::time_point now) { pending_.push_back({std::move(line), {}, now}); }

void MergedLines::flush(Clock::time_point now, bool all) {
  std::size_t n = 0;
  std::string out;
  while (n < pending_.size() && (all || now - pending_[n].since >= window_)) {
    const Pending& p = pending_[n];
    out += p.ranks.empty() ? p.text + "\n" : fmt::format("[{}] {}\n", rank_ranges(p.ranks), p.text);
    ++n;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  write_all_fd(fd_, out.data(), out.size());
}

bool reports_import_failure(const std::string& line) {
  return line.find("ModuleNotFoundError") != std::string::npos || line.find("ImportError") != std::string::npos ||
         line.find("chorus: the runtime is not available") != std::string::npos;
}

void RankStream::forward(bool all) {
  if (capture != nullptr) {
    capture->append(partial);
    partial.clear();
    return;
  }
  std::string out;
  std::size_t begin = 0;
  const auto now = MergedLines::Clock::now();
  for (;;) {
    std::size_t nl = partial.find('\n', begin);
    if (nl == std::string::npos) {
      if (partial.size() - begin >= kTagMaxLine)
        nl = begin + kTagMaxLine - 1;
      else if (all && begin < partial.size())
        nl = partial.size() - 1;
      else
        break;
    }
    const std::size_t end = partial[nl] == '\n' ? nl : nl + 1;  // the line without its newline
    if (import_failure != nullptr && !*import_failure)
      *import_failure = reports_import_failure(partial.substr(begin, end - begin));
    if (merged != nullptr) {
      merged->add(rank, partial.substr(begin, end - begin), now);
    } else {
      out += tag;
      out.append(partial, begin, end - begin);
      out += '\n';
    }
    begin = nl + 1;
  }
  partial.erase(0, begin);
  write_all_fd(target, out.data(), out.size());
}

void RankStream::drain() {
  for (int i = 0; i < 1024 && fd >= 0; ++i) {  // bounded: a process the rank left may keep writing
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0 || !pump()) break;
  }
}

bool RankStream::pump() {
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n > 0) {
    partial.append(buf, static_cast<std::size_t>(n));
    forward(false);
  } else {
    forward(true);
    ::close(fd);
    fd = -1;
  }
  return n > 0;
}

}  // namespace chorus::launch
