#include "rt/rendezvous/store.h"

#include <cstring>

#include "core/error.h"
#include "rt/errors.h"

namespace chorus::rt {

// ---- helpers --------------------------------------------------------------------------------

void Store::set_string(const std::string& key, const std::string& value) {
  set(key, std::vector<char>(value.begin(), value.end()));
}

std::string Store::get_string(const std::string& key, std::chrono::milliseconds timeout) {
  const auto v = get(key, timeout);
  return std::string(v.begin(), v.end());
}

void Store::barrier(const std::string& name, int world_size, std::chrono::milliseconds timeout) {
  if (add(name + "/arrived", 1) == world_size) set(name + "/done", {'1'});
  get(name + "/done", timeout);
}

std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& where) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw InputError(where, "expected host:port, got '" + text + "'");
  int port = 0;
  try {
    port = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw InputError(where, "bad port in '" + text + "'");
  }
  if (port <= 0 || port > 65535) throw InputError(where, "port out of range in '" + text + "'");
  return {text.substr(0, colon), port};
}

// ---- in-memory store ------------------------------------------------------------------------

void InMemoryStore::set(const std::string& key, const std::vector<char>& value) {
  {
    std::lock_guard lock(mutex_);
    values_[key] = value;
  }
  cv_.notify_all();
}

std::vector<char> InMemoryStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [&] { return values_.count(key) > 0; }))
    throw TimeoutError("store: key '" + key + "' not set in time");
  return values_[key];
}

std::int64_t InMemoryStore::add(const std::string& key, std::int64_t delta) {
  std::lock_guard lock(mutex_);
  auto& v = values_[key];
  std::int64_t x = 0;
  if (v.size() == 8) std::memcpy(&x, v.data(), 8);
  x += delta;
  v.resize(8);
  std::memcpy(v.data(), &x, 8);
  cv_.notify_all();
  return x;
}

}  // namespace chorus::rt
