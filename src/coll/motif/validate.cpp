// Validity of a motif plan by executing its transfers byte range by byte range (docs/motifs.md).
#include "coll/motif/validate.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>

namespace chorus::coll::motif {

namespace {

using Value = std::vector<int>;  // sorted multiset of contributions

std::string range_text(Bytes b, Bytes e) { return "[" + std::to_string(b) + "," + std::to_string(e) + ")"; }

std::string address_text(const Address& a) {
  switch (a.buffer) {
    case Buffer::kData:
      return "rank " + std::to_string(a.rank);
    case Buffer::kSend:
      return "rank " + std::to_string(a.rank) + " send block for " + std::to_string(a.block);
    case Buffer::kRecv:
      return "rank " + std::to_string(a.rank) + " receive block from " + std::to_string(a.block);
  }
  return "?";
}

std::string value_text(const Value& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

bool allowed(CollectiveKind op, CollectiveKind motif) {
  switch (op) {
    case CollectiveKind::kAllReduce:
      return motif != CollectiveKind::kAllToAll;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kBroadcast:
      return motif == op;
    default:
      return false;
  }
}

class Checker {
 public:
  Checker(const MotifPlan& plan, std::function<std::vector<Transfer>(const Motif&)> pattern_of,
          std::size_t max_problems)
      : plan_(plan), pattern_of_(std::move(pattern_of)), max_(max_problems) {}

  std::vector<std::string> run() {
    if (!structure() || !order()) return problems_;
    patterns();
    races();
    if (!full()) execute();
    if (!full()) result();
    return problems_;
  }

 private:
  bool full() const { return problems_.size() >= max_; }
  void problem(std::string text) {
    if (!full()) problems_.push_back(std::move(text));
  }
  std::string motif_text(std::size_t i) const {
    return "motif #" + std::to_string(i) + " (" + describe(plan_.motifs[i]) + ")";
  }

  bool structure() {
    const CommOp& op = plan_.op;
    if (op.kind != CollectiveKind::kAllReduce && op.kind != CollectiveKind::kAllToAll &&
        op.kind != CollectiveKind::kBroadcast)
      problem("the comm-op must be all_reduce, all_to_all or broadcast, not " + std::string(to_string(op.kind)));
    if (op.ranks.empty()) problem("the comm-op has no ranks");
    if (op.bytes == 0) problem("the comm-op has no payload");
    for (std::size_t k = 0; k < op.ranks.size(); ++k) {
      if (!members_.insert(op.ranks[k]).second)
        problem("the comm-op lists rank " + std::to_string(op.ranks[k]) + " twice");
      position_[op.ranks[k]] = static_cast<int>(k);
    }
    if (op.kind == CollectiveKind::kBroadcast && !members_.count(op.root))
      problem("the broadcast's root " + std::to_string(op.root) + " is not one of its ranks");
    if (!problems_.empty()) return false;

    const auto count = plan_.motifs.size();
    for (std::size_t i = 0; i < count; ++i) {
      const Motif& m = plan_.motifs[i];
      const std::string who = "motif #" + std::to_string(i);
      if (!allowed(op.kind, m.kind))
        problem(who + ": a " + std::string(to_string(op.kind)) + " cannot contain a " + std::string(to_string(m.kind)) +
                " motif");
      if (m.ranks.empty()) problem(who + ": no ranks");
      std::set<int> seen;
      for (int r : m.ranks) {
        if (!members_.count(r)) problem(who + ": rank " + std::to_string(r) + " is not one of the comm-op's ranks");
        if (!seen.insert(r).second) problem(who + ": rank " + std::to_string(r) + " listed twice");
      }
      if (m.bytes.begin >= m.bytes.end || m.bytes.end > op.bytes)
        problem(who + ": bytes " + range_text(m.bytes.begin, m.bytes.end) + " are empty or outside the payload " +
                range_text(0, op.bytes));
      const bool rooted = m.kind == CollectiveKind::kReduce || m.kind == CollectiveKind::kBroadcast;
      if (rooted && !seen.count(m.root)) problem(who + ": root " + std::to_string(m.root) + " is not one of its ranks");
      if (m.kind == CollectiveKind::kAllToAll) {
        if (m.destinations.size() != m.ranks.size()) {
          problem(who + ": " + std::to_string(m.destinations.size()) + " destination lists for " +
                  std::to_string(m.ranks.size()) + " sources");
        } else {
          for (std::size_t k = 0; k < m.ranks.size(); ++k) {
            std::set<int> d;
            for (int r : m.destinations[k]) {
              if (!members_.count(r))
                problem(who + ": destination " + std::to_string(r) + " is not one of the comm-op's ranks");
              if (!d.insert(r).second)
                problem(who + ": source " + std::to_string(m.ranks[k]) + " lists destination " + std::to_string(r) +
                        " twice");
            }
          }
        }
      } else if (!m.destinations.empty()) {
        problem(who + ": only an all_to_all motif has destination lists");
      }
      for (int p : m.after)
        if (p < 0 || static_cast<std::size_t>(p) >= count || static_cast<std::size_t>(p) == i)
          problem(who + ": depends on #" + std::to_string(p) + ", which is not another motif of the plan");
    }
    return problems_.empty();
  }

  // No cycle (Kahn), then every motif listed after its parents; ancestors for the race check.
  bool order() {
    const auto count = plan_.motifs.size();
    std::vector<int> indegree(count, 0);
    std::vector<std::vector<int>> children(count);
    for (std::size_t i = 0; i < count; ++i)
      for (int p : plan_.motifs[i].after) {
        ++indegree[i];
        children[static_cast<std::size_t>(p)].push_back(static_cast<int>(i));
      }
    std::vector<int> ready;
    for (std::size_t i = 0; i < count; ++i)
      if (indegree[i] == 0) ready.push_back(static_cast<int>(i));
    std::size_t done = 0;
    while (!ready.empty()) {
      const int v = ready.back();
      ready.pop_back();
      ++done;
      for (int c : children[static_cast<std::size_t>(v)])
        if (--indegree[static_cast<std::size_t>(c)] == 0) ready.push_back(c);
    }
    if (done != count) {
      std::string cyc;
      for (std::size_t i = 0; i < count; ++i)
        if (indegree[i] > 0) cyc += " #" + std::to_string(i);
      problem("the dependencies have a cycle through motifs" + cyc);
      return false;
    }
    for (std::size_t i = 0; i < count; ++i)
      for (int p : plan_.motifs[i].after)
        if (static_cast<std::size_t>(p) > i)
          problem(motif_text(i) + " is listed before its parent #" + std::to_string(p) +
                  ": a child is ordered before its parent");
    if (!problems_.empty()) return false;
    words_ = (count + 63) / 64;
    ancestors_.assign(count * words_, 0);
    for (std::size_t i = 0; i < count; ++i)
      for (int p : plan_.motifs[i].after) {
        const auto pp = static_cast<std::size_t>(p);
        ancestors_[i * words_ + pp / 64] |= std::uint64_t{1} << (pp % 64);
        for (std::size_t w = 0; w < words_; ++w) ancestors_[i * words_ + w] |= ancestors_[pp * words_ + w];
      }
    return true;
  }

  void patterns() {
    std::set<Bytes> bounds{0, plan_.op.bytes};
    for (const Motif& m : plan_.motifs) {
      transfers_.push_back(pattern_of_(m));
      for (const auto& t : transfers_.back()) {
        bounds.insert(t.bytes.begin);
        bounds.insert(t.bytes.end);
      }
    }
    bounds_.assign(bounds.begin(), bounds.end());
  }

  std::size_t atom(Bytes b) const {
    return static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), b) - bounds_.begin());
  }
  std::size_t atoms() const { return bounds_.size() - 1; }

