#include "torch_backend/c10d_store.h"

#include <fmt/format.h>

#include "rt/errors.h"

namespace chorus::torch_backend {

void C10dStore::set(const std::string& key, const std::vector<char>& value) {
  store_->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
}

std::vector<char> C10dStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  try {
    store_->wait({key}, timeout);
  } catch (const c10::Error& e) {
    throw rt::TimeoutError(fmt::format("torch.distributed store: key '{}' did not appear within {} ms ({})", key,
                                       timeout.count(), e.what_without_backtrace()));
  }
  const std::vector<std::uint8_t> v = store_->get(key);
  return {v.begin(), v.end()};
}

std::int64_t C10dStore::add(const std::string& key, std::int64_t delta) { return store_->add(key, delta); }

}  // namespace chorus::torch_backend
