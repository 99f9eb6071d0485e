#include "launch/job_dumps.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "core/error.h"
#include "diagnose/diagnosis.h"
#include "diagnose/dump_set.h"
#include "diagnose/launcher_record.h"

namespace chorus::launch {

namespace fs = std::filesystem;

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr const char* kBeaconPrefix = "chorus-beacons-";

// The beacon directories of launchers that died without removing theirs (SIGKILL):
// chorus-beacons-<pid>-XXXXXX whose pid is gone. A live launcher's pid exists, so its directory
// stays; one whose pid was reused stays too, until that process is gone.
void remove_stale_beacon_dirs(const std::string& tmp) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kBeaconPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + std::strlen(kBeaconPrefix), nullptr, 10);
    std::error_code rm;
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), rm);
  }
}

// A private directory for the beacons: $TMPDIR (else /tmp)/chorus-beacons-<pid>-XXXXXX; "" if
// it cannot be made (said).
std::string make_beacon_dir() {
  const char* env = std::getenv("TMPDIR");
  const std::string tmp = env != nullptr && *env != '\0' ? env : "/tmp";
  remove_stale_beacon_dirs(tmp);
  std::string templ = fmt::format("{}/{}{}-XXXXXX", tmp, kBeaconPrefix, ::getpid());
  if (::mkdtemp(templ.data()) == nullptr) {
    std::fprintf(stderr, "chorus launch: cannot make a directory for the ranks' beacons (%s): no stall watch\n",
                 templ.c_str());
    return {};
  }
  return templ;
}

// chorus-dumps/<UTC yyyymmdd-hhmmss>-<run id> under the current directory, absolute (ranks may
// change directory).
std::string default_dump_dir(const std::string& run_id) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  // A process that runs several jobs (the real studies) numbers the second and later ones.
  static std::atomic<int> jobs{0};
  const int n = jobs.fetch_add(1);
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  return (cwd / "chorus-dumps" / (std::string(stamp) + "-" + run_id + (n > 0 ? fmt::format("-{}", n) : ""))).string();
}

// `/proc/PID/stat`'s state letter, '?' when it cannot be read.
char process_state(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

}  // namespace

JobDiagnostics::JobDiagnostics(const LaunchOptions& options, const std::string& run_id)
    : run_id_(run_id), stall_timeout_s_(options.stall_timeout_s) {
  beacon_dir_ = make_beacon_dir();
  const char* user_dir = std::getenv("CHORUS_RT_DUMP");
  // Set but empty: no flight records (the stall watch still stops a stalled job).
  dump_dir_ = user_dir == nullptr ? default_dump_dir(run_id) : std::string(user_dir);
  dump_dir_ours_ = user_dir == nullptr;
  const auto ranks = static_cast<std::size_t>(options.ranks);
  statuses_.resize(ranks);
  asked_.assign(ranks, false);
  if (!beacon_dir_.empty()) watch_.emplace(beacon_dir_, ranks, stall_timeout_s_);
  started_at_ = std::time(nullptr);
}

JobDiagnostics::~JobDiagnostics() {
  std::error_code ec;
  if (!beacon_dir_.empty()) fs::remove_all(beacon_dir_, ec);
  if (dump_dir_ours_ && fs::is_directory(dump_dir_, ec) && fs::is_empty(dump_dir_, ec)) {
    fs::remove(dump_dir_, ec);
    const fs::path parent = fs::path(dump_dir_).parent_path();
    if (fs::is_empty(parent, ec)) fs::remove(parent, ec);
  }
}

std::vector<std::string> JobDiagnostics::environment() const {
  std::vector<std::string> env;
  if (!beacon_dir_.empty()) env.push_back("CHORUS_RT_BEACON=" + beacon_dir_);
  if (dump_dir_ours_ && !dump_dir_.empty()) env.push_back("CHORUS_RT_DUMP=" + dump_dir_);
  return env;
}

bool JobDiagnostics::stalled(Clock::time_point now) { return watch_ && watch_->poll(now); }

void JobDiagnostics::reaped(std::size_t rank, int status) {
  if (rank < statuses_.size()) statuses_[rank] = status;
}

bool JobDiagnostics::dumped(std::size_t rank) const {
  struct stat st {};
  const std::string path = fmt::format("{}/rank-{}.json", dump_dir_, rank);
  return ::stat(path.c_str(), &st) == 0 && st.st_mtime >= started_at_;
}

bool JobDiagnostics::request(const std::string& reason, int failed_rank) {
  if (requested_ || !watch_ || dump_dir_.empty()) return false;
  watch_->refresh();
  if (!watch_->any_beacon()) return false;  // no rank runs chorus's runtime: nothing to ask
  // Made only now, so that a job that ends well leaves nothing behind (a rank that dumps on
  // its own makes it too).
  std::error_code ec;
  fs::create_directories(dump_dir_, ec);
  if (ec) {
    std::fprintf(stderr, "chorus launch: cannot make the directory for flight records %s: %s\n", dump_dir_.c_str(),
                 ec.message().c_str());
    return false;
  }
  reason_ = reason;
  failed_rank_ = failed_rank;
  requested_ = true;
  const auto now = Clock::now();
  if (reason == "rank_failure") {
    settling_ = true;
    settle_until_ = now + kSettle;
    seen_.assign(pids_.size(), Seen{});
    deadline_ = settle_until_ + kDumpWait;
    return true;
  }
  signal_ranks(now);
  return true;
}

