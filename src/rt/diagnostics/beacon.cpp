#include "rt/diagnostics/beacon.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>

#include "rt/errors.h"
#include "rt/work.h"

namespace chorus::rt {

namespace {

// "CHORUSB1" as one word (native byte order).
std::uint64_t magic_word() {
  constexpr char kMagic[8] = {'C', 'H', 'O', 'R', 'U', 'S', 'B', '1'};
  std::uint64_t w = 0;
  std::memcpy(&w, kMagic, sizeof w);
  return w;
}

}  // namespace

const char* to_string(RankPlace place) {
  switch (place) {
    case RankPlace::kStarting:
      return "starting";
    case RankPlace::kRunning:
      return "running";
    case RankPlace::kInFinalize:
      return "in_finalize";
    case RankPlace::kFinalized:
      return "finalized";
  }
  return "unknown";
}

std::string beacon_path(const std::string& dir, int rank) { return fmt::format("{}/rank-{}.beacon", dir, rank); }

Beacon::Beacon(const std::string& dir, int rank) : path_(beacon_path(dir, rank)) {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw CommError(fmt::format("beacon {}: cannot create it: {}", path_, std::strerror(errno)));
  void* p = MAP_FAILED;
  if (::ftruncate(fd, sizeof(BeaconLayout)) == 0)
    p = ::mmap(nullptr, sizeof(BeaconLayout), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw CommError(fmt::format("beacon {}: cannot map it: {}", path_, std::strerror(err)));
  layout_ = new (p) BeaconLayout{};
  layout_->version = 1;
  layout_->rank = rank;
  layout_->pid = ::getpid();
  layout_->since_ns.store(steady_now_ns(), std::memory_order_relaxed);
  // The magic last: a reader that sees it sees a whole header.
  layout_->magic.store(magic_word(), std::memory_order_release);
}

Beacon::~Beacon() {
  if (layout_ != nullptr) ::munmap(layout_, sizeof(BeaconLayout));
}

BeaconSlot* Beacon::slot(bool* shared) {
  *shared = false;
  if (layout_ == nullptr) return nullptr;
  const std::uint32_t i = layout_->slots_used.fetch_add(1, std::memory_order_relaxed);
  if (i + 1 < BeaconLayout::kSlots) return &layout_->slots[i];
  *shared = true;
  return &layout_->slots[BeaconLayout::kSlots - 1];
}

void Beacon::place(RankPlace p) {
  if (layout_ == nullptr) return;
  layout_->since_ns.store(steady_now_ns(), std::memory_order_relaxed);
  layout_->place.store(static_cast<std::int64_t>(p), std::memory_order_release);
}

std::optional<BeaconReading> read_beacon(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  void* p = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(sizeof(BeaconLayout)))
    p = ::mmap(nullptr, sizeof(BeaconLayout), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return std::nullopt;
  const auto* b = static_cast<const BeaconLayout*>(p);
  std::optional<BeaconReading> r;
  if (b->magic.load(std::memory_order_acquire) == magic_word()) {
    BeaconReading& x = r.emplace();
    x.rank = b->rank;
    x.pid = b->pid;
    x.place = static_cast<RankPlace>(b->place.load(std::memory_order_acquire));
    x.since_ns = b->since_ns.load(std::memory_order_relaxed);
    const std::uint32_t used = std::min<std::uint32_t>(b->slots_used.load(), BeaconLayout::kSlots);
    // Started before ended: an operation that ends between the two reads is then not taken for
    // one in flight.
    for (std::uint32_t i = 0; i < used; ++i) x.started += b->slots[i].started.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < used; ++i) x.ended += b->slots[i].ended.load(std::memory_order_acquire);
  }
  ::munmap(p, sizeof(BeaconLayout));
  return r;
}

}  // namespace chorus::rt
