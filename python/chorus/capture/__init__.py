"""Capture of an unchanged torch program for chorus's simulator (``chorus capture``, docs/capture.md).

``chorus capture -n N -- python3 train.py ARGS`` runs every rank as ``python3 -m chorus.capture
train.py ARGS``: this module installs its hooks, then runs the script as ``__main__``. The hooks:

- ``torch.distributed.init_process_group`` runs on the ``chorus`` backend whatever the program
  asks for (the backend it asked for is written down), so that chorus's communication log
  (``CHORUS_RT_LOG``) sees every collective;
- ``torch.distributed.new_group`` writes down each group's ranks and the name the chorus backend
  logs it under (``torch/<group name>``);
- a step ends when the first optimizer that steps returns from ``step()`` (hooked on every
  ``torch.optim.Optimizer`` subclass at construction), or at ``chorus.capture.step()``, the
  explicit marker for programs without an optimizer (once called, only it counts). Each step's
  end also marks the runtime's step (``chorus.mark_step()``, when the chorus runtime is initialised
  in the process, as the torch backend does), so that the flight records of a capture that hangs
  are diagnosed step by step (``chorus doctor``, docs/flight-recorder.md).

Steps ``A`` to ``B - 1`` (``CHORUS_CAPTURE_STEPS=A:B``, 0-based; ``A >= 1``) are the window: the
execution graph (``torch.profiler.ExecutionGraphObserver``) and the torch profiler's trace are
recorded from the end of step ``A - 1`` to the end of step ``B - 1``; for ``H = max(B - A, 5)``
steps after step ``B`` (which writes those files) and ``B + 1``, steps ``B + 2`` to ``B + H + 1``,
the profiler alone records ``trace_host.<r>.json`` (if the program runs them; step ``B + H + 2``
writes it). At exit the rank writes
``rank.<r>.json`` into ``CHORUS_CAPTURE_DIR``: the step ends and the window on the host's
monotonic clock (the communication log's), the groups, torch's version, whether the program
ended well, and the recording's measured cost per operator event (``profiler_overhead``: a loop of
tiny operators timed plain and recorded after the program's end, ``_Capture.calibrate``). ``chorus capture`` writes the manifest from these files.
"""
import json
import os
import sys
import time

from chorus import _optimizer_steps

_state = None


