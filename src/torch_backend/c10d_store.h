#pragma once
// torch.distributed's rendezvous store (c10d::Store: TCPStore under torchrun, behind a
// PrefixStore per process group) as the runtime's rendezvous store, so that the runtime joins
// the world torch found instead of looking for its own (rt::ExternalWorld).
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "rt/rendezvous/store.h"

namespace chorus::torch_backend {

class C10dStore : public rt::Store {
 public:
  explicit C10dStore(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& value) override;
  // Waits with torch's store; its timeout becomes rt::TimeoutError naming the key.
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;

 private:
  c10::intrusive_ptr<c10d::Store> store_;  // c10d's stores serialise their own calls
};

}  // namespace chorus::torch_backend
