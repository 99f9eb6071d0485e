#pragma once
// Tuning tables for the "auto" backend (MCR-DL Table II): per operation and world size, the
// measured time of each backend at each message size. Schema in docs/runtime-backends.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rt/types.h"

namespace chorus::rt {

struct TuningRow {
  std::uint64_t bytes = 0;                // message size per rank
  std::map<std::string, double> time_us;  // backend -> measured time per operation
  std::string best() const;               // backend with the smallest time
};

struct TuningTable {
  static constexpr const char* kSchema = "chorus-rt-tuning/1";
  // (operation, world size) -> rows sorted by bytes
  std::map<std::pair<CollectiveKind, int>, std::vector<TuningRow>> tables;
  std::string machine;  // free text: where it was measured

  // Throws InputError naming the file and field on bad content.
  static TuningTable load(const std::string& path);
  // The text of a table; `path` names it in errors.
  static TuningTable parse(const std::string& text, const std::string& path);
  void save(const std::string& path) const;
  std::string to_json() const;
  // The fastest allowed backend at the tuned size nearest below `bytes` (or the smallest
  // tuned size); nullopt if the table has no row for (op, world_size) with an allowed backend.
  std::optional<std::string> pick(CollectiveKind op, int world_size, std::uint64_t bytes,
                                  const std::vector<std::string>& allowed) const;
  // The time of `backend` for (op, world_size) at `bytes`, from the rows that measured it:
  // linear between the two rows around `bytes`; below the smallest row, that row's time (the
  // latency-bound end); above the largest, its time scaled by bytes / its bytes (the
  // bandwidth-bound end). nullopt without such a row.
  std::optional<double> estimate_us(CollectiveKind op, int world_size, double bytes, const std::string& backend) const;
};

}  // namespace chorus::rt
