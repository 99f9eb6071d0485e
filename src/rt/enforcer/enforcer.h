#pragma once
// SYNDICATE's enforcer (Sec. 4.4, Pseudocode 2) on the runtime: the application submits
// comm-ops one at a time (submit() returns at once); the enforcer has each one's plan as steps
// (the motifs this rank takes part in) with global sequence numbers, and a progress thread that
// issues steps strictly in sequence order on every rank: step k is issued after step k-1 has
// been issued, once its comm-op has been submitted, the comm-op's DAG predecessors and the
// step's parents have completed, and every earlier step that shares one of its channels has
// completed. Operations go out asynchronously, so steps on disjoint channels overlap (a step that
// the next one in order must wait for anyway, because it shares a channel with it or is its
// parent, runs blocking on the progress thread: no hand-over to a backend thread); the output
// is written in place in the comm-op's buffers (no repacking copy: each motif works on its byte
// range of them). The time the progress thread waits for the application to submit the next
// comm-op in order is measured (the paper's busy loop; here a condition variable).
//
// Plain data in, so that the runtime does not depend on the optimizer: eval/real converts a
// SYNDICATE plan (syndicate/plan_json.h) into an EnforcerPlan for one rank.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rt/runtime.h"

namespace chorus::rt {

// One step of a comm-op as this rank runs it (a motif, or nothing when the rank has no part).
struct EnforcedStep {
  int seq = 0;
  CollectiveKind kind =
      CollectiveKind::kAllReduce;     // all_reduce | reduce | broadcast | all_to_allv | reduce_scatter | all_gather
  bool idle = false;                  // this rank takes no part in the step
  std::string group;                  // backend or group name the motif runs on
  int root = 0;                       // reduce / broadcast: root's rank in the group
  std::size_t offset = 0, count = 0;  // element range of the comm-op's buffer (all_reduce, reduce, broadcast)
  Counts send_counts, send_displs, recv_counts, recv_displs;  // all_to_allv, in elements
  // reduce_scatter / all_gather: elements [offset, offset + count) of each of the group's
  // `blocks` blocks of `block` elements (block r is rank r's part of the comm-op). A segment
  // (count < block) is strided and goes through a staging buffer (staging_elements()).
  std::size_t block = 0;
  int blocks = 0;
  std::vector<int> after;     // parent steps of the same comm-op
  std::vector<int> channels;  // channel ids: steps that share one never overlap
};

struct EnforcedOp {
  std::string name;
  // all_reduce: in place in `in`; all_to_all_single: `in` -> `out`; reduce_scatter: `in` (N
  // blocks) -> `out` (this rank's block, reduced); all_gather: `in` (this rank's block) -> `out`
  // (N blocks).
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<int> deps;  // comm-ops (indices) that must complete first
  std::vector<EnforcedStep> steps;
};

struct EnforcerPlan {
  std::vector<EnforcedOp> ops;
  DType dtype = DType::f32;
};

struct EnforcerStats {
  double submit_wait_ns = 0;  // progress thread waiting for the application's next comm-op
  // ... of which while a comm-op later in the plan's order had already been submitted: the
  // plan's order disagrees with the application's (the paper's replanning signal).
  double order_wait_ns = 0;
  std::vector<int> issue_order;  // (op, step) issued, encoded op * 65536 + step
  // Per sequence number, ns since start(): when this rank issued the step, and when its
  // operation completed here (an idle step completes at its issue).
  std::vector<double> issued_ns, completed_ns;
};

// Issues one step's motif for this rank on the comm-op's buffers (asynchronously, or blocking: then
// the runtime runs it on the calling thread when its lane is idle); a completed Work for an idle
// step. A strided step needs `staging` (staging_elements(step) elements) until finish_step() has
// run after its Work completed. Shared by the enforcer and by calibration runs of single steps.
Work run_step(Runtime& runtime, const EnforcedStep& step, DType dtype, void* in, void* out, bool async = true,
              void* staging = nullptr);
// The same on the process's default runtime (rt::init's).
Work run_step(const EnforcedStep& step, DType dtype, void* in, void* out, bool async = true, void* staging = nullptr);
std::size_t staging_elements(const EnforcedStep& step);  // 0: the step works on the buffers directly
// A strided all-gather segment, once its Work completed: the gathered blocks from `staging` to `out`.
void finish_step(const EnforcedStep& step, DType dtype, void* out, const void* staging);

class Enforcer {
 public:
  // Checks the plan (sequence numbers 0..S-1 each once, parents earlier, ranges); InputError.
  // The steps run on `runtime`'s backends and groups (EnforcedStep::group), which must outlive
  // the Enforcer.
  Enforcer(Runtime& runtime, EnforcerPlan plan);
  // The same on the process's default runtime (rt::init's).
  explicit Enforcer(EnforcerPlan plan);
  ~Enforcer();
  Enforcer(const Enforcer&) = delete;
  Enforcer& operator=(const Enforcer&) = delete;

  // Starts one run of the plan: every comm-op once. The progress thread starts here.
  void start();
  // The application submits comm-op `id` (each once per run): all_reduce on `in` in place;
  // all_to_all_single from `in` to `out`.
  void submit(int id, void* in, void* out);
  // Blocks until comm-op `id` has completed (its output complete); rethrows the run's error.
  void wait(int id);
  // Waits for the whole run and stops the progress thread; returns its statistics.
  EnforcerStats finish();
  // When the last start() was called: the origin of EnforcerStats' times.
  std::chrono::steady_clock::time_point started_at() const { return origin_; }

 private:
  void progress();
  Work issue(int op, int step);

  Runtime* runtime_;
  EnforcerPlan plan_;
  std::vector<std::pair<int, int>> by_seq_;  // seq -> (op, step)
  std::vector<char> blocking_;               // per seq: the next step must wait for this one
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<char> submitted_;
  std::vector<std::chrono::steady_clock::time_point> submit_time_;
  std::vector<int> issued_;  // per op: steps issued so far
  std::vector<void*> in_, out_;
  std::vector<std::vector<Work>> works_;                      // per op, per step
  std::vector<std::vector<std::vector<std::byte>>> staging_;  // per op, per step (strided steps)
  std::mutex finish_mu_;
  std::vector<char> unpacks_;   // per op: has a staged all-gather segment to unpack after it
  std::vector<char> finished_;  // per op: strided steps unpacked (guarded by finish_mu_)
  std::exception_ptr error_;
  // Completion times, written by the operations' completion callbacks (which may outlive a
  // failed run: shared with them).
  struct Clock {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<double> completed_ns;
    std::size_t pending = 0;
  };
  std::shared_ptr<Clock> clock_;
  std::chrono::steady_clock::time_point origin_;
  bool running_ = false;
  std::thread thread_;
  EnforcerStats stats_;
};

}  // namespace chorus::rt
