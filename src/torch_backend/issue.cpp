// ProcessGroupChorus::issue(): an operation issued on its communicator (which sends it through
// the fusion when the fusion takes it: Communicator::issue), and its WorkChorus.
#include "rt/runtime_instance.h"
#include "torch_backend/process_group.h"
#include "torch_backend/torch_args.h"
#include "torch_backend/work_chorus.h"

namespace chorus::torch_backend {

std::string ProcessGroupChorus::backend_for(CollectiveKind op) const {
  if (!group_.empty()) return group_;
  if (op == CollectiveKind::kAllToAllv) return plain_backend(map_.backend(CollectiveKind::kAllToAllSingle));
  return rt::takes_algorithm(op) ? map_.backend(op) : plain_backend(map_.backend(op));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::issue(TorchOp op) {
  const rt::ScopedFlightLayer layer(rt::FlightLayer::kTorch);
  const rt::Communicator& comm = comms_[static_cast<std::size_t>(op.call.op)];
  rt::Work w = !comm.name().empty() ? comm.issue(std::move(op.call), /*async_op=*/true)
                                    : runtime_->issue(backend_for(op.call.op), std::move(op.call), /*async_op=*/true);
  return WorkChorus::make(rank_, op.type, op.title, std::move(w), std::move(op.keep), std::move(op.outputs),
                          std::move(op.finish), std::move(op.staging));
}

}  // namespace chorus::torch_backend
