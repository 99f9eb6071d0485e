// chorus motif expand — SYNDICATE's motif algebra: a comm-op segmented and splined into motifs
// (docs/motifs.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "apps/chorus/commands.h"
#include "coll/motif/compose.h"
#include "coll/motif/pattern.h"
#include "coll/motif/validate.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/suggest.h"
#include "core/units.h"

namespace chorus::cli {

namespace {

using namespace chorus::coll::motif;

constexpr int kMaxRanks = 4096;
constexpr double kMaxMotifs = 1e6;
constexpr std::size_t kMaxCheckedTransfers = 250000;  // --check: about 2 s and 200 MB at most
constexpr std::size_t kMaxCheckedMotifs = 20000;      // the dependency closure is motifs^2 bits

nlohmann::json motif_json(std::size_t id, const Motif& m) {
  nlohmann::json j{{"id", id},         {"kind", std::string(to_string(m.kind))},
                   {"ranks", m.ranks}, {"bytes", {m.bytes.begin, m.bytes.end}},
                   {"after", m.after}, {"label", m.label}};
  if (m.root >= 0) j["root"] = m.root;
  if (m.kind == CollectiveKind::kAllToAll) j["destinations"] = m.destinations;
  return j;
}

}  // namespace

void register_motif_commands(CLI::App& app) {
  auto* motif = app.add_subcommand(
      "motif", "SYNDICATE motifs: comm-ops segmented and splined into smaller units (docs/motifs.md)");
  motif->require_subcommand(1);

  struct ExpandArgs {
    std::string op = "all_reduce";
    int ranks = 8;
    std::string bytes = "10MB";
    int root = 0;
    std::string segment;
    std::string spline;
    std::vector<std::string> transforms;
    bool check = false;
    bool json = false;
  };
  static ExpandArgs a;
  auto* expand = motif->add_subcommand(
      "expand", "Apply S(d) and/or P(n) to a comm-op on ranks 0..N-1 and print the motifs with their dependencies");
  expand->add_option("--op", a.op, "allreduce | alltoall | broadcast (underscores optional)")->capture_default_str();
  expand->add_option("--ranks", a.ranks, "Processes N")->capture_default_str();
  expand->add_option("--bytes", a.bytes, "Payload D per process (all-to-all: per destination), e.g. 10MB, 4MiB")
      ->capture_default_str();
  expand->add_option("--root", a.root, "Broadcast root")->capture_default_str();
  expand->add_option("--segment", a.segment, "Segmentation S(d), applied first: segment size d, e.g. 4MB");
  expand->add_option(
      "--spline", a.spline,
      "Splining P, applied after --segment: n (all-to-all: groups of n destinations; broadcast: subsets of n; "
      "all-reduce: tree of groups of n), ring, tree:n, tree1:n (one level)");
  expand->add_option(
      "--transform", a.transforms,
      "Further transforms in order, after --segment and --spline: S:<bytes>, P:<n>, P:ring, P:tree:<n>, P:tree1:<n>");
  expand->add_flag("--check", a.check,
                   "Run the byte-level validity check on the plan (at most 250000 transfers and 20000 motifs: it "
                   "executes every transfer)");
  expand->add_flag("--json", a.json,
                   "Print {\"op\", \"transforms\", \"motifs\": [{\"id\", \"kind\", \"ranks\", \"root\", \"bytes\", "
                   "\"destinations\", \"after\", \"label\"}]}");
  expand->callback([] {
    CollectiveKind kind{};
    if (!parse_kind(a.op, kind))
      throw InputError("--op", fmt::format("unknown operation '{}'{}; use allreduce, alltoall or broadcast", a.op,
                                           did_you_mean(a.op, {"allreduce", "alltoall", "broadcast"})));
    if (a.ranks < 1 || a.ranks > kMaxRanks)
      throw InputError("--ranks", fmt::format("must be in 1..{}, got {}", kMaxRanks, a.ranks));
    const Bytes bytes = parse_bytes(a.bytes, "--bytes");
    const CommOp op = make_comm_op(kind, a.ranks, bytes, a.root);

    std::vector<Transform> ts;
    double bound = 1;  // an upper bound on the motif count, to refuse plans that do not fit in memory
    const auto add = [&](const Transform& t, const std::string& spec, const std::string& field) {
      ts.push_back(t);
      if (spec.starts_with("S:") || spec.starts_with("s:")) {
        const Bytes d = parse_bytes(spec.substr(2), field);
        bound *= static_cast<double>((bytes + d - 1) / d);
      } else {
        bound *= 2.0 * a.ranks + 1;
      }
      if (bound > kMaxMotifs)
        throw InputError(
            field, fmt::format("the transforms could make more than {:.0f} motifs; use larger d or n", kMaxMotifs));
    };
    if (!a.segment.empty()) add(parse_transform("S:" + a.segment, "--segment"), "S:" + a.segment, "--segment");
    if (!a.spline.empty()) add(parse_transform("P:" + a.spline, "--spline"), "P:" + a.spline, "--spline");
    for (const auto& t : a.transforms) add(parse_transform(t, "--transform"), t, "--transform");
    // The count alone does not bound memory: a motif holds its ranks, and an all-to-all motif a
    // destination list per rank (the plan's, then the printed form's, about twice that).
    const double ranks = a.ranks;
    const double per_motif = 200 + 8 * ranks + (kind == CollectiveKind::kAllToAll ? 32 * ranks + 4 * ranks * ranks : 0);
    require_memory(2 * bound * per_motif, ts.empty() ? "--bytes" : "--segment",
                   fmt::format("a plan of up to {:.0f} motifs on {} ranks", bound, a.ranks));
    const MotifPlan plan = compose(single_motif_plan(op), ts);

    std::vector<std::string> problems;
    if (a.check) {
      std::size_t transfers = 0;
      for (const auto& m : plan.motifs) transfers += transfer_count(m);
      if (plan.motifs.size() > kMaxCheckedMotifs)
        throw InputError(
            "--check",
            fmt::format("the check compares every pair of motifs: this plan has {}, more than {}; use larger d or n",
                        plan.motifs.size(), kMaxCheckedMotifs));
      if (transfers > kMaxCheckedTransfers)
        throw InputError(
            "--check",
            fmt::format(
                "the check executes every transfer: this plan has {}, more than {}; use fewer ranks or larger d",
                transfers, kMaxCheckedTransfers));
      problems = check(plan);
    }
    if (a.json) {
      nlohmann::json j{
          {"op", {{"kind", std::string(to_string(op.kind))}, {"ranks", op.ranks.size()}, {"bytes", op.bytes}}},
          {"transforms", nlohmann::json::array()},
          {"motifs", nlohmann::json::array()}};
      if (op.kind == CollectiveKind::kBroadcast) j["op"]["root"] = op.root;
      for (const auto& t : ts) j["transforms"].push_back(t.name);
      for (std::size_t i = 0; i < plan.motifs.size(); ++i) j["motifs"].push_back(motif_json(i, plan.motifs[i]));
      if (a.check) j["problems"] = problems;
      fmt::print("{}\n", j.dump());
    } else {
      std::string names;
      for (const auto& t : ts) names += " " + t.name;
      fmt::print("{} on {} ranks, {} per process{}: {} motifs\n", to_string(op.kind), op.ranks.size(),
                 format_bytes(op.bytes), names.empty() ? std::string() : " after" + names, plan.motifs.size());
      for (std::size_t i = 0; i < plan.motifs.size(); ++i)
        fmt::print("  #{:<4} {:<16} {}\n", i, plan.motifs[i].label, describe(plan.motifs[i]));
      if (a.check) {
        if (problems.empty())
          fmt::print("valid: every byte of the comm-op is covered exactly once, in dependency order\n");
        for (const auto& p : problems) fmt::print("problem: {}\n", p);
      }
    }
    // The transforms only make valid plans; a problem here is a bug in chorus, not bad input.
    if (!problems.empty())
      throw std::logic_error(fmt::format("the motif plan failed its validity check ({} problems)", problems.size()));
  });
}

}  // namespace chorus::cli