class _Capture:
    def __init__(self, out_dir, first, last, rank):
        self.out_dir, self.first, self.last, self.rank = out_dir, first, last, rank
        self.step_end_ns = []
        self.start_ns = time.monotonic_ns()
        self.window = None  # [start_ns, end_ns]
        self.explicit = False
        self.first_optimizer = _optimizer_steps.FirstOptimizer()  # the one whose steps count
        self.groups = []
        self.requested_backend = None
        self._eg = self._prof = None
        # The host window: max(B - A, 5) steps after the step that writes the window's files (B)
        # and one more (B + 1: the first step after a rank's writing waits for the slower rank's),
        # recorded by the profiler alone (no graph observer, whose callbacks cost several times the
        # profiler's): the operators' times and the host's time between them, as the program spends
        # them with the least recording (trace_host.<r>.json; the import takes each operator's
        # median over these steps). Counted as steps ended: recording starts when step B + 1 ends.
        self.host_first = last + 2
        self.host_last = last + 2 + max(last - first, 5)
        self.host_window = None
        self._host_prof = None

    def path(self, kind, ext):
        return os.path.join(self.out_dir, f"{kind}.{self.rank}.{ext}")

    def step_ended(self):
        self.step_end_ns.append(time.monotonic_ns())
        _optimizer_steps.mark_runtime_step()  # the flight recorder's steps: a hang diagnosed per step
        done = len(self.step_end_ns)
        if done == self.first:
            self._start()
        elif done == self.last:
            self._stop()
        elif done == self.host_first:
            from torch.profiler import ProfilerActivity, profile
            self._host_prof = profile(activities=[ProfilerActivity.CPU])
            self._host_prof.__enter__()
            self.host_window = [time.monotonic_ns(), None]
        elif done == self.host_last and self._host_prof is not None:
            self.host_window[1] = time.monotonic_ns()
            self._host_prof.__exit__(None, None, None)
            self._host_prof.export_chrome_trace(self.path("trace_host", "json"))
            self._host_prof = None

    def _start(self):
        from torch.profiler import ExecutionGraphObserver, ProfilerActivity, profile
        self._prof = profile(activities=[ProfilerActivity.CPU])
        self._prof.__enter__()
        self._eg = ExecutionGraphObserver()
        self._eg.register_callback(self.path("graph", "json"))
        self.window = [time.monotonic_ns(), None]
        self._eg.start()

    def _stop(self):
        if self._eg is None:
            return
        self._eg.stop()
        self.window[1] = time.monotonic_ns()
        self._eg.unregister_callback()
        self._eg = None
        self._prof.__exit__(None, None, None)
        self._prof.export_chrome_trace(self.path("trace", "json"))
        self._prof = None

    def calibrate(self, calls=1000, rounds=5):
        """The recording's cost per operator event on this rank: a loop of `calls` tiny operators
        (torch.add into a preallocated tensor, one profiler event each) timed plain, under the
        profiler and the graph observer (as the window records) and under the profiler alone (as
        the host window records), `rounds` times each in turn. A cost is the fastest recorded
        round's time less the fastest plain round's, per recorded event: the least a loop took is
        the one least disturbed by other work on the host."""
        import torch
        from torch.profiler import ExecutionGraphObserver, ProfilerActivity, profile
        a, b, out = torch.ones(4), torch.ones(4), torch.empty(4)

        def loop():
            start = time.perf_counter_ns()
            for _ in range(calls):
                torch.add(a, b, out=out)
            return time.perf_counter_ns() - start

        plain, recorded, profiled, events = [], [], [], []
        scratch = self.path("calibration", "json")
        for _ in range(rounds):
            plain.append(loop())
            prof = profile(activities=[ProfilerActivity.CPU])
            prof.__enter__()
            eg = ExecutionGraphObserver()
            eg.register_callback(scratch)
            eg.start()
            recorded.append(loop())
            eg.stop()
            eg.unregister_callback()
            prof.__exit__(None, None, None)
            events.append(len(prof.events()))
            prof = profile(activities=[ProfilerActivity.CPU])
            prof.__enter__()
            profiled.append(loop())
            prof.__exit__(None, None, None)
        if os.path.exists(scratch):
            os.remove(scratch)

        def per_event(times):
            return max(0.0, (min(times) - min(plain)) / max(1, min(events)) / 1e3)

        return {"us_per_event": per_event(recorded), "profiler_us_per_event": per_event(profiled), "calls": calls,
                "events": min(events), "plain_ns": plain, "recorded_ns": recorded, "profiler_ns": profiled}

    def finish(self, error):
        if self._eg is not None:  # the program ended inside the window
            self._stop()
        if self._host_prof is not None:  # ... or inside the host window: that trace is not kept
            self._host_prof.__exit__(None, None, None)
            self._host_prof = None
            self.host_window = None
        import torch
        overhead = None
        if error is None and self.window is not None and self.window[1] is not None:
            overhead = self.calibrate()
        record = {
            "chorus_capture_rank": 1,
            "rank": self.rank,
            "ok": error is None,
            "error": error,
            "torch_version": torch.__version__,
            "python": sys.version.split()[0],
            "requested_backend": self.requested_backend,
            "start_ns": self.start_ns,
            "step_end_ns": self.step_end_ns,
            "window": self.window,
            "window_steps": [self.first, self.last],
            "groups": self.groups,
            "profiler_overhead": overhead,
            "host_window": self.host_window,
            "host_window_steps": [self.host_first, self.host_last],
        }
        tmp = self.path("rank", "json.tmp")
        with open(tmp, "w") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, self.path("rank", "json"))


def step():
    """Marks the end of a training step (programs without an optimizer; a no-op outside a capture)."""
    if _state is None:
        return
    _state.explicit = True
    _state.step_ended()


def _optimizer_step(optimizer):
    s = _state
    if s is not None and not s.explicit and s.first_optimizer.counts(optimizer):
        s.step_ended()


def _hook_distributed(dist):
    c10d = dist.distributed_c10d
    init_pg, new_group = c10d.init_process_group, c10d.new_group

    def init_hooked(backend=None, *args, **kwargs):
        _state.requested_backend = str(backend) if backend is not None else None
        return init_pg("chorus", *args, **kwargs)

    def new_group_hooked(ranks=None, *args, **kwargs):
        group = new_group(ranks, *args, **kwargs)
        members = sorted(ranks) if ranks is not None else list(range(dist.get_world_size()))
        name = c10d._pg_names.get(group) if group != dist.GroupMember.NON_GROUP_MEMBER else None
        _state.groups.append({"label": f"torch/{name}" if name is not None else None, "ranks": members})
        return group

    # Both names: the program's torch.distributed.*, and distributed_c10d's own calls (new_subgroups).
    for module in (dist, c10d):
        module.init_process_group, module.new_group = init_hooked, new_group_hooked


def install(out_dir, steps, rank):
    """Installs the hooks for a capture of steps `steps` ("A:B") into `out_dir` as rank `rank`."""
    global _state
    first, last = (int(v) for v in steps.split(":"))
    import torch.distributed as dist
    import chorus.distributed  # noqa: F401  registers the backend
    _state = _Capture(out_dir, first, last, rank)
    _optimizer_steps.capture_marks = True  # CHORUS_MARK_STEPS=optimizer then marks nothing more
    _optimizer_steps.on_step(_optimizer_step)
    _hook_distributed(dist)
    return _state
