#pragma once
// What chorus says when its command line does not parse: the unknown word with the closest
// known flag or command ("did you mean"), a bare command's help instead of an error. And what it
// says about bad input found later: a library's InputError names the field of its options
// (`switch_after`), the user reads the flag that set it (`--switch-after`).
#include <CLI/CLI.hpp>
#include <string>

#include "core/error.h"

namespace chorus::cli {

// Reports `e`, raised by app.parse(), and returns the exit status: 0 when a command was given
// without its subcommand (its help is printed), 2 otherwise.
int report_parse_error(CLI::App& app, const CLI::ParseError& e);

// The flag of the command that ran (the innermost parsed subcommand of `app`, or its parents)
// that sets the field `where` names: "--" + the field with '_' as '-', unless kFieldFlags in
// parse_errors.cpp says otherwise. A `where` that is no field of the command (file:line, a
// rank, an operation, a flag already) is returned as it is.
std::string flag_of_field(CLI::App& app, const std::string& where);

// Prints `e` as "chorus: error: <flag or where>: <what>" and returns kExitBadInput.
int report_input_error(CLI::App& app, const InputError& e);

// The exit status of a command that ended with `status`, once what it wrote to standard output
// is flushed: a write that failed (a full disk, /dev/full, a closed descriptor) turns a 0 into
// kExitBadInput with "chorus: error: standard output: cannot write: <reason>" on standard error,
// so that a table that was never written is not reported as a success.
int finish_standard_output(int status);

}  // namespace chorus::cli
