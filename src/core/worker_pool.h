#pragma once
// A pool of worker threads that runs task(i) once for each i in [0, n), taking indices in order
// (chorus sweep's points, a study's runs).
// Workers stop taking indices once `stop` is set (the tasks already running finish). A task that
// throws stops the pool; the first exception is rethrown once every worker has joined.
#include <atomic>
#include <cstddef>
#include <functional>

namespace chorus {

void run_pool(std::size_t n, int workers, const std::atomic<bool>& stop, const std::function<void(std::size_t)>& task);

}  // namespace chorus
