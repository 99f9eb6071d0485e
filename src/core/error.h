#pragma once
// Errors raised by chorus. Every error that stems from user input is an
// InputError: the front end prints it and exits with status 2.
#include <stdexcept>
#include <string>

namespace chorus {

// Bad input: a file, a field, a flag or an argument that cannot be used.
// `where` names the place (file:line, flag name, rank, operation).
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(where), what_(what) {}
  const std::string& where() const { return where_; }
  const std::string& detail() const { return what_; }

 private:
  std::string where_;
  std::string what_;
};

// Exit status for bad input, shared by every front end.
inline constexpr int kExitBadInput = 2;

}  // namespace chorus
