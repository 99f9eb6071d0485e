// The gloo backend's set-up: Gloo's TCP device, two full meshes of connections rendezvoused
// through our store (one for Gloo's new API, one for the classic small all-reduces), the
// agreement's classic object, the warm-up, and every rank's pid to name a dead peer.
#include "rt/backends/gloo/gloo_backend.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "rt/agreement.h"
#include "rt/backends/operation_table.h"
#include "rt/errors.h"

namespace chorus::rt {

namespace gloo_backend {

namespace {

// Gloo's Store interface over ours, with keys under a prefix.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(chorus::rt::Store& store, std::string prefix, std::chrono::milliseconds timeout)
      : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_.set(prefix_ + key, data); }
  std::vector<char> get(const std::string& key) override { return store_.get(prefix_ + key, timeout_); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    for (const auto& k : keys) store_.get(prefix_ + k, timeout);
  }

 private:
  chorus::rt::Store& store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

GlooBackend::GlooBackend(const BackendContext& ctx)
    : Backend(operations()),
      rank_(ctx.rank),
      size_(ctx.size),
      timeout_(ctx.timeout),
      store_(ctx.store),
      key_prefix_(ctx.key_prefix),
      failure_of_(ctx.failure_of),
      aborted_(ctx.aborted) {
  // Gloo writes to its sockets without MSG_NOSIGNAL: a peer that died would kill this rank
  // with SIGPIPE instead of letting the operation fail with an error. Ignore SIGPIPE unless
  // the program installed its own handler.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = ctx.gloo_host;
    device_ = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
    context->setTimeout(timeout_);
    GlooStore store(*ctx.store, ctx.key_prefix + "/", timeout_);
    // Every rank's pid, to name a dead peer when an operation fails (one host only). Set
    // before connecting: connectFullMesh returns after every rank has begun connecting.
    if (ctx.single_host)
      ctx.store->set_string(ctx.key_prefix + "/pid/" + std::to_string(rank_), std::to_string(::getpid()));
    context->connectFullMesh(store, device_);
    context_ = context;
    // A second set of connections (same device thread) for the classic small all-reduces:
    // their quick small exchanges in both directions put a TCP connection into delayed-ACK
    // mode, and bulk transfers on that connection (Gloo's ring) then stall ~40 ms at every
    // full send buffer (measured: a 1 MiB all-reduce after an 8 B one, 4 ranks, 0.5 s
    // instead of 8 ms). On their own connections the two kinds of traffic do not meet.
    auto small = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
    small->setTimeout(timeout_);
    GlooStore small_store(*ctx.store, ctx.key_prefix + "/small/", timeout_);
    small->connectFullMesh(small_store, device_);
    small_context_ = small;
    // Before the warm-up, whose exchange follows every rank's registration of their buffers.
    if (size_ > 1 && size_ <= kRowExchangeRanks) {
      exchange_ = std::make_unique<RowExchange>(small_context_, agreement_row_bytes(*this));
    } else if (size_ > 1) {
      agreement_rows_.resize(agreement_row_bytes(*this) * static_cast<std::size_t>(size_));
      agreement_ =
          make_classic(small_context_, agreement_rows_.size() / sizeof(std::uint64_t), DType::i64, ReduceOp::sum);
    }
    warm_up_classic();
    if (size_ > 1) notice_ = std::make_unique<WaitNotice>(rank_, size_, timeout_, ctx.store_weak, key_prefix_);
    if (ctx.single_host)
      for (int j = 0; j < size_; ++j)
        pids_.push_back(std::stoi(ctx.store->get_string(ctx.key_prefix + "/pid/" + std::to_string(j), timeout_)));
  } catch (const CommError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError(fmt::format("gloo: cannot connect rank {} of {} on {}: {}", rank_, size_, ctx.gloo_host, e.what()));
  }
}

// Gloo has no reduce_scatter, gatherv, scatterv or list all_to_all: those keep the generic
// algorithms (on send_recv, over Gloo's unbound buffers), which native() reports.
const OperationTable& GlooBackend::operations() {
  using K = CollectiveKind;
  static const OperationTable table =
      own_operations<GlooBackend, K::kSend, K::kRecv, K::kBarrier, K::kBroadcast, K::kReduce, K::kAllReduce,
                     K::kAllGather, K::kGather, K::kScatter, K::kAllToAllSingle, K::kAllGatherv, K::kAllToAllv>();
  return table;
}

bool GlooBackend::native(CollectiveKind op) const {
  switch (op) {
    case CollectiveKind::kGatherv:
    case CollectiveKind::kScatterv:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return false;
    default:
      return true;
  }
}

}  // namespace gloo_backend

std::unique_ptr<Backend> make_gloo_backend(const BackendContext& ctx) {
  return std::make_unique<gloo_backend::GlooBackend>(ctx);
}

}  // namespace chorus::rt
