// bench_memcpy: the memory-bandwidth ceiling of one core on this machine (memcpy of large
// buffers, bytes copied per second), the yardstick for the shm backend's bus bandwidth.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{128} << 20}) {
    std::vector<char> a(bytes, 1), b(bytes, 2);
    const int iters = static_cast<int>(std::max<std::size_t>(4, (std::size_t{2} << 30) / bytes));
    std::memcpy(b.data(), a.data(), bytes);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), bytes);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("memcpy %9zu bytes: %6.2f GB/s copied (%6.1f Gb/s)\n", bytes, bytes * iters / s / 1e9,
                bytes * iters / s / 1e9 * 8);
  }
  return 0;
}
