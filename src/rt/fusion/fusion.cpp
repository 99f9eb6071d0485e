// Tensor fusion's options (CHORUS_FUSION's B,T), a Fusion's construction (its groups, one per
// backend and one for the cycle's agreement, and its cycle thread), its end, and flush().
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/split.h"
#include "core/units.h"
#include "rt/diagnostics/flight_recorder.h"
#include "rt/fusion/fusion_impl.h"
#include "rt/runtime.h"

namespace chorus::rt {

FusionOptions parse_fusion_options(std::string_view text, const std::string& field) {
  FusionOptions o;
  if (text == "on" || text == "1") return o;
  const auto parts = split_list(text);
  if (parts.size() != 2)
    throw InputError(field, fmt::format("'{}': expected B,T (buffer bytes, cycle microseconds), e.g. 1MiB,200", text));
  const Bytes b = parse_bytes(parts[0], field + " (B)");
  if (b < 8 || b > (Bytes{1} << 30))
    throw InputError(field, fmt::format("B = {} bytes: must be at least 8 and at most 1 GiB", b));
  std::int64_t t = 0;
  try {
    std::size_t used = 0;
    t = std::stoll(parts[1], &used);
    if (used != parts[1].size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(field, fmt::format("T = '{}': not a whole number of microseconds", parts[1]));
  }
  if (t < 1 || t > 10'000'000)
    throw InputError(field, fmt::format("T = {} us: must be at least 1 and at most 10^7", t));
  o.buffer_bytes = static_cast<std::size_t>(b);
  o.cycle_us = t;
  return o;
}

Fusion::Fusion(const std::vector<std::string>& backends, const FusionOptions& options)
    : Fusion(default_runtime("fusion"), backends, options) {}

Fusion::Fusion(Runtime& runtime, const std::vector<std::string>& backends, const FusionOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.runtime = &runtime;
  const int world_rank = runtime.rank("auto");
  const std::string where = fmt::format("fusion on rank {}", world_rank);
  if (options.buffer_bytes < 8 || options.cycle_us < 1)
    throw InputError(where, fmt::format("B = {} bytes and T = {} us: B must be at least 8, T at least 1",
                                        options.buffer_bytes, options.cycle_us));
  im.options = options;
  buffer_bytes_ = options.buffer_bytes;
  im.world_rank = world_rank;
  const auto initialised = runtime.backends();
  for (const auto& b : backends) {
    if (b == "auto") {
      for (const auto& i : initialised)
        if (std::find(im.backends.begin(), im.backends.end(), i) == im.backends.end()) im.backends.push_back(i);
      continue;
    }
    if (std::find(initialised.begin(), initialised.end(), b) == initialised.end())
      throw InputError(
          where, fmt::format("backend '{}' is not initialised (initialised: {})", b, fmt::join(initialised, ", ")));
    if (std::find(im.backends.begin(), im.backends.end(), b) == im.backends.end()) im.backends.push_back(b);
  }
  if (im.backends.empty()) throw InputError(where, "no backends given");
  const int id = runtime.next_instance("fusion");
  for (const auto& b : im.backends) {
    im.groups[b] = fmt::format("chorus-fusion{}/{}", id, b);
    runtime.split(im.groups[b], b, 0, world_rank);
  }
  // The agreement is two small all-reduces per cycle: on shm when there is shm.
  const std::string control_backend =
      std::find(im.backends.begin(), im.backends.end(), "shm") != im.backends.end() ? "shm" : im.backends.front();
  im.control = fmt::format("chorus-fusion{}/control", id);
  runtime.split(im.control, control_backend, 0, world_rank);
  im.control_comm = runtime.communicator(im.control);
  // B decides how operations are packed, so every rank must use the same (T only when cycles
  // start): ranks that differ would pack other fused buffers and fail on them, naming calls the
  // program never made.
  const auto B_bytes = static_cast<std::int64_t>(options.buffer_bytes);
  std::int64_t least_most[2] = {B_bytes, -B_bytes};
  fusion_detail::least_over_ranks(im.control_comm, least_most, 2);
  if (least_most[0] != -least_most[1])
    throw InputError(where, fmt::format("ranks disagree on the fused buffer size B: this rank's is {} bytes, the "
                                        "ranks' range from {} to {} (every rank must use the same B, CHORUS_FUSION)",
                                        B_bytes, least_most[0], -least_most[1]));
  im.shared = std::make_shared<fusion_detail::FusionBuffers>();
  im.shared->buffer_bytes = options.buffer_bytes;
  im.shared->world = static_cast<std::size_t>(runtime.size("auto"));
  // Kept free: as many buffers as a busy cycle holds (64 of B bytes, 8 wide ones), not more.
  const std::size_t B = options.buffer_bytes, W = im.shared->world;
  im.shared->pool = BufferPool::make({.max_buffers = 72, .max_bytes = 64 * B + 8 * W * B});
  im.thread = std::thread([&im] {
    const ScopedFlightLayer layer(FlightLayer::kFusion);  // the fused operations it issues
    im.run();
  });
}

Fusion::~Fusion() {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.mutex);
    im.stopping = true;
  }
  im.cv.notify_all();
  if (im.thread.joinable()) im.thread.join();
  std::unique_lock lock(im.shared->mutex);
  im.shared->idle_cv.wait(lock, [&] { return im.shared->in_flight == 0; });
}

const FusionOptions& Fusion::options() const { return impl_->options; }
const std::vector<std::string>& Fusion::backends() const { return impl_->backends; }

Fusion::Stats Fusion::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

void Fusion::flush() {
  Impl& im = *impl_;
  {
    std::unique_lock lock(im.mutex);
    im.idle_cv.wait(lock, [&] { return (im.queue.empty() && !im.issuing) || im.broken; });
  }
  std::unique_lock lock(im.shared->mutex);
  im.shared->idle_cv.wait(lock, [&] { return im.shared->in_flight == 0; });
}

}  // namespace chorus::rt
