#pragma once
// What the launcher does with its ranks' output (chorus launch):
// - by default, each rank's stderr comes through a pipe, line by line: every line gets its rank
//   ("[2] ..."), and a line several ranks write alike within a short window is printed once
//   with all of them ("[0-3] chorus: error: ..."), so a job's one error reads once, not N times;
//   stdout is the launcher's own (tables, results: no prefix, no delay);
// - with --tag-output, both streams of every rank are tagged "[r]<stdout>: " / "[r]<stderr>: ",
//   line by line, nothing merged.
// Lines are forwarded whole, so lines of different ranks never mix; a last line without a
// newline is completed at end of file; a line longer than kTagMaxLine is cut.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace chorus::launch {

inline constexpr std::size_t kTagMaxLine = 64 * 1024;

// "0-3,5,7-8" for the sorted ranks {0,1,2,3,5,7,8}.
std::string rank_ranges(std::vector<int> ranks);

// Identical lines of several ranks, printed once with the ranks that wrote them.
class MergedLines {
 public:
  using Clock = std::chrono::steady_clock;
  explicit MergedLines(int fd, std::chrono::milliseconds window = std::chrono::milliseconds(250))
      : fd_(fd), window_(window) {}
  void add(int rank, std::string line, Clock::time_point now);  // `line` without its newline
  // A line of the launcher's own, printed as it is, in order with the ranks' lines before it.
  void note(std::string line, Clock::time_point now);
  // Prints the lines held longer than the window (all of them if `all`), oldest first.
  void flush(Clock::time_point now, bool all);

 private:
  struct Pending {
    std::string text;
    std::vector<int> ranks;  // empty: the launcher's own line
    Clock::time_point since;
  };
  int fd_;
  std::chrono::milliseconds window_;
  std::vector<Pending> pending_;
};

// One stream of one rank: the read end of its pipe, cut into lines.
struct RankStream {
  int fd = -1;  // -1 once at end of file
  int rank = 0;
  int target = 2;   // the launcher's descriptor the lines go to
  std::string tag;  // --tag-output's "[3]<stdout>: "; empty: lines go to `merged`
  MergedLines* merged = nullptr;
  std::string partial;
  // Set to true when a line reports a Python import failure (ImportError, ModuleNotFoundError,
  // chorus's "the runtime is not available"); null: lines are not looked at.
  bool* import_failure = nullptr;
  // Non-null: what the rank writes is appended here as it comes (the launcher's capture_stdout),
  // not forwarded.
  std::string* capture = nullptr;

  // Reads what is available and forwards the complete lines; returns false at end of file.
  bool pump();
  // Forwards everything the pipe holds now (the rank has exited: its last lines come before
  // what the launcher says of it).
  void drain();
  // Forwards the complete lines of `partial` (and the rest, if `all`); captures all of it.
  void forward(bool all);
};

void write_all_fd(int fd, const char* data, std::size_t size);

// Whether `line` reports a Python import failure (see RankStream::import_failure).
bool reports_import_failure(const std::string& line);

}  // namespace chorus::launch
