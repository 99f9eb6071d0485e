#pragma once
// chorus::rt — one API for point-to-point and collective communication over several real
// backends (mpi, gloo, shm) in one process at once, after MCR-DL.
//
//   chorus::rt::init({"shm", "mpi"});
//   auto w = chorus::rt::all_reduce("shm", x.data(), x.data(), x.size(), DType::f32,
//                                   ReduceOp::sum, /*async_op=*/true);
//   chorus::rt::all_to_all_single("mpi", a.data(), b.data(), n, DType::f32);  // blocking
//   w.wait();
//   chorus::rt::finalize();
//
// Every operation names a backend (or "auto": chosen from the tuning table by operation, world
// size and message size; all_reduce also takes "backend:algorithm", see algorithm_names()) and
// runs on that backend's ordered progress queue. With async_op the call returns at once and the
// Work handle completes later; without, the call blocks (and runs on the calling thread when the
// backend is idle) and throws on failure. Ranks must issue the
// same operations in the same order per backend; across backends any interleaving is fine.
// Counts are in elements; `in == out` is allowed wherever the sizes match (in place).
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rt/backend.h"
#include "rt/types.h"
#include "rt/work.h"

namespace chorus::rt {

struct TuningTable;        // rt/tuning_table.h
class Store;               // rt/rendezvous/store.h
class Runtime;             // rt/runtime_instance.h
struct CommunicatorState;  // rt/runtime_instance.h
class Fusion;              // rt/fusion/fusion.h
struct FusionOptions;      // rt/fusion/fusion.h
struct CompressionPolicy;  // rt/compression/call_compression.h

// A world found by the caller rather than from the environment: a framework that did its own
// rendezvous (torch.distributed under torchrun) gives this rank, the world size and a key-value
// store that every rank shares. Backend mpi still needs ranks started by mpirun (whose ranks
// must then agree with these).
struct ExternalWorld {
  int rank = 0;
  int size = 1;
  std::shared_ptr<Store> store;
};

struct InitOptions {
  // Operation timeout in seconds; -1 (the default): CHORUS_RT_TIMEOUT_S, else 300 s. Any other
  // value must be finite, positive, at least 1 ms and at most 10^7 s (else InputError, as for a
  // bad CHORUS_RT_TIMEOUT_S). Bounds every operation: a dead peer or a disagreeing call ends in
  // CommError / TimeoutError, never a hang (docs/failures.md).
  double timeout_s = -1;
  // Checking mode: verify before each collective that all ranks agree on operation, dtype,
  // reduce op, root and counts. -1: CHORUS_RT_CHECK (1 = on), else off.
  int check = -1;
  // Agreement without checking mode on gloo and mpi (rt/agreement.h): a 32-byte exchange before
  // each collective, so that ranks that disagree fail naming both calls instead of aborting in
  // Gloo or corrupting Open MPI's heap. -1: CHORUS_RT_AGREE (0 = off), else on; 0: off, for a
  // program known to agree that wants the libraries' own small-message latency (shm always
  // agrees, on its data path). Checking mode implies it.
  int agree = -1;
  // Tuning table for "auto" (JSON, docs/runtime-backends.md). Empty: CHORUS_RT_TUNING, else none.
  std::string tuning_table;
  // Communication log (rt/comm_log.h): every operation as a JSON line of <log>.<rank>.jsonl.
  // Empty: CHORUS_RT_LOG, else no log.
  std::string log;
  // Flight recorder (docs/flight-recorder.md): entries kept per lane, 0 off. -1: CHORUS_RT_RECORD,
  // else 256.
  long record_entries = -1;
  // Null: the world comes from the environment (chorus launch, mpirun, or a world of one).
  std::shared_ptr<ExternalWorld> world;
};

// Backends compiled into this build, in the default preference order for "auto".
std::vector<std::string> available_backends();

void init(const std::vector<std::string>& backends, const InitOptions& options = {});
// Waits for outstanding operations — queued ones and those running inline on other threads —
// then tears every healthy backend down; a broken backend (or one whose operation did not end
// within the timeout) is left alive, never destroyed under a running operation.
void finalize();
bool is_initialized();
// Writes this rank's flight record (its last operations per communicator, where it is) to the
// dump directory (CHORUS_RT_DUMP; default $TMPDIR/chorus-dumps/<run>) as rank-<rank>.json and
// returns its path ("" if it could not be written: said on stderr). The runtime also writes it
// on its first communication failure and on SIGUSR1; `chorus doctor DIR` reads all ranks'.
std::string dump_flight_record();
// Marks the end of one training step in this rank's flight record: the operations after it carry
// the next step number, so that `chorus doctor` can tell a rank that skipped a call in a step
// from one that left early even when every call is alike. Cheap (one atomic addition).
void mark_step();
// The default runtime's operation timeout in milliseconds (InitOptions::timeout_s or
// CHORUS_RT_TIMEOUT_S; default 300 s). Each Runtime has its own (Runtime::timeout_ms).
std::int64_t operation_timeout_ms();
// Ends this rank's part in the job: every backend and group becomes unusable (calls after it,
// and queued ones, fail at once with a CommError naming `why`), operations in flight on shm and
// gloo end within milliseconds, the flight record is written (reason abort) and the failure is
// published for the peers. An MPI operation cannot be abandoned: with one in flight, the mpi
// backend ends the job (MPI_Abort) at once. The rank should exit next (finalize() then returns
// at once: it does not wait for a broken backend). Safe from any thread.
void abort(std::string_view why = "");
// Waits for every operation issued so far on `backends` (all when empty).
void synchronize(const std::vector<std::string>& backends = {});
std::vector<std::string> backends();  // initialised backends
int size(std::string_view backend = "auto");
int rank(std::string_view backend = "auto");
// The backend "auto" would use for this operation and message size (bytes per rank); for
// all_reduce with a named algorithm, "backend:algorithm".
std::string resolve_backend(std::string_view backend, CollectiveKind op, std::size_t bytes);
// The named algorithms of `op` on `backend` besides "default" (its own choice by size): for
// all_reduce, e.g. Open MPI's ring and rabenseifner, Gloo's ring and bcube, and the runtime's
// ring_p2p on every backend; empty for other operations. all_reduce("mpi:ring", ...) runs one.
std::vector<std::string> algorithm_names(std::string_view backend, CollectiveKind op);
// The tuning table "auto" uses (InitOptions::tuning_table or CHORUS_RT_TUNING), or null; valid
// until finalize().
const TuningTable* tuning_table();
// Whether `backend` runs `op` natively (true) or on a fallback of the runtime (false).
bool is_native(std::string_view backend, CollectiveKind op);

// ---- groups (sub-communicators) ----------------------------------------------------------------
// Collective over the whole world: every rank calls it, in the same order, with the same `name`
// and `backend`, while no other operation of this process is being issued. Ranks that give the
// same color (>= 0) form one group, numbered by (key, world rank) as MPI_Comm_split numbers
// them; color -1 joins no group. The group is then used like a backend under `name`:
// rt::all_reduce("rows", ...), rt::rank("rows"), rt::size("rows"). `backend` is mpi, gloo, shm
// or auto (the first initialised backend); each group is its own instance of that backend
// (its own segment, Gloo context or MPI communicator), so operations on different groups run
// concurrently. Groups end with finalize().
void split(const std::string& name, std::string_view backend, int color, int key);
// torch.distributed's new_group: the given world ranks (in that order) form group `name`; the
// other ranks take part in the call but are not members (using `name` there is an error).
void new_group(const std::string& name, const std::vector<int>& ranks, std::string_view backend = "auto");
// A group made by its members alone, as torch.distributed's new_group makes one (it calls only
// the members): every member calls it with the same `name` and the same `world_ranks` (group rank
// order); other ranks do not call it. Backend shm or gloo, or auto (shm on one host, else gloo);
// mpi needs every world rank in the call (use new_group).
void member_group(const std::string& name, const std::vector<int>& world_ranks, std::string_view backend = "auto");
// The world rank of every member of group `name`, in group rank order.
std::vector<int> group_ranks(std::string_view name);

// Any operation as one value (rt/call.h: rt::calls::all_reduce(...) and the like): what the
// functions below do, for callers that hold the operation as data (bench, the enforcer).
Work issue(std::string_view backend, Call call, bool async_op = false);

// ---- communicators ----------------------------------------------------------------------------
// A backend or group resolved once, with its named algorithm if the name gives one
// ("gloo:ring"): its calls skip the lookup of the name, and the algorithm's name is checked once
// here rather than on every call. Operations that take an algorithm (kAlgorithmOps) run the
// named one, and one that lacks it refuses the call naming the algorithms it has; the others
// run as on the plain backend. "auto" is not a communicator: it chooses a backend per call.
// A handle: copies share the communicator, which lives until finalize() (its runtime's end);
// a handle used after that throws InputError.
//
//   auto ring = chorus::rt::communicator("gloo:ring");
//   ring.issue(chorus::rt::calls::all_reduce(x, x, n, DType::f32, ReduceOp::sum));
//
// A communicator may be given layers of its submission path (CommunicatorLayers, applied in
// issue() in this order): a compression policy (rt/compression/call_compression.h: which calls
// travel compressed), then a tensor fusion.
// Tensor fusion is a layer of a communicator (rt/fusion/fusion.h): one given a fusion
// (communicator(name, FusionOptions), Runtime::communicator(name, fusion)) sends every call the
// fusion takes (Fusion::takes: an operation it fuses, not compressed, of at most B bytes per
// rank, or an uneven all-to-all) through it, and runs the others as without. A blocking call
// (async_op false) that the fusion takes is fused too, its cycle started at once, and waited for:
// whether a call is fused depends on the call alone, so ranks that issue the same call, one
// blocking and one not, still match. A communicator with layers may also be "auto": the fusion
// then chooses the backend per fused buffer, and the calls it does not take choose theirs per call.
struct CommunicatorLayers {
  std::shared_ptr<const CompressionPolicy> compression;  // first: which calls travel compressed
  Fusion* fusion = nullptr;  // then: what goes through this tensor fusion (one of the runtime's)
};

class Communicator {
 public:
  Communicator() = default;  // no communicator: issue() throws InputError
  const std::string& name() const { return name_; }
  int rank() const;
  int size() const;
  // "gloo" or "gloo:ring": what a call of `op` runs on (as resolve_backend names it).
  std::string resolve(CollectiveKind op) const;
  Work issue(Call call, bool async_op = false) const;
  // Whether the communicator's runtime is still there (false for an empty handle).
  bool alive() const { return state_ != nullptr && !alive_.expired(); }
  // The tensor fusion its calls go through when the fusion takes them, or null (none given).
  Fusion* fusion() const { return fusion_; }
  // Its compression policy, or null (none given).
  const CompressionPolicy* compression() const { return compression_.get(); }

