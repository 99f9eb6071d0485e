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

// Ranks disagree on a collective call (operation, counts, dtype, reduce op, root): every rank
// involved learned of it from the same signatures before any data moved, so its peers are alive
// and heading for the same error. The backend is unusable afterwards all the same.
class DisagreementError : public CommError {
 public:
  using CommError::CommError;
};

// An operation did not complete within the configured timeout.
class TimeoutError : public CommError {
 public:
  using CommError::CommError;
};

}  // namespace chorus::rt
