// Gloo's classic algorithm objects for the small all-reduces: AllreduceHalvingDoubling over a
// scratch buffer of ours, one object per (count, dtype, op), built on every rank alike and kept
// in a small LRU cache; and the warm-up that opens the classic connections' TCP windows.
#include <gloo/allreduce_halving_doubling.h>

#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <type_traits>
#include <vector>

#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

namespace {

// Gloo's classic reduction functions are plain function pointers: one per (dtype, op), all
// through our reduce_into (f16 / bf16, integer wrap-around, the same results as everywhere).
template <typename T, DType D, ReduceOp O>
void classic_reduce(T* x, const T* y, std::size_t n) {
  reduce_into(D, O, x, x, y, n);
}

// The unsigned type as wide as one element of D (Gloo's classic algorithms only move and slice
// elements of T; the arithmetic is classic_reduce's).
template <DType D>
using Storage = std::conditional_t<
    D == DType::f16 || D == DType::bf16, std::uint16_t,
    std::conditional_t<D == DType::f32 || D == DType::i32, std::uint32_t,
                       std::conditional_t<D == DType::f64 || D == DType::i64, std::uint64_t, std::uint8_t>>>;

template <typename T>
class ClassicHalvingDoubling final : public ClassicAllReduce {
 public:
  ClassicHalvingDoubling(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                         typename gloo::ReductionFunction<T>::Function* fn)
      : scratch_(count),
        fn_(gloo::CUSTOM, fn),
        algorithm_(std::make_unique<gloo::AllreduceHalvingDoubling<T>>(context, std::vector<T*>{scratch_.data()},
                                                                       static_cast<int>(count), &fn_)) {}
  void run(const void* in, void* out) override {
    const std::size_t bytes = scratch_.size() * sizeof(T);
    std::memcpy(scratch_.data(), in, bytes);
    algorithm_->run();
    std::memcpy(out, scratch_.data(), bytes);
  }

 private:
  std::vector<T> scratch_;
  gloo::ReductionFunction<T> fn_;
  // Gloo's Algorithm has a noexcept(false) destructor: held by pointer.
  std::unique_ptr<gloo::AllreduceHalvingDoubling<T>> algorithm_;
};

template <DType D>
std::unique_ptr<ClassicAllReduce> make_classic_typed(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                                                     ReduceOp op) {
  using T = Storage<D>;
  typename gloo::ReductionFunction<T>::Function* fn = nullptr;
  switch (op) {
    case ReduceOp::prod:
      fn = &classic_reduce<T, D, ReduceOp::prod>;
      break;
    case ReduceOp::min:
      fn = &classic_reduce<T, D, ReduceOp::min>;
      break;
    case ReduceOp::max:
      fn = &classic_reduce<T, D, ReduceOp::max>;
      break;
    default:
      fn = &classic_reduce<T, D, ReduceOp::sum>;
      break;  // sum; avg arrives as sum
  }
  return std::make_unique<ClassicHalvingDoubling<T>>(context, count, fn);
}

}  // namespace

std::unique_ptr<ClassicAllReduce> make_classic(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                                               DType d, ReduceOp op) {
  switch (d) {
    case DType::f16:
      return make_classic_typed<DType::f16>(context, count, op);
    case DType::bf16:
      return make_classic_typed<DType::bf16>(context, count, op);
    case DType::f32:
      return make_classic_typed<DType::f32>(context, count, op);
    case DType::f64:
      return make_classic_typed<DType::f64>(context, count, op);
    case DType::i8:
      return make_classic_typed<DType::i8>(context, count, op);
    case DType::u8:
      return make_classic_typed<DType::u8>(context, count, op);
    case DType::i32:
      return make_classic_typed<DType::i32>(context, count, op);
    case DType::i64:
      return make_classic_typed<DType::i64>(context, count, op);
  }
  throw CommError(fmt::format("gloo all_reduce: unknown dtype {}", static_cast<int>(d)));
}

ClassicAllReduce& GlooBackend::classic_for(std::size_t count, DType d, ReduceOp op) {
  for (auto it = classic_.begin(); it != classic_.end(); ++it) {
    if (it->count == count && it->dtype == d && it->op == op) {
      classic_.splice(classic_.begin(), classic_, it);
      return *classic_.front().algorithm;
    }
  }
  if (classic_.size() >= kClassicCacheEntries) classic_.pop_back();
  classic_.push_front({count, d, op, make_classic(small_context_, count, d, op)});
  // Every rank must have registered the new object's buffers before any sends to them (Gloo's
  // device thread would spin on a message for an unknown slot, holding up everything else on
  // that connection), and all must agree on the shape (same slots, different sizes would be
  // out-of-bounds writes that Gloo stops with an abort). One exchange does both: an all-reduce
  // (max, as i64) of the key and its complement is the key everywhere only if every rank has
  // that key (~ reverses the order, so max(~key) = ~min(key)).
  const std::uint64_t key =
      (static_cast<std::uint64_t>(count) << 16) | (static_cast<std::uint64_t>(d) << 8) | static_cast<std::uint64_t>(op);
  std::int64_t keys[2] = {static_cast<std::int64_t>(key), static_cast<std::int64_t>(~key)};
  all_reduce_typed(std::uint64_t{}, keys, keys, 2, DType::i64, ReduceOp::max);  // any world size
  if (keys[0] != static_cast<std::int64_t>(key) || keys[1] != static_cast<std::int64_t>(~key)) {
    throw CommError(
        fmt::format("gloo all_reduce on rank {}: the ranks disagree on the call (this rank: "
                    "{} elements of {}, {}); run with CHORUS_RT_CHECK=1 to see where",
                    rank_, count, to_string(d), to_string(op)));
  }
  return *classic_.front().algorithm;
}

void GlooBackend::warm_up_classic() {
  if (size_ < 2) return;
  constexpr std::size_t kCount = kClassicAllReduceBytes / sizeof(float);
  std::vector<float> x(kCount, 0.0f);
  classic_for(kCount, DType::f32, ReduceOp::sum).run(x.data(), x.data());
  classic_.pop_front();  // safe as any eviction (classic_for)
}

}  // namespace chorus::rt::gloo_backend
