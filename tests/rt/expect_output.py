#!/usr/bin/env python3
"""Runs a command and passes only when it exits 0 and its output (stdout and stderr) holds every
expected line: each PATTERN (a Python regular expression) must match at least one line, and a
PATTERN containing {rank} must match for every rank 0..N-1 (--ranks N); with --whole, a PATTERN
is searched in the whole output, '.' matching newlines too (as ctest's regular expressions do).
ctest's PASS_REGULAR_EXPRESSION alone passes on a printed line whatever the exit status.

usage: expect_output.py [--ranks N] [--whole] PATTERN [PATTERN ...] -- COMMAND [ARG ...]
"""
import re
import subprocess
import sys


def main(argv):
    if "--" not in argv:
        sys.exit("usage: expect_output.py [--ranks N] [--whole] PATTERN [PATTERN ...] -- COMMAND [ARG ...]")
    split = argv.index("--")
    patterns, command = argv[:split], argv[split + 1:]
    ranks, whole = 1, False
    if patterns[:1] == ["--ranks"]:
        ranks, patterns = int(patterns[1]), patterns[2:]
    if patterns[:1] == ["--whole"]:
        whole, patterns = True, patterns[1:]
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(p.stdout)
    lines = [p.stdout] if whole else p.stdout.splitlines()
    problems = []
    if p.returncode != 0:
        problems.append(f"exit status {p.returncode}, expected 0")
    for pattern in patterns:
        for r in range(ranks) if "{rank}" in pattern else [None]:
            want = re.compile(pattern.replace("{rank}", str(r)) if r is not None else pattern,
                              re.DOTALL if whole else 0)
            if not any(want.search(line) for line in lines):
                problems.append(f"no line matches '{want.pattern}'")
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
