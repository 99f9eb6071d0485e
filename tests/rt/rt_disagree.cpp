// rt_disagree: ranks that disagree on a call on shm, gloo or mpi (--backend), without checking
// mode (test_disagreement.py). Rank 0 makes one call, the other ranks another (--case picks the
// pair); every receive buffer ends where a 1 MiB canary begins, followed by a PROT_NONE page, so a
// write past a buffer is seen (canary) or faults (guard). Each rank prints its error, whether its
// canaries are intact, the error of a later operation (the backend must be broken, naming the
// first error) and that finalize() returned; exit 3 after an error, 0 without.
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"

namespace rt_disagree_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;

constexpr std::size_t kCanary = 1 << 20;
constexpr unsigned char kCanaryByte = 0xA5;

// `bytes` of memory ending exactly where the canary starts, the canary ending at a guard page.
class Guarded {
 public:
  explicit Guarded(std::size_t bytes) : bytes_(bytes) {
    page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t body = (bytes + page_ - 1) / page_ * page_;
    total_ = body + kCanary + page_;
    void* p = ::mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<unsigned char*>(p);
    ::mprotect(base_ + body + kCanary, page_, PROT_NONE);
    data_ = base_ + body - bytes;
    std::memset(base_ + body, kCanaryByte, kCanary);
  }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  ~Guarded() { ::munmap(base_, total_); }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data_);
  }
  // Bytes of the canary overwritten.
  std::size_t damaged() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < kCanary; ++i) n += data_[bytes_ + i] != kCanaryByte;
    return n;
  }

 private:
  std::size_t bytes_, page_ = 0, total_ = 0;
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
};

