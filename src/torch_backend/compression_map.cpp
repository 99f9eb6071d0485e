#include "torch_backend/compression_map.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "torch_backend/env_list.h"

namespace chorus::torch_backend {

namespace {

bool names_a_bound(std::string_view entry) {
  const std::string_view kind = entry.substr(0, entry.find(':'));
  return kind == "abs" || kind == "absolute" || kind == "prec" || kind == "precision";
}

std::string compressible_names() {
  std::vector<std::string_view> names;
  for (CollectiveKind op : rt::compressed::kCompressible) names.push_back(rt::to_string(op));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

CompressionMap CompressionMap::parse(std::string_view text, const std::string& where) {
  CompressionMap map;
  if (trim(text).empty()) return map;
  std::array<bool, std::size(kAllCollectiveKinds)> named{};
  std::optional<rt::compressed::ErrorBound> every;
  const auto items = split_env_list(text);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string at = fmt::format("{}, entry {} ('{}')", where, i + 1, items[i]);
    if (names_a_bound(items[i])) {
      if (every) throw InputError(at, "a bound for every operation is given twice");
      every = rt::compressed::parse_error_bound(items[i], at);
      continue;
    }
    const std::size_t colon = items[i].find(':');
    if (colon == std::string_view::npos)
      throw InputError(at, "expected a bound (abs:1e-4, prec:16) or op:bound (all_reduce:abs:1e-4)");
    CollectiveKind op = rt::parse_op_kind(trim(items[i].substr(0, colon)), at);
    if (!rt::compressed::has_compressed_form(op))
      throw InputError(
          at, fmt::format("{} has no compressed form (compressed: {})", rt::to_string(op), compressible_names()));
    const auto k = static_cast<std::size_t>(op);
    if (named[k]) throw InputError(at, fmt::format("operation '{}' is given twice", rt::to_string(op)));
    named[k] = true;
    map.by_op_[k] = rt::compressed::parse_error_bound(trim(items[i].substr(colon + 1)), at);
  }
  for (CollectiveKind op : rt::compressed::kCompressible) {
    const auto k = static_cast<std::size_t>(op);
    if (!named[k]) map.by_op_[k] = every;
  }
  // A compressed send sends a size, then a block: its recv must expect them.
  const auto send = static_cast<std::size_t>(CollectiveKind::kSend),
             recv = static_cast<std::size_t>(CollectiveKind::kRecv);
  if (named[send] && named[recv] &&
      rt::compressed::to_string(*map.by_op_[send]) != rt::compressed::to_string(*map.by_op_[recv]))
    throw InputError(where, "send and recv have different bounds: a send and its recv must agree");
  if (named[send]) map.by_op_[recv] = map.by_op_[send];
  if (named[recv]) map.by_op_[send] = map.by_op_[recv];
  return map;
}

bool CompressionMap::any() const {
  return std::any_of(by_op_.begin(), by_op_.end(), [](const auto& b) { return b.has_value(); });
}

}  // namespace chorus::torch_backend
