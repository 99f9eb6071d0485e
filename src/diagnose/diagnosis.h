#pragma once
// The doctor's diagnosis of a hung or failed job from its ranks' flight records (dump_set.h):
// per communicator, the collective sequence number where the ranks parted, which ranks wait in
// it and for how long, which never issued it and where they are instead (in finalize, in another
// call, outside chorus, or without a dump: stopped, killed or exited as launcher.json says), and
// which ranks called different collectives at one sequence number.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/dump_set.h"

namespace chorus::diagnose {

enum class Verdict {
  kDisagreement,  // ranks called different collectives (op, count, dtype, root) at one seq
  kParted,        // some ranks issued a collective that others never issued
  kAllWaiting,    // every member is in the same collective: none is missing (transport, or slow)
  kPeerWait,      // a rank waits in a send or recv, none of the above
  kMissing,       // members without a record while those with one are in no call (killed between calls...)
  kFailed,        // an operation failed (comm_error, timeout) without any of the above
};
const char* to_string(Verdict v);

// What one rank called at one seq (or in one point-to-point operation).
struct RankCall {
  int rank = -1;
  std::string op, dtype, algorithm, state, layer;
  std::int64_t count = 0, bytes = 0;
  std::optional<std::int64_t> seq;
  int root = -1, peer = -1;  // peer: a world rank
  double waited_s = 0;       // dump time minus its start, unless state is completed
};

// Where a rank that never issued the collective is instead.
enum class Whereabouts { kInFinalize, kStarting, kInOtherCall, kOutside, kNoDump };
const char* to_string(Whereabouts w);

struct AbsentRank {
  int rank = -1;
  Whereabouts where = Whereabouts::kNoDump;
  std::int64_t issued = -1;      // collectives it issued on the communicator; -1 without a dump
  std::string communicator;      // kInOtherCall: the call's communicator
  std::optional<RankCall> call;  // kInOtherCall: the call
  double for_s = 0;              // kInFinalize, kStarting: for how long (at its dump)
  std::string state;             // kNoDump: launcher.json's state (stopped, killed, exited, running), or ""
  std::optional<int> signal;     // kNoDump, killed: the signal
  std::string description;       // one line, for the text report
};

struct Finding {
  Verdict verdict = Verdict::kParted;
  std::string communicator, backend;
  std::int64_t seq = -1;             // the collective where the ranks parted (-1: point to point)
  std::vector<RankCall> waiting;     // ranks in the call (kParted, kAllWaiting, kPeerWait)
  std::vector<AbsentRank> absent;    // ranks that never issued it (kParted, kPeerWait: the peer; kMissing)
  std::int64_t recorded = -1;        // kMissing: the collectives the members with a record issued (the most)
  std::vector<RankCall> calls;       // kDisagreement: every rank's call at seq; kFailed: the failed call
  std::vector<std::string> differs;  // kDisagreement: the fields that differ
  std::string skipped;               // kDisagreement: "rank 1 skipped the all_reduce rank 0 issued at seq 4"
  std::vector<std::string> details;  // the dumps' error messages of the ranks involved
  double longest_wait_s = 0;
  // kFailed: a rank that started the failed collective only after another member had given up
  // on it (timed out and written its record): the one the others waited for (a rank stopped and
  // continued, or far too slow).
  struct LateArrival {
    int rank = -1, gave_up = -1;  // the late rank; the member that had given up first
    double after_s = 0;           // its start minus the first member's start
  };
  std::optional<LateArrival> late;
  // kParted, when the program marks steps (rt::mark_step): a rank that issued fewer collectives
  // than the others in a step that every rank has finished skipped some.
  struct StepSkip {
    int rank = -1;
    std::int64_t step = 0, issued = 0, others = 0;
    std::int64_t from_seq = 0;  // the skipped calls are at or after this seq of the rank's
  };
  std::vector<StepSkip> step_skips;
  // kParted without step markers, when every collective the records hold is the same call: a
  // rank that skipped one earlier cannot be told from one that left early.
  bool alike = false;
};

struct Diagnosis {
  std::string dir;
  int world_size = 0;
  std::vector<int> dumped, missing;
  std::vector<std::string> jobs, warnings;
  std::optional<LauncherRecord> launcher;
  std::vector<Finding> findings;  // the most telling first; empty: no problem found
  struct Completed {
    std::string communicator;
    std::int64_t collectives = 0;
  };
  std::vector<Completed> completed;  // with no finding: per communicator, the collectives all ranks completed
};

Diagnosis diagnose(const DumpSet& set);

// One screen of text, and the same as JSON (`chorus doctor --json`).
std::string to_text(const Diagnosis& d);
nlohmann::json to_json(const Diagnosis& d);

// "all_reduce f32 x1009", "broadcast f32 x4 root 1", "recv f32 x8 from rank 1".
std::string call_text(const RankCall& c);

// "0-3,5": ranks as ranges.
std::string rank_ranges(std::vector<int> ranks);

}  // namespace chorus::diagnose