void JobDiagnostics::signal_ranks(Clock::time_point now) {
  settling_ = false;
  deadline_ = now + kDumpWait;
  for (std::size_t r = 0; r < pids_.size(); ++r)
    if (pids_[r] > 0 && !statuses_[r] && !dumped(r) && can_signal(r)) asked_[r] = ::kill(pids_[r], SIGUSR1) == 0;
}

bool JobDiagnostics::settled(Clock::time_point now) {
  watch_->refresh();
  bool all = true;
  for (std::size_t r = 0; r < pids_.size(); ++r) {
    const auto& b = watch_->readings()[r];
    if (pids_[r] <= 0 || statuses_[r] || dumped(r) || !b) continue;  // gone, dumped, or nothing to ask
    Seen& s = seen_[r];
    const auto place = static_cast<std::int64_t>(b->place);
    if (b->started != s.started || b->ended != s.ended || place != s.place) s = {b->started, b->ended, place, now};
    // Waiting where it will stay: in a call, or in finalize, with nothing started or ended for
    // kStill. A rank outside chorus may be about to enter its next call: not settled.
    const bool waits = b->in_call() || b->place == rt::RankPlace::kInFinalize;
    if (!(waits && now - s.since >= kStill)) all = false;
  }
  return all;
}

bool JobDiagnostics::can_signal(std::size_t rank) const {
  // Read again right before the signal: a rank still starting has no SIGUSR1 handler yet, one
  // finalized has none any more (the default action would end it).
  const auto b = rt::read_beacon(rt::beacon_path(beacon_dir_, static_cast<int>(rank)));
  return b && b->place != rt::RankPlace::kFinalized && b->place != rt::RankPlace::kStarting;
}

bool JobDiagnostics::collecting(Clock::time_point now) {
  if (!requested_ || written_) return false;
  if (settling_) {
    if (now >= settle_until_) {
      signal_ranks(now);
    } else if (now >= next_look_) {  // the beacons read every 50 ms, not at every turn of the loop
      next_look_ = now + std::chrono::milliseconds(50);
      if (settled(now)) signal_ranks(now);
    }
    return true;
  }
  bool all_in = true;
  for (std::size_t r = 0; r < asked_.size(); ++r)
    if (asked_[r] && !statuses_[r] && !dumped(r)) all_in = false;
  if (!all_in && now < deadline_) return true;
  write_launcher_record();
  return false;
}

void JobDiagnostics::write_launcher_record() {
  written_ = true;
  diagnose::LauncherRecord rec;
  rec.job = run_id_;
  rec.reason = reason_;
  rec.stall_timeout_s = stall_timeout_s_;
  rec.failed_rank = failed_rank_;
  rec.written_ns = monotonic_ns();
  watch_->refresh();
  for (std::size_t r = 0; r < pids_.size(); ++r) {
    diagnose::LauncherRank x;
    x.rank = static_cast<int>(r);
    x.pid = pids_[r];
    if (const auto& s = statuses_[r]; s && WIFSIGNALED(*s)) {
      x.state = "killed";
      x.signal = WTERMSIG(*s);
    } else if (s) {
      x.state = "exited";
      x.exit_status = WIFEXITED(*s) ? WEXITSTATUS(*s) : 0;
    } else {
      const char st = pids_[r] > 0 ? process_state(pids_[r]) : '?';
      x.state = st == 'T' || st == 't' ? "stopped" : st == 'Z' ? "exited" : "running";
    }
    x.dumped = dumped(r);
    if (const auto& b = watch_->readings()[r])
      x.beacon = diagnose::BeaconSnapshot{rt::to_string(b->place), b->since_ns, b->started, b->ended};
    rec.ranks.push_back(std::move(x));
  }
  const std::string path = dump_dir_ + "/" + diagnose::kLauncherFile;
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << diagnose::to_json(rec).dump(2) << "\n";
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) std::fprintf(stderr, "chorus launch: cannot write %s: %s\n", path.c_str(), ec.message().c_str());
}

void JobDiagnostics::report() {
  if (!requested_) return;
  if (!written_) write_launcher_record();
  std::string text;
  try {
    text = diagnose::to_text(diagnose::diagnose(diagnose::read_dump_dir(dump_dir_)));
  } catch (const InputError& e) {
    text = fmt::format("no diagnosis: {}\n", e.what());
  }
  std::fprintf(stderr, "chorus launch: the ranks' flight records are in %s; chorus doctor says:\n%s", dump_dir_.c_str(),
               text.c_str());
}

}  // namespace chorus::launch