  bool ordered(std::size_t i, std::size_t j) const {  // a dependency path between i and j
    const auto before = [&](std::size_t x, std::size_t y) {
      return (ancestors_[y * words_ + x / 64] >> (x % 64)) & 1U;
    };
    return before(i, j) || before(j, i);
  }

  // Motifs without a dependency path between them must not touch the same bytes where one writes.
  // Indexed by (buffer, elementary interval): only motifs meeting there are compared.
  void races() {
    constexpr unsigned char kRead = 1, kWrite = 2;
    struct Use {
      std::size_t motif;
      unsigned char flags;
    };
    std::map<Address, std::vector<std::vector<Use>>> users;
    for (std::size_t i = 0; i < plan_.motifs.size(); ++i)
      for (const auto& t : transfers_[i])
        for (const auto& [addr, flags] :
             {std::pair{t.src, kRead},
              std::pair{t.dst, static_cast<unsigned char>(t.reduce ? kRead | kWrite : kWrite)}}) {
          auto& cellsv = users[addr];
          cellsv.resize(atoms());
          for (std::size_t a = atom(t.bytes.begin); a < atom(t.bytes.end); ++a) {
            auto& u = cellsv[a];
            if (!u.empty() && u.back().motif == i) {
              u.back().flags |= flags;
            } else {
              u.push_back({i, flags});
            }
          }
        }
    std::set<std::pair<std::size_t, std::size_t>> reported;
    for (const auto& [addr, cellsv] : users)
      for (std::size_t a = 0; a < cellsv.size() && !full(); ++a) {
        const auto& u = cellsv[a];
        for (std::size_t x = 0; x < u.size() && !full(); ++x) {
          if (!(u[x].flags & kWrite)) continue;
          for (std::size_t y = 0; y < u.size() && !full(); ++y) {
            if (x == y || (y < x && (u[y].flags & kWrite))) continue;  // writer pairs once
            const auto i = std::min(u[x].motif, u[y].motif), j = std::max(u[x].motif, u[y].motif);
            if (ordered(i, j) || !reported.insert({i, j}).second) continue;
            problem(motif_text(i) + " and " + motif_text(j) + " have no dependency path between them but both use " +
                    address_text(addr) + " bytes " + range_text(bounds_[a], bounds_[a + 1]) +
                    " and one of them writes there");
          }
        }
      }
  }

