// PyTorch execution graphs (workload/pytorch_eg): graphs recorded here with Debian's torch 1.13
// (tests/data/pytorch_eg/record_graphs.py: a DDP step, an all-to-all between two linear layers)
// imported with hand-derived FLOPs, sizes and timelines; malformed graphs name the file, node
// id and field. With the torch profiler traces recorded around the same windows
// (<name>.<rank>.trace.json), the operators take the durations read from those files.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "core/error.h"
#include "sim/dag_executor.h"
#include "tests/common/hand_timelines.h"
#include "workload/pytorch_eg.h"
#include "workload/torch_profiler_trace.h"

namespace chorus {
namespace {

using workload::NodeKind;

std::string eg_data_path(const std::string& name) { return std::string(CHORUS_TEST_DATA_DIR) + "/pytorch_eg/" + name; }

std::string read_graph(const std::string& name) {
  std::ifstream in(std::string(CHORUS_TEST_DATA_DIR) + "/pytorch_eg/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const workload::Node* find(const workload::Dag& dag, const std::string& prefix) {
  for (const auto& n : dag.nodes)
    if (n.name.rfind(prefix, 0) == 0) return &n;
  return nullptr;
}

TEST(PytorchEg, DdpStepFlopsBucketAndDataFlow) {
  const auto pair = test_support::pair_network();
  const auto text = read_graph("ddp.0.json");
  ASSERT_TRUE(workload::looks_like_execution_graph(text));
  const auto dag = workload::import_execution_graph(text, "ddp.0.json", pair);
  // The 16-32-4 MLP: forward addmm [8,16]x[16,32] and [8,32]x[32,4]; backward mm [8,4]x[4,32],
  // [4,8]x[8,32] (the last layer's input and weight gradients), [32,8]x[8,16] (the first
  // layer's weight gradient): 2 x (4096 + 1024 + 1024 + 1024 + 4096) FLOPs.
  double flops = 0;
  int comms = 0;
  for (const auto& n : dag.nodes) {
    flops += n.flops;
    comms += n.kind == NodeKind::kComm;
  }
  EXPECT_DOUBLE_EQ(flops, 2.0 * (4096 + 1024 + 1024 + 1024 + 4096));
  ASSERT_EQ(comms, 1);
  // One bucket of every parameter: 16 x 32 + 32 + 32 x 4 + 4 = 676 floats.
  const auto* ar = find(dag, "gloo:all_reduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->op, CollectiveKind::kAllReduce);
  EXPECT_DOUBLE_EQ(ar->bytes, 676.0 * 4);
  EXPECT_EQ(ar->dims, (std::vector<int>{0}));
  // DDP copies the reduced bucket back into the gradients (views of the bucket, then copies):
  // those operators wait for the all-reduce; the backward operators before it do not.
  const int ar_index = static_cast<int>(ar - dag.nodes.data());
  auto waits_for_all_reduce = [&](int node) {
    std::vector<int> stack = {node};
    std::vector<bool> seen(dag.nodes.size(), false);
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      if (k == ar_index) return true;
      if (seen[static_cast<size_t>(k)]) continue;
      seen[static_cast<size_t>(k)] = true;
      for (int d : dag.nodes[static_cast<size_t>(k)].deps) stack.push_back(d);
    }
    return false;
  };
  int copies = 0;
  for (std::size_t k = 0; k < dag.nodes.size(); ++k) {
    const auto& n = dag.nodes[k];
    if (n.name.rfind("torch.distributed.ddp.reducer::copy_bucket_to_grad", 0) == 0) {
      ++copies;
      EXPECT_TRUE(waits_for_all_reduce(static_cast<int>(k))) << n.name;
    }
    if (n.name.find("Backward") != std::string::npos) {
      EXPECT_FALSE(waits_for_all_reduce(static_cast<int>(k))) << n.name;
    }
  }
  EXPECT_EQ(copies, 4);
  EXPECT_EQ(find(dag, "Optimizer.step")->compute, workload::ComputeKind::kOptimizer);
  EXPECT_GT(test_support::run(dag, pair).result.total_ns, 0);
}

TEST(PytorchEg, CollectiveRecordsInsideAnOperatorAreLifted) {
  // torch 1.13 files a backend's record under whatever operator is open when it finishes: in
  // ddp.0.json the step's gloo:all_reduce (node 233) sits under c10d::allreduce_ (232) under the
  // last AccumulateGrad (222); in ddp.1.json it is an operator of its own (232). Both ranks
  // import one all-reduce of the 676-float bucket, after the AccumulateGrad, and the same FLOPs.
  const auto pair = test_support::pair_network();
  for (const auto* file : {"ddp.0.json", "ddp.1.json"}) {
    const auto dag = workload::import_execution_graph(read_graph(file), file, pair);
    std::vector<int> comms;
    double flops = 0;
    for (std::size_t k = 0; k < dag.nodes.size(); ++k) {
      flops += dag.nodes[k].flops;
      if (dag.nodes[k].kind == NodeKind::kComm) comms.push_back(static_cast<int>(k));
    }
    ASSERT_EQ(comms.size(), 1u) << file;
    const auto& ar = dag.nodes[static_cast<size_t>(comms[0])];
    EXPECT_EQ(ar.op, CollectiveKind::kAllReduce) << file;
    EXPECT_DOUBLE_EQ(ar.bytes, 676.0 * 4) << file;
    EXPECT_DOUBLE_EQ(flops, 2.0 * (4096 + 1024 + 1024 + 1024 + 4096)) << file;
    // 27 compute operators around it (the recorded step's operators under the thread's root).
    EXPECT_EQ(dag.nodes.size(), 28u) << file;
    ASSERT_FALSE(ar.deps.empty()) << file;
    EXPECT_NE(dag.nodes[static_cast<size_t>(ar.deps.back())].name.find("AccumulateGrad"), std::string::npos) << file;
  }
}

TEST(PytorchEg, ProfilerTraceReaderTopLevelEventsAndCollectiveTime) {
  // A Kineto-style trace by hand: a step annotation and a Python frame around the operators are
  // skipped; aten::linear [10, 40) holds aten::addmm; an autograd function [50, 90)
  // holds c10d::allreduce_ [55, 75) holding gloo work [56, 60); a top-level c10d::broadcast_
  // [95, 97); a flow event and metadata are skipped; another thread's event is top-level.
  const std::string trace = R"j({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 7, "tid": 7, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 7, "tid": 7, "ts": 5, "dur": 90},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 7, "tid": 7, "ts": 10, "dur": 30,
     "args": {"Record function id": 4}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 7, "tid": 7, "ts": 12, "dur": 20, "args": {"Record function id": 5}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: X", "pid": 7, "tid": 7, "ts": 50, "dur": 40},
    {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 7, "tid": 7, "ts": 55, "dur": 20},
    {"ph": "X", "cat": "cpu_op", "name": "c10d::inner", "pid": 7, "tid": 7, "ts": 56, "dur": 4},
    {"ph": "X", "cat": "cpu_op", "name": "c10d::broadcast_", "pid": 7, "tid": 7, "ts": 95, "dur": 2},
    {"ph": "s", "name": "flow", "pid": 7, "tid": 7, "ts": 11, "id": 1},
    {"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "main"}},
    {"ph": "X", "cat": "cpu_op", "name": "gloo:all_reduce", "pid": 7, "tid": 9, "ts": 57, "dur": 30}]})j";
  const auto t = workload::read_profiler_trace(trace, "t.json");
  EXPECT_EQ(t.complete_events, 9u);
  // Top level by start: aten::linear (10), the autograd function (50), c10d::broadcast_ (95); the
  // backend's record gloo:all_reduce (57, its own thread) is set aside, not an operator.
  std::vector<std::string> names;
  for (const auto& e : t.top_level) names.push_back(e.name);
  ASSERT_EQ(names,
            (std::vector<std::string>{"aten::linear", "autograd::engine::evaluate_function: X", "c10d::broadcast_"}));
  ASSERT_EQ(t.backend_records.size(), 1u);
  EXPECT_EQ(t.backend_records[0].name, "gloo:all_reduce");
  EXPECT_EQ(t.backend_records[0].thread, "7/9");
  EXPECT_DOUBLE_EQ(t.top_level[0].dur_us, 30);
  EXPECT_EQ(t.top_level[0].record_function_id, 4);
  EXPECT_EQ(t.top_level[0].pid, 7);
  EXPECT_EQ(t.top_level[0].thread, "7/7");
  EXPECT_DOUBLE_EQ(t.top_level[0].collective_us, 0);
  EXPECT_DOUBLE_EQ(t.top_level[1].collective_us, 20);  // the outermost c10d:: call only, not c10d::inner too
  EXPECT_DOUBLE_EQ(t.top_level[2].collective_us, 2);   // a c10d:: call of its own is all collective
  EXPECT_EQ(t.top_level[1].record_function_id, -1);
  // Events enclosed with itself: linear + addmm; autograd + allreduce_ + inner; broadcast_ alone.
  EXPECT_EQ(t.top_level[0].events, 2u);
  EXPECT_EQ(t.top_level[1].events, 3u);
  EXPECT_EQ(t.top_level[2].events, 1u);
  // Between operators: 40..50 and 90..95, no record in flight (gloo's is 57..87): all host time.
  EXPECT_DOUBLE_EQ(t.top_level[0].gap_after_us, 10);
  EXPECT_DOUBLE_EQ(t.top_level[1].gap_after_us, 5);
  EXPECT_DOUBLE_EQ(t.top_level[2].gap_after_us, 0);  // the thread's last
  EXPECT_DOUBLE_EQ(t.top_level[0].wait_after_us, 0);
}

TEST(PytorchEg, ProfilerTraceGapsSplitIntoHostTimeAndWaits) {
  // One thread: a [0, 10) holding a child, b [40, 50), c [60, 70); chorus:all_reduce in flight
  // [12, 30) and [35, 45) (the second overlaps b: only 35..40 of it lies in the gap). After a: 30
  // us, of which 18 + 5 = 23 wait and 7 host time; after b: 10 us, no record in flight.
  const std::string trace = R"j([
    {"ph": "X", "name": "aten::a", "pid": "CPU functions", "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "name": "aten::child", "pid": "CPU functions", "tid": 1, "ts": 2, "dur": 3},
    {"ph": "X", "name": "chorus:all_reduce", "pid": "CPU functions", "tid": 1, "ts": 12, "dur": 18},
    {"ph": "X", "name": "chorus:all_reduce", "pid": "CPU functions", "tid": 1, "ts": 35, "dur": 10},
    {"ph": "X", "name": "aten::b", "pid": "CPU functions", "tid": 1, "ts": 40, "dur": 10},
    {"ph": "X", "name": "aten::c", "pid": "CPU functions", "tid": 1, "ts": 60, "dur": 10}])j";
  const auto t = workload::read_profiler_trace(trace, "t.json");
  ASSERT_EQ(t.top_level.size(), 3u);
  EXPECT_EQ(t.backend_records.size(), 2u);
  EXPECT_EQ(t.top_level[0].events, 2u);
  EXPECT_DOUBLE_EQ(t.top_level[0].gap_after_us, 7);
  EXPECT_DOUBLE_EQ(t.top_level[0].wait_after_us, 23);
  EXPECT_DOUBLE_EQ(t.top_level[1].gap_after_us, 10);
  EXPECT_DOUBLE_EQ(t.top_level[1].wait_after_us, 0);
}

