#!/usr/bin/python3
"""docs/runtime-tests.md names every test of the ctest label `rt`: a gtest program by its
executable's name, every other test by its own name.
usage: test_runtime_tests_listed.py SOURCE_DIR BUILD_DIR"""
import json
import os
import subprocess
import sys

src, build = sys.argv[1], sys.argv[2]
doc = open(os.path.join(src, "docs", "runtime-tests.md")).read()
listing = subprocess.run(["ctest", "--show-only=json-v1", "-L", "rt"], cwd=build, stdout=subprocess.PIPE, text=True,
                         check=True).stdout
names = set()
for t in json.loads(listing)["tests"]:
    command = t.get("command") or []
    gtest = any(c.startswith("--gtest_filter") for c in command)
    names.add(os.path.basename(command[0]) if gtest else t["name"])
missing = sorted(n for n in names if f"`{n}`" not in doc)
for n in missing:
    print(f"docs/runtime-tests.md does not name `{n}` (a test of the label rt)")
print(f"{len(names) - len(missing)} of {len(names)} rt tests named")
sys.exit(1 if missing or not names else 0)
