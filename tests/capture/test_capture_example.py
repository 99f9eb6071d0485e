"""examples/torch/moe.py captured on 2 ranks (small: 64 tokens, 1 layer) and simulated on this host's
model (--topology host) and on a dimension network: the DAG's communication is what the program
issues in the window, derived here from moe.py's structure:

  one step (the window 2:3): record_step's loss all_reduce (4 bytes, it follows the previous step's
  optimizer step); the layer's two all_to_all_single forward (dispatch, combine) and one backward
  (the combine's: the dispatched tokens come from the data and need no gradient), each of the
  (world x capacity, dim) = (2 x 64, 32) floats = 16384 bytes; the replicated parameters averaged
  by one all_reduce each (average_gradients): head 32 x 32 + 32, gate 2 x 32 + 2 floats. The
  barrier is not simulated. On 2 NPUs an all-reduce of S bytes sends S per NPU and an all-to-all
  (2 - 1) / 2 of it: 4 + 4096 + 128 + 256 + 8 + 3 x 8192 = 29068 bytes per NPU.

usage: test_capture_example.py CHORUS PYTHON REPO
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHORUS, PYTHON, REPO = sys.argv[1:4]


def main():
    root = tempfile.mkdtemp(prefix="chorus_capture_example_")
    out_dir = os.path.join(root, "moe")
    cmd = [CHORUS, "capture", "-n", "2", "--out", out_dir, "--steps", "2:3", "--", PYTHON,
           os.path.join(REPO, "examples/torch/moe.py"), "--steps", "5", "--tokens", "64", "--dim", "32",
           "--hidden", "64", "--layers", "1"]
    cap = subprocess.run(cmd, capture_output=True, text=True, timeout=500)
    errors = []
    if cap.returncode != 0:
        errors.append(f"capture: status {cap.returncode}\n{cap.stderr}")
    else:
        sim = subprocess.run([CHORUS, "sim", "workload", "--workload", out_dir, "--topology", "host", "-i", "1",
                              "--json"], capture_output=True, text=True, timeout=300)
        if sim.returncode != 0:
            errors.append(f"sim on host: status {sim.returncode}\n{sim.stderr}")
        else:
            note = re.search(r"(\d+) collective\(s\) in the window", sim.stderr)
            if not note or int(note.group(1)) != 8:
                errors.append(f"expected 8 collectives in the window:\n{sim.stderr}")
            result = json.loads(sim.stdout)
            if result["bytes_per_npu"] != 29068 or result["nodes"]["comm"] != 8 or result["npus"] != 2:
                errors.append(f"expected 29068 bytes per NPU in 8 comm nodes on 2 NPUs: {json.dumps(result)[:600]}")
            if not result["iteration_time_ns"] > 0:
                errors.append("no iteration time")
        big = subprocess.run([CHORUS, "sim", "workload", "--workload", out_dir, "--topology", "3D-SW_SW_SW_homo",
                              "-i", "1"], capture_output=True, text=True, timeout=300)
        if big.returncode != 0 or "warning: simulating a 2-rank capture" not in big.stderr:
            errors.append(f"sim on 3D-SW_SW_SW_homo: status {big.returncode}\n{big.stderr}")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        print(f"files kept in {root}", file=sys.stderr)
        return 1
    shutil.rmtree(root)
    print("capture example test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