 private:
  friend class Runtime;
  // issue() of a communicator given layers (rt/communicator_layers.cpp).
  Work issue_layered(Call call, bool async_op) const;
  // Per operation kind: 0 for the backend's own choice, 1 + the index of the named algorithm,
  // or kMissing when the named algorithm has no form for that operation.
  static constexpr std::size_t kMissing = ~std::size_t{0};
  [[noreturn, gnu::cold, gnu::noinline]] void throw_missing_algorithm(CollectiveKind op) const;
  // The communicator's state, or InputError when there is none (made empty, or its runtime ended).
  const CommunicatorState& state(std::string_view what) const;
  Runtime* runtime_ = nullptr;
  std::weak_ptr<const int> alive_;  // expires when the runtime ends
  CommunicatorState* state_ = nullptr;
  std::string name_, algorithm_;
  std::array<std::size_t, std::size(kAllCollectiveKinds)> algorithms_{};
  Fusion* fusion_ = nullptr;  // owned by the runtime (Runtime::add_fusion)
  std::shared_ptr<const CompressionPolicy> compression_;
  bool layered_ = false;  // a fusion or a compression policy: issue_layered()
  bool auto_ = false;     // "auto" (with layers only): the calls the fusion does not take choose per call
};

// The default runtime's communicator for a backend or group name (InputError naming what is
// wrong with the name: unknown, not initialised, not a member, an algorithm no operation has).
Communicator communicator(std::string_view name);
// Collective over the world (every rank, in the same order, with the same arguments, while no
// other operation is being issued): `name`'s communicator with a tensor fusion of its own on
// name's backend (all of them for "auto"), made with `fusion`'s B and T and owned by the runtime
// (flushed and ended first thing in finalize()). `name` is a backend, "backend:algorithm" or
// "auto", not a group.
Communicator communicator(std::string_view name, const FusionOptions& fusion);

Work send(std::string_view backend, const void* buf, std::size_t count, DType dtype, int dst, bool async_op = false);
Work recv(std::string_view backend, void* buf, std::size_t count, DType dtype, int src, bool async_op = false);
Work barrier(std::string_view backend, bool async_op = false);
Work broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root, bool async_op = false);
// out is only written at root (may be nullptr elsewhere).
Work reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root,
            bool async_op = false);
