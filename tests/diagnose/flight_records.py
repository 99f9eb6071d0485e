"""Flight records (format chorus-flight-record, version 1) and launcher.json written from a few
lines of a scenario, for the doctor's tests: times are given in seconds on CLOCK_MONOTONIC."""
import json
import os

NS = 1_000_000_000


def ns(seconds):
    return int(round(seconds * NS))


def entry(seq, start, op="all_reduce", count=1009, dtype="f32", state="completed", root=-1, peer=-1,
          algorithm="shm", is_async=False, layer="api", step=None):
    size = {"f32": 4, "f64": 8, "i8": 1}.get(dtype, 4)
    e = {"seq": seq, "op": op, "algorithm": algorithm, "dtype": dtype, "count": count,
         "bytes": count * size, "root": root, "peer": peer, "async": is_async, "layer": layer,
         "state": state, "started_ns": ns(start)}
    if step is not None:  # (records of runtimes before step markers have none)
        e["step"] = step
    return e


def loop(n, t0=100.0, step=0.01, delay=0.0, **kw):
    """n completed collectives, seq 0..n-1, the i-th started at t0 + i * step + delay."""
    return [entry(i, t0 + i * step + delay, **kw) for i in range(n)]


def comm(name, members, rank, entries, backend=None, collectives=None):
    seqs = [e["seq"] for e in entries if e["seq"] is not None]
    return {"name": name, "backend": backend or name, "ranks": members, "rank": members.index(rank),
            "size": len(members),
            "collectives": collectives if collectives is not None else (max(seqs) + 1 if seqs else 0),
            "operations": len(entries), "capacity": 256, "dropped": 0, "entries": entries}


def dump(rank, world, comms, dumped=112.0, place="running", since=100.0, reason="signal", detail="",
         job="l100", host="node0", wall_offset=1_700_000_000.0, steps_marked=None, clock=None):
    """clock: (offset to rank 0's clock, error bound), seconds, as a runtime with a log writes them."""
    d = {"format": "chorus-flight-record", "version": 1, "job": job, "rank": rank,
         "world_size": world, "pid": 1000 + rank, "host": host, "reason": reason, "detail": detail,
         "dumped_ns": ns(dumped), "wall_offset_ns": ns(wall_offset),
         "where": {"place": place, "since_ns": ns(since)}, "communicators": comms}
    if steps_marked is not None:
        d["steps_marked"] = steps_marked
    if clock is not None:
        d["clock_to_rank0_ns"], d["clock_error_ns"] = ns(clock[0]), ns(clock[1])
    return d


def launcher(ranks, reason="stall", stall_timeout=2.0, failed_rank=-1, job="l100"):
    return {"format": "chorus-launcher-record", "version": 1, "job": job, "reason": reason,
            "stall_timeout_s": stall_timeout, "failed_rank": failed_rank, "written_ns": ns(113.0),
            "ranks": ranks}


def launcher_rank(rank, state="running", dumped=True, exit_status=None, signal=None, beacon=None):
    return {"rank": rank, "pid": 4240 + rank, "state": state, "exit_status": exit_status, "signal": signal,
            "dumped": dumped, "beacon": beacon}


def write(directory, dumps, launcher_record=None):
    os.makedirs(directory, exist_ok=True)
    for d in dumps:
        with open(os.path.join(directory, f"rank-{d['rank']}.json"), "w") as f:
            json.dump(d, f)
    if launcher_record is not None:
        with open(os.path.join(directory, "launcher.json"), "w") as f:
            json.dump(launcher_record, f)
    return directory