TEST(PytorchEg, ProfilerTraceChildEndingOneMicrosecondAfterItsParent) {
  // The legacy profiler's whole microseconds (start and duration rounded down apart): aten::linear
  // [10, 40) and its aten::addmm [12, 41), which ends 1 us after it, is its child, not a second
  // top-level operator (which would count addmm's 29 us twice); aten::b [40, 45) starts at
  // linear's end and aten::c [45, 46) at b's: siblings. A child 2 us past its parent is not
  // rounding: aten::d [50, 60) and aten::e [55, 62) are both top-level.
  const std::string trace = R"j([
    {"ph": "X", "name": "aten::linear", "pid": "CPU functions", "tid": 1, "ts": 10, "dur": 30},
    {"ph": "X", "name": "aten::addmm", "pid": "CPU functions", "tid": 1, "ts": 12, "dur": 29},
    {"ph": "X", "name": "aten::copy_", "pid": "CPU functions", "tid": 1, "ts": 30, "dur": 11},
    {"ph": "X", "name": "aten::b", "pid": "CPU functions", "tid": 1, "ts": 40, "dur": 5},
    {"ph": "X", "name": "aten::c", "pid": "CPU functions", "tid": 1, "ts": 45, "dur": 1},
    {"ph": "X", "name": "aten::d", "pid": "CPU functions", "tid": 1, "ts": 50, "dur": 10},
    {"ph": "X", "name": "aten::e", "pid": "CPU functions", "tid": 1, "ts": 55, "dur": 7}])j";
  const auto t = workload::read_profiler_trace(trace, "t.json");
  std::vector<std::string> names;
  for (const auto& e : t.top_level) names.push_back(e.name);
  ASSERT_EQ(names, (std::vector<std::string>{"aten::linear", "aten::b", "aten::c", "aten::d", "aten::e"}));
  EXPECT_EQ(t.top_level[0].events, 3u);  // linear, addmm and addmm's copy_ (also 41: inside addmm's clamped end)
  EXPECT_DOUBLE_EQ(t.top_level[0].gap_after_us, 0);  // b starts at linear's end
  EXPECT_DOUBLE_EQ(t.top_level[2].gap_after_us, 4);  // 46..50
  EXPECT_EQ(t.top_level[3].events, 1u);
}

