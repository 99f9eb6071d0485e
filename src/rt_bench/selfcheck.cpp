#include "rt_bench/selfcheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

#include "rt/dtype.h"
#include "rt/runtime_instance.h"

namespace chorus::rt::selfcheck {

namespace {
constexpr unsigned char kSentinel = 0x5a;

bool is_signed(DType d) { return d != DType::u8; }
bool is_integer(DType d) { return d == DType::i8 || d == DType::u8 || d == DType::i32 || d == DType::i64; }
}  // namespace

bool is_reduction(CollectiveKind op) {
  return op == CollectiveKind::kReduce || op == CollectiveKind::kAllReduce || op == CollectiveKind::kReduceScatter;
}

bool has_in_place(CollectiveKind op) {
  return op == CollectiveKind::kAllReduce || op == CollectiveKind::kReduce || op == CollectiveKind::kAllGather ||
         op == CollectiveKind::kAllGatherv;
}

double input_value(int rank, std::size_t i, DType dtype, ReduceOp op, bool movement, std::uint64_t salt) {
  const std::uint64_t r = static_cast<std::uint64_t>(rank), x = i + salt * 977;
  if (movement) {
    const double v = static_cast<double>((r * 7919 + x * 131 + 3) % 251);
    return is_signed(dtype) ? v - 125 : v;
  }
  if (op == ReduceOp::prod) {
    static const double kSigned[4] = {1, 2, -1, -2};
    static const double kUnsigned[4] = {1, 2, 3, 1};
    return (is_signed(dtype) ? kSigned : kUnsigned)[(r + x) % 4];
  }
  const double v = static_cast<double>((r * 7 + x * 13 + 3) % 17);
  return is_signed(dtype) ? v - 8 : v;
}

double reduced_value(int world, std::size_t i, DType dtype, ReduceOp op, std::uint64_t salt) {
  double acc = input_value(0, i, dtype, op, false, salt);
  for (int p = 1; p < world; ++p) acc = reduce_scalar(op, acc, input_value(p, i, dtype, op, false, salt));
  if (op == ReduceOp::avg) acc = is_integer(dtype) ? std::trunc(acc / world) : acc / world;
  return acc;
}

Case::Case(std::string backend, CollectiveKind op, DType dtype, ReduceOp rop, std::size_t count, std::uint64_t salt,
           Placement placement, int root)
    : Case(default_runtime("self-check"), std::move(backend), op, dtype, rop, count, salt, placement, root) {}

Case::Case(Runtime& runtime, std::string backend, CollectiveKind op, DType dtype, ReduceOp rop, std::size_t count,
           std::uint64_t salt, Placement placement, int root)
    : runtime_(&runtime),
      backend_(std::move(backend)),
      op_(op),
      dtype_(dtype),
      rop_(rop),
      count_(count),
      salt_(salt),
      in_place_(has_in_place(op) &&
                (placement == Placement::kInPlace || (placement == Placement::kVaried && salt % 3 == 1))) {
  world_ = runtime.size(backend_);
  rank_ = runtime.rank(backend_);
  root_ = root >= 0 ? root
          : (op == CollectiveKind::kBroadcast || op == CollectiveKind::kScatter || op == CollectiveKind::kScatterv)
              ? (world_ > 1 ? 1 : 0)
              : world_ - 1;
  const std::size_t eb = dtype_bytes(dtype);
  const auto n = static_cast<std::size_t>(world_);
  auto fill = [&](std::vector<char>& buf, std::size_t elems, int rank, std::size_t offset) {
    buf.resize(elems * eb);
    for (std::size_t i = 0; i < elems; ++i)
      store_from_double(dtype, buf.data(), i, input_value(rank, offset + i, dtype, rop, !is_reduction(op), salt));
  };
  auto expect = [&](std::size_t at_elem, int rank, std::size_t offset, std::size_t elems) {
    for (std::size_t i = 0; i < elems; ++i)
      store_from_double(dtype, expected_.data(), at_elem + i, input_value(rank, offset + i, dtype, rop, true, salt));
  };
  auto prepare_out = [&](std::size_t elems) {
    out_.assign(elems * eb, static_cast<char>(kSentinel));
    expected_.assign(elems * eb, static_cast<char>(kSentinel));  // gaps must keep the sentinel
  };
  auto pair_count = [&](int p, int q) { return count + static_cast<std::size_t>(p + 2 * q) % 3; };
  switch (op) {
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv: {
      const bool has_peer = (rank_ ^ 1) < world_;
      fill(in_, count, rank_, 0);
      prepare_out(has_peer ? count : 0);
      if (has_peer) expect(0, rank_ ^ 1, 0, count);
      break;
    }
    case CollectiveKind::kBarrier:
      prepare_out(0);
      break;
    case CollectiveKind::kBroadcast:
      fill(in_, count, root_, 0);
      if (rank_ != root_ && !in_.empty()) std::memset(in_.data(), kSentinel, in_.size());
      prepare_out(count);
      expect(0, root_, 0, count);
      break;
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce: {
      fill(in_, count, rank_, 0);
      const bool gets = op == CollectiveKind::kAllReduce || rank_ == root_;
      prepare_out(gets ? count : 0);
      if (gets)
        for (std::size_t i = 0; i < count; ++i)
          store_from_double(dtype, expected_.data(), i, reduced_value(world_, i, dtype, rop, salt));
      break;
    }
    case CollectiveKind::kReduceScatter:
      fill(in_, n * count, rank_, 0);
      prepare_out(count);
      for (std::size_t i = 0; i < count; ++i)
        store_from_double(dtype, expected_.data(), i,
                          reduced_value(world_, static_cast<std::size_t>(rank_) * count + i, dtype, rop, salt));
      break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather: {
      fill(in_, count, rank_, 0);
      const bool gets = op == CollectiveKind::kAllGather || rank_ == root_;
      prepare_out(gets ? n * count : 0);
      if (gets)
        for (int p = 0; p < world_; ++p) expect(static_cast<std::size_t>(p) * count, p, 0, count);
      break;
    }
    case CollectiveKind::kScatter:
      if (rank_ == root_) fill(in_, n * count, root_, 0);
      prepare_out(count);
      expect(0, root_, static_cast<std::size_t>(rank_) * count, count);
      break;
    case CollectiveKind::kAllToAllSingle:
      fill(in_, n * count, rank_, 0);
      prepare_out(n * count);
      for (int p = 0; p < world_; ++p)
        expect(static_cast<std::size_t>(p) * count, p, static_cast<std::size_t>(rank_) * count, count);
      break;
    case CollectiveKind::kAllToAll: {
      ins_.resize(n);
      outs_.resize(n);
      std::size_t total = 0;
      for (int q = 0; q < world_; ++q) {
        in_counts_.push_back(pair_count(rank_, q));
        fill(ins_[q], in_counts_.back(), rank_, static_cast<std::size_t>(q) * 100000);
        out_counts_.push_back(pair_count(q, rank_));
        total += out_counts_.back();
      }
      prepare_out(total);
      std::size_t at = 0;
      for (int p = 0; p < world_; ++p) {
        outs_[p].assign(out_counts_[p] * eb, static_cast<char>(kSentinel));
        expect(at, p, static_cast<std::size_t>(rank_) * 100000, out_counts_[p]);
        at += out_counts_[p];
      }
      break;
    }
    case CollectiveKind::kAllGatherv:
    case CollectiveKind::kGatherv:
    case CollectiveKind::kScatterv:
    case CollectiveKind::kAllToAllv: {
      // Displacements leave a one-element gap between blocks, which must stay untouched.
      auto layout = [&](const Counts& counts, Counts& displs) {
        std::size_t at = 0;
        displs.clear();
        for (std::size_t c : counts) {
          displs.push_back(at);
          at += c + 1;
        }
        return at;
      };
      if (op == CollectiveKind::kAllGatherv || op == CollectiveKind::kGatherv) {
        for (int p = 0; p < world_; ++p) out_counts_.push_back(count + static_cast<std::size_t>(p));
        const std::size_t total = layout(out_counts_, out_displs_);
        fill(in_, out_counts_[rank_], rank_, 0);
        const bool gets = op == CollectiveKind::kAllGatherv || rank_ == root_;
        prepare_out(gets ? total : 0);
        if (gets)
          for (int p = 0; p < world_; ++p) expect(out_displs_[p], p, 0, out_counts_[p]);
      } else if (op == CollectiveKind::kScatterv) {
        for (int p = 0; p < world_; ++p) in_counts_.push_back(count + static_cast<std::size_t>(p % 2));
        const std::size_t total = layout(in_counts_, in_displs_);
        in_.assign(total * eb, 0);
        if (rank_ == root_)
          for (int p = 0; p < world_; ++p)
            for (std::size_t i = 0; i < in_counts_[p]; ++i)
              store_from_double(dtype, in_.data(), in_displs_[p] + i,
                                input_value(root_, static_cast<std::size_t>(p) * 100000 + i, dtype, rop, true, salt));
        prepare_out(in_counts_[rank_]);
        expect(0, root_, static_cast<std::size_t>(rank_) * 100000, in_counts_[rank_]);
      } else {
        for (int q = 0; q < world_; ++q) {
          in_counts_.push_back(pair_count(rank_, q));
          out_counts_.push_back(pair_count(q, rank_));
        }
        const std::size_t in_total = layout(in_counts_, in_displs_);
        const std::size_t out_total = layout(out_counts_, out_displs_);
        in_.assign(in_total * eb, 0);
        for (int q = 0; q < world_; ++q)
          for (std::size_t i = 0; i < in_counts_[q]; ++i)
            store_from_double(dtype, in_.data(), in_displs_[q] + i,
                              input_value(rank_, static_cast<std::size_t>(q) * 100000 + i, dtype, rop, true, salt));
        prepare_out(out_total);
        for (int p = 0; p < world_; ++p)
          expect(out_displs_[p], p, static_cast<std::size_t>(rank_) * 100000, out_counts_[p]);
      }
      break;
    }
  }
}

Work Case::issue(bool async_op) {
  const std::string& b = backend_;
  switch (op_) {
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv: {
      const int peer = rank_ ^ 1;
      if (peer >= world_) return Work();
      if (async_op) {
        // Both ranks send first, then receive, like MPI_Isend + MPI_Irecv: sends and receives
        // run on separate progress threads, so this must not deadlock even for large messages.
        pending_.push_back(runtime_->issue(b, calls::send(in_.data(), count_, dtype_, peer), true));
        return runtime_->issue(b, calls::recv(out_.data(), count_, dtype_, peer), true);
      }
      // Blocking calls: even ranks send first, odd ranks receive first.
      if (rank_ % 2 == 0) {
        runtime_->issue(b, calls::send(in_.data(), count_, dtype_, peer), async_op);
        return runtime_->issue(b, calls::recv(out_.data(), count_, dtype_, peer), async_op);
      }
      runtime_->issue(b, calls::recv(out_.data(), count_, dtype_, peer), async_op);
      return runtime_->issue(b, calls::send(in_.data(), count_, dtype_, peer), async_op);
    }
    case CollectiveKind::kBarrier:
      return runtime_->issue(b, calls::barrier(), async_op);
    case CollectiveKind::kBroadcast:
      out_ = in_;
      return runtime_->issue(b, calls::broadcast(out_.data(), count_, dtype_, root_), async_op);
    case CollectiveKind::kReduce:
      if (in_place_) {  // one buffer on every rank (written at the root only)
        if (out_.empty())
          return runtime_->issue(b, calls::reduce(in_.data(), in_.data(), count_, dtype_, rop_, root_), async_op);
        out_ = in_;
        return runtime_->issue(b, calls::reduce(out_.data(), out_.data(), count_, dtype_, rop_, root_), async_op);
      }
      return runtime_->issue(
          b, calls::reduce(in_.data(), out_.empty() ? nullptr : out_.data(), count_, dtype_, rop_, root_), async_op);
    case CollectiveKind::kAllReduce:
      if (in_place_) {
        out_ = in_;
        return runtime_->issue(b, calls::all_reduce(out_.data(), out_.data(), count_, dtype_, rop_), async_op);
      }
      return runtime_->issue(b, calls::all_reduce(in_.data(), out_.data(), count_, dtype_, rop_), async_op);
    case CollectiveKind::kReduceScatter:
      return runtime_->issue(b, calls::reduce_scatter(in_.data(), out_.data(), count_, dtype_, rop_), async_op);
    case CollectiveKind::kAllGather:
      if (in_place_ && count_ > 0) {  // the input is this rank's block of the output
        char* mine = out_.data() + static_cast<std::size_t>(rank_) * count_ * dtype_bytes(dtype_);
        std::memcpy(mine, in_.data(), in_.size());
        return runtime_->issue(b, calls::all_gather(mine, out_.data(), count_, dtype_), async_op);
      }
      return runtime_->issue(b, calls::all_gather(in_.data(), out_.data(), count_, dtype_), async_op);
    case CollectiveKind::kGather:
      return runtime_->issue(b, calls::gather(in_.data(), out_.data(), count_, dtype_, root_), async_op);
    case CollectiveKind::kScatter:
      return runtime_->issue(b, calls::scatter(in_.data(), out_.data(), count_, dtype_, root_), async_op);
    case CollectiveKind::kAllToAllSingle:
      return runtime_->issue(b, calls::all_to_all_single(in_.data(), out_.data(), count_, dtype_), async_op);
    case CollectiveKind::kAllToAll: {
      std::vector<const void*> ins;
      std::vector<void*> outs;
      for (auto& v : ins_) ins.push_back(v.data());
      for (auto& v : outs_) outs.push_back(v.data());
      return runtime_->issue(b, calls::all_to_all(ins, in_counts_, outs, out_counts_, dtype_), async_op);
    }
    case CollectiveKind::kAllGatherv:
      if (in_place_ && !in_.empty()) {
        char* mine = out_.data() + out_displs_[rank_] * dtype_bytes(dtype_);
        std::memcpy(mine, in_.data(), in_.size());
        return runtime_->issue(
            b, calls::all_gatherv(mine, out_counts_[rank_], out_.data(), out_counts_, out_displs_, dtype_), async_op);
      }
      return runtime_->issue(
          b, calls::all_gatherv(in_.data(), out_counts_[rank_], out_.data(), out_counts_, out_displs_, dtype_),
          async_op);
    case CollectiveKind::kGatherv:
      return runtime_->issue(
          b, calls::gatherv(in_.data(), out_counts_[rank_], out_.data(), out_counts_, out_displs_, dtype_, root_),
          async_op);
    case CollectiveKind::kScatterv:
      return runtime_->issue(
          b, calls::scatterv(in_.data(), in_counts_, in_displs_, out_.data(), in_counts_[rank_], dtype_, root_),
          async_op);
    case CollectiveKind::kAllToAllv:
      return runtime_->issue(
          b, calls::all_to_allv(in_.data(), in_counts_, in_displs_, out_.data(), out_counts_, out_displs_, dtype_),
          async_op);
  }
  return Work();
}

const std::vector<char>& Case::result_bytes() const {
  for (const Work& w : pending_) w.wait();
  pending_.clear();
  if (op_ != CollectiveKind::kAllToAll) return out_;
  concatenated_.clear();  // all_to_all's outputs, one buffer per peer
  for (const auto& v : outs_) concatenated_.insert(concatenated_.end(), v.begin(), v.end());
  return concatenated_;
}

std::size_t Case::wrong_elements() const {
  const std::vector<char>& got = result_bytes();
  const std::size_t eb = dtype_bytes(dtype_);
  if (got.size() != expected_.size()) return std::max(got.size(), expected_.size()) / eb;
  std::size_t wrong = 0;
  for (std::size_t at = 0; at < got.size(); at += eb)
    wrong += std::memcmp(got.data() + at, expected_.data() + at, eb) != 0;
  return wrong;
}

std::string Case::verify() const {
  const std::vector<char>& got = result_bytes();
  if (got.size() != expected_.size())
    return fmt::format("result has {} bytes, expected {}", got.size(), expected_.size());
  if (got.empty() || std::memcmp(got.data(), expected_.data(), got.size()) == 0) return {};
  const auto first = std::mismatch(got.begin(), got.end(), expected_.begin()).first - got.begin();
  const std::size_t e = static_cast<std::size_t>(first) / dtype_bytes(dtype_);
  return fmt::format("element {}: got {} expected {}", e, load_as_double(dtype_, got.data(), e),
                     load_as_double(dtype_, expected_.data(), e));
}

std::string Case::describe() const {
  return fmt::format("{} {} {}{} count={}{} world={} rank={}", backend_, to_string(op_), to_string(dtype_),
                     is_reduction(op_) ? fmt::format(" {}", to_string(rop_)) : std::string(), count_,
                     in_place_ ? " in place" : "", world_, rank_);
}

void Checker::run(const std::string& backend, CollectiveKind op, DType dtype, ReduceOp rop, std::size_t count) {
  Case c(runtime_ != nullptr ? *runtime_ : default_runtime("self-check"), backend, op, dtype, rop, count, checks_);
  ++checks_;
  try {
    c.issue(false);
    const std::string err = c.verify();
    if (!err.empty()) {
      ++failures_;
      std::fprintf(stderr, "FAIL %s: %s\n", c.describe().c_str(), err.c_str());
    }
  } catch (const std::exception& e) {
    ++failures_;
    std::fprintf(stderr, "FAIL %s: threw %s\n", c.describe().c_str(), e.what());
  }
}

void Checker::record(const std::string& what, const std::string& error) {
  ++checks_;
  if (!error.empty()) {
    ++failures_;
    std::fprintf(stderr, "FAIL %s: %s\n", what.c_str(), error.c_str());
  }
}

}  // namespace chorus::rt::selfcheck
