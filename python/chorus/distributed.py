"""chorus as a torch.distributed backend: ``dist.init_process_group("chorus")``.

``import chorus`` registers the backend when torch is importable (this module). The process
group (C++, ``chorus._c10d.ProcessGroupChorus``) runs every torch.distributed operation on the
chorus runtime: on ``mpi``, ``gloo``, ``shm`` or ``auto``, chosen per operation by
``CHORUS_BACKEND_MAP`` (``"all_reduce:shm,all_to_all_single:mpi,*:auto"``; default: auto for
all) among the backends of ``CHORUS_BACKENDS`` (default: every backend that works under the
launcher). It starts under torchrun, ``chorus launch`` (which sets torchrun's variables) and
mpirun (this module sets them from Open MPI's, meeting over MPI for MASTER_ADDR/PORT when they
are not set). ``CHORUS_COMPRESSION="abs:1e-4"`` sends float tensors of all_reduce, all_gather,
all_to_all_single, send and recv compressed (zfp, every element within the bound);
``compression_stats()`` tells the bytes saved. ``CHORUS_MARK_STEPS=optimizer`` marks the
runtime's step (``chorus.mark_step()``) where the first optimizer that steps returns from
``step()``, so that ``chorus doctor`` diagnoses a hang step by step. See docs/python.md, "torch.distributed".
"""
import os

import torch.distributed as dist

from chorus import _c10d, _optimizer_steps, _rt

BACKEND = "chorus"
_mark_steps_error = None  # CHORUS_MARK_STEPS's value, when it is not one this module knows


def _timeout_seconds(timeout):
    """The group's operation timeout: init_process_group's timeout= when given; when it is
    torch's default (30 minutes), CHORUS_RT_TIMEOUT_S if set, as for the rest of chorus."""
    seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    env = os.environ.get("CHORUS_RT_TIMEOUT_S")
    if env and seconds == dist.default_pg_timeout.total_seconds():
        try:
            seconds = float(env)
        except ValueError:
            raise ValueError(f"environment CHORUS_RT_TIMEOUT_S: expected seconds, got '{env}'") from None
    return seconds


def _create_process_group(options, _pg_options):
    if _mark_steps_error is not None:
        raise ValueError(_mark_steps_error)
    seconds = _timeout_seconds(options.timeout)
    return _c10d.ProcessGroupChorus(options.store, options.group_rank, options.group_size, seconds,
                                    list(options.global_ranks_in_group), str(options.group_id))


def _environment_from_mpirun():
    """torchrun's variables from Open MPI's, for an unchanged init_process_group() under mpirun."""
    env = os.environ
    if "OMPI_COMM_WORLD_RANK" not in env:
        return
    for key, ompi in (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                      ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"), ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE")):
        if key not in env and ompi in env:
            env[key] = env[ompi]
    if "MASTER_ADDR" not in env or "MASTER_PORT" not in env:
        host, port = _rt._mpirun_tcp_endpoint().rsplit(":", 1)
        env.setdefault("MASTER_ADDR", host)
        env.setdefault("MASTER_PORT", port)


def compression_stats(group=None):
    """What this rank's compressed operations (CHORUS_COMPRESSION) on `group` (default: the world)
    sent: {"raw_bytes": uncompressed, "wire_bytes": on the wire}."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, _c10d.ProcessGroupChorus):
        raise ValueError(f"compression_stats: the group's backend is {pg.getBackendName() if hasattr(pg, 'getBackendName') else type(pg).__name__}, not chorus")
    return pg.compression_stats()


def abort(why="", group=None):
    """Ends this rank's part in the job, as chorus.abort(why) (torch 1.13's process groups have no
    abort): every operation in flight on the chorus backend ends with a RuntimeError naming `why`
    (on mpi, the job ends), and every later call fails naming it. Destroy the process group and
    exit next."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, _c10d.ProcessGroupChorus):
        raise ValueError(f"abort: the group's backend is {type(pg).__name__}, not chorus")
    pg.abort(why)


def register():
    """Registers "chorus" with torch.distributed (idempotent)."""
    if BACKEND.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND, _create_process_group, extended_api=True)
    _environment_from_mpirun()
    global _mark_steps_error
    try:  # at import, so that the optimizers the program constructs next are hooked
        _optimizer_steps.mark_steps_from_environment()
    except ValueError as error:  # said where the program starts the group, as CHORUS_RT_TIMEOUT_S
        _mark_steps_error = str(error)
