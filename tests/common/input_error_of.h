#pragma once
// The message of the InputError that `f` throws, or "(no error)": what the tests of bad input
// compare against the field, file and rank a message must name.
#include <functional>
#include <string>

#include "core/error.h"

namespace chorus::test_support {

inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace chorus::test_support
