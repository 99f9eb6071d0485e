#pragma once
// What every fuzz target checks: a parser given arbitrary bytes either succeeds or throws
// chorus::InputError (which the CLI turns into a message and exit status 2). Any other
// exception, a crash, a hang or a sanitizer report is a bug. Each target is built twice: with
// libFuzzer (scripts/test.sh --fuzz) and with replay_main.cpp, which runs the seed corpus and
// every past crash (tests/fuzz/regressions/) as an ordinary test in every build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <cstdio>
#include <string>

#include "core/error.h"

#define CHORUS_FUZZ_TARGET(body)                                                      \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    const std::string input(reinterpret_cast<const char*>(data), size);               \
    try {                                                                             \
      body(input);                                                                    \
    } catch (const chorus::InputError&) {                                             \
    } catch (const std::exception& e) {                                               \
      std::fprintf(stderr, "fuzz: escaped exception: %s\n", e.what());                \
      std::abort();                                                                   \
    }                                                                                 \
    return 0;                                                                         \
  }
