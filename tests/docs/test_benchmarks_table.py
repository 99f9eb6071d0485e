#!/usr/bin/python3
"""BENCHMARKS.md's current table is whole (bench/current.py check passes on it), and the check can
fail: a dropped row, a command other than the script's, an empty cell or a lost marker each give
exit status 2 naming the row."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "current.py")
DOC = open(os.path.join(ROOT, "BENCHMARKS.md")).read()


def check(text):
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
        f.write(text)
    try:
        done = subprocess.run([sys.executable, SCRIPT, "check", "--doc", f.name], stderr=subprocess.PIPE, text=True)
        return done.returncode, done.stderr
    finally:
        os.unlink(f.name)


def row(rid):
    """The table's line for row `rid`."""
    return next(line for line in DOC.splitlines() if line.startswith(f"| {rid} |"))


failures = []
rc, err = check(DOC)
if rc != 0:
    failures.append(f"BENCHMARKS.md itself: {err}")
cases = {
    "dropped row": (DOC.replace(row("fusion") + "\n", ""), "fusion"),
    "other command": (DOC.replace("`build/bench/bench_sim`", "`build/bench/bench_sim --quick`"), "simulator"),
    "empty cell": (DOC.replace(row("ci"), " | ".join(row("ci").split(" | ")[:3] + [""] + row("ci").split(" | ")[4:])),
                   "ci"),
    "lost marker": (DOC.replace("<!-- end of the current table -->", ""), "markers"),
}
for name, (text, needle) in cases.items():
    rc, err = check(text)
    if rc != 2 or needle not in err:
        failures.append(f"{name}: expected exit 2 naming '{needle}', got {rc}: {err.strip()}")
for f in failures:
    print("FAIL", f)
print(f"{len(cases) + 1 - len(failures)} of {len(cases) + 1} checks passed")
sys.exit(1 if failures else 0)
