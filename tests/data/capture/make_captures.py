#!/usr/bin/env python3
"""Writes the hand-made `chorus capture` directories of the what-if tests (docs/capture.md,
"What-ifs"), each with known durations and sizes, so that every expected value can be derived by
hand. Every rank of a capture records the same window (steps 2..2, one step):

  aten::mm of two 64 x 64 float matrices, 1000 us in the profiler trace      (compute: 1 ms)
  chorus:all_reduce of 4 MiB (4194304 bytes) on the world, after the mm       (no tensors: it waits for it)
  [pairs, irregular] chorus:all_reduce of 1 MiB on a sub-group, after the mm

  dp4        4 ranks, the world's all-reduce only (a data-parallel capture)
  pairs4     4 ranks, + the sub-group all-reduce on {0, 1} and {2, 3} (a regular partition)
  irregular4 4 ranks, + the sub-group all-reduce on {0, 1, 2} and {3} (no partition into one size)
  hybrid4    4 ranks of a tensor x data-parallel job, without the world's all-reduce: after the mm
             an all-reduce of 1 MiB on the tensor-parallel pair ({0, 1}: torch/1, {2, 3}: torch/2),
             then one of 4 MiB on the data-parallel pair ({0, 2}: torch/3, {1, 3}: torch/4). Every
             rank creates the four groups, as torch's new_group is called on every rank; a rank's
             record has no label for a group it is not in, as chorus capture records it.

  p2p2       2 ranks of a two-stage pipeline (point-to-point): rank 0 runs the mm (1000 us), then
             c10d::send of 1 MiB (its tensor the mm's output) to rank 1 and c10d::recv_ of 256 KiB
             from rank 1; rank 1 c10d::recv_ of 1 MiB from rank 0, the mm (1000 us, writing the
             tensor it sends), c10d::send of 256 KiB to rank 0. The c10d:: calls take 5 us in the
             trace (all of it inside c10d::, so no compute), each with its chorus:send / chorus:recv.
  p2p2_unmatched  rank 1 never sends back: rank 0's recv has no send
  p2p2_sizes      rank 1 receives 512 KiB where rank 0 sends 1 MiB

usage: python3 make_captures.py   (rewrites the directories beside this file)
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD_BYTES = 4 * 1024 * 1024
GROUP_BYTES = 1024 * 1024


def node(id_, name, parent, tid, inputs=(), outputs=()):
    shape = [64, 64]
    return {"name": name, "id": id_, "rf_id": id_, "parent": parent, "fw_parent": 0, "seq_id": -1, "scope": 0,
            "tid": tid, "fw_tid": 0, "op_schema": "",
            "inputs": [list(t) for t in inputs], "input_shapes": [shape for _ in inputs],
            "input_types": ["Tensor(float)" for _ in inputs],
            "outputs": [list(t) for t in outputs], "output_shapes": [shape for _ in outputs],
            "output_types": ["Tensor(float)" for _ in outputs]}


def graph(collectives):
    a, b, c = (1, 1, 0, 4096, 4, "cpu"), (2, 2, 0, 4096, 4, "cpu"), (3, 3, 0, 4096, 4, "cpu")
    nodes = [node(1, "[pytorch|profiler|execution_graph|process]", 1, 0),
             node(2, "[pytorch|profiler|execution_graph|thread]", 1, 1),
             node(10, "aten::mm", 2, 1, inputs=(a, b), outputs=(c,))]
    for k in range(collectives):
        nodes.append(node(11 + k, "chorus:all_reduce", 2, 1))
    return {"schema": "1.0.1", "pid": 1, "time": "2026-11-29 00:00:00", "start_ts": 0, "finish_ts": 1, "nodes": nodes}


def write(directory, world, groups_of, world_all_reduce=True):
    """groups_of(rank) -> (the groups the rank created, the labels of its sub-groups' all-reduces: one of
    1 MiB each after the world's, in order; a label alone or None for one, as before)."""
    path = os.path.join(HERE, directory)
    os.makedirs(path, exist_ok=True)
    ranks = []
    for r in range(world):
        created, labels = groups_of(r)
        labels = [] if labels is None else [labels] if isinstance(labels, str) else labels
        sizes = [GROUP_BYTES] if len(labels) == 1 else [GROUP_BYTES, WORLD_BYTES][:len(labels)]
        files = {"graph": f"graph.{r}.json", "trace": f"trace.{r}.json", "comm_log": f"comm.{r}.jsonl",
                 "record": f"rank.{r}.json"}
        ranks.append({"rank": r, **files})
        with open(os.path.join(path, files["graph"]), "w") as f:
            json.dump(graph(len(labels) + (1 if world_all_reduce else 0)), f, indent=1)
        with open(os.path.join(path, files["trace"]), "w") as f:
            json.dump([{"name": "aten::mm", "ph": "X", "ts": 100, "dur": 1000, "tid": 1, "pid": "CPU functions",
                        "args": {}}], f, indent=1)
        lines = [{"chorus_comm_log": 1, "rank": r, "world_size": world, "unix_time_ns": 0}]
        if world_all_reduce:
            lines.append({"op": "all_reduce", "bytes": WORLD_BYTES, "backend": "shm", "issue_ns": 1500})
        for k, (label, size) in enumerate(zip(labels, sizes)):
            lines.append({"op": "all_reduce", "bytes": size, "backend": label, "issue_ns": 1600 + 100 * k})
        with open(os.path.join(path, files["comm_log"]), "w") as f:
            f.write("".join(json.dumps(line) + "\n" for line in lines))
        with open(os.path.join(path, files["record"]), "w") as f:
            json.dump({"rank": r, "ok": True, "step_end_ns": [100, 500, 1000, 2000, 2500], "window_steps": [2, 3],
                       "window": [1000, 2000], "groups": created}, f, indent=1)
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump({"chorus_capture": 1, "complete": True, "world": world, "backend": "shm",
                   "command": ["hand-made by tests/data/capture/make_captures.py"],
                   "steps": {"window": [2, 3], "ran": 5}, "ranks_recorded": world, "ranks": ranks}, f, indent=1)


def c10d(id_, name, peer, storage, numel):
    n = node(id_, name, 2, 1)
    n["inputs"] = [[[100 + id_, storage, 0, numel, 4, "cpu"]], "<Object>", peer, 0]
    n["input_types"] = ["GenericList[Tensor(float)]", "Object", "Int", "Int"]
    n["input_shapes"] = [[[numel]], [], [], []]
    n["outputs"], n["output_types"], n["output_shapes"] = ["<Object>"], ["Object"], [[]]
    return n


def write_p2p(directory, back=True, recv_numel=262144):
    """The two-stage pipeline p2p2 (1 MiB = 262144 floats forward, 256 KiB = 65536 back)."""
    path = os.path.join(HERE, directory)
    os.makedirs(path, exist_ok=True)
    a, b, c = (1, 1, 0, 4096, 4, "cpu"), (2, 2, 0, 4096, 4, "cpu"), (3, 3, 0, 4096, 4, "cpu")
    mm = node(10, "aten::mm", 2, 1, inputs=(a, b), outputs=(c,))
    head = [node(1, "[pytorch|profiler|execution_graph|process]", 1, 0),
            node(2, "[pytorch|profiler|execution_graph|thread]", 1, 1)]
    ranks = []
    for r in range(2):
        files = {"graph": f"graph.{r}.json", "trace": f"trace.{r}.json", "comm_log": f"comm.{r}.jsonl",
                 "record": f"rank.{r}.json"}
        ranks.append({"rank": r, **files})
        # (name, c10d op, peer, storage, numel, log op, bytes); storage 3 is the mm's output
        if r == 0:
            ops = [("send", 1, 3, 262144), ("recv_", 1, 5, 65536)]
        else:
            ops = [("recv_", 0, 4, recv_numel)] + ([("send", 0, 3, 65536)] if back else [])
        nodes, events, lines = list(head), [], [{"chorus_comm_log": 1, "rank": r, "world_size": 2, "unix_time_ns": 0}]
        t, ident = 100, 20
        order = [("mm",)] + [("p2p", *o) for o in ops] if r == 0 else [("p2p", *ops[0]), ("mm",)] + \
            [("p2p", *o) for o in ops[1:]]
        for step in order:
            if step[0] == "mm":
                nodes.append(dict(mm, id=ident, rf_id=ident))
                events.append({"name": "aten::mm", "ph": "X", "ts": t, "dur": 1000, "tid": 1, "pid": "CPU functions",
                               "args": {}})
                t += 1000
                ident += 2
                continue
            _, op, peer, storage, numel = step
            nodes.append(c10d(ident, f"c10d::{op}", peer, storage, numel))
            nodes.append(node(ident + 1, f"chorus:{op.rstrip('_')}", ident, 1))
            events.append({"name": f"c10d::{op}", "ph": "X", "ts": t, "dur": 5, "tid": 1, "pid": "CPU functions",
                           "args": {}})
            lines.append({"op": op.rstrip("_"), "bytes": numel * 4, "backend": "shm", "issue_ns": 1500 + ident})
            t += 5
            ident += 2
        with open(os.path.join(path, files["graph"]), "w") as f:
            json.dump({"schema": "1.0.1", "pid": 1, "time": "2026-11-29 00:00:00", "start_ts": 0, "finish_ts": 1,
                       "nodes": nodes}, f, indent=1)
        with open(os.path.join(path, files["trace"]), "w") as f:
            json.dump(events, f, indent=1)
        with open(os.path.join(path, files["comm_log"]), "w") as f:
            f.write("".join(json.dumps(line) + "\n" for line in lines))
        with open(os.path.join(path, files["record"]), "w") as f:
            json.dump({"rank": r, "ok": True, "step_end_ns": [100, 500, 1000, 2000, 2500], "window_steps": [2, 3],
                       "window": [1000, 2000], "groups": []}, f, indent=1)
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump({"chorus_capture": 1, "complete": True, "world": 2, "backend": "shm",
                   "command": ["hand-made by tests/data/capture/make_captures.py"],
                   "steps": {"window": [2, 3], "ran": 5}, "ranks_recorded": 2, "ranks": ranks}, f, indent=1)


def main():
    write("dp4", 4, lambda r: ([], None))
    pairs = [{"label": "torch/1", "ranks": [0, 1]}, {"label": "torch/2", "ranks": [2, 3]}]
    write("pairs4", 4, lambda r: (pairs, "torch/1" if r < 2 else "torch/2"))
    irregular = [{"label": "torch/1", "ranks": [0, 1, 2]}, {"label": "torch/2", "ranks": [3]}]
    write("irregular4", 4, lambda r: (irregular, "torch/1" if r < 3 else "torch/2"))
    tp = {"torch/1": [0, 1], "torch/2": [2, 3]}
    dp = {"torch/3": [0, 2], "torch/4": [1, 3]}
    groups = {**tp, **dp}

    def hybrid(r):
        created = [{"label": label if r in ranks else None, "ranks": ranks} for label, ranks in groups.items()]
        return created, [next(l for l, g in tp.items() if r in g), next(l for l, g in dp.items() if r in g)]
    write("hybrid4", 4, hybrid, world_all_reduce=False)
    write_p2p("p2p2")
    write_p2p("p2p2_unmatched", back=False)
    write_p2p("p2p2_sizes", recv_numel=131072)


if __name__ == "__main__":
    main()
