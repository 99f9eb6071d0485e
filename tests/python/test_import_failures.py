#!/usr/bin/env python3
"""`import chorus` is loud when its compiled runtime does not load: a copy of the built package
whose chorus._rt (then chorus._c10d) is replaced by a file the loader refuses must warn with the
loader's reason, and init_process_group("chorus") must raise that reason rather than torch's
"Invalid backend". The source tree's package (no compiled module at all) stays quiet.

usage: test_import_failures.py BUILD_PYTHON_DIR SOURCE_PYTHON_DIR
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILT, SOURCE = sys.argv.pop(1), sys.argv.pop(1)
PY = "/usr/bin/python3"  # Debian's, with torch

INIT = ("import socket, torch.distributed as dist\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
        "try:\n"
        "    dist.init_process_group('chorus', init_method=f'tcp://127.0.0.1:{port}', rank=0, world_size=1)\n"
        "except RuntimeError as e:\n"
        "    print('RAISED', e)\n")


def python(path, code):
    env = dict(os.environ, PYTHONPATH=path, CHORUS_BACKENDS="shm")  # a world of one, no launcher
    env.pop("CHORUS_NO_TORCH", None)
    return subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, timeout=120)


class ImportFailures(unittest.TestCase):
    def broken_copy(self, module):
        d = tempfile.mkdtemp(prefix="chorus-broken-")
        self.addCleanup(shutil.rmtree, d)
        shutil.copytree(os.path.join(BUILT, "chorus"), os.path.join(d, "chorus"))
        for so in glob.glob(os.path.join(d, "chorus", module + "*.so")):
            with open(so, "wb") as f:
                f.write(b"not an ELF file" * 300)  # long enough for the loader to read a header
        return d

    def init_with_broken(self, module, have_runtime):
        """import chorus and init_process_group("chorus") with `module` broken: both run to their end."""
        r = python(self.broken_copy(module), "import chorus; print('HAVE', chorus.HAVE_RUNTIME)\n" + INIT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"HAVE {have_runtime}", r.stdout)
        self.assertIn("RAISED the torch.distributed backend 'chorus' is not available", r.stdout)
        return r

    def test_broken_runtime_warns_with_the_reason(self):
        r = self.init_with_broken("_rt", False)
        self.assertIn("RuntimeWarning: chorus: the runtime is not available", r.stderr)
        self.assertIn("does not load", r.stderr)
        self.assertIn("invalid ELF header", r.stderr)  # the loader's own words
        self.assertIn("scripts/run.sh", r.stderr)      # and the fix
        self.assertNotIn("Invalid backend", r.stdout + r.stderr)

    def test_other_interpreter_names_both(self):
        # The package says it was built for another interpreter (as a pyenv or conda Python first
        # on PATH would find it): the warning names the one running and the one built for.
        d = self.broken_copy("_rt")
        with open(os.path.join(d, "chorus", "_built_for.py"), "w") as f:
            f.write('PYTHON = "/opt/other/bin/python3.99"\nVERSION = "3.99.1"\n')
        r = python(d, "import chorus; print('HAVE', chorus.HAVE_RUNTIME)")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("HAVE False", r.stdout)
        version = ".".join(map(str, sys.version_info[:3]))  # /usr/bin/python3's, as this test runs it
        self.assertIn(f"this is {PY} (Python {version})", r.stderr)
        self.assertIn("built for /opt/other/bin/python3.99 (Python 3.99.1)", r.stderr)
        self.assertIn("invalid ELF header", r.stderr)

    def test_built_package_names_its_interpreter(self):
        with open(os.path.join(BUILT, "chorus", "_built_for.py")) as f:
            built = f.read()
        self.assertIn('PYTHON = "/usr/bin/python3"', built)  # CHORUS_PYTHON's default
        self.assertIn(f'VERSION = "{subprocess.check_output([PY, "-c", "import platform; print(platform.python_version())"], text=True).strip()}"', built)
        # The interpreter it was built for: no word of interpreters in the warning.
        r = python(self.broken_copy("_rt"), "import chorus")
        self.assertNotIn("built for", r.stderr)

    def test_broken_torch_backend_names_its_reason(self):
        r = self.init_with_broken("_c10d", True)
        self.assertIn("_c10d", r.stdout)
        self.assertIn("invalid ELF header", r.stdout)

    def test_source_tree_package_is_quiet(self):
        r = python(SOURCE, "import chorus\ntry:\n    chorus.init\nexcept AttributeError as e:\n    print('ATTR', e)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("PYTHONPATH=<build>/python", r.stdout)

    def test_built_package_loads(self):
        r = python(BUILT, "import chorus; print(chorus.HAVE_RUNTIME, chorus.RUNTIME_ERROR)\n" + INIT +
                   "print('backend', dist.get_backend() if dist.is_initialized() else None)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("True None", r.stdout)
        self.assertIn("backend chorus", r.stdout)


class TorchTimeout(unittest.TestCase):
    """The torch backend honours CHORUS_RT_TIMEOUT_S unless init_process_group was given a timeout."""

    def seconds(self, timeout_expr, env):
        e = dict(os.environ, PYTHONPATH=BUILT)
        e.pop("CHORUS_RT_TIMEOUT_S", None)
        e.update(env)
        r = subprocess.run([PY, "-c", "import datetime, torch.distributed as dist\n"
                            "from chorus.distributed import _timeout_seconds\n"
                            f"print(_timeout_seconds({timeout_expr}))\n"], capture_output=True, text=True, env=e, timeout=120)
        return r

    def test_environment_replaces_torch_default(self):
        r = self.seconds("dist.default_pg_timeout", {"CHORUS_RT_TIMEOUT_S": "7"})
        self.assertEqual(r.stdout.strip(), "7.0", r.stderr)

    def test_explicit_timeout_wins(self):
        r = self.seconds("datetime.timedelta(seconds=12)", {"CHORUS_RT_TIMEOUT_S": "7"})
        self.assertEqual(r.stdout.strip(), "12.0", r.stderr)

    def test_torch_default_without_environment(self):
        r = self.seconds("dist.default_pg_timeout", {})
        self.assertEqual(r.stdout.strip(), "1800.0", r.stderr)

    def test_bad_environment_is_named(self):
        r = self.seconds("dist.default_pg_timeout", {"CHORUS_RT_TIMEOUT_S": "soon"})
        self.assertIn("CHORUS_RT_TIMEOUT_S", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
