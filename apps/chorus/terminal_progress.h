#pragma once
// Progress of one long simulation on a terminal: nothing for the first 2 s (most runs end
// sooner), then one line redrawn at most 4 times a second, erased when the run ends. Silent when
// stderr is not a terminal (logs, pipes, tests).
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

namespace chorus::cli {

class TerminalProgress {
 public:
  explicit TerminalProgress(std::string what) : what_(std::move(what)), tty_(isatty(STDERR_FILENO) != 0) {}
  ~TerminalProgress() {
    if (shown_) fmt::print(stderr, "\r{:<78}\r", "");
  }
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  void update(std::size_t done, std::size_t total) {
    if (!tty_) return;
    const auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(2) || now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    shown_ = true;
    const double s = std::chrono::duration<double>(now - start_).count();
    fmt::print(stderr, "\r{}: {:.0f} % ({} of {}), {:.1f} s", what_,
               total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0, done, total, s);
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  bool tty_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now(), last_{};
};

}  // namespace chorus::cli