TEST(PytorchEg, ProfilerTraceWaitForACollectiveInsideAnOperator) {
  // torch 1.13's all_to_all_single has no c10d:: operator: the autograd function _AlltoAllSingle
  // [100, 200) issues it and waits. Its children: aten::empty [101, 105), aten::view [150, 160)
  // (a child running while a record is in flight is not waiting) and aten::view [195, 199). The
  // backend's records [106, 150) and [140, 189) (merged: 106..189, 83 us), both inside it, less
  // the child 150..160: 73 us waited inside. A record that starts inside but ends after it
  // ([196, 230): asynchronous) is no wait inside it; nor is anything inside a c10d:: call
  // (c10d::allreduce_ [300, 320) holding the record [305, 315)). aten::mm [400, 450) holds no
  // record: 0.
  const std::string trace = R"j([
    {"ph": "X", "name": "_AlltoAllSingle", "pid": "CPU functions", "tid": 1, "ts": 100, "dur": 100},
    {"ph": "X", "name": "aten::empty", "pid": "CPU functions", "tid": 1, "ts": 101, "dur": 4},
    {"ph": "X", "name": "chorus:all_to_all_single", "pid": "CPU functions", "tid": 1, "ts": 106, "dur": 44},
    {"ph": "X", "name": "chorus:all_to_all_single", "pid": "CPU functions", "tid": 1, "ts": 140, "dur": 49},
    {"ph": "X", "name": "aten::view", "pid": "CPU functions", "tid": 1, "ts": 150, "dur": 10},
    {"ph": "X", "name": "aten::view", "pid": "CPU functions", "tid": 1, "ts": 195, "dur": 4},
    {"ph": "X", "name": "chorus:all_reduce", "pid": "CPU functions", "tid": 1, "ts": 196, "dur": 34},
    {"ph": "X", "name": "c10d::allreduce_", "pid": "CPU functions", "tid": 1, "ts": 300, "dur": 20},
    {"ph": "X", "name": "chorus:all_reduce", "pid": "CPU functions", "tid": 1, "ts": 305, "dur": 10},
    {"ph": "X", "name": "aten::mm", "pid": "CPU functions", "tid": 1, "ts": 400, "dur": 50}])j";
  auto t = workload::read_profiler_trace(trace, "t.json");
  ASSERT_EQ(t.top_level.size(), 3u);
  EXPECT_DOUBLE_EQ(t.top_level[0].wait_inside_us, 73);
  EXPECT_DOUBLE_EQ(t.top_level[0].collective_us, 0);
  EXPECT_DOUBLE_EQ(t.top_level[1].wait_inside_us, 0);
  EXPECT_DOUBLE_EQ(t.top_level[1].collective_us, 20);
  EXPECT_DOUBLE_EQ(t.top_level[2].wait_inside_us, 0);
  // After _AlltoAllSingle (200..300): 200..230 with the asynchronous record in flight, a wait;
  // 70 us host time.
  EXPECT_DOUBLE_EQ(t.top_level[0].wait_after_us, 30);
  EXPECT_DOUBLE_EQ(t.top_level[0].gap_after_us, 70);
}