Work all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                bool async_op = false);
// in: size()*count elements (block j for rank j); out: count elements.
Work reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                    bool async_op = false);
// in: count elements; out: size()*count elements.
Work all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                bool async_op = false);
Work gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root,
            bool async_op = false);
Work scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root,
             bool async_op = false);
// List form (PyTorch style): ins[j] goes to rank j, outs[j] comes from rank j.
Work all_to_all(std::string_view backend, const std::vector<const void*>& ins, const Counts& in_counts,
                const std::vector<void*>& outs, const Counts& out_counts, DType dtype, bool async_op = false);
// in and out: size()*count elements, block j to / from rank j.
Work all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                       bool async_op = false);
Work all_gatherv(std::string_view backend, const void* in, std::size_t count, void* out, const Counts& counts,
                 const Counts& displs, DType dtype, bool async_op = false);
// counts/displs matter at root only.
Work gatherv(std::string_view backend, const void* in, std::size_t count, void* out, const Counts& counts,
             const Counts& displs, DType dtype, int root, bool async_op = false);
Work scatterv(std::string_view backend, const void* in, const Counts& counts, const Counts& displs, void* out,
              std::size_t count, DType dtype, int root, bool async_op = false);
Work all_to_allv(std::string_view backend, const void* in, const Counts& send_counts, const Counts& send_displs,
                 void* out, const Counts& recv_counts, const Counts& recv_displs, DType dtype, bool async_op = false);

}  // namespace chorus::rt
