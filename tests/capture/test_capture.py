"""chorus capture end to end (docs/capture.md): a 2-rank torch program with two new_groups captured
and imported, its groups checked against the program's (tests/capture/groups_program.py); then the
bad inputs, each on a damaged copy of that capture: exit status 2 naming the file, rank and field.

usage: test_capture.py CHORUS PYTHON   (PYTHONPATH need not be set: chorus capture sets it)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHORUS, PYTHON = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "groups_program.py")
failures = []


def run(*args):
    return subprocess.run([CHORUS, *args], capture_output=True, text=True, timeout=600)


def check(cond, what, out=None):
    if not cond:
        failures.append(what + (f"\n--- stdout\n{out.stdout}\n--- stderr\n{out.stderr}" if out else ""))
        print("FAIL", what, file=sys.stderr)


def expect_bad(what, out, *words):
    check(out.returncode == 2, f"{what}: exit status {out.returncode}, expected 2", out)
    for w in words:
        check(w in out.stderr, f"{what}: '{w}' not in the error", out)


def capture(dest, *program_args, steps="2:4"):
    return run("capture", "-n", "2", "--out", dest, "--steps", steps, "--", PYTHON, PROGRAM, *program_args)


def damaged(src, root, name):
    dest = os.path.join(root, name)
    shutil.copytree(src, dest)
    return dest


def sim(dest, *extra):
    return run("sim", "workload", "--workload", dest, "--topology", "host", "-i", "1", *extra)


def main():
    root = tempfile.mkdtemp(prefix="chorus_capture_test_")
    good = os.path.join(root, "good")
    out = capture(good, "--steps", "6")
    check(out.returncode == 0, "the capture ran", out)
    manifest = json.load(open(os.path.join(good, "manifest.json")))
    check(manifest["complete"] is True and manifest["world"] == 2, "the manifest says complete, world 2")
    check(manifest["steps"]["window"] == [2, 4] and manifest["steps"]["ran"] == 6, "the window and steps ran")
    check(manifest["torch_version"].startswith("1.") or manifest["torch_version"].startswith("2."), "torch's version")
    check("overhead" in out.stderr, "the overhead is printed", out)
    for r in (0, 1):
        rec = json.load(open(os.path.join(good, f"rank.{r}.json")))
        check(rec["requested_backend"] == "gloo", f"rank {r}: the backend the program asked for is written down")
        check(len(rec["step_end_ns"]) == 6, f"rank {r}: six step ends")

    # The groups recovered, per rank: the window is two steps, each with one collective per group
    # (groups_program.py): the world (under the backend's name), new_group([0,1]) twice, and the
    # rank's own new_group([r]) (a group of one, which sends nothing).
    for r in (0, 1):
        out = sim(good, "--rank", str(r), "--json")
        check(out.returncode == 0, f"rank {r}: sim workload on the capture", out)
        notes = [line for line in out.stderr.splitlines() if "groups:" in line]
        check(len(notes) == 1, f"rank {r}: one note of the groups", out)
        if not notes:
            continue
        groups = re.search(r"groups: (.*?)\); every rank", notes[0]).group(1)
        found = {}
        for part in groups.split(", "):
            m = re.fullmatch(r"\[([0-9,]+)\] \((\S+)\) (\d+)", part)
            check(m is not None, f"rank {r}: group entry '{part}'")
            if m:
                found[(m.group(1), m.group(2).startswith("torch/"))] = int(m.group(3))
        expected = {("0,1", False): 2, ("0,1", True): 4, (str(r), True): 2}
        check(found == expected, f"rank {r}: groups {found}, expected {expected}", out)
        # Simulated: the world's and the pair's all-reduces and the pair's all-to-alls, two steps each.
        check("6 collective(s) in the window" in notes[0], f"rank {r}: six simulated collectives", out)
        # Sent per NPU on 2 NPUs, two steps: the all-reduces' 64 and 128 bytes whole, the all-to-all's
        # 32 bytes half (the other half stays): 2 x (64 + 128 + 16).
        result = json.loads(out.stdout)
        check(result["bytes_per_npu"] == 416 and result["npus"] == 2, f"rank {r}: 416 bytes per NPU", out)

    # A program without an optimizer marks its steps with chorus.capture.step(): the same
    # collectives per step, so the same six in a window of two steps.
    marked = os.path.join(root, "marked")
    out = capture(marked, "--steps", "6", "--marker")
    check(out.returncode == 0, "the capture of a program that marks its steps", out)
    out = sim(marked)
    check(out.returncode == 0 and "6 collective(s) in the window" in out.stderr, "its import: six collectives", out)

    # Point to point (tests/data/capture/p2p_program.py): per step rank 0 sends 256 floats (1024
    # bytes) to rank 1 and receives 128 (512 bytes) back, then both all-reduce 64 floats (256 bytes).
    # The window's two steps: 2 collectives and 4 sends / recvs, matched between the ranks; sent per
    # NPU, both directions of the rank's transfers and the all-reduce whole: 2 x (1024 + 512 + 256).
    p2p = os.path.join(root, "p2p")
    out = run("capture", "-n", "2", "--out", p2p, "--steps", "2:4", "--", PYTHON,
              os.path.join(HERE, "..", "data", "capture", "p2p_program.py"), "--steps", "6")
    check(out.returncode == 0, "the capture of a program with send / recv", out)
    for r in (0, 1):
        out = sim(p2p, "--rank", str(r), "--json")
        check(out.returncode == 0 and "2 collective(s) and 4 send(s) / recv(s), each matched" in out.stderr,
              f"p2p rank {r}: its sends and recvs imported and matched", out)
        if out.returncode == 0:
            check(json.loads(out.stdout)["bytes_per_npu"] == 3584, f"p2p rank {r}: 3584 bytes per NPU", out)
    # Exported: each rank's own trace, its sends and recvs naming the other rank (chorus's reader
    # checks comm_src / comm_dst against the file's rank).
    et_p2p = os.path.join(root, "et_p2p")
    two = os.path.join(root, "two.yaml")
    with open(two, "w") as f:
        f.write("name: two\ndims:\n  - {kind: switch, size: 2, link_bandwidth_GBps: 10, links_per_npu: 1, "
                "latency_ns: 500}\n")
    out = run("export", "--chakra", "--workload", p2p, "--topology", two, "-o", et_p2p)
    check(out.returncode == 0, "export --chakra of sends and recvs on a network of 2 NPUs", out)
    for r in (0, 1):
        out = run("sim", "workload", "--workload", os.path.join(et_p2p, f"p2p.{r}.et"), "--topology", two, "-i", "1")
        check(out.returncode == 0, f"its rank {r} trace read back and simulated", out)

    # Chakra export through the same loader.
    out = run("export", "--chakra", "--workload", good, "--topology", "host", "-i", "1", "-o", os.path.join(root, "et"))
    check(out.returncode == 0 and os.path.isfile(os.path.join(root, "et", "good.0.et")), "chorus export --chakra", out)

    # Bad inputs.
    d = damaged(good, root, "truncated_manifest")
    text = open(os.path.join(d, "manifest.json")).read()
    open(os.path.join(d, "manifest.json"), "w").write(text[: len(text) // 2])
    expect_bad("a truncated manifest", sim(d), "manifest.json", "not JSON")

    d = damaged(good, root, "missing_log")
    os.remove(os.path.join(d, "comm.1.jsonl"))
    expect_bad("a rank's file missing", sim(d), "rank 1", "comm_log", "comm.1.jsonl")

    d = damaged(good, root, "corrupt_graph")
    text = open(os.path.join(d, "graph.1.json")).read()
    open(os.path.join(d, "graph.1.json"), "w").write(text[: len(text) // 3])
    expect_bad("a truncated graph", sim(d), "graph.1.json", "not JSON")

    d = damaged(good, root, "disagreeing_steps")
    path = os.path.join(d, "rank.1.json")
    rec = json.load(open(path))
    rec["window_steps"] = [3, 5]
    json.dump(rec, open(path, "w"))
    expect_bad("ranks that disagree on steps", sim(d), "rank.1.json", "rank 1", "window_steps")

    d = damaged(good, root, "disagreeing_bytes")
    path = os.path.join(d, "comm.1.jsonl")
    lines = open(path).read().splitlines()
    window = json.load(open(os.path.join(d, "rank.1.json")))["window"]
    for k, line in enumerate(lines[1:], 1):  # the first world all-reduce inside the window: 64 -> 128 bytes
        j = json.loads(line)
        if j["op"] == "all_reduce" and j["bytes"] == 64 and window[0] <= j["issue_ns"] <= window[1]:
            j["bytes"], j["count"] = 128, 32
            lines[k] = json.dumps(j)
            break
    open(path, "w").write("\n".join(lines) + "\n")
    expect_bad("ranks that disagree on a collective", sim(d), "rank 1", "collective", "bytes")

    # Rank 1's first all-to-all inside the window logged with twice its block: the graph's record has
    # no tensors to join it against, so rank 1's DAG differs from rank 0's, as ranks issuing
    # different collectives would.
    d = damaged(good, root, "disagreeing_ranks")
    path = os.path.join(d, "comm.1.jsonl")
    lines = open(path).read().splitlines()
    for k, line in enumerate(lines[1:], 1):
        j = json.loads(line)
        if j["op"] == "all_to_all_single" and window[0] <= j["issue_ns"] <= window[1]:
            j["bytes"], j["count"] = 2 * j["bytes"], 2 * j["count"]
            lines[k] = json.dumps(j)
            break
    open(path, "w").write("\n".join(lines) + "\n")
    expect_bad("ranks that disagree on a collective's size", sim(d), "graph.1.json (rank 1)", "graph.0.json (rank 0)",
               "bytes")

    d = damaged(good, root, "corrupt_log")
    path = os.path.join(d, "comm.0.jsonl")
    lines = open(path).read().splitlines()
    lines[3] = lines[3][: len(lines[3]) // 2]
    open(path, "w").write("\n".join(lines) + "\n")
    expect_bad("a corrupt line of a log", sim(d), "comm.0.jsonl:4", "not JSON")

    d = damaged(good, root, "corrupt_trace")
    open(os.path.join(d, "trace.0.json"), "w").write("[{\"name\": \"aten::mm\", \"ph\": \"X\"")
    expect_bad("a truncated profiler trace", sim(d), "trace.0.json")

    failed = os.path.join(root, "failed")
    out = capture(failed, "--steps", "6", "--fail-at", "3")
    expect_bad("a program that fails during the capture", out, "complete: false", "field 'ok'", "failing at step 3")
    m = json.load(open(os.path.join(failed, "manifest.json")))
    check(m["complete"] is False and "error" in m, "the failed capture's manifest says complete: false")
    expect_bad("importing a partial capture", sim(failed), "manifest.json", "complete")

    # The program's flags without `--` would be chorus capture's (--steps is both).
    expect_bad("a command without --", run("capture", "-n", "2", PYTHON, PROGRAM, "--steps", "6"),
               "'--steps' after the program", "put `--`")
    expect_bad("a command that is no Python program", run("capture", "-n", "2", "--", "/bin/true"), "command",
               "no Python interpreter")
    expect_bad("a window that starts at step 0", capture(os.path.join(root, "w0"), steps="0:2"), "--steps", "1 <= A")

    short = os.path.join(root, "short")  # three steps, the window needs four step ends
    expect_bad("a program that runs fewer steps than the window", capture(short, "--steps", "3"), "rank 0",
               "step_end_ns", "ran 3 steps")

    if failures:
        print(f"{len(failures)} failure(s); files kept in {root}", file=sys.stderr)
        for f in failures:
            print(f, file=sys.stderr)
        return 1
    shutil.rmtree(root)
    print("capture tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