TEST(PytorchEg, DurationsFromTheProfilerTraceTimelineByHand) {
  // alltoall.0.trace.json (the legacy profiler's list: Debian's torch 1.13 has no Kineto) has these
  // top-level events on its thread 1: aten::linear ts 382 dur 281, aten::empty_like ts 738 dur 42,
  // aten::linear ts 4781 dur 270 (us), and gloo:all_to_all on thread 3; no c10d:: call. The graph's
  // compute operators linear #9, empty_like #23, linear #31 match them by name and order: 281000,
  // 42000 and 270000 ns. On the pair at 1 byte/ns the all-to-all (2048 bytes, half sent) takes
  // 1024 ns after the first linear: 281000..282024; empty_like 281000..323000; the second linear
  // waits for both: 323000..593000. All compute: 593000 ns of forward; nothing exposed.
  const auto pair = test_support::pair_network();
  workload::ExecutionGraphOptions with;
  with.profiler_trace = eg_data_path("alltoall.0.trace.json");
  std::string notes;
  const auto dag =
      workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair, with, &notes);
  ASSERT_EQ(dag.nodes.size(), 4u);
  EXPECT_DOUBLE_EQ(dag.nodes[0].duration_ns, 281000);
  EXPECT_DOUBLE_EQ(dag.nodes[1].duration_ns, 42000);
  EXPECT_EQ(dag.nodes[2].kind, NodeKind::kComm);
  EXPECT_DOUBLE_EQ(dag.nodes[3].duration_ns, 270000);
  EXPECT_NE(notes.find("3 of 3 compute operators took their durations from the trace (by name and order)"),
            std::string::npos)
      << notes;
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  const auto r = sim::simulate_workload(dag, pair, o).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 593000);
  EXPECT_DOUBLE_EQ(r.forward_compute_ns, 593000);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 0);
  // Two iterations repeat the measured window.
  with.iterations = 2;
  const auto dag2 = workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair, with);
  EXPECT_DOUBLE_EQ(sim::simulate_workload(dag2, pair, o).result.total_ns, 2 * 593000);
}

TEST(PytorchEg, ProfilerTraceMedianOverSteps) {
  // Three steps of [aten::a, Optimizer.step#SGD.step]: a lasts 10, 90 (a step slowed by other
  // work) and 20 us; the host time after a (up to the step) 2, 40, 4 us; after the step event (up
  // to the next step's a) 1 and 3 us, none after the last. Step times: 10+2+5+1 = 18, 90+40+5+3 =
  // 138, 20+4+5+0 = 29: the median step is the third. Every step takes its times: a 20 us and 4 us
  // after it, the step event 5 us and, the trace's last, the second step's 3 us after it. Keeping
  // 2 steps leaves 4 events.
  const std::string trace = R"j([
    {"ph": "X", "name": "aten::a", "pid": "CPU functions", "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "name": "Optimizer.step#SGD.step", "pid": "CPU functions", "tid": 1, "ts": 12, "dur": 5},
    {"ph": "X", "name": "aten::a", "pid": "CPU functions", "tid": 1, "ts": 18, "dur": 90},
    {"ph": "X", "name": "Optimizer.step#SGD.step", "pid": "CPU functions", "tid": 1, "ts": 148, "dur": 5},
    {"ph": "X", "name": "aten::a", "pid": "CPU functions", "tid": 1, "ts": 156, "dur": 20},
    {"ph": "X", "name": "Optimizer.step#SGD.step", "pid": "CPU functions", "tid": 1, "ts": 180, "dur": 5}])j";
  auto t = workload::read_profiler_trace(trace, "t.json");
  EXPECT_EQ(workload::median_over_steps(t, "Optimizer.step", 2), 3u);
  ASSERT_EQ(t.top_level.size(), 4u);
  for (int s = 0; s < 2; ++s) {
    EXPECT_DOUBLE_EQ(t.top_level[2 * s].dur_us, 20);
    EXPECT_DOUBLE_EQ(t.top_level[2 * s].gap_after_us, 4);
    EXPECT_DOUBLE_EQ(t.top_level[2 * s + 1].dur_us, 5);
    EXPECT_DOUBLE_EQ(t.top_level[2 * s + 1].gap_after_us, 3);
  }
  // Events after the last step's end: not split, unchanged.
  auto u = workload::read_profiler_trace(
      trace.substr(0, trace.size() - 1) +
          R"j(, {"ph": "X", "name": "aten::b", "pid": 1, "tid": 1, "ts": 190, "dur": 1}])j",
      "u.json");
  EXPECT_EQ(workload::median_over_steps(u, "Optimizer.step"), 0u);
  EXPECT_DOUBLE_EQ(u.top_level[2].dur_us, 90);
}

