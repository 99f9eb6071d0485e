#pragma once
// A torch profiler trace: the Chrome-trace JSON that torch.profiler.profile(...).export_chrome_trace()
// writes, read for the operators' measured durations (workload/pytorch_eg.h matches them to an
// execution graph's operators). Two layouts:
//   - torch built without Kineto (Debian's torch 1.13) writes the legacy profiler's list of
//     complete events, [{"name", "ph": "X", "ts", "dur", "tid", "pid": "CPU functions", "args": {}}],
//     with no id that an execution graph also records;
//   - Kineto writes an object whose `traceEvents` hold such events with an integer pid and args
//     ("Record function id": the execution graph's `rf_id`, "External id", ...).
// Times are microseconds. Other phases (flows, metadata, instants) are skipped.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chorus::workload {

struct ProfiledEvent {
  std::string name;
  std::string thread;               // "<pid>/<tid>" as written
  std::optional<std::int64_t> pid;  // an integer pid (Kineto), else none
  double ts_us = 0;
  double dur_us = 0;
  // Time inside c10d:: calls (the issue of a collective): the whole event if it is one, else the
  // sum of its outermost c10d:: descendants on its thread.
  double collective_us = 0;
  std::int64_t record_function_id = -1;  // args "Record function id" (Kineto), else -1
  std::size_t index = 0;                 // position in the file's event list, for messages
  // Top-level events: the complete events it encloses with itself (each paid the recording's
  // per-event cost), and the time on its thread from its end to the next top-level event's start,
  // split into the part while no backend record was in flight (the host's own work between
  // operators: the Python that issues them) and the part while one was (waiting for a collective).
  // Both 0 after a thread's last event.
  std::size_t events = 1;
  double gap_after_us = 0, wait_after_us = 0;
  // Time inside the event that its thread spent waiting for a collective it issued and that
  // completed inside it (a blocking call without a c10d:: operator of its own, such as torch
  // 1.13's all_to_all_single inside an autograd function): the part of the backend records that
  // start and end inside it during which none of its own child events runs. Not the event's
  // compute; 0 for a c10d:: call (all of it is collective_us).
  double wait_inside_us = 0;
};

// A process-group backend's record of a collective ("gloo:all_reduce", "chorus:all_to_all_single",
// ...: "<backend>:<operation>"), which spans the collective from its issue to its completion and so
// may outlast the operator that issued it; it is not an operator.
bool is_backend_record(const std::string& name);
// A torch.distributed call ("c10d::allreduce_", ...): where a collective is issued.
bool is_c10d_call(const std::string& name);

struct ProfilerTrace {
  // The complete events that no other complete event of their thread encloses, by start time,
  // then by position in the file. Kineto's ProfilerStep#N annotations and python_function frames
  // are not operators and are skipped (they neither enclose nor are top-level); so are the
  // backends' records of collectives (is_backend_record), kept in `backend_records`.
  std::vector<ProfiledEvent> top_level;
  std::vector<ProfiledEvent> backend_records;
  std::size_t complete_events = 0;  // every "ph": "X" event
};

// A trace of several steps of one loop: the top-level events split into steps after each event
// whose name starts with `step_end` (torch's "Optimizer.step#SGD.step"). If there are at least two
// steps and nothing follows the last, the k-th event of a name in a step is the same operator in
// every step that has one, and the median step is the one whose time (its events' durations, host
// time and waits) is the median of the steps' (the lower middle of an even count): the events in
// every step take their times (duration, time in c10d:: calls, host time and wait after it) from
// the median step's, as the program's step time is the median of its steps' (a step slowed by
// other work on the host does not count; the trace's last event, whose host time is not measured,
// takes the step before's). Then only the first `keep` steps' events stay (0: all; the trace has more steps than the
// execution graph it is matched to). Returns the number of steps, or 0 (the trace unchanged) if it
// cannot be split so.
std::size_t median_over_steps(ProfilerTrace& trace, const std::string& step_end, std::size_t keep = 0);

// Throws InputError naming `source`, the event's position and the field: not JSON (with the
// parser's position), neither a list of events nor an object with `traceEvents`, a complete event
// without a string `name`, numeric `ts` and `dur` >= 0, `tid`; no complete event at all.
ProfilerTrace read_profiler_trace(const std::string& text, const std::string& source);

}  // namespace chorus::workload
