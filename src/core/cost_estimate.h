#pragma once
// The time the runs not yet done will take (a sweep's points, a study's runs), estimated from the
// run times of those done: each parameter value's mean time relative to the mean of all,
// multiplied over a run's values (a value not seen yet counts as the mean). A sweep whose sizes
// span 1 KiB to 1 GiB thus predicts its large points as slow, where a count of runs would not.
#include <map>
#include <string>
#include <utility>

namespace chorus {

using ParamValues = std::map<std::string, std::string>;  // parameter name -> value text

class CostEstimate {
 public:
  void add(const ParamValues& point, double seconds);
  // The predicted seconds of `point`; 0 before any point is added.
  double predict(const ParamValues& point) const;

 private:
  struct Sum {
    double seconds = 0;
    double count = 0;
  };
  Sum all_;
  std::map<std::pair<std::string, std::string>, Sum> by_value_;
};

}  // namespace chorus
