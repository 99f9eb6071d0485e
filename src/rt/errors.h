#pragma once
// Runtime failures of communication (as opposed to bad input, which is chorus::InputError).
#include <stdexcept>
#include <string>

namespace chorus::rt {

// A peer died, a connection broke, or a backend is unusable after an earlier failure.
class CommError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An operation did not complete within the configured timeout.
class TimeoutError : public CommError {
 public:
  using CommError::CommError;
};

}  // namespace chorus::rt
