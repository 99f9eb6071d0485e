#include "workload/model.h"

namespace chorus::workload {

double Model::total_params() const {
  double p = 0;
  for (const auto& l : layers) p += l.params;
  return p;
}

double Model::total_forward_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.forward_flops;
  return f;
}

}  // namespace chorus::workload
