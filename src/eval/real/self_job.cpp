#include "eval/real/self_job.h"

#include <fmt/format.h>

#include <csignal>
#include <filesystem>

#include "core/error.h"
#include "launch/launcher.h"

namespace chorus::eval {

namespace {

launch::LaunchOptions launch_options(const SelfJob& job, const std::string& what) {
  launch::LaunchOptions o;
  o.ranks = job.ranks;
  o.command = rank_argv(self_exe(what), job.program);
  o.oversubscription_noted = job.oversubscription_noted;
  o.capture_stdout = true;
  return o;
}

std::string command_line(const launch::LaunchOptions& o) {
  std::string line = fmt::format("{} launch -n {} --", launch::shell_word(o.command.front()), o.ranks);
  for (const auto& word : o.command) line += " " + launch::shell_word(word);
  return line;
}

}  // namespace

std::string self_exe(const std::string& what) {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError(what, "cannot find the chorus executable (/proc/self/exe)");
  return p.string();
}

std::string self_job_command(const SelfJob& job, const std::string& what) {
  return command_line(launch_options(job, what));
}

nlohmann::json run_self_job(const SelfJob& job, const std::string& key, const std::string& what) {
  const launch::LaunchOptions options = launch_options(job, what);
  const launch::JobResult result = launch::run_job(options);
  // Interrupted: the ranks are stopped; the study ends as it would have without a job running.
  if (result.interrupted != 0) std::raise(result.interrupted);
  if (result.status != 0)
    throw InputError(what, fmt::format("'{}' failed (status {})", command_line(options), result.status));
  auto report = nlohmann::json::parse(result.output, nullptr, false);
  if (report.is_discarded() || !report.contains(key))
    throw InputError(what, fmt::format("no JSON report from '{}'", command_line(options)));
  return report;
}

}  // namespace chorus::eval
