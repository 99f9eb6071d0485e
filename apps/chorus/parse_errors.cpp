#include "apps/chorus/parse_errors.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace chorus::cli {
namespace {

// The innermost subcommand the parse reached, and its path ("chorus sim collective").
CLI::App* innermost(CLI::App* app, std::string& path) {
  path += (path.empty() ? "" : " ") + app->get_name();
  for (CLI::App* sub : app->get_subcommands()) return innermost(sub, path);
  return app;
}

std::vector<std::string> flag_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* o : app->get_options()) {
      for (const auto& n : o->get_lnames()) names.push_back("--" + n);
      for (const auto& n : o->get_snames()) names.push_back("-" + n);
    }
  }
  return names;
}

std::vector<std::string> command_names(CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// "--szie=1GiB" -> "--szie"
std::string flag_of(const std::string& word) { return word.substr(0, word.find('=')); }

// Where a command's flag for a library field is not "--" + the field with '_' as '-'. An entry
// without a command applies to every command that has its flag.
struct FieldFlag {
  const char* command;  // "chorus sim jobs"; "" for any
  const char* field;    // "steps": sim::jobs::ShiftSearchOptions::steps
  const char* flag;     // "--shift-steps"
};
constexpr FieldFlag kFieldFlags[] = {
    {"chorus launch", "ranks", "launch -n"},  // launch::LaunchOptions: "launch" among the ranks' lines
    {"chorus launch", "kill_grace_s", "launch --kill-grace-s"},
    {"chorus launch", "bind", "launch --bind"},
    {"chorus launch", "stall_timeout_s", "launch --stall-timeout"},
    {"chorus sim jobs", "steps", "--shift-steps"},  // sim::jobs::ShiftSearchOptions
    {"chorus sim jobs", "rounds", "--shift-rounds"},
    {"chorus reproduce shared-fabric", "steps", "--shift-steps"},
    {"chorus reproduce topoopt", "degree", "--degrees"},  // one of the lists
    {"chorus reproduce topoopt", "bandwidth", "--bandwidths"},
    {"chorus reproduce topoopt", "reconfig_latencies_us", "--reconfig-latencies"},
    {"chorus topo optimize", "max_steps", "--steps"},  // topoopt::SearchOptions
    {"", "gbps", "--bandwidth"},                       // topoopt::AlternatingOptions
    {"", "gpus", "--gpus-per-server"},                 // topoopt::ServerSpec
    {"", "size_bytes", "--size"},                      // sim::CollectiveRequest
    {"", "num_chunks", "--chunks"},
    {"", "bucket_bytes", "--bucket"},  // workload::ParallelismConfig
};

// A field of a library's options: snake_case, nothing else ("switch_after", "out").
bool is_field(const std::string& where) {
  if (where.empty() || !std::islower(static_cast<unsigned char>(where[0]))) return false;
  return std::all_of(where.begin(), where.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool has_flag(const CLI::App* app, const std::string& flag) {
  const auto names = flag_names(app);
  return std::find(names.begin(), names.end(), flag) != names.end();
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& e) {
  std::string path;
  CLI::App* at = innermost(&app, path);
  const std::vector<std::string> extras = app.remaining(true);
  const bool wants_subcommand = at->get_require_subcommand_min() > 0 && at->get_subcommands().empty();
  if (wants_subcommand && extras.empty()) {
    const std::string parent = path.substr(0, path.size() - std::min(path.size(), at->get_name().size() + 1));
    std::fputs(at->help(at == &app ? "" : parent).c_str(), stdout);  // `chorus`, `chorus sim`: what can follow
    return 0;
  }
  std::string message;
  bool after_flag = false;  // the word after an unknown flag is taken as its value
  for (const std::string& word : extras) {
    const bool value = after_flag && word.find('=') == std::string::npos;
    after_flag = false;
    if (word.size() > 1 && word[0] == '-') {
      after_flag = word.find('=') == std::string::npos;
      message += fmt::format("{}unknown option '{}'{}", message.empty() ? "" : "; ", flag_of(word),
                             did_you_mean(flag_of(word), flag_names(at)));
    } else if (wants_subcommand) {
      message += fmt::format("{}unknown command '{}'{}", message.empty() ? "" : "; ", word,
                             did_you_mean(word, command_names(at)));
      break;  // the rest are that command's arguments
    } else if (!value) {
      message += fmt::format("{}unexpected argument '{}'", message.empty() ? "" : "; ", word);
    }
  }
  if (message.empty()) message = e.what();
  fmt::print(stderr, "{}: error: {}\nRun '{} --help' for what it takes.\n", path, message, path);
  return kExitBadInput;
}

std::string flag_of_field(CLI::App& app, const std::string& where) {
  if (!is_field(where)) return where;
  std::string path;
  const CLI::App* at = innermost(&app, path);
  for (const FieldFlag& f : kFieldFlags) {
    if (where == f.field && (path == f.command || (*f.command == '\0' && has_flag(at, f.flag)))) return f.flag;
  }
  std::string flag = "--" + where;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return has_flag(at, flag) ? flag : where;
}

int finish_standard_output(int status) {
  errno = 0;
  std::cout.flush();  // synchronised with stdio: this flushes stdout, and may fail first
  const int cout_err = errno;
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno != 0 ? errno : cout_err;
  if (flushed && std::cout.good() && std::ferror(stdout) == 0) return status;
  if (status != 0) return status;  // the command has failed and said why already
  // The error may have been met by an earlier flush, whose errno is gone.
  fmt::print(stderr, "chorus: error: standard output: cannot write: {}\n",
             err != 0 ? std::generic_category().message(err) : std::string("a write failed"));
  return kExitBadInput;
}

int report_input_error(CLI::App& app, const InputError& e) {
  std::fflush(stdout);
  const std::string where = flag_of_field(app, e.where());
  fmt::print(stderr, "chorus: error: {}{}\n", where.empty() ? "" : where + ": ", e.detail());
  return kExitBadInput;
}

}  // namespace chorus::cli
