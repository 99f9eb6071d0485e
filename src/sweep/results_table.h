#pragma once
// A sweep's rows as one table, in the spec's point order: the columns (key, the parameters, every
// metric any row has, error) and the CSV of it. A metric named like a parameter (a command's
// JSON repeats its topology) is the column "result.<name>".
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sweep/result_db.h"
#include "sweep/spec.h"

namespace chorus::sweep {

struct ResultsTable {
  std::vector<std::string> params;                           // the axes, then the fixed parameters
  std::vector<std::pair<std::string, std::string>> metrics;  // column, key in a row's metrics
  std::vector<const Row*> rows;                              // in the spec's order; points not done left out
};

// `keys`: the distinct points' keys in the spec's order; `rows`: what the database holds of them.
ResultsTable results_table(const Spec& spec, const std::vector<std::string>& keys,
                           const std::map<std::string, Row>& rows);

std::string to_csv(const ResultsTable& table);

}  // namespace chorus::sweep