  // Cells hold interned values: the same multisets recur everywhere (id 0 is the empty one).
  int intern(Value v) {
    const auto [it, added] = index_.try_emplace(std::move(v), static_cast<int>(table_.size()));
    if (added) table_.push_back(it->first);
    return it->second;
  }
  std::vector<int>& cells(const Address& a) {
    auto& v = values_[a];
    v.resize(atoms(), 0);
    return v;
  }
  std::vector<int>& writes(const Address& a) {
    auto& v = writes_[a];
    v.resize(atoms(), 0);
    return v;
  }

  void execute() {
    const CommOp& op = plan_.op;
    const int n = static_cast<int>(op.ranks.size());
    intern(Value{});
    for (int r : op.ranks) {
      if (op.kind == CollectiveKind::kAllReduce) cells({r, Buffer::kData, 0}).assign(atoms(), intern(Value{r}));
      if (op.kind == CollectiveKind::kBroadcast && r == op.root)
        cells({r, Buffer::kData, 0}).assign(atoms(), intern(Value{r}));
      if (op.kind == CollectiveKind::kAllToAll)
        for (int d : op.ranks)
          cells({r, Buffer::kSend, d}).assign(atoms(), intern(Value{position_[r] * n + position_[d]}));
    }
    struct Pending {
      int copies = 0;
      int reduces = 0;
      Value value;
    };
    for (std::size_t i = 0; i < plan_.motifs.size() && !full(); ++i) {
      int last_round = -1;
      for (const auto& t : transfers_[i]) last_round = std::max(last_round, t.round);
      for (int round = 0; round <= last_round; ++round) {
        std::map<std::pair<Address, std::size_t>, Pending> pending;
        for (const auto& t : transfers_[i]) {
          if (t.round != round) continue;
          const auto& src = cells(t.src);
          for (std::size_t a = atom(t.bytes.begin); a < atom(t.bytes.end); ++a) {
            auto& p = pending[{t.dst, a}];
            const Value& v = table_[static_cast<std::size_t>(src[a])];
            if (t.reduce) {
              ++p.reduces;
              p.value.insert(p.value.end(), v.begin(), v.end());
            } else {
              ++p.copies;
              p.value = v;
            }
          }
        }
        for (auto& [key, p] : pending) {
          const auto& [addr, a] = key;
          if (p.copies > 1 || (p.copies == 1 && p.reduces > 0)) {
            problem(motif_text(i) + " round " + std::to_string(round) + ": " + address_text(addr) + " bytes " +
                    range_text(bounds_[a], bounds_[a + 1]) + " receive " + std::to_string(p.copies + p.reduces) +
                    " transfers that overwrite each other");
            continue;
          }
          if (p.copies == 1) {
            const int id = intern(std::move(p.value));
            cells(addr)[a] = id;
          } else {
            Value merged = table_[static_cast<std::size_t>(cells(addr)[a])];
            merged.insert(merged.end(), p.value.begin(), p.value.end());
            std::sort(merged.begin(), merged.end());
            const int id = intern(std::move(merged));
            cells(addr)[a] = id;
          }
          ++writes(addr)[a];
        }
      }
    }
  }

