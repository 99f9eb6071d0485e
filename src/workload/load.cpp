#include "workload/load.h"

#include <filesystem>
#include <functional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text_file.h"
#include "workload/astra_text.h"
#include "workload/capture/capture_import.h"
#include "workload/chakra/chakra_import.h"
#include "workload/pytorch_eg.h"
#include "workload/workload_yaml.h"

namespace chorus::workload {

std::string_view to_string(WorkloadFormat format) {
  switch (format) {
    case WorkloadFormat::kModel:
      return "model";
    case WorkloadFormat::kAstraText:
      return "ASTRA-sim workload file";
    case WorkloadFormat::kChakra:
      return "Chakra trace";
    case WorkloadFormat::kExecutionGraph:
      return "PyTorch execution graph";
    case WorkloadFormat::kCapture:
      return "chorus capture";
  }
  return "?";
}

namespace {

const std::regex& per_rank_name() {
  static const std::regex re(R"((.*\.)([0-9]{1,9})(\.(et|json))$)");
  return re;
}

// A directory's Chakra prefix: the one `<name>` of its `<name>.<rank>.et` files, "" if it has none.
// InputError naming the directory when its files belong to several traces.
std::string chakra_prefix_in(const std::string& dir) {
  static const std::regex re(R"((.*)\.([0-9]{1,9})\.et$)");
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::smatch m;
    const auto name = e.path().filename().string();
    if (e.is_regular_file(ec) && std::regex_match(name, m, re)) names.insert(m[1].str());
  }
  if (names.size() > 1)
    throw InputError(dir, fmt::format("holds the per-rank .et files of {} traces ({}); name one as <dir>/<name>",
                                      names.size(), fmt::join(names, ", ")));
  return names.empty() ? std::string() : (std::filesystem::path(dir) / *names.begin()).string();
}

// The .et file of a Chakra spec, or "" if it is none.
std::string chakra_file(const std::string& spec, int rank) {
  if (std::filesystem::is_directory(spec)) {
    const auto prefix = chakra_prefix_in(spec);
    if (prefix.empty()) return "";
    const auto file = chakra_trace_file(prefix, rank);
    if (file.empty()) throw InputError(spec, fmt::format("has no file '{}.{}.et'", prefix, rank < 0 ? 0 : rank));
    return file;
  }
  return chakra_trace_file(spec, rank);
}

// The text of a regular file, "" if `spec` is none.
std::string text_of(const std::string& spec) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(spec, ec)) return "";
  return read_text_file(spec, "the workload file");
}

WorkloadFormat format_of_text(const std::string& text) {
  if (text.empty()) return WorkloadFormat::kModel;
  if (looks_like_execution_graph(text)) return WorkloadFormat::kExecutionGraph;
  if (looks_like_astra_text(text)) return WorkloadFormat::kAstraText;
  return WorkloadFormat::kModel;
}

// check_ranks: the other ranks' files of a per-rank file `<name>.<rank>.<ext>` (ranks 0, 1, ...
// while their files exist) imported by `import` and compared with the loaded rank's DAG.
void check_ranks(const std::string& path, const Dag& dag, std::uint64_t npus,
                 const std::function<Dag(const std::string& file, int rank)>& import) {
  std::smatch m;
  if (!std::regex_match(path, m, per_rank_name()))
    throw InputError(path, "is not a per-rank file <name>.<rank>.et or <name>.<rank>.json: no other ranks to check");
  const int own = std::stoi(m[2].str());
  for (std::uint64_t r = 0; r < npus; ++r) {
    const auto file = fmt::format("{}{}{}", m[1].str(), r, m[3].str());
    if (!std::filesystem::is_regular_file(file)) break;
    if (static_cast<int>(r) == own) continue;
    check_same_communication(dag, fmt::format("{} (rank {})", path, own), import(file, static_cast<int>(r)),
                             fmt::format("{} (rank {})", file, r));
  }
}