TEST(PytorchEg, HostTimeBetweenOperatorsAndTheRecordingsCost) {
  // The same trace with host_gaps and 1 us an event. By hand from the file (thread 1): linear
  // [382, 663) encloses 9 events (t, transpose, as_strided, addmm, expand, as_strided, copy_,
  // resolve_conj x2): 10 events; the next top-level event starts at 738, no backend record in
  // flight: + 75 us; 281 + 75 - 10 = 346 us. empty_like [738, 780) with empty_strided: 2 events;
  // the next at 4781: 4001 us, of which gloo:all_to_all (thread 3) covers [1083, 4653), 3570 us:
  // + 431; 42 + 431 - 2 = 471 us. The last linear, 10 events, no next event: 270 - 10 = 260 us.
  const auto pair = test_support::pair_network();
  workload::ExecutionGraphOptions with;
  with.profiler_trace = eg_data_path("alltoall.0.trace.json");
  with.host_gaps = true;
  with.overhead_us_per_event = 1.0;
  std::string notes;
  const auto dag =
      workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair, with, &notes);
  ASSERT_EQ(dag.nodes.size(), 4u);
  EXPECT_DOUBLE_EQ(dag.nodes[0].duration_ns, 346000);
  EXPECT_DOUBLE_EQ(dag.nodes[1].duration_ns, 471000);
  EXPECT_DOUBLE_EQ(dag.nodes[3].duration_ns, 260000);
  // Added: 75 + 431 us of host time; taken off: 22 events.
  EXPECT_NE(notes.find("the host's time between operators added (0.506 ms), the recording's cost taken off (0.022 ms"),
            std::string::npos)
      << notes;
}

TEST(PytorchEg, DdpDurationsLeaveTheCollectivesIssueOut) {
  // ddp.0.trace.json: every one of the step's 27 compute operators has a top-level event of its
  // name, as many as the graph has. By hand from the file: DistributedDataParallel.forward dur
  // 5588 us holds c10d::broadcast_ 141 and 632 (DDP's broadcasts): 4815 us, less its waits for
  // them (their gloo:broadcast records, from the forward's start: 717..2771 with no child of the
  // forward running, 2054 us, and 4175..4504 less 4175..4232 under the second c10d::broadcast_
  // (3600..4232), 272 us): 2489 us; the last
  // AccumulateGrad (ts 8504) dur 6701 holds c10d::allreduce_ 6590: 111 us; Optimizer.step 188 us.
  const auto pair = test_support::pair_network();
  workload::ExecutionGraphOptions with;
  with.profiler_trace = eg_data_path("ddp.0.trace.json");
  std::string notes;
  const auto dag = workload::import_execution_graph(read_graph("ddp.0.json"), "ddp.0.json", pair, with, &notes);
  EXPECT_NE(notes.find("27 of 27 compute operators"), std::string::npos) << notes;
  EXPECT_DOUBLE_EQ(find(dag, "DistributedDataParallel.forward")->duration_ns, 2489000);
  EXPECT_DOUBLE_EQ(find(dag, "Optimizer.step")->duration_ns, 188000);
  const workload::Node* last_accumulate = nullptr;
  for (const auto& n : dag.nodes) {
    if (n.name.find("AccumulateGrad") != std::string::npos) last_accumulate = &n;
    if (n.kind == NodeKind::kCompute) {
      EXPECT_GE(n.duration_ns, 0) << n.name;
    }
  }
  ASSERT_NE(last_accumulate, nullptr);
  EXPECT_DOUBLE_EQ(last_accumulate->duration_ns, 111000);
}