  // Compares a buffer with what it must hold; consecutive atoms with one problem give one message.
  void expect(const Address& addr, const Value& want_value, int want_writes) {
    const int want = intern(want_value);
    auto& v = cells(addr);
    auto& w = writes(addr);
    std::size_t a = 0;
    while (a < atoms() && !full()) {
      if (v[a] == want && (want_writes < 0 || w[a] == want_writes)) {
        ++a;
        continue;
      }
      std::size_t b = a + 1;
      while (b < atoms() && v[b] == v[a] && w[b] == w[a]) ++b;
      std::string text = address_text(addr) + " bytes " + range_text(bounds_[a], bounds_[b]);
      if (v[a] != want) {
        const Value& got = table_[static_cast<std::size_t>(v[a])];
        text += " end with contributions " + value_text(got) + " instead of " + value_text(want_value);
        std::map<int, int> have;
        for (int c : got) ++have[c];
        for (int c : want_value)
          if (!have.count(c)) text += "; " + std::to_string(c) + " is missing";
        for (const auto& [c, k] : have)
          if (k > 1) text += "; " + std::to_string(c) + " is counted " + std::to_string(k) + " times";
      } else {
        text += " are written " + std::to_string(w[a]) + " times instead of " + std::to_string(want_writes) +
                (w[a] > want_writes ? " (covered more than once)" : " (not covered)");
      }
      problem(text);
      a = b;
    }
  }

  void result() {
    const CommOp& op = plan_.op;
    const int n = static_cast<int>(op.ranks.size());
    Value everyone(op.ranks.begin(), op.ranks.end());
    std::sort(everyone.begin(), everyone.end());
    for (int r : op.ranks) {
      if (op.kind == CollectiveKind::kAllReduce) expect({r, Buffer::kData, 0}, everyone, -1);
      if (op.kind == CollectiveKind::kBroadcast) expect({r, Buffer::kData, 0}, Value{op.root}, r == op.root ? 0 : 1);
      if (op.kind == CollectiveKind::kAllToAll)
        for (int s : op.ranks) expect({r, Buffer::kRecv, s}, Value{position_[s] * n + position_[r]}, 1);
    }
  }

  const MotifPlan& plan_;
  std::function<std::vector<Transfer>(const Motif&)> pattern_of_;
  std::size_t max_;
  std::vector<std::string> problems_;
  std::set<int> members_;
  std::map<int, int> position_;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> ancestors_;  // row i: the motifs before i, as bits
  std::vector<std::vector<Transfer>> transfers_;
  std::vector<Bytes> bounds_;
  std::map<Address, std::vector<int>> values_;  // ids into table_
  std::vector<Value> table_;
  std::map<Value, int> index_;
  std::map<Address, std::vector<int>> writes_;
};

}  // namespace

std::vector<std::string> check(const MotifPlan& plan, std::size_t max_problems) {
  return check(
      plan, [](const Motif& m) { return pattern(m); }, max_problems);
}

std::vector<std::string> check(const MotifPlan& plan,
                               const std::function<std::vector<Transfer>(const Motif&)>& pattern_of,
                               std::size_t max_problems) {
  return Checker(plan, pattern_of, max_problems == 0 ? 1 : max_problems).run();
}

void validate(const MotifPlan& plan) {
  const auto problems = check(plan, 5);
  if (problems.empty()) return;
  std::string text = "invalid motif plan for a " + std::string(to_string(plan.op.kind)) + ":";
  for (const auto& p : problems) text += "\n  " + p;
  throw std::invalid_argument(text);
}

}  // namespace chorus::coll::motif