// The per-rank files <name>.0, <name>.1, ... of a per-rank file `path`, counted while they exist; 0 if
// `path` is not named per rank.
int count_ranks(const std::string& path) {
  std::smatch m;
  if (!std::regex_match(path, m, per_rank_name())) return 0;
  constexpr int kMaxRanks = 1 << 20;
  int r = 0;
  while (r < kMaxRanks && std::filesystem::is_regular_file(fmt::format("{}{}{}", m[1].str(), r, m[3].str()))) ++r;
  return r;
}

}  // namespace

WorkloadFormat format_of(const std::string& spec, int rank) {
  if (capture::is_capture_dir(spec)) return WorkloadFormat::kCapture;
  if (!chakra_file(spec, rank).empty()) return WorkloadFormat::kChakra;
  return format_of_text(text_of(spec));
}

LoadedWorkload load(const std::string& spec, const net::Network& network, const LoadOptions& o,
                    const std::string& field) {
  LoadedWorkload out;
  if (capture::is_capture_dir(spec)) {  // every rank is imported and checked, with or without check_ranks
    const auto manifest = capture::read_manifest(spec);
    out.format = WorkloadFormat::kCapture;
    out.file = manifest.path;
    out.ranks = manifest.world;
    capture::ImportOptions c;
    c.iterations = o.iterations;
    c.rank = o.rank < 0 ? 0 : o.rank;
    c.world = o.world;
    c.world_field = o.world_field;
    c.grow_groups = o.grow_groups;
    c.grow_field = o.grow_field;
    out.dag = capture::import_capture(manifest, network, c, &out.notes);
    return out;
  }
  if (const auto et = chakra_file(spec, o.rank); !et.empty()) {
    out.format = WorkloadFormat::kChakra;
    out.file = et;
    ChakraOptions c;
    c.iterations = o.iterations;
    c.rank = o.rank;
    c.skip_unsupported = o.skip_unsupported;
    c.ctrl_deps = o.ctrl_deps;
    out.dag = import_chakra(chakra_et::read_et_file(et), network, c, &out.notes);
    out.ranks = count_ranks(et);
    if (o.check_ranks)
      check_ranks(et, out.dag, network.num_npus(), [&](const std::string& file, int rank) {
        auto other = c;
        other.rank = rank;
        return import_chakra(chakra_et::read_et_file(file), network, other, nullptr);
      });
    return out;
  }
  const auto text = text_of(spec);
  out.format = format_of_text(text);
  if (out.format != WorkloadFormat::kModel) out.file = spec;
  switch (out.format) {
    case WorkloadFormat::kExecutionGraph: {
      ExecutionGraphOptions g;
      g.iterations = o.iterations;
      g.profiler_trace = o.profiler_trace;
      g.collective_dims = o.collective_dims;
      out.dag = import_execution_graph(text, spec, network, g, &out.notes);
      out.ranks = count_ranks(spec);
      g.profiler_trace.clear();  // the trace is the loaded rank's; the others' collectives are compared
      if (o.check_ranks)
        check_ranks(spec, out.dag, network.num_npus(), [&](const std::string& file, int) {
          return import_execution_graph(read_text_file(file, "the execution graph"), file, network, g);
        });
      return out;
    }
    case WorkloadFormat::kAstraText: {
      if (o.check_ranks)
        throw InputError(spec, "an ASTRA-sim workload file is one file for all ranks: no ranks to check");
      AstraTextOptions a;
      a.iterations = o.iterations;
      a.ns_per_cycle = o.ns_per_cycle;
      out.dag = parse_astra_text(text, spec, network, a);
      return out;
    }
    default:
      break;
  }
  if (o.check_ranks) throw InputError(spec, "a model is no per-rank file: no ranks to check");
  out.model = load_workload(spec, field);
  if (!text.empty()) out.file = spec;
  out.model->parallelism.iterations = o.iterations;
  return out;
}

}  // namespace chorus::workload
