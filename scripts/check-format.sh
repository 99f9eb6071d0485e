#!/usr/bin/env bash
# Fails, naming the files, if any C++ source differs from what clang-format (.clang-format) makes
# of it. Run by scripts/test.sh's first stage; `clang-format -i FILE` fixes a file.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! clang-format --dry-run --Werror "${files[@]}" 2>"$log"; then
  echo "scripts/check-format.sh: not formatted as .clang-format says (clang-format -i FILE):" >&2
  grep -o '^[^:]*:[0-9]*' "$log" | sed 's/:[0-9]*$//' | sort -u | sed 's/^/  /' >&2
  exit 1
fi
echo "scripts/check-format.sh: ${#files[@]} C++ files formatted"
