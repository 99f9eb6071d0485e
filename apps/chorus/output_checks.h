#pragma once
// Output flags checked while the command line is parsed, before any work: a study must not
// compute for minutes and then fail on its --out directory.
#include <CLI/CLI.hpp>

#include "core/error.h"
#include "core/text_file.h"

namespace chorus::cli {

// `--out DIR`: created if missing, and a file must be writable in it.
inline const CLI::Validator kWritableDir(
    [](std::string& dir) -> std::string {
      try {
        ensure_writable_dir(dir);
      } catch (const InputError& e) {
        return e.detail();  // CLI11 names the flag
      }
      return {};
    },
    "DIR", "writable directory");

}  // namespace chorus::cli
