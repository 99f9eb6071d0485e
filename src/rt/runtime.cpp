// The API of runtime.h: a facade over the process's default Runtime (runtime_instance.h), which
// init() makes and finalize() ends. Every operation is one Call issued on it.
#include "rt/runtime.h"

#include <stdexcept>

#include "core/error.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

namespace {

Runtime* g_rt = nullptr;

[[noreturn, gnu::cold, gnu::noinline]] void throw_not_initialised(std::string_view what) {
  throw InputError(std::string(what), "the runtime is not initialised (call chorus::rt::init first)");
}

inline Runtime& rt(std::string_view what) {
  if (g_rt == nullptr) [[unlikely]]
    throw_not_initialised(what);
  return *g_rt;
}

// The operations' path: the Call built by the caller is run in place (Runtime::issue).
inline Work run(std::string_view backend, Call&& call, bool async_op) {
  if (g_rt == nullptr) [[unlikely]]
    throw_not_initialised(to_string(call.op));
  return g_rt->issue(backend, std::move(call), async_op);
}

}  // namespace

Runtime& default_runtime(std::string_view what) { return rt(what); }

Work issue(std::string_view backend, Call call, bool async_op) { return run(backend, std::move(call), async_op); }

Communicator communicator(std::string_view name) { return rt("communicator").communicator(name); }
Communicator communicator(std::string_view name, const FusionOptions& fusion) {
  return rt("communicator").communicator(name, fusion);
}

std::vector<std::string> available_backends() { return known_backends(); }

void init(const std::vector<std::string>& backends, const InitOptions& options) {
  if (g_rt != nullptr) throw InputError("init", "the runtime is already initialised");
  g_rt = new Runtime(backends, options);
}

bool is_initialized() { return g_rt != nullptr; }

void finalize() {
  std::unique_ptr<Runtime> r(g_rt);
  g_rt = nullptr;
}

std::int64_t operation_timeout_ms() { return rt("operation_timeout_ms").timeout_ms(); }
void abort(std::string_view why) { rt("abort").abort(why); }
std::string dump_flight_record() { return rt("dump_flight_record").dump_flight_record("request"); }
void mark_step() { rt("mark_step").mark_step(); }
void synchronize(const std::vector<std::string>& backends) { rt("synchronize").synchronize(backends); }
std::vector<std::string> backends() { return g_rt != nullptr ? g_rt->backends() : std::vector<std::string>{}; }
int size(std::string_view backend) { return rt("barrier").size(backend); }
int rank(std::string_view backend) { return rt("barrier").rank(backend); }
const TuningTable* tuning_table() { return g_rt != nullptr ? g_rt->tuning_table() : nullptr; }
std::string resolve_backend(std::string_view backend, CollectiveKind op, std::size_t bytes) {
  return rt(to_string(op)).resolve_backend(backend, op, bytes);
}
std::vector<std::string> algorithm_names(std::string_view backend, CollectiveKind op) {
  return rt(to_string(op)).algorithm_names(backend, op);
}
bool is_native(std::string_view backend, CollectiveKind op) { return rt(to_string(op)).is_native(backend, op); }

void split(const std::string& name, std::string_view backend, int color, int key) {
  rt("split").split(name, backend, color, key);
}
void new_group(const std::string& name, const std::vector<int>& ranks, std::string_view backend) {
  rt("new_group").new_group(name, ranks, backend);
}
void member_group(const std::string& name, const std::vector<int>& world_ranks, std::string_view backend) {
  rt("member_group").member_group(name, world_ranks, backend);
}
std::vector<int> group_ranks(std::string_view name) { return rt("group_ranks").group_ranks(name); }

Work send(std::string_view backend, const void* buf, std::size_t count, DType dtype, int dst, bool async_op) {
  return run(backend, calls::send(buf, count, dtype, dst), async_op);
}
Work recv(std::string_view backend, void* buf, std::size_t count, DType dtype, int src, bool async_op) {
  return run(backend, calls::recv(buf, count, dtype, src), async_op);
}
Work barrier(std::string_view backend, bool async_op) { return run(backend, calls::barrier(), async_op); }
Work broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root, bool async_op) {
  return run(backend, calls::broadcast(buf, count, dtype, root), async_op);
}
Work reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root,
            bool async_op) {
  return run(backend, calls::reduce(in, out, count, dtype, op, root), async_op);
}
Work all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                bool async_op) {
  return run(backend, calls::all_reduce(in, out, count, dtype, op), async_op);
}
Work reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                    bool async_op) {
  return run(backend, calls::reduce_scatter(in, out, count, dtype, op), async_op);
}
Work all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, bool async_op) {
  return run(backend, calls::all_gather(in, out, count, dtype), async_op);
}
Work gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root,
            bool async_op) {
  return run(backend, calls::gather(in, out, count, dtype, root), async_op);
}
Work scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root,
             bool async_op) {
  return run(backend, calls::scatter(in, out, count, dtype, root), async_op);
}
Work all_to_all(std::string_view backend, const std::vector<const void*>& ins, const Counts& in_counts,
                const std::vector<void*>& outs, const Counts& out_counts, DType dtype, bool async_op) {
  return run(backend, calls::all_to_all(ins, in_counts, outs, out_counts, dtype), async_op);
}
Work all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                       bool async_op) {
  return run(backend, calls::all_to_all_single(in, out, count, dtype), async_op);
}
Work all_gatherv(std::string_view backend, const void* in, std::size_t count, void* out, const Counts& counts,
                 const Counts& displs, DType dtype, bool async_op) {
  return run(backend, calls::all_gatherv(in, count, out, counts, displs, dtype), async_op);
}
Work gatherv(std::string_view backend, const void* in, std::size_t count, void* out, const Counts& counts,
             const Counts& displs, DType dtype, int root, bool async_op) {
  return run(backend, calls::gatherv(in, count, out, counts, displs, dtype, root), async_op);
}
Work scatterv(std::string_view backend, const void* in, const Counts& counts, const Counts& displs, void* out,
              std::size_t count, DType dtype, int root, bool async_op) {
  return run(backend, calls::scatterv(in, counts, displs, out, count, dtype, root), async_op);
}
Work all_to_allv(std::string_view backend, const void* in, const Counts& send_counts, const Counts& send_displs,
                 void* out, const Counts& recv_counts, const Counts& recv_displs, DType dtype, bool async_op) {
  return run(backend, calls::all_to_allv(in, send_counts, send_displs, out, recv_counts, recv_displs, dtype), async_op);
}

}  // namespace chorus::rt
