"""``python3 -m chorus.capture SCRIPT ARGS`` (or ``-m MODULE ARGS``): SCRIPT run as ``__main__``
with chorus.capture's hooks installed (what ``chorus capture`` starts on every rank)."""
import os
import runpy
import sys
import traceback

import chorus.capture as capture


def main():
    if len(sys.argv) < 2 or (sys.argv[1] == "-m" and len(sys.argv) < 3):
        sys.exit("usage: python3 -m chorus.capture SCRIPT [ARGS...] | -m MODULE [ARGS...]")
    out_dir = os.environ.get("CHORUS_CAPTURE_DIR")
    steps = os.environ.get("CHORUS_CAPTURE_STEPS", "3:5")
    rank = int(os.environ.get("RANK", "0"))
    if not out_dir:
        sys.exit("chorus.capture: CHORUS_CAPTURE_DIR is not set (run it through `chorus capture`)")
    state = capture.install(out_dir, steps, rank)
    as_module = sys.argv[1] == "-m"
    target = sys.argv[2] if as_module else sys.argv[1]
    sys.argv = sys.argv[2:] if as_module else sys.argv[1:]
    if not as_module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    error, status = None, 0
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if status != 0:
            error = f"the program exited with status {e.code}"
    except BaseException as e:  # noqa: B902  the program's failure, recorded, then re-raised
        error = "".join(traceback.format_exception_only(type(e), e)).strip()
        state.finish(error)
        raise
    state.finish(error)
    sys.exit(status)


main()
