#!/usr/bin/env bash
# Fails, naming the lines, if a library (src/) spells a command-line flag as a string ("--chunks"):
# libraries name the field of their options (InputError("chunks", ...)) and only apps/chorus maps
# fields to flags (apps/chorus/parse_errors.cpp). The one exception is chorus's own
# command line built for a child process, marked on its line with "// cli-command-line".
# Run by ctest (source_no_cli_flags).
set -euo pipefail
cd "$(dirname "$0")/.."
if hits=$(grep -rn '"--[a-z]' src | grep -v '// cli-command-line'); then
  echo "scripts/check-cli-flags.sh: flag strings below src/ (name the options' field instead):" >&2
  echo "$hits" | sed 's/^/  /' >&2
  exit 1
fi
echo "scripts/check-cli-flags.sh: no flag strings below src/ ($(grep -rn '"--[a-z]' src | wc -l) marked command lines)"
