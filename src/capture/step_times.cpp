// The capture's overhead: the ranks' step times inside the window against those outside it.
#include <algorithm>

#include <fmt/format.h>

#include "capture/capture_run.h"
#include "capture/step_times.h"

namespace chorus::capture {

int host_window_write_step(int first, int last) { return last + 2 + std::max(last - first, 5); }

StepTimes step_times(const std::vector<std::vector<std::int64_t>>& step_end_ns, int first, int last) {
  StepTimes t;
  double inside = 0, outside = 0, write = 0;
  int writes = 0;
  t.steps_ran = step_end_ns.empty() ? 0 : static_cast<int>(step_end_ns.front().size());
  for (const auto& ends : step_end_ns) {
    t.steps_ran = std::min(t.steps_ran, static_cast<int>(ends.size()));
    for (std::size_t k = 1; k < ends.size(); ++k) {
      const double ms = static_cast<double>(ends[k] - ends[k - 1]) / 1e6;
      const int step = static_cast<int>(k);
      if (step >= first && step < last) {
        inside += ms;
        ++t.inside;
      } else if (step > last && step <= host_window_write_step(first, last) + 1) {
        continue;  // the host window (recorded by the profiler), its writing, the waits after the writings
      } else if (step == last) {
        write += ms;
        ++writes;
      } else {
        outside += ms;
        ++t.outside;
      }
    }
  }
  if (t.inside > 0) t.inside_ms = inside / t.inside;
  if (t.outside > 0) t.outside_ms = outside / t.outside;
  if (writes > 0) t.write_ms = write / writes;
  return t;
}

std::string overhead_line(const CaptureOptions& o, const StepTimes& t) {
  if (t.inside == 0) return "chorus capture: no step of the window ran";
  auto line = fmt::format("chorus capture: steps {}..{} (recorded) {:.2f} ms a step", o.first_step, o.last_step - 1,
                          t.inside_ms);
  if (t.outside == 0) return line + "; no unrecorded step to compare with (run more steps than the window's end + 1)";
  line += fmt::format(
      ", the unrecorded steps (1..{} and {}..: not the first, nor {}..{}: the window's writing, the host window "
      "and its writing, the waits after them) {:.2f} ms: overhead {:+.1f} %",
      o.first_step - 1, host_window_write_step(o.first_step, o.last_step) + 2, o.last_step,
      host_window_write_step(o.first_step, o.last_step) + 1, t.outside_ms, 100.0 * (t.inside_ms / t.outside_ms - 1.0));
  if (t.write_ms > 0) line += fmt::format("; the step after the window, which writes the files, {:.2f} ms", t.write_ms);
  return line;
}

}  // namespace chorus::capture
