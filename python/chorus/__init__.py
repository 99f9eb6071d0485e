"""chorus in Python.

- chorus.plot: the figures of `chorus reproduce` (pure Python, matplotlib).
- The runtime (chorus._rt, C++ through pybind11; built by CMake into <build>/python): one API over
  several real backends (mpi, gloo, shm, "auto"), MCR-DL style, with torch.distributed's names:

      import numpy as np, chorus
      chorus.init(["shm", "mpi"])               # under `chorus launch -n N` or mpirun
      x = np.ones(1024, np.float32)
      work = chorus.all_reduce("shm", x, op=chorus.ReduceOp.SUM, async_op=True)
      work.wait()
      chorus.finalize()

  Tensors are numpy arrays (or anything with the buffer protocol) or torch CPU tensors, used in
  place. See docs/python.md. chorus.compressed has the error-bounded (zfp) forms of all_reduce,
  all_gather_into_tensor, all_to_all_single, send and recv: chorus.compressed.all_reduce("gloo", x,
  bound="abs:1e-4") returns the bytes it sent and would have sent uncompressed.
- chorus.distributed: the torch.distributed backend "chorus" (C++, chorus._c10d), registered on
  import when torch is importable: dist.init_process_group("chorus") under torchrun, chorus launch
  or mpirun.
"""
import glob as _glob
import os as _os

_HERE = _os.path.dirname(__file__)
_FIX = ("rebuild it: bash scripts/run.sh (or cmake --build build --target chorus_py_rt chorus_py_c10d); "
        "docs/python.md, \"When import chorus has no runtime\"")


def _interpreters():
    """The interpreter running and the one the compiled modules were built for (CMake writes
    _built_for.py into the build's package), when they differ: "this is X (Python a.b.c); chorus's
    compiled modules and torch backend were built for Y (Python d.e.f): run Y; " or ""."""
    import sys
    try:
        from chorus import _built_for
    except ImportError:
        return ""
    if _os.path.realpath(sys.executable) == _os.path.realpath(_built_for.PYTHON):
        return ""
    here = f"{sys.executable} (Python {sys.version.split()[0]})"
    return (f"this is {here}; chorus's compiled modules and torch backend were built for {_built_for.PYTHON} "
            f"(Python {_built_for.VERSION}): run your program with {_built_for.PYTHON}, or ")


try:
    from chorus._rt import (CommError, DisagreementError, Fusion, ReduceOp, TimeoutError, Work, abort, algorithm_names, all_gather,  # noqa: F401
                            all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single, available_backends, backends, barrier,
                            broadcast, compressed, dump, finalize, gather, group_ranks, init, is_initialized, mark_step, new_group, rank,
                            recv, reduce, reduce_scatter_tensor, scatter, send, size, split, synchronize)
    HAVE_RUNTIME = True
    RUNTIME_ERROR = None
except ImportError as _error:
    HAVE_RUNTIME = False
    # The source tree's package holds chorus.plot only, and no compiled module: quietly so. A
    # compiled module that is present but does not load (a broken build, a missing library, an
    # interpreter it was not built for) is a failure the user must hear of, with the loader's words.
    _built = _glob.glob(_os.path.join(_HERE, "_rt*.so"))
    RUNTIME_ERROR = (f"{_built[0]} does not load: {_error}; {_interpreters()}{_FIX}" if _built else
                     f"no compiled runtime beside {_HERE} (the source tree's package); use the package a "
                     "CMake build writes: PYTHONPATH=<build>/python")
    if _built:
        import warnings as _warnings
        _warnings.warn(f"chorus: the runtime is not available: {RUNTIME_ERROR}", RuntimeWarning, stacklevel=2)

    def __getattr__(name):
        raise AttributeError(f"chorus.{name}: the runtime bindings are not importable here: {RUNTIME_ERROR}")

# Registering the torch backend imports torch (about 1.5 s); CHORUS_NO_TORCH=1 skips it.
if _os.environ.get("CHORUS_NO_TORCH") != "1":
    try:
        import torch.distributed as _torch_distributed  # noqa: F401
    except ImportError:  # no torch here: the rest of chorus works without it
        pass
    else:
        from chorus import _backend_registration
        _backend_registration.register(HAVE_RUNTIME, RUNTIME_ERROR, _HERE, _FIX)
