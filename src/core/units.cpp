#include "core/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "core/error.h"

namespace chorus {

Bytes parse_bytes(std::string_view text, const std::string& field) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) ++digits;
  if (digits == 0) {
    throw InputError(field, fmt::format("'{}' is not a size (examples: 4096, 64KiB, 1MiB, 100MB, 1GiB)", text));
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + digits, value);
  if (ec != std::errc() || ptr != s.data() + digits) {
    throw InputError(field, fmt::format("'{}' is not a size", text));
  }
  std::string unit(s.substr(digits));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 0;
  if (unit.empty() || unit == "b")
    mult = 1;
  else if (unit == "k" || unit == "kib")
    mult = 1024.0;
  else if (unit == "m" || unit == "mib")
    mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gib")
    mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tib")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb")
    mult = 1e3;
  else if (unit == "mb")
    mult = 1e6;
  else if (unit == "gb")
    mult = 1e9;
  else if (unit == "tb")
    mult = 1e12;
  else
    throw InputError(field,
                     fmt::format("unknown size unit '{}' in '{}' (use B, KiB, MiB, GiB, KB, MB, GB)", unit, text));
  double bytes = value * mult;
  if (!(bytes >= 0) || bytes > 1e18 || bytes != std::floor(bytes)) {
    throw InputError(field, fmt::format("'{}' is not a whole number of bytes", text));
  }
  return static_cast<Bytes>(bytes);
}

std::string group_digits(double value) {
  const bool negative = value < 0;
  const std::string digits = fmt::format("{:.0f}", negative ? -value : value);
  std::string out = negative ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_bytes(Bytes bytes) {
  struct Unit {
    Bytes mult;
    const char* name;
  };
  static constexpr Unit units[] = {{kGiB, "GiB"},         {kMiB, "MiB"},      {kKiB, "KiB"},
                                   {1000000000ULL, "GB"}, {1000000ULL, "MB"}, {1000ULL, "KB"}};
  if (bytes == 0) return "0 B";
  for (const auto& u : units) {
    if (bytes % u.mult == 0) return fmt::format("{} {}", bytes / u.mult, u.name);
  }
  return fmt::format("{} B", bytes);
}

}  // namespace chorus
