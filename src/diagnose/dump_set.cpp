#include "diagnose/dump_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <system_error>

#include "core/error.h"

namespace chorus::diagnose {

namespace fs = std::filesystem;

const FlightDump* DumpSet::find(int rank) const {
  for (const auto& d : dumps)
    if (d.rank == rank) return &d;
  return nullptr;
}

std::vector<int> DumpSet::missing_ranks() const {
  std::vector<int> missing;
  for (int r = 0; r < world_size; ++r)
    if (find(r) == nullptr) missing.push_back(r);
  return missing;
}

namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

// Dumps of more than one job, or of differing world sizes, in one directory: said, not refused.
// The ranks' jobs only: launcher.json names the launch, and ranks that join a world another
// framework made (torch.distributed's store, an ExternalWorld) have a job id of their own.
void check_one_job(DumpSet& set) {
  std::map<std::string, std::vector<int>> jobs;
  for (const auto& d : set.dumps) jobs[d.job].push_back(d.rank);
  if (jobs.size() > 1) {
    std::string names;
    for (const auto& [job, ranks] : jobs)
      names += fmt::format("{}'{}' ({})", names.empty() ? "" : ", ", job,
                           ranks.empty() ? std::string("launcher.json") : "ranks " + rank_list(ranks));
    set.warnings.push_back(
        fmt::format("the dumps are of {} different jobs: {}; the diagnosis mixes them", jobs.size(), names));
  }
  for (const auto& d : set.dumps)
    if (d.world_size != set.world_size) {
      set.warnings.push_back(
          fmt::format("{} says world_size {}, another dump {}", d.file, d.world_size, set.world_size));
      break;
    }
}

}  // namespace

DumpSet read_dump_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, "not a directory of flight records");
  DumpSet set;
  set.dir = dir;
  static const std::regex kName(R"(rank-(\d{1,7})\.json)");
  std::vector<std::pair<int, std::string>> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, m, kName)) files.emplace_back(std::stoi(m[1].str()), e.path().string());
  }
  if (ec) throw InputError(dir, "cannot list it: " + ec.message());
  if (files.empty()) throw InputError(dir, "no flight records (rank-<R>.json) in it");
  std::sort(files.begin(), files.end());
  for (const auto& [rank, path] : files) {
    FlightDump d = read_flight_dump(path);
    if (d.rank != rank)
      throw InputError(path, fmt::format("field 'rank': {} in a file named for rank {}", d.rank, rank));
    set.world_size = std::max(set.world_size, d.world_size);
    set.dumps.push_back(std::move(d));
  }
  const std::string launcher = (fs::path(dir) / kLauncherFile).string();
  if (fs::exists(launcher, ec)) {
    set.launcher = read_launcher_record(launcher);
    set.world_size = std::max(set.world_size, static_cast<int>(set.launcher->ranks.size()));
  }
  check_one_job(set);
  return set;
}

}  // namespace chorus::diagnose
