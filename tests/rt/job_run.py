"""One run of a multi-rank job for the disagreement tests: under `chorus launch` (shm, gloo) or
mpirun (mpi), its output as one line per rank (rank_lines.py), its exit status and wall time;
a run that hangs is reported as such, and each run's verdict printed as it ends."""
import subprocess
import time
from dataclasses import dataclass

from rank_lines import expand


@dataclass
class Job:
    lines: list
    returncode: int
    secs: float


def job_command(backend, n, program, chorus, mpirun, env, every_rank_ends=False):
    """The command starting `program` on n ranks for `backend`; adds what mpirun needs to env.
    every_rank_ends: under mpirun, a rank's non-zero exit does not end the others (by default
    mpiexec kills them at once, which can cut a slower rank off before it reports; chorus launch
    gives them its kill grace). mpiexec then exits 0: the ranks must report their own status."""
    if backend == "mpi":
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if every_rank_ends:
            env["OMPI_MCA_orte_abort_on_non_zero_status"] = "0"
        return [mpirun, "--oversubscribe", "-n", str(n)] + program
    return [chorus, "launch", "-n", str(n), "--kill-grace-s", "3", "--"] + program


def run_job(cmd, env, timeout):
    """The finished job, or None when it hung past `timeout` seconds."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:  # what the job printed before it hung, to say where
        partial = b"".join(x for x in (e.stdout, e.stderr) if x).decode(errors="replace")
        print(f"--- output of the hung job ({' '.join(cmd)}) ---\n{partial[-3000:]}", flush=True)
        return None
    return Job(expand(p.stdout + p.stderr).splitlines(), p.returncode, time.monotonic() - t0)


def report(name, job, problems, failures):
    """Prints the run's verdict; appends a failure (with the output's tail) to `failures`."""
    if job is None:
        failures.append(f"{name}: HUNG")
        print(f"FAIL {name}: hung", flush=True)
        return
    print(f"{'ok' if not problems else 'FAIL'} {name} ({job.secs:.1f} s, exit {job.returncode})", flush=True)
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output ---\n" + "\n".join(job.lines)[-3000:])