int run(int argc, char** argv) {
  CLI::App app{"rt_disagree: ranks disagreeing on a call"};
  std::string which, backend = "shm";
  app.add_option("--backend", backend)->check(CLI::IsMember({"shm", "gloo", "mpi"}));
  app.add_option("--case", which)
      ->required()
      ->check(CLI::IsMember({"broadcast-count-cma",
                             "broadcast-vs-reduce",
                             "all-reduce-count",
                             "all-reduce-count-large",
                             "all-gather-count",
                             "dtype",
                             "reduce-op",
                             "root",
                             "all-reduce-vs-broadcast",
                             "recv-smaller",
                             "recv-larger",
                             "reduce-scatter-count",
                             "all-to-all-count",
                             "all-to-allv-counts",
                             "avg-vs-sum",
                             "named-algorithm-count",
                             "all-reduce-count-edge",
                             "all-gather-count-edge",
                             "all-reduce-count-inline",
                             "all-gather-count-inline",
                             "broadcast-count-inline",
                             "all-reduce-count-4k-edge",
                             "all-reduce-count-32k-edge",
                             "all-reduce-count-8k-16k",
                             "all-gather-count-8k-16k",
                             "all-reduce-count-16k-edge",
                             "agree-16k",
                             "all-reduce-empty",
                             "algorithm",
                             "broadcast-algorithm",
                             "library-algorithms",
                             "fused-extra",
                             "fused-buffer-bytes"}));
  CLI11_PARSE(app, argc, argv);
  rt::InitOptions init;
  init.check = 0;  // the backend itself must notice
  rt::init({backend}, init);
  const int me = rt::rank(backend), n = rt::size(backend);
  const bool first = me == 0;
  const char* on = backend.c_str();
  std::vector<std::unique_ptr<Guarded>> buffers;
  auto guarded = [&](std::size_t bytes) {
    buffers.push_back(std::make_unique<Guarded>(bytes));
    return buffers.back().get();
  };
  std::vector<float> ones(1 << 20, 1.0f);
  const auto f32 = rt::DType::f32;
  bool failed = false, fused = false;
  try {
    if (which == "broadcast-count-cma") {  // both single-copy (>= 1 MiB): rank 0 would write 512 KiB past
      const std::size_t bytes = first ? 2 << 20 : 1536 << 10;
      rt::broadcast(on, guarded(bytes)->as<char>(), bytes, rt::DType::u8, 0);
    } else if (which == "broadcast-vs-reduce") {
      if (first)
        rt::broadcast(on, guarded(2 << 20)->as<char>(), 2 << 20, rt::DType::u8, 0);
      else
        rt::reduce(on, ones.data(), guarded(4 << 20)->as<float>(), 1 << 20, f32, rt::ReduceOp::sum, 0);
    } else if (which == "all-reduce-count" || which == "all-reduce-count-large") {
      const std::size_t count = (which == "all-reduce-count" ? 4 : 100000) * (first ? 1 : 2);
      rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
    } else if (which == "all-reduce-count-edge" || which == "all-gather-count-edge") {
      // gloo, 2 ranks: 1 MiB rides inside the agreement exchange, 4 bytes more does not
      const std::size_t count = first ? 262144 : 262145;
      if (which == "all-reduce-count-edge")
        rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
      else
        rt::all_gather(on, ones.data(), guarded(count * 4 * static_cast<std::size_t>(n))->as<float>(), count, f32);
    } else if (which == "all-reduce-count-inline" || which == "all-gather-count-inline") {
      // 1 KiB against 2 KiB: both ride inside gloo's and mpi's agreement exchange (up to 8 ranks),
      // so the rows the ranks send differ in length, and still fail on their digests
      const std::size_t count = first ? 256 : 512;
      if (which == "all-reduce-count-inline")
        rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
      else
        rt::all_gather(on, ones.data(), guarded(count * 4 * static_cast<std::size_t>(n))->as<float>(), count, f32);
    } else if (which == "broadcast-count-inline") {  // only the root's row carries data
      const std::size_t bytes = first ? 1024 : 2048;
      rt::broadcast(on, guarded(bytes)->as<char>(), bytes, rt::DType::u8, 0);
    } else if (which == "all-reduce-count-4k-edge" || which == "all-reduce-count-32k-edge") {
      // mpi and gloo, 3-8 ranks: 4 KiB rides, 4 bytes more does not; mpi, 2 ranks: the same at 32 KiB
      const std::size_t count = (which == "all-reduce-count-4k-edge" ? 1024 : 8192) + (first ? 0 : 1);
      rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
    } else if (which == "all-reduce-count-8k-16k" || which == "all-gather-count-8k-16k") {
      // mpi, up to 4 ranks: both ride inside the agreement exchange, in rows of 3 and 5 parts
      const std::size_t count = first ? 2048 : 4096;
      if (which == "all-reduce-count-8k-16k")
        rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
      else
        rt::all_gather(on, ones.data(), guarded(count * 4 * static_cast<std::size_t>(n))->as<float>(), count, f32);
    } else if (which == "all-reduce-count-16k-edge") {
      // mpi, up to 4 ranks: 16 KiB rides (a row of 5 parts), 4 bytes more does not (the digest alone)
      const std::size_t count = first ? 4096 : 4097;
      rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
    } else if (which == "agree-16k") {  // every rank the same call (test_mpi_row_tamper.py tampers with a row)
      rt::all_reduce(on, ones.data(), guarded(16384)->as<float>(), 4096, f32, rt::ReduceOp::sum);
    } else if (which == "all-reduce-empty") {  // no data on rank 0: it moves nothing, but still agrees
      const std::size_t count = first ? 0 : 4;
      rt::all_reduce(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
    } else if (which == "all-gather-count") {
      const std::size_t count = first ? 4 : 8;
      rt::all_gather(on, ones.data(), guarded(count * 4 * static_cast<std::size_t>(n))->as<float>(), count, f32);
    } else if (which == "reduce-scatter-count") {
      const std::size_t count = first ? 4 : 8;
      rt::reduce_scatter(on, ones.data(), guarded(count * 4)->as<float>(), count, f32, rt::ReduceOp::sum);
    } else if (which == "all-to-all-count") {
      const std::size_t count = first ? 4 : 8;
      rt::all_to_all_single(on, ones.data(), guarded(count * 4 * static_cast<std::size_t>(n))->as<float>(), count, f32);
    } else if (which == "all-to-allv-counts") {  // rank 0 sends 4 elements to each, the others expect 8 from it
      rt::Counts sends(n, first ? 4 : 8), recvs(n, 8), sd(n), rd(n);
      if (first) recvs[0] = 4;  // what it sends itself
      for (int j = 0; j < n; ++j) sd[j] = sends[0] * j, rd[j] = 8 * j;
      rt::all_to_allv(on, ones.data(), sends, sd, guarded(8 * 4 * static_cast<std::size_t>(n))->as<float>(), recvs, rd,
                      f32);
    } else if (which == "dtype") {  // the same 32 bytes
      if (first)
        rt::all_reduce(on, ones.data(), guarded(32)->as<float>(), 8, f32, rt::ReduceOp::sum);
      else
        rt::all_reduce(on, ones.data(), guarded(32)->as<double>(), 4, rt::DType::f64, rt::ReduceOp::sum);
    } else if (which == "named-algorithm-count") {  // the runtime's ring on point-to-point, by name
      const std::size_t count = first ? 4 : 8;
      rt::all_reduce(backend + ":ring_p2p", ones.data(), guarded(count * 4)->as<float>(), count, f32,
                     rt::ReduceOp::sum);
    } else if (which == "algorithm") {  // the runtime's ring against the backend's own choice, which
      // on gloo and mpi rides inside the agreement exchange at this size
      rt::all_reduce(first ? backend + ":ring_p2p" : backend, ones.data(), guarded(64)->as<float>(), 16, f32,
                     rt::ReduceOp::sum);
    } else if (which == "broadcast-algorithm") {
      rt::broadcast(first ? backend + ":linear_p2p" : backend, guarded(64)->as<float>(), 16, f32, 0);
    } else if (which == "library-algorithms") {  // gloo's ring against its bcube (mpi: Open MPI's ring
      // against its recursive doubling), whose messages differ in number and size
      const std::string other = backend == "gloo" ? "bcube" : "recursive_doubling";
      rt::all_reduce(backend + ":" + (first ? "ring" : other), ones.data(), guarded(4 << 20)->as<float>(), 1 << 20, f32,
                     rt::ReduceOp::sum);
    } else if (which == "fused-extra") {  // rank 0 submits one fused all-reduce more than the others
      fused = true;
      rt::Fusion fusion({backend});
      std::vector<rt::Work> works;
      for (int i = 0; i < (first ? 3 : 2); ++i)
        works.push_back(fusion.all_reduce(on, ones.data(), guarded(64)->as<float>(), 16, f32, rt::ReduceOp::sum));
      for (auto& w : works) w.wait();
    } else if (which == "fused-buffer-bytes") {  // rank 0 fuses into buffers of 1 MiB, the others of 64 KiB
      fused = true;
      rt::Fusion fusion({backend}, {.buffer_bytes = first ? std::size_t{1} << 20 : std::size_t{64} << 10});
      fusion.all_reduce(on, ones.data(), guarded(64)->as<float>(), 16, f32, rt::ReduceOp::sum).wait();
    } else if (which == "avg-vs-sum") {
      rt::all_reduce(on, ones.data(), guarded(32)->as<float>(), 8, f32, first ? rt::ReduceOp::avg : rt::ReduceOp::sum);
    } else if (which == "reduce-op") {
      rt::all_reduce(on, ones.data(), guarded(32)->as<float>(), 8, f32, first ? rt::ReduceOp::sum : rt::ReduceOp::max);
    } else if (which == "root") {
      rt::broadcast(on, guarded(32)->as<float>(), 8, f32, me);
    } else if (which == "all-reduce-vs-broadcast") {
      if (first)
        rt::all_reduce(on, ones.data(), guarded(32)->as<float>(), 8, f32, rt::ReduceOp::sum);
      else
        rt::broadcast(on, guarded(32)->as<float>(), 8, f32, 0);
    } else {  // recv-smaller, recv-larger: rank 0 sends 32 bytes, then 1 MiB (more than the ring)
      if (me == 0) {
        rt::send(on, ones.data(), 8, f32, 1);
        rt::send(on, ones.data(), 1 << 18, f32, 1);  // blocks on the full ring: learns of the refusal
      } else if (me == 1) {
        const std::size_t count = which == "recv-smaller" ? 4 : 16;
        rt::recv(on, guarded(count * 4)->as<float>(), count, f32, 0);
      }
    }
    std::printf("rank %d: no error\n", me);
  } catch (const rt::CommError& e) {
    failed = true;
    std::printf("rank %d: communication error: %s\n", me, e.what());
  } catch (const chorus::InputError& e) {
    failed = true;
    std::printf("rank %d: input error: %s\n", me, e.what());
  }
  std::size_t damaged = 0;
  for (const auto& b : buffers) damaged += b->damaged();
  if (damaged != 0)
    std::printf("rank %d: canary damaged: %zu bytes past a buffer written\n", me, damaged);
  else
    std::printf("rank %d: canaries intact\n", me);
  if (failed && !fused) {  // (a fusion's failures leave the backend itself usable)
    try {
      rt::barrier(on);
      std::printf("rank %d: later operation succeeded\n", me);
    } catch (const std::exception& e) {
      std::printf("rank %d: later operation: %s\n", me, e.what());
    }
  }
  std::fflush(stdout);
  rt::finalize();
  std::printf("rank %d: finalized\n", me);
  const int status = damaged != 0 ? 4 : failed ? 3 : 0;
  std::printf("rank %d: exit %d\n", me, status);
  return status;
}

}  // namespace rt_disagree_program
