// rt_groups: sub-communicators (rt::split, rt::new_group) on every backend given, checked
// against sums computed here from world ranks. With N ranks seen as an R x C grid (R = 2):
//   1. split "rows<b>" (color = row, key = column) and "cols<b>" (color = column, key = row):
//      group_ranks, rank and size must match the grid; an all_reduce of each rank's world
//      rank must give the sum over its row (resp. column);
//   2. rows and columns at once: two threads each run 20 all_reduces of 1031 floats on their
//      group (synchronous, interleaved arbitrarily between the threads), every result checked;
//   3. new_group of the even world ranks (in reverse order): group rank follows the list;
//      an odd rank using the name gets an InputError saying it is not a member.
// Exit 0 only if all of that held.
//   rt_groups --backends shm,gloo
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <thread>
#include <vector>

#include "core/split.h"
#include "core/error.h"
#include "rt/errors.h"
#include "rt/runtime.h"

namespace rt_groups_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;

namespace {
int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "FAIL %s\n", what.c_str());
  }
}
}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"rt_groups: sub-communicators on every backend, checked"};
  std::string backends_arg = "shm,gloo";
  app.add_option("--backends", backends_arg);
  CLI11_PARSE(app, argc, argv);
  const auto backends = chorus::split_list(backends_arg);
  try {
    rt::init(backends);
    const int me = rt::rank(backends.front()), n = rt::size(backends.front());
    if (n % 2 != 0 || n < 2) {
      std::fprintf(stderr, "rt_groups needs an even number of ranks\n");
      return 2;
    }
    const int cols = n / 2, row = me / cols, col = me % cols;
    for (const auto& b : backends) {
      const std::string rows = "rows-" + b, colsg = "cols-" + b;
      rt::split(rows, b, row, col);
      rt::split(colsg, b, col, row);
      std::vector<int> want_row, want_col;
      for (int c = 0; c < cols; ++c) want_row.push_back(row * cols + c);
      for (int r = 0; r < 2; ++r) want_col.push_back(r * cols + col);
      expect(rt::group_ranks(rows) == want_row, fmt::format("{}: group_ranks of my row", b));
      expect(rt::group_ranks(colsg) == want_col, fmt::format("{}: group_ranks of my column", b));
      expect(rt::rank(rows) == col && rt::size(rows) == cols, fmt::format("{}: rank/size in my row", b));
      expect(rt::rank(colsg) == row && rt::size(colsg) == 2, fmt::format("{}: rank/size in my column", b));
      auto sum_of = [](const std::vector<int>& v) {
        long s = 0;
        for (int x : v) s += x;
        return s;
      };
      std::int64_t x = me, y = -1;
      rt::all_reduce(rows, &x, &y, 1, rt::DType::i64, rt::ReduceOp::sum);
      expect(y == sum_of(want_row), fmt::format("{}: row sum {} (expected {})", b, y, sum_of(want_row)));
      rt::all_reduce(colsg, &x, &y, 1, rt::DType::i64, rt::ReduceOp::sum);
      expect(y == sum_of(want_col), fmt::format("{}: column sum {} (expected {})", b, y, sum_of(want_col)));
      // 2. Both groups at once, from two threads.
      auto worker = [&](const std::string& g, const std::vector<int>& members, int salt) {
        std::vector<float> in(1031), out(1031);
        for (int it = 0; it < 20; ++it) {
          for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = static_cast<float>(me * 7 + salt + it + static_cast<int>(i % 13));
          rt::all_reduce(g, in.data(), out.data(), in.size(), rt::DType::f32, rt::ReduceOp::sum);
          for (std::size_t i = 0; i < out.size(); ++i) {
            float e = 0;
            for (int m : members) e += static_cast<float>(m * 7 + salt + it + static_cast<int>(i % 13));
            if (out[i] != e) {
              expect(false, fmt::format("{}: iteration {} element {}: {} (expected {})", g, it, i, out[i], e));
              return;
            }
          }
        }
      };
      std::thread t([&] { worker(colsg, want_col, 1); });
      worker(rows, want_row, 2);
      t.join();
      // 3. new_group of the even ranks, listed in reverse.
      std::vector<int> evens;
      for (int r = n - 2; r >= 0; r -= 2) evens.push_back(r);
      const std::string eg = "evens-" + b;
      // A group of no ranks is refused on every rank, before any rank joins anything.
      try {
        rt::new_group("nobody-" + b, {}, b);
        expect(false, fmt::format("{}: a new_group of no ranks was accepted", b));
      } catch (const chorus::InputError& e) {
        expect(std::string(e.what()).find("no ranks: a group needs at least one member") != std::string::npos,
               fmt::format("{}: empty new_group error: {}", b, e.what()));
      }
      rt::new_group(eg, evens, b);
      if (me % 2 == 0) {
        const int want = static_cast<int>(std::find(evens.begin(), evens.end(), me) - evens.begin());
        expect(rt::rank(eg) == want && rt::size(eg) == static_cast<int>(evens.size()),
               fmt::format("{}: rank {} of {} in the evens (expected {} of {})", b, rt::rank(eg), rt::size(eg), want,
                           evens.size()));
        std::int64_t one = 1, count = 0;
        rt::all_reduce(eg, &one, &count, 1, rt::DType::i64, rt::ReduceOp::sum);
        expect(count == static_cast<std::int64_t>(evens.size()), fmt::format("{}: evens counted {}", b, count));
      } else {
        try {
          rt::barrier(eg);
          expect(false, fmt::format("{}: an odd rank used the evens group", b));
        } catch (const chorus::InputError& e) {
          expect(std::string(e.what()).find("not a member of group '" + eg + "'") != std::string::npos,
                 fmt::format("{}: non-member error: {}", b, e.what()));
        }
      }
    }
    rt::finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL rank stopped: %s\n", e.what());
    return 1;
  }
  if (failures > 0) return 1;
  std::printf("rt_groups: rows, columns, both at once and a new_group checked on %s\n", backends_arg.c_str());
  return 0;
}

}  // namespace rt_groups_program
