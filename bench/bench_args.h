#pragma once
// Command lines of the bench programs: a value that does not parse, an unknown flag or a missing
// value is an error naming it (exit 2, like the chorus front end), `--help` prints the usage, and
// nothing a program throws ends it with std::terminate.
#include <charconv>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace chorus::bench {

// `text` as a number of type T, all of it; InputError naming `what` otherwise.
template <typename T>
T number(std::string_view text, std::string_view what) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError(std::string(what), "expected a number, got '" + std::string(text) + "'");
  return value;
}

// Walks argv: flag(name) consumes "--name"; value(name) consumes "--name VALUE".
class Args {
 public:
  Args(int argc, char** argv) : args_(argv + 1, argv + argc) {}
  bool done() const { return at_ >= args_.size(); }
  const std::string& peek() const { return args_[at_]; }
  bool flag(std::string_view name) {
    if (done() || args_[at_] != name) return false;
    ++at_;
    return true;
  }
  // True and `out` set when the next argument is `name`; InputError when its value is missing.
  bool value(std::string_view name, std::string& out) {
    if (!flag(name)) return false;
    if (done()) throw InputError(std::string(name), "needs a value");
    out = args_[at_++];
    return true;
  }
  template <typename T>
  bool number(std::string_view name, T& out) {
    std::string text;
    if (!value(name, text)) return false;
    out = bench::number<T>(text, name);
    return true;
  }
  // A positional argument (anything not starting with "--"); InputError for an unknown flag.
  std::string positional() {
    if (args_[at_].rfind("--", 0) == 0) throw InputError(args_[at_], "unknown option (--help lists them)");
    return args_[at_++];
  }

 private:
  std::vector<std::string> args_;
  std::size_t at_ = 0;
};

// Runs `body` (which parses its own arguments): `--help` anywhere prints `usage`; an InputError
// prints "program: where: what" and returns 2; any other exception prints and returns 1.
inline int guarded_main(const char* program, const char* usage, int argc, char** argv,
                        const std::function<int(Args&)>& body) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::printf("%s", usage);
      return 0;
    }
  try {
    Args args(argc, argv);
    return body(args);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace chorus::bench
