#!/usr/bin/env python3
"""Tests of `chorus launch` as a process manager: ranks die with a SIGKILLed launcher, a rank
inherits no descriptor beyond 0, 1, 2, --tag-output forwards whole tagged lines, a failed rank
or an interrupt takes the whole job (its process group) down.

Ranks are found by their environment: every process whose /proc/<pid>/environ holds the job's
CHORUS_RUN_ID (l<launcher pid>), zombies excluded.

usage: test_rt_launcher.py CHORUS
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

CHORUS = sys.argv[1]
SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))  # > 1 for sanitizer builds
PY = sys.executable
failures = []


def check(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}", flush=True)
    if not ok:
        failures.append(f"{name}: {detail}")


def job_processes(launcher_pid):
    """Live (non-zombie) processes carrying the job's CHORUS_RUN_ID."""
    tag = f"CHORUS_RUN_ID=l{launcher_pid}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag in env and state != "Z":
            found.append(int(entry))
    return found


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return pred()


def pgid(pid):
    try:
        return os.getpgid(pid)
    except OSError:
        return None


# ---- 1. SIGKILL the launcher in the middle of collectives: no rank alive 5 s later ----------
bench = [CHORUS, "bench", "--backends", "shm,gloo", "--ops", "allreduce", "--sizes", "64KiB",
         "--iters", "1000000", "--warmup", "1"]  # the most --iters takes: minutes of all-reduces