TEST(PytorchEg, BadProfilerTracesNameFileEventAndField) {
  const auto pair = test_support::pair_network();
  const auto dir = std::string(::testing::TempDir());
  auto expect_error = [&](const std::string& trace_text, const std::vector<std::string>& needles,
                          const std::string& graph = "alltoall.0.json") {
    const auto path = dir + "/chorus_profile_trace.json";
    {
      std::ofstream out(path);
      out << trace_text;
    }
    workload::ExecutionGraphOptions with;
    with.profiler_trace = path;
    try {
      workload::import_execution_graph(read_graph(graph), graph, pair, with);
      ADD_FAILURE() << "no error for " << trace_text.substr(0, 80);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  const auto good = read_graph("alltoall.0.trace.json");
  expect_error(good.substr(0, good.size() / 2), {"not JSON", "truncated"});
  expect_error(R"j({"events": []})j", {"field traceEvents: missing"});
  expect_error(R"j([{"ph": "X", "ts": 1, "dur": 2, "tid": 1}])j", {"event 0", "field name: missing"});
  expect_error(R"j([{"ph": "M", "name": "a"}, {"ph": "X", "name": "aten::linear", "ts": 1, "dur": -2, "tid": 1}])j",
               {"event 1", "field dur", "-2"});
  expect_error(R"j([{"ph": "X", "name": "aten::linear", "ts": "1", "dur": 2, "tid": 1}])j", {"event 0", "field ts"});
  expect_error(R"j([{"ph": "X", "name": "aten::linear", "ts": 1, "dur": 2}])j", {"event 0", "field tid: missing"});
  expect_error(R"j([{"ph": "i", "name": "aten::linear", "ts": 1}])j", {"no complete event"});
  // Another graph's trace: the DDP step's operators are not the all-to-all's.
  expect_error(read_graph("ddp.0.trace.json"), {"no top-level event matches a compute operator of alltoall.0.json"});
  // A Kineto trace of another process (the graph was recorded by pid 13227).
  expect_error(R"j({"traceEvents": [{"ph": "X", "name": "aten::linear", "pid": 41, "tid": 41, "ts": 1, "dur": 2}]})j",
               {"field pid", "process(es) 41", "recorded by process 13227"});
  // Record function ids (Kineto) that name other operators: nothing matches.
  expect_error(R"j({"traceEvents": [{"ph": "X", "name": "aten::mm", "pid": 13227, "tid": 1, "ts": 1, "dur": 2,
                                     "args": {"Record function id": 183}}]})j",
               {"by record function id and name"});
  // A missing file.
  workload::ExecutionGraphOptions missing;
  missing.profiler_trace = dir + "/no_such_trace.json";
  EXPECT_THROW(workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair, missing),
               InputError);
}

