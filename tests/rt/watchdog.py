#!/usr/bin/env python3
"""watchdog.py SECONDS -- COMMAND [ARGS...]

Runs COMMAND and exits with its status. If COMMAND is still running after SECONDS, it first
shows where every process under it stands, then stops them and exits 124:
  - each process: pid, parent, state, kernel wait channel and command line (from /proc);
  - each process's threads' C stacks, through gdb when it is installed;
  - the Python stacks of ranks that called faulthandler.register(SIGUSR1) (tests/python/*_rank.py);
  - then SIGTERM to COMMAND (mpirun and chorus launch stop their ranks and remove their files),
    and SIGKILL to whatever is left 5 s later;
  - at the very end, a line per thread: its rank (from the launcher's environment) and the
    innermost frame of chorus or torch's c10d it stood in, so that a log cut to its head and
    tail still says which rank waited where.
The multi-process tests run under it with SECONDS below ctest's timeout, so that a hang is
reported with its stacks instead of being killed silently (SIGKILL leaves Open MPI's shared
memory files behind).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def rank_of(pid):
    env = dict(v.split("=", 1) for v in read(f"/proc/{pid}/environ").split(" ") if "=" in v)
    for name in ("CHORUS_RANK", "OMPI_COMM_WORLD_RANK", "RANK", "PMIX_RANK"):
        if name in env:
            return env[name]
    return "?"


def innermost(stack_lines):
    """Thread header -> the first frame that is chorus's or c10d's (else the top frame)."""
    out, thread, frames = [], None, []

    def flush():
        if thread is not None:
            ours = [f for f in frames if "chorus" in f or "c10d" in f]
            out.append((thread, (ours or frames or ["(no frames)"])[0]))
    for ln in stack_lines:
        if ln.startswith("Thread "):
            flush()
            thread, frames = ln.split(" (")[0], []
        elif ln.startswith("#"):
            m = re.match(r"#(\d+)\s+(?:0x[0-9a-f]+ in )?(.+?) \(", ln)
            frames.append(f"#{m.group(1)} {m.group(2)[:140]}" if m else ln[:140])
    flush()
    return out


def report(root):
    pids = descendants(root)
    print(f"watchdog: {len(pids)} processes still running; where each stands:", file=sys.stderr, flush=True)
    summary = []
    for pid in pids:
        stat = read(f"/proc/{pid}/stat")
        fields = stat[stat.rfind(")") + 2:].split() if ")" in stat else ["?", "?"]
        print(f"--- pid {pid} (parent {fields[1]}, state {fields[0]}, wchan {read(f'/proc/{pid}/wchan')}): "
              f"{read(f'/proc/{pid}/cmdline')[:300]}", file=sys.stderr, flush=True)
        if shutil.which("gdb"):
            try:
                bt = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt 25"],
                                    capture_output=True, text=True, timeout=60).stdout
                lines = [ln for ln in bt.splitlines() if ln.startswith(("Thread ", "#"))]
                print("\n".join(lines[:400]), file=sys.stderr, flush=True)
                summary += [f"rank {rank_of(pid)} pid {pid} {t}: {frame}" for t, frame in innermost(lines)]
            except (subprocess.TimeoutExpired, OSError) as e:
                print(f"(gdb: {e})", file=sys.stderr, flush=True)
    for pid in pids:
        if "python" in read(f"/proc/{pid}/cmdline").split(" ")[0]:
            try:
                os.kill(pid, signal.SIGUSR1)  # faulthandler prints the Python stacks
            except OSError:
                pass
    time.sleep(1)
    return pids, summary


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        seconds = float(sys.argv[1])
    except ValueError:
        print(f"watchdog.py: SECONDS: not a number: '{sys.argv[1]}'", file=sys.stderr)
        sys.exit(2)
    child = subprocess.Popen(sys.argv[3:])
    try:
        return child.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass
    print(f"watchdog: '{' '.join(sys.argv[3:])[:200]}' still running after {seconds:.0f} s", file=sys.stderr, flush=True)
    pids, summary = report(child.pid)
    cmdlines = {pid: read(f"/proc/{pid}/cmdline") for pid in pids}
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    for pid in pids:  # the same processes only (not a pid reused since)
        if pid != child.pid and read(f"/proc/{pid}/cmdline") == cmdlines[pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    child.kill()
    child.wait()
    if summary:  # last, where a log cut to its head and tail keeps it
        print("watchdog: where each thread stood (innermost chorus or c10d frame):", file=sys.stderr)
        print("\n".join(summary), file=sys.stderr, flush=True)
    return 124


if __name__ == "__main__":
    rc = main()
    sys.exit(rc if rc >= 0 else 128 - rc)
