"""Training steps seen at the optimizer: a step ends when the first optimizer that steps returns
from ``step()`` (hooked on every ``torch.optim.Optimizer`` subclass at construction; a subclass's
``step()`` calling its base's counts once). ``chorus capture`` counts its steps so
(``chorus.capture``), and ``CHORUS_MARK_STEPS=optimizer`` marks the runtime's steps so
(``chorus.distributed``): the flight recorder's ``step`` (docs/flight-recorder.md)."""

capture_marks = False  # chorus.capture marks the runtime's steps at its own (CHORUS_MARK_STEPS stands aside)
_listeners = []  # called with the optimizer after every outermost step() returns
_hooked = [False]


def on_step(listener):
    """Calls `listener(optimizer)` whenever an optimizer's outermost step() returns (hooks torch's
    optimizers once; optimizers constructed before the first call are not seen)."""
    _listeners.append(listener)
    if not _hooked[0]:
        import torch
        _hook_optimizers(torch)
        _hooked[0] = True


class FirstOptimizer:
    """A listener's rule: the first optimizer that steps is the one whose steps count."""

    def __init__(self):
        self.optimizer = None

    def counts(self, optimizer):
        if self.optimizer is None:
            self.optimizer = optimizer
        return self.optimizer is optimizer


def mark_runtime_step():
    """chorus.mark_step() when this process's runtime is initialised (the torch backend "chorus"
    uses it); nothing otherwise."""
    try:
        from chorus import _rt
    except ImportError:
        return
    if _rt.is_initialized():
        _rt.mark_step()


def mark_steps_from_environment():
    """CHORUS_MARK_STEPS=optimizer: the runtime's step ends where the first optimizer that steps
    returns from step() (unset or empty: nothing is marked)."""
    import os
    value = os.environ.get("CHORUS_MARK_STEPS", "")
    if value == "":
        return
    if value != "optimizer":
        raise ValueError(f"environment CHORUS_MARK_STEPS: expected 'optimizer' (or unset), got '{value}'")
    if _marking[0]:
        return
    _marking[0] = True
    rule = FirstOptimizer()

    def mark(optimizer):
        if not capture_marks and rule.counts(optimizer):
            mark_runtime_step()

    on_step(mark)


_marking = [False]


def _hook_optimizers(torch):
    init = torch.optim.Optimizer.__init__
    wrapped = set()  # the classes whose step() is hooked
    depth = [0]      # a subclass's step() calling its base's counts once

    def wrap_step(cls):
        if cls in wrapped:
            return
        wrapped.add(cls)
        original = cls.step

        def step_hooked(self, *args, **kwargs):
            depth[0] += 1
            try:
                out = original(self, *args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                for listener in _listeners:
                    listener(self)
            return out

        step_hooked.__wrapped__ = original
        # torch 1.13's Optimizer.__init__ wraps a class's step() for the profiler unless it is marked.
        step_hooked.hooked = getattr(original, "hooked", False)
        cls.step = step_hooked

    def init_hooked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        wrap_step(type(self))

    torch.optim.Optimizer.__init__ = init_hooked