TEST(PytorchEg, ProcessGroupsTheUserNames) {
  // torch 1.13 records no group (c10d::allreduce_'s ProcessGroup input is "<Object>", new_group
  // leaves no node): collectives span the whole network unless collective_dims says otherwise.
  // On a 2 x 4 network, an all-gather of 100 floats per NPU: over dimension 0 its result is
  // 400 x 2 = 800 bytes, over both 400 x 8 = 3200; collective 2, an all-reduce of 16 floats,
  // over dimension 1: 64 bytes on {1}.
  net::Network net;
  net.name = "2x4";
  net.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 8.0, 1, 0});
  net.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 4, 8.0, 1, 0});
  const std::string graph = R"j({"schema": "1.0.1", "nodes": [
    {"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "parent": 1, "tid": 1, "inputs": [],
     "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []},
    {"name": "gloo:all_gather", "id": 5, "parent": 2, "tid": 1, "inputs": [[1, 10, 0, 100, 4, "cpu"]],
     "input_shapes": [[100]], "input_types": ["Tensor(float)"], "outputs": [], "output_shapes": [], "output_types": []},
    {"name": "gloo:all_reduce", "id": 6, "parent": 2, "tid": 1, "inputs": [[2, 11, 0, 16, 4, "cpu"]],
     "input_shapes": [[16]], "input_types": ["Tensor(float)"], "outputs": [], "output_shapes": [], "output_types": []}]})j";
  const auto whole = workload::import_execution_graph(graph, "g.json", net);
  EXPECT_EQ(whole.nodes[0].dims, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(whole.nodes[0].bytes, 3200);
  workload::ExecutionGraphOptions o;
  o.collective_dims = workload::parse_collective_dims("1=0;2=1", "--collective-dims");
  const auto split = workload::import_execution_graph(graph, "g.json", net, o);
  EXPECT_EQ(split.nodes[0].dims, (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(split.nodes[0].bytes, 800);
  EXPECT_EQ(split.nodes[1].dims, (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(split.nodes[1].bytes, 64);
  EXPECT_EQ(workload::parse_collective_dims("2=1,0;", "f"), (std::map<int, std::vector<int>>{{2, {1, 0}}}));
  auto expect_error = [&](const std::function<void()>& f, const std::vector<std::string>& needles) {
    try {
      f();
      ADD_FAILURE() << "no error; expected " << needles.front();
    } catch (const InputError& e) {
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  for (const auto* bad : {"x=0", "1=", "0=1", "1:0", "1=0,,1", "1=-1"})
    expect_error([&] { workload::parse_collective_dims(bad, "--collective-dims"); }, {"--collective-dims", "expected"});
  expect_error([&] { workload::parse_collective_dims("1=0;1=1", "--collective-dims"); }, {"collective 1 given twice"});
  o.collective_dims = {{3, {0}}};
  expect_error([&] { workload::import_execution_graph(graph, "g.json", net, o); },
               {"g.json", "collective 3", "has 2 collective"});
  o.collective_dims = {{1, {2}}};
  expect_error([&] { workload::import_execution_graph(graph, "g.json", net, o); },
               {"g.json", "collective 1", "in 0..1", "got 2"});
  o.collective_dims = {{1, {0, 0}}};
  expect_error([&] { workload::import_execution_graph(graph, "g.json", net, o); }, {"collective 1", "distinct"});
}

TEST(PytorchEg, KinetoRecordFunctionIdsMatchTheGraphsRfId) {
  // A Kineto-layout trace by hand for alltoall.0.json (pid 13227): its operators' rf_id are
  // linear #9: 183, empty_like #23: 193, linear #31: 196. Events carry those ids, listed out of
  // order and with a name-twin of id 999 that must not match: 10, 20 and 30 us.
  const std::string trace = R"j({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 13227, "tid": 5, "ts": 900, "dur": 30, "args": {"Record function id": 196}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 13227, "tid": 5, "ts": 100, "dur": 10, "args": {"Record function id": 183}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 13227, "tid": 5, "ts": 50, "dur": 5, "args": {"Record function id": 999}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty_like", "pid": 13227, "tid": 5, "ts": 200, "dur": 20, "args": {"Record function id": 193}}]})j";
  const auto path = std::string(::testing::TempDir()) + "/chorus_kineto_trace.json";
  {
    std::ofstream out(path);
    out << trace;
  }
  workload::ExecutionGraphOptions with;
  with.profiler_trace = path;
  std::string notes;
  const auto dag = workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json",
                                                    test_support::pair_network(), with, &notes);
  EXPECT_DOUBLE_EQ(dag.nodes[0].duration_ns, 10000);
  EXPECT_DOUBLE_EQ(dag.nodes[1].duration_ns, 20000);
  EXPECT_DOUBLE_EQ(dag.nodes[3].duration_ns, 30000);
  EXPECT_NE(notes.find("3 of 3 compute operators took their durations from the trace (by record function id and name)"),
            std::string::npos)
      << notes;
}

TEST(PytorchEg, AllToAllTimelineByHand) {
  // linear [8,16]x[16,64] (16384 FLOPs), empty_like (the 2048-byte output buffer), the
  // all-to-all of the first linear's 8 x 64 floats (2048 bytes), linear [8,64]x[64,16] (16384).
  // At 16.384 FLOP/ns and 1024 bytes/ns each linear is compute-bound: 1000 ns (its 6912 / 6720
  // bytes take under 7 ns); empty_like moves 4096 bytes: 4 ns. On the pair (1 byte/ns) the
  // all-to-all sends half its bytes: 1024 ns. linear 0..1000; empty_like 1000..1004; the
  // all-to-all 1000..2024 (it waits for the tensor it sends); its result is not recorded, so the
  // thread's next operator, the second linear, waits for it: 2024..3024.
  const auto pair = test_support::pair_network();
  const auto dag = workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair);
  ASSERT_EQ(dag.nodes.size(), 4u);
  EXPECT_EQ(dag.nodes[2].op, CollectiveKind::kAllToAll);
  EXPECT_DOUBLE_EQ(dag.nodes[2].bytes, 2048);
  EXPECT_EQ(dag.nodes[2].deps, (std::vector<int>{0}));
  EXPECT_EQ(dag.nodes[3].deps, (std::vector<int>{1, 2}));
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  o.compute.peak_tflops = 0.016384;
  o.compute.memory_bandwidth_gbs = 1024;
  const auto r = sim::simulate_workload(dag, pair, o).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 3024);
  EXPECT_DOUBLE_EQ(r.forward_compute_ns, 2004);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 1020);
  // Two iterations: the second starts where the first ended.
  workload::ExecutionGraphOptions two;
  two.iterations = 2;
  const auto dag2 = workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair, two);
  EXPECT_EQ(dag2.iterations, 2);
  EXPECT_DOUBLE_EQ(sim::simulate_workload(dag2, pair, o).result.total_ns, 2 * 3024);
}

