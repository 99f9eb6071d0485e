#pragma once
// What chorus says when its command line does not parse: the unknown word with the closest
// known flag or command ("did you mean"), a bare command's help instead of an error.
#include <CLI/CLI.hpp>

namespace chorus::cli {

// Reports `e`, raised by app.parse(), and returns the exit status: 0 when a command was given
// without its subcommand (its help is printed), 2 otherwise.
int report_parse_error(CLI::App& app, const CLI::ParseError& e);

}  // namespace chorus::cli
