#include "torch_backend/backend_map.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/runtime.h"
#include "torch_backend/env_list.h"

namespace chorus::torch_backend {

namespace {

void require_backend(std::string_view name, bool allow_auto, const std::string& where) {
  const auto known = rt::available_backends();
  if ((allow_auto && name == "auto") || std::find(known.begin(), known.end(), name) != known.end()) return;
  throw InputError(where, fmt::format("unknown backend '{}' (known: {}{})", name, fmt::join(known, ", "),
                                      allow_auto ? ", auto" : ""));
}

}  // namespace

BackendMap::BackendMap() { by_op_.fill("auto"); }

BackendMap BackendMap::parse(std::string_view text, const std::string& where) {
  BackendMap map;
  if (trim(text).empty()) return map;
  std::array<bool, std::size(kAllCollectiveKinds)> set{};
  bool have_default = false;
  std::string default_backend = "auto";
  const auto items = split_env_list(text);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string at = fmt::format("{}, entry {} ('{}')", where, i + 1, items[i]);
    const std::size_t colon = items[i].find(':');
    if (colon == std::string_view::npos) throw InputError(at, "expected op:backend, e.g. all_reduce:shm or *:auto");
    const std::string_view op = trim(items[i].substr(0, colon));
    const std::string backend(trim(items[i].substr(colon + 1)));
    // The operations that take algorithms may name one: all_reduce:mpi:ring (the backend checks
    // the name when it is first used).
    const std::size_t algorithm = backend.find(':');
    require_backend(backend.substr(0, algorithm), true, at);
    if (algorithm != std::string::npos &&
        (op == "*" || backend.substr(0, algorithm) == "auto" || !rt::takes_algorithm(rt::parse_op_kind(op, at))))
      throw InputError(
          at, fmt::format("only {} take an algorithm (all_reduce:mpi:ring), on a named backend", rt::kAlgorithmOps));
    if (op == "*") {
      if (have_default) throw InputError(at, "'*' is given twice");
      have_default = true;
      default_backend = backend;
      continue;
    }
    const CollectiveKind kind = rt::parse_op_kind(op, at);
    const auto k = static_cast<std::size_t>(kind);
    if (set[k]) throw InputError(at, fmt::format("operation '{}' is given twice", rt::to_string(kind)));
    set[k] = true;
    map.by_op_[k] = backend;
  }
  for (std::size_t k = 0; k < set.size(); ++k)
    if (!set[k]) map.by_op_[k] = default_backend;
  // A send and its recv must meet on one backend: naming one names both.
  const auto send = static_cast<std::size_t>(CollectiveKind::kSend),
             recv = static_cast<std::size_t>(CollectiveKind::kRecv);
  if (set[send] && set[recv] && map.by_op_[send] != map.by_op_[recv])
    throw InputError(where, fmt::format("send uses '{}' but recv '{}': a send and its recv must use one backend",
                                        map.by_op_[send], map.by_op_[recv]));
  if (set[send]) map.by_op_[recv] = map.by_op_[send];
  if (set[recv]) map.by_op_[send] = map.by_op_[recv];
  return map;
}

std::vector<std::string> BackendMap::named_backends() const {
  std::vector<std::string> names;
  for (const auto& entry : by_op_) {
    const std::string b = entry.substr(0, entry.find(':'));  // "mpi:ring": backend mpi
    if (b != "auto" && std::find(names.begin(), names.end(), b) == names.end()) names.push_back(b);
  }
  return names;
}

std::vector<std::string> backends_to_init(const char* env_value, const BackendMap& map) {
  std::vector<std::string> out;
  if (env_value == nullptr || trim(env_value).empty()) return {"auto"};
  {
    const auto items = split_env_list(env_value);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string at = fmt::format("environment CHORUS_BACKENDS, entry {} ('{}')", i + 1, items[i]);
      require_backend(items[i], false, at);
      if (std::find(out.begin(), out.end(), items[i]) != out.end()) throw InputError(at, "given twice");
      out.emplace_back(items[i]);
    }
  }
  for (const auto& b : map.named_backends())
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  return out;
}

}  // namespace chorus::torch_backend