p = subprocess.Popen([CHORUS, "launch", "-n", "4", "--"] + bench, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
ranks = wait_for(lambda: (lambda r: r if len(r) == 4 else None)(job_processes(p.pid)), 20 * SLACK) or []
check("killed launcher: 4 ranks started", len(ranks) == 4, f"found {ranks}")
time.sleep(2 * SLACK)  # past init: every rank is inside the all-reduce loop
alive_before = job_processes(p.pid)
groups = {pgid(r) for r in ranks}
check("killed launcher: ranks form one process group of their own, not the launcher's",
      len(groups) == 1 and None not in groups and pgid(p.pid) not in groups and min(ranks) in groups,
      f"rank groups {groups}, launcher group {pgid(p.pid)}, ranks {ranks}")
check("killed launcher: ranks still running before the kill", len(alive_before) == 4, f"{alive_before}")
p.send_signal(signal.SIGKILL)
p.wait()
time.sleep(5)
left = job_processes(p.pid)
check("killed launcher: no rank alive 5 s after SIGKILL", not left, f"still alive: {left}")
for pid in left:
    os.kill(pid, signal.SIGKILL)

# ---- 2. descriptors: a rank sees only 0, 1, 2 --------------------------------------------------
# The launcher itself is given an extra descriptor (and its store socket and pipes exist while
# the ranks run): none may reach a rank.
list_fds = ("import os\n"
            "own = '/proc/%d/fd' % os.getpid()\n"
            "fds = []\n"
            "for fd in sorted(os.listdir('/proc/self/fd'), key=int):\n"
            "    try:\n"
            "        target = os.readlink('/proc/self/fd/' + fd)\n"
            "    except OSError:\n"
            "        continue  # the directory descriptor listdir itself used, already closed\n"
            "    if target != own:\n"
            "        fds.append(fd + '->' + target)\n"
            "line = 'rank %s fds %s\\n' % (os.environ['CHORUS_RANK'], ' '.join(fds))\n"
            "os.write(1, line.encode())  # one write: untagged ranks share the pipe\n")
with tempfile.TemporaryFile() as extra:
    r = subprocess.run([CHORUS, "launch", "-n", "3", "--", PY, "-c", list_fds], pass_fds=(extra.fileno(),),
                       capture_output=True, text=True, timeout=60 * SLACK)
lines = sorted(line for line in r.stdout.splitlines() if line.startswith("rank "))
fd_sets = [re.findall(r"(\d+)->", line) for line in lines]
check("descriptors: launch exits 0", r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}")
check("descriptors: every rank reports", [line.split()[1] for line in lines] == ["0", "1", "2"], f"{lines}")
check("descriptors: each rank has exactly 0, 1, 2", all(s == ["0", "1", "2"] for s in fd_sets), f"{lines}")

# ---- 3. --tag-output: every line whole, with its rank ------------------------------------------
# Each rank writes LINES lines to stdout and to stderr, every line in two write() calls (so an
# untagged launcher would let lines of different ranks mix), then a last line without newline.
LINES = 400
talk = ("import os\n"
        "r = os.environ['CHORUS_RANK']\n"
        f"for i in range({LINES}):\n"
        "    for fd, name in ((1, 'out'), (2, 'err')):\n"
        "        body = '%s r%s line %d %s' % (name, r, i, 'x' * (i * 7 % 301))\n"
        "        os.write(fd, body[:len(body) // 2].encode())\n"
        "        os.write(fd, (body[len(body) // 2:] + '\\n').encode())\n"
        "os.write(1, ('tail-out-r' + r).encode())\n"
        "os.write(2, ('tail-err-r' + r).encode())\n")
N = 4
r = subprocess.run([CHORUS, "launch", "-n", str(N), "--tag-output", "--", PY, "-c", talk],
                   capture_output=True, text=True, timeout=60 * SLACK)
check("tag-output: launch exits 0", r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}")
for stream, text in (("out", r.stdout), ("err", r.stderr)):
    seen = {str(k): [] for k in range(N)}
    tails = {}
    bad = []
    for line in text.splitlines():
        m = re.fullmatch(r"\[(\d+)\]<std" + stream + r">: " + stream + r" r(\d+) line (\d+) (x*)", line)
        t = re.fullmatch(r"\[(\d+)\]<std" + stream + r">: tail-" + stream + r"-r(\d+)", line)
        if m and m.group(1) == m.group(2) and len(m.group(4)) == int(m.group(3)) * 7 % 301:
            seen[m.group(1)].append(int(m.group(3)))
        elif t and t.group(1) == t.group(2):
            tails[t.group(1)] = tails.get(t.group(1), 0) + 1
        elif line.startswith("chorus launch:"):
            continue
        else:
            bad.append(line)
    check(f"tag-output std{stream}: every line tagged with its own rank, none mixed", not bad,
          f"{len(bad)} bad lines, first: {bad[:3]}")
    check(f"tag-output std{stream}: each rank's lines complete and in order",
          all(v == list(range(LINES)) for v in seen.values()),
          f"counts {[len(v) for v in seen.values()]}")
    check(f"tag-output std{stream}: the last partial line of each rank, completed once",
          tails == {str(k): 1 for k in range(N)}, f"{tails}")
    check(f"tag-output std{stream}: output ends with a newline", text.endswith("\n"), repr(text[-40:]))

# Without the flag, output passes through untouched.
r = subprocess.run([CHORUS, "launch", "-n", "1", "--", PY, "-c", "import sys; sys.stdout.write('a\\nb')"],
                   capture_output=True, text=True, timeout=60 * SLACK)
check("no tag-output: output untouched", r.returncode == 0 and r.stdout == "a\nb", repr(r.stdout))

# ---- 3b. without --tag-output: stderr lines carry their rank, lines the ranks wrote alike once --
# Every rank writes the same error line and one of its own at one agreed moment, then a stdout
# line, which passes through untouched. The moment: 0.5 s after the last rank is ready (each
# marks itself ready with a file in argv[1] and waits for the others' files), so that a rank slow
# to start under load cannot miss it (a fixed moment 3 s ahead once did, under a loaded ctest).
alike = ("import os, sys, time\n"
         "r = os.environ['CHORUS_RANK']; d = sys.argv[1]\n"
         "open(os.path.join(d, r), 'w').close()\n"
         "while len(os.listdir(d)) < 3: time.sleep(0.01)\n"
         "at = max(os.stat(os.path.join(d, f)).st_mtime for f in os.listdir(d)) + 0.5\n"
         "time.sleep(max(0, at - time.time()))\n"
         "sys.stderr.write('chorus: error: the same for all\\n'); sys.stderr.write('rank %s alone\\n' % r)\n"
         "sys.stderr.flush(); os.write(1, ('out %s\\n' % r).encode())  # one write: the ranks share stdout\n")
with tempfile.TemporaryDirectory() as ready:
    r = subprocess.run([CHORUS, "launch", "-n", "3", "--", PY, "-c", alike, ready],
                       capture_output=True, text=True, timeout=60 * SLACK)
check("merged: launch exits 0", r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}")
err = [line for line in r.stderr.splitlines() if not line.startswith("chorus launch:")]
check("merged: the line all ranks wrote comes once, with the ranks", err.count("[0-2] chorus: error: the same for all") == 1
      and sum("the same for all" in line for line in err) == 1, f"{err}")
check("merged: each rank's own line carries its rank", all(f"[{k}] rank {k} alone" in err for k in range(3)), f"{err}")
check("merged: stdout is the ranks' own", sorted(r.stdout.splitlines()) == ["out 0", "out 1", "out 2"], r.stdout)

# ---- 4. a failed rank and an interrupt take the whole group down, grandchildren too -----------
# Every rank's shell starts a grandchild `sleep`; rank 1 then fails.
script = "sleep 60 & if [ \"$CHORUS_RANK\" = 1 ]; then echo dying; exit 7; fi; wait"
t0 = time.monotonic()
p = subprocess.Popen([CHORUS, "launch", "-n", "3", "--tag-output", "--kill-grace-s", "1", "--", "sh", "-c", script],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
try:
    out, err = p.communicate(timeout=30 * SLACK)
except subprocess.TimeoutExpired:
    p.kill()
    out, err = p.communicate()
secs = time.monotonic() - t0
check("failed rank: exit status is the rank's (7)", p.returncode == 7, f"exit {p.returncode}: {err[-2000:]}")
check("failed rank: reported by rank number", "chorus launch: rank 1 (pid" in err and "exited with status 7" in err,
      err[-2000:])
check("failed rank: its output tagged", "[1]<stdout>: dying\n" in out, repr(out))
check("failed rank: the job ends within grace + SIGTERM", secs < 1 + 2 + 4 * SLACK, f"{secs:.1f} s")
left = job_processes(p.pid)
check("failed rank: no process of the job left (the sleeps included)", not left, f"{left}")
for pid in left:
    os.kill(pid, signal.SIGKILL)

p = subprocess.Popen([CHORUS, "launch", "-n", "2", "--", "sh", "-c", "sleep 60 & wait"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
started = wait_for(lambda: len(job_processes(p.pid)) == 4, 20 * SLACK)  # 2 shells, 2 sleeps
p.send_signal(signal.SIGINT)
try:
    p.wait(timeout=10 * SLACK)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
left = job_processes(p.pid)
check("interrupt: 2 ranks and their 2 grandchildren had started", started, "")
check("interrupt: exit status 130", p.returncode == 130, f"exit {p.returncode}")
check("interrupt: no process of the job left", not left, f"{left}")
for pid in left:
    os.kill(pid, signal.SIGKILL)

# ---- 5. a program that cannot be executed: each rank says so, the launch fails ----------------
r = subprocess.run([CHORUS, "launch", "-n", "2", "--", "/nonexistent/program"], capture_output=True, text=True,
                   timeout=60 * SLACK)
check("missing program: exit 127 and the reason per rank",
      r.returncode == 127 and r.stderr.count("cannot execute '/nonexistent/program': No such file or directory") == 2,
      f"exit {r.returncode}: {r.stderr}")

# ---- 6. a program's flag without `--`: the error names it and shows the command with `--` ---------
r = subprocess.run([CHORUS, "launch", "-n", "2", CHORUS, "bench", "--sizes", "4KiB"], capture_output=True, text=True,
                   timeout=60 * SLACK)
check("missing --: exit 2", r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
check("missing --: names the flag and the missing `--`", "'--sizes'" in r.stderr and "`--`" in r.stderr, r.stderr)
check("missing --: shows the corrected command",
      f"chorus launch -n 2 -- {CHORUS} bench --sizes 4KiB" in r.stderr, r.stderr)
check("missing --: nothing ran", r.stdout == "" and "OMP_NUM_THREADS" not in r.stderr, r.stdout + r.stderr)
# A flag of chorus launch's own after the program (-n) is no less ambiguous; with `--`, it runs.
r = subprocess.run([CHORUS, "launch", "-n", "2", "--bind", "none", "sh", "-c", "true", "-n", "3"],
                   capture_output=True, text=True, timeout=60 * SLACK)
check("missing -- (launch's own -n after the program): exit 2 with the fix",
      r.returncode == 2 and "chorus launch -n 2 --bind none -- sh -c true -n 3" in r.stderr, r.stderr)
r = subprocess.run([CHORUS, "launch", "-n", "2", "true", "some", "words"], capture_output=True, text=True,
                   timeout=60 * SLACK)
check("no flag after the program: runs without --", r.returncode == 0, r.stderr)

# ---- 7. OMP_NUM_THREADS: CPUs / ranks (at least 1) unless set, said once ------------------------
show = "import os; os.write(1, (os.environ.get('OMP_NUM_THREADS', 'unset') + '\\n').encode())"
cpus = len(os.sched_getaffinity(0))
for n in (1, 2, 3 * cpus):
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    r = subprocess.run([CHORUS, "launch", "-n", str(n), "--", PY, "-c", show], capture_output=True, text=True,
                       env=env, timeout=120 * SLACK)
    want = str(max(1, cpus // n))
    check(f"OMP_NUM_THREADS with {n} ranks on {cpus} CPUs: {want} for every rank",
          r.returncode == 0 and r.stdout.split() == [want] * n, f"{r.stdout!r} {r.stderr}")
    said = [line for line in r.stderr.splitlines() if "OMP_NUM_THREADS" in line]
    check(f"OMP_NUM_THREADS with {n} ranks: said once", len(said) == 1 and f"OMP_NUM_THREADS={want}" in said[0],
          r.stderr)
r = subprocess.run([CHORUS, "launch", "-n", "2", "--", PY, "-c", show], capture_output=True, text=True,
                   env=dict(os.environ, OMP_NUM_THREADS="5"), timeout=60 * SLACK)
check("OMP_NUM_THREADS set by the user: kept, nothing said",
      r.stdout.split() == ["5", "5"] and "OMP_NUM_THREADS" not in r.stderr, f"{r.stdout!r} {r.stderr}")

# ---- 8. ranks running another Python than chorus's fail an import: both interpreters named -----
# chorus's modules are built for /usr/bin/python3 (CHORUS_PYTHON's default); "python3.99" here is
# another interpreter (a script running Debian's) whose ranks cannot import a module.
with tempfile.TemporaryDirectory() as d:
    other = os.path.join(d, "python3.99")
    with open(other, "w") as f:
        f.write("#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n")
    os.chmod(other, 0o755)
    code = "import chorus_test_no_such_module"
    r = subprocess.run([CHORUS, "launch", "-n", "2", "--kill-grace-s", "0", "--", other, "-c", code],
                       capture_output=True, text=True, timeout=60 * SLACK)
    check("other Python: exit 1", r.returncode == 1, f"exit {r.returncode}: {r.stderr}")
    check("other Python: names the interpreter run and the one chorus was built for",
          f"ran the Python {other}" in r.stderr and "built for /usr/bin/python3 (Python 3." in r.stderr, r.stderr)
    check("other Python: shows the command with chorus's interpreter",
          f"chorus launch -n 2 -- /usr/bin/python3 -c '{code}'" in r.stderr, r.stderr)
    check("other Python: said once", r.stderr.count("built for /usr/bin/python3") == 1, r.stderr)
r = subprocess.run([CHORUS, "launch", "-n", "2", "--kill-grace-s", "0", "--", "/usr/bin/python3", "-c", code],
                   capture_output=True, text=True, timeout=60 * SLACK)
check("chorus's own Python failing an import: no note about interpreters",
      r.returncode == 1 and "ModuleNotFoundError" in r.stderr and "built for" not in r.stderr, r.stderr)

if failures:
    print(f"\n{len(failures)} failure(s):\n" + "\n".join(failures))
    sys.exit(1)
