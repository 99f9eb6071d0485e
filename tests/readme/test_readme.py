#!/usr/bin/env python3
"""The README runs as written: every command of its ```sh blocks, copy-paste, from the repository
root, after the README's main command (scripts/run.sh, whose build/ is the one under test).

- A command is a line of a block, with its backslash continuations; it runs in bash as written.
  Lines that start with '#' are comments. The two set-up commands themselves (scripts/run.sh,
  scripts/test.sh) are what CI runs around this test, so they are not run again here.
- A command whose comment says "takes minutes" is marked long and skipped (listed in the output).
- Commands run in a scratch directory whose build/, tests/, bench/, examples/, python/ and
  scripts/ link to the repository's, so the files they write do not litter the tree; the
  results/themis that scripts/run.sh would have left there is made first (reproduce themis -q).
- As on a fresh Debian 12, `python3` is Debian's (/usr/bin first on PATH). As root, Open MPI's
  mpirun needs --allow-run-as-root, which the README says; the test sets Open MPI's equivalent
  environment variables instead of editing the command.
- The README's example output of `chorus sim collective` and its ten-line C++ example are the
  program's: the output block's lines appear in the command's output, and the C++ block's lines
  are examples/rt_hello.cpp's.

usage: test_readme.py REPO_ROOT BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.getcwd()
BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.join(ROOT, "build")
LONG = "takes minutes"
SETUP = ("scripts/run.sh", "scripts/test.sh")


def blocks(text, lang):
    """The fenced code blocks of one language, as (line number, lines)."""
    out, cur, start = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if cur is None and line.strip() == "```" + lang:
            cur, start = [], n + 1
        elif cur is not None and line.strip() == "```":
            out.append((start, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def commands(text):
    """(README line, command) for every command of the sh blocks."""
    cmds = []
    for start, lines in blocks(text, "sh"):
        pending, at = "", 0
        for i, line in enumerate(lines):
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if not pending:
                at = start + i
            pending += line + "\n"
            if not re.search(r"\\\s*$", line.split(" #")[0]):
                cmds.append((at, pending.rstrip("\n")))
                pending = ""
    return cmds


def readme():
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


class Readme(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory(prefix="chorus-readme-")
        for name in ("tests", "bench", "examples", "python", "scripts", "docs"):
            os.symlink(os.path.join(ROOT, name), os.path.join(cls.scratch.name, name))
        os.symlink(BUILD, os.path.join(cls.scratch.name, "build"))
        cls.env = dict(os.environ, PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""))
        if os.geteuid() == 0:
            cls.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cls.env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"  # 4 ranks on a 2-core CI machine
        cls.outputs = {}
        # What scripts/run.sh leaves that the quick start looks at: results/themis (the smoke run
        # of `chorus reproduce themis -q`).
        subprocess.run([os.path.join(BUILD, "chorus"), "reproduce", "themis", "-q", "--out", "results/themis"],
                       cwd=cls.scratch.name, env=cls.env, check=True, capture_output=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def run_command(self, line, cmd):
        began = time.monotonic()
        r = subprocess.run(["bash", "-c", "set -eo pipefail\n" + cmd], cwd=self.scratch.name, env=self.env,
                           capture_output=True, text=True, timeout=600)
        print(f"README.md:{line}: {time.monotonic() - began:6.1f} s, exit {r.returncode}: {cmd.splitlines()[0]}",
              flush=True)
        self.assertEqual(r.returncode, 0, f"README.md:{line}: {cmd}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}")
        return r.stdout

    def test_every_command_runs_as_written(self):
        cmds = commands(readme())
        self.assertGreater(len(cmds), 10)
        skipped = []
        for line, cmd in cmds:
            if any(s in cmd for s in SETUP):
                continue
            if LONG in cmd:
                skipped.append(f"README.md:{line}: {cmd.splitlines()[0]}")
                continue
            with self.subTest(line=line):
                self.outputs[cmd] = self.run_command(line, cmd)
        if skipped:
            print("marked long, not run:\n  " + "\n  ".join(skipped))
        # The example output shown under `chorus sim collective` is what the command prints.
        shown = [lines for _, lines in blocks(readme(), "") if lines and lines[0].startswith("3D-SW_SW_SW_homo (")]
        self.assertEqual(len(shown), 1, "the README shows one sim collective output")
        ran = [out for cmd, out in self.outputs.items() if "sim collective" in cmd and "--json" not in cmd
               and "3D-SW_SW_SW_homo" in cmd and "themis-scf" in cmd]
        self.assertTrue(ran, "the README runs the command whose output it shows")
        for expected in shown[0]:
            self.assertIn(expected, ran[0].splitlines(), "README's example output is stale")

    def test_ten_line_example_is_the_example_program(self):
        cpp = blocks(readme(), "cpp")
        self.assertEqual(len(cpp), 1)
        with open(os.path.join(ROOT, "examples", "rt_hello.cpp")) as f:
            program = [line.strip() for line in f]
        for line in cpp[0][1]:
            self.assertIn(line.strip(), program, "README's ten lines differ from examples/rt_hello.cpp")

    def test_parser(self):
        text = "x\n```sh\n# c\na \\\n  b   # note\n\nc  # " + LONG + "\n```\n"
        self.assertEqual(commands(text), [(4, "a \\\n  b   # note"), (7, "c  # " + LONG)])


if __name__ == "__main__":
    unittest.main(verbosity=2)