TEST(PytorchEg, RanksAgreeOrTheFieldThatDiffersIsNamed) {
  const auto pair = test_support::pair_network();
  const auto ddp0 = workload::import_execution_graph(read_graph("ddp.0.json"), "ddp.0.json", pair);
  const auto ddp1 = workload::import_execution_graph(read_graph("ddp.1.json"), "ddp.1.json", pair);
  EXPECT_NO_THROW(workload::check_same_communication(ddp0, "ddp.0.json (rank 0)", ddp1, "ddp.1.json (rank 1)"));
  auto expect_error = [&](const workload::Dag& other, const std::vector<std::string>& needles) {
    try {
      workload::check_same_communication(ddp0, "r0", other, "r1");
      ADD_FAILURE() << "no error; expected " << needles.front();
    } catch (const InputError& e) {
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  expect_error(workload::import_execution_graph(read_graph("alltoall.1.json"), "alltoall.1.json", pair),
               {"r1: collective 1 ('gloo:all_to_all #26'): field op: alltoall, but r0 has allreduce"});
  auto other = ddp1;
  for (auto& n : other.nodes)
    if (n.kind == NodeKind::kComm) n.bytes += 4;
  expect_error(other, {"r1: collective 1", "field bytes: 2708, but r0 has 2704"});
  other = ddp1;
  other.iterations = 2;
  expect_error(other, {"r1: field iterations: 2, but r0 has 1"});
  other = ddp1;
  std::erase_if(other.nodes, [](const workload::Node& n) { return n.kind == NodeKind::kComm; });
  expect_error(other, {"r1: 0 collectives, but r0 has 1"});
}

TEST(PytorchEg, MalformedGraphsNameFileNodeAndField) {
  const auto pair = test_support::pair_network();
  auto expect_error = [&](const std::string& text, const std::vector<std::string>& needles) {
    try {
      workload::import_execution_graph(text, "g.json", pair);
      ADD_FAILURE() << "no error for " << text.substr(0, 80);
    } catch (const InputError& e) {
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  const auto good = read_graph("alltoall.0.json");
  expect_error(good.substr(0, good.size() / 2), {"g.json", "not JSON", "truncated"});
  expect_error("{\"schema\": \"1.0.1\"}", {"g.json", "field nodes"});
  const std::string thread =
      R"j({"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "parent": 1, "tid": 1, "inputs": [],
          "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []})j";
  auto graph = [&](const std::string& node) {
    return R"j({"schema": "1.0.1", "nodes": [)j" + thread + ", " + node + "]}";
  };
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": 1})j"),
               {"node id 5", "field inputs", "missing"});
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": "one"})j"), {"node id 5", "field tid"});
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": 1, "inputs": [[1, 2, 0, -4, 4, "cpu"]],
                         "input_shapes": [[2, 2]], "input_types": ["Tensor(float)"], "outputs": [],
                         "output_shapes": [], "output_types": []})j"),
               {"node id 5", "field inputs[0]", "-4"});
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": 1,
                         "inputs": [[1, 2, 0, 4, 4, "cpu"], [3, 4, 0, 6, 4, "cpu"]],
                         "input_shapes": [[2, 2], [3, 2]], "input_types": ["Tensor(float)", "Tensor(float)"],
                         "outputs": [], "output_shapes": [], "output_types": []})j"),
               {"node id 5", "field input_shapes", "aten::mm needs"});
  expect_error(graph(R"j({"name": "gloo:broadcast", "id": 5, "parent": 2, "tid": 1, "inputs": [],
                         "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []})j"),
               {"node id 5", "field name", "'gloo:broadcast' is not simulated"});
  expect_error(R"j({"schema": "1.0.1", "nodes": []})j", {"g.json", "no operator"});
}

// Nodes that are each other's parents (issue 42: 2 -> 3 -> 2 grew to 2 GB and ended in
// std::bad_alloc): refused, naming the file and the node ids around the cycle, wherever the cycle
// is (between operators, below an operator, a node its own grandparent through a third).
TEST(PytorchEg, ParentCyclesAreRefusedNamingTheNodes) {
  const auto pair = test_support::pair_network();
  auto node = [](int id, int parent, const std::string& name) {
    return fmt::format(R"j({{"name": "{}", "id": {}, "parent": {}, "tid": 1, "inputs": [], "input_shapes": [],
                           "input_types": [], "outputs": [], "output_shapes": [], "output_types": []}})j",
                       name, id, parent);
  };
  const std::string thread = node(1, 1, "[pytorch|profiler|execution_graph|thread]");
  auto expect_cycle = [&](const std::vector<std::string>& nodes, const std::string& cycle) {
    std::string text = R"j({"schema": "1.0.1", "nodes": [)j" + thread;
    for (const auto& n : nodes) text += ", " + n;
    text += "]}";
    try {
      workload::import_execution_graph(text, "cycle.json", pair);
      ADD_FAILURE() << "no error for the cycle " << cycle;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "cycle.json");
      EXPECT_NE(e.detail().find("nodes " + cycle + " are each other's parents"), std::string::npos) << e.what();
    }
  };
  expect_cycle({node(2, 3, "aten::add"), node(3, 2, "aten::mul")}, "2 -> 3 -> 2");
  // Below an operator of the thread: 4 under 3 under 2, and 2 under 4.
  expect_cycle({node(5, 1, "aten::relu"), node(2, 4, "aten::add"), node(3, 2, "aten::mul"), node(4, 3, "aten::mm")},
               "2 -> 4 -> 3 -> 2");
  // Reached from a node outside it: 6's parent 7 is in the cycle 7 -> 8 -> 7.
  expect_cycle({node(6, 7, "aten::add"), node(7, 8, "aten::mul"), node(8, 7, "aten::mm")}, "7 -> 8 -> 7");
  // A tree with a self-parented root and a parent outside the graph still imports.
  const auto dag =
      workload::import_execution_graph(R"j({"schema": "1.0.1", "nodes": [)j" + thread + ", " + node(2, 1, "aten::add") +
                                           ", " + node(3, 2, "aten::mul") + ", " + node(9, 99, "aten::relu") + "]}",
                                       "tree.json", pair);
  EXPECT_EQ(dag.nodes.size(), 1u);
}

}  // namespace
}  // namespace chorus
