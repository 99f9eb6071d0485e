#include "eval/real/syndicate_real_study.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/split.h"
#include "core/text_file.h"
#include "core/units.h"
#include "eval/real/self_job.h"

namespace chorus::eval {

MotifBenchReport run_syndicate_real(const SyndicateRealOptions& o) {
  const int ranks = o.ranks;
  if (ranks < 2 || ranks > 64) throw InputError("ranks", fmt::format("must be in 2..64, got {}", ranks));
  require_range(o.repeat, 1, kMaxRepeats, "repeat");
  const auto sizes = split_list(o.sizes);
  if (sizes.empty()) throw InputError("sizes", "no size given");
  for (const auto& s : sizes) (void)parse_motif_size(s, "sizes", ranks);  // bad sizes fail here, not in the job
  ensure_writable_dir(o.out);  // a directory that cannot be made fails here, before the job
  const SelfJob job{.ranks = ranks, .program = RunMotifsArgs{.sizes = o.sizes, .repeat = o.repeat}};
  const std::string what = "reproduce syndicate-real";
  if (!o.quiet) std::fprintf(stderr, "chorus %s: %s\n", what.c_str(), self_job_command(job, what).c_str());
  const auto j = run_self_job(job, "rows", what);
  return motif_report_from_json(j, what);
}

std::string write_syndicate_real_outputs(const MotifBenchReport& report, const std::string& dir) {
  std::string csv = "fig,case,variant,ranks,size_bytes,measured_ns,predicted_ns,ratio,check\n";
  for (const auto& r : report.rows)
    csv += fmt::format("{},{},{},{},{:.0f},{:.0f},{:.0f},{:.4f},{}\n", r.fig, r.comm_op, r.variant, report.ranks,
                       r.size_bytes, r.measured_ns, r.predicted_ns, r.measured_ns / r.predicted_ns, r.check);
  OutputDir out(dir);
  return out.write("motifs.csv", csv);
}

}  // namespace chorus::eval
