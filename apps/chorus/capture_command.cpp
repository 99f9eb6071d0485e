// chorus capture — an unchanged torch program recorded for the simulator (src/capture, docs/capture.md).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "apps/chorus/commands.h"
#include "capture/capture_run.h"
#include "core/error.h"

namespace chorus::cli {

void register_capture_command(CLI::App& app) {
  auto* c = app.add_subcommand(
      "capture",
      "Run an unchanged torch program on N ranks of this host on the chorus backend and record a window of its "
      "steps (execution graph, profiler trace, communication log, step times) for `chorus sim workload -w DIR`");
  static capture::CaptureOptions o;
  static std::string steps = "3:5";
  c->add_option("-n,--ranks", o.ranks, "number of ranks")->required();
  c->add_option("--out", o.out, "the capture's directory (manifest.json and the ranks' files)")->capture_default_str();
  c->add_option("--steps", steps,
                "the window A:B: steps A .. B-1, counted from 0 at the ends of the optimizer's step() (or "
                "chorus.capture.step()); 1 <= A")
      ->capture_default_str();
  c->add_option("--backend", o.backend, "the chorus runtime backend the program runs on: shm or gloo")
      ->capture_default_str();
  c->add_option("--kill-grace-s", o.kill_grace_s,
                "when a rank fails, seconds the others get to report before they are terminated")
      ->capture_default_str();
  c->add_option("command", o.command, "python3 SCRIPT ARGS (after --)")->required();
  c->footer(
      "The ranks run `python3 -m chorus.capture SCRIPT ARGS`: init_process_group runs on the chorus backend\n"
      "whatever the program names, new_group's ranks are written down, a step ends at the first optimizer's\n"
      "step(). manifest.json is written last; `complete: false` marks a capture whose program failed or ran\n"
      "fewer steps than the window (exit status 2). Prints the step time inside the window against outside.");
  c->callback([] {
    capture::parse_steps(steps, "--steps", o.first_step, o.last_step);
    o.chorus_version = CHORUS_VERSION;
    const auto r = capture::run_capture(o);
    std::fflush(nullptr);
    fmt::print(stderr, "{}\n", capture::overhead_line(o, r.steps));
    if (!r.complete) throw InputError(r.manifest, fmt::format("a partial capture (complete: false): {}", r.error));
    fmt::print("wrote {}\n", r.manifest);
  });
}

}  // namespace chorus::cli
