#include "eval/real/syndicate_real_study.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/split.h"
#include "core/text_file.h"
#include "core/units.h"
#include "eval/real/self_job.h"

namespace chorus::rt {

nlohmann::json run_syndicate_real(const SyndicateRealOptions& o) {
  const int ranks = o.ranks;
  if (ranks < 2 || ranks > 64) throw InputError("ranks", fmt::format("must be in 2..64, got {}", ranks));
  require_range(o.repeat, 1, kMaxRepeats, "repeat");
  for (const auto& s : split_list(o.sizes)) (void)parse_bytes(s, "sizes");  // bad sizes fail here, not in the job
  OutputDir out(o.out);
  const std::string exe = self_exe("reproduce syndicate-real");
  const std::string cmd = fmt::format("'{}' launch -n {} -- '{}' run motifs --sizes {} --repeat {} --json", exe, ranks,
                                      exe, o.sizes, o.repeat);
  if (!o.quiet) std::fprintf(stderr, "chorus reproduce syndicate-real: %s\n", cmd.c_str());
  const auto j = nlohmann::json::parse(run_capture(cmd, "reproduce syndicate-real"), nullptr, false);
  if (j.is_discarded() || !j.contains("rows"))
    throw InputError("reproduce syndicate-real", fmt::format("no JSON report from '{}'", cmd));
  std::string csv = "fig,case,variant,ranks,size_bytes,measured_ns,predicted_ns,ratio,check\n";
  for (const auto& r : j["rows"])
    csv += fmt::format("{},{},{},{},{:.0f},{:.0f},{:.0f},{:.4f},{}\n", r["fig"].get<std::string>(),
                       r["case"].get<std::string>(), r["variant"].get<std::string>(), ranks,
                       r["size_bytes"].get<double>(), r["measured_ns"].get<double>(), r["predicted_ns"].get<double>(),
                       r["measured_ns"].get<double>() / r["predicted_ns"].get<double>(), r["check"].get<std::string>());
  out.write("motifs.csv", csv);
  return j;
}

}  // namespace chorus::rt
