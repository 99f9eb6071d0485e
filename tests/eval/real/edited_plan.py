"""A plan of `chorus plan` for topology host on 4 ranks, edited by a test, then run by
`chorus run workload` under `chorus launch` in checking mode with random submission delays."""
import json
import os
import subprocess


def run_edited_plan(chorus, workload, tmp, edit, *extra):
    """Returns (the edited plan, the completed run, its JSON report or None)."""
    plan = os.path.join(tmp, "plan.json")
    subprocess.run([chorus, "plan", "--workload", workload, "--topology", "host", "--ranks", "4", "--out", plan],
                   check=True, capture_output=True, text=True, timeout=60)
    with open(plan) as f:
        p = json.load(f)
    edit(p)
    with open(plan, "w") as f:
        json.dump(p, f)
    env = dict(os.environ, CHORUS_RT_CHECK="1")
    r = subprocess.run([chorus, "launch", "-n", "4", "--kill-grace-s", "5", "--", chorus, "run", "workload", "--workload",
                        workload, "--plan", plan, "--repeat", "2", "--submit-jitter-us", "300", "--json", *extra],
                       capture_output=True, text=True, timeout=240, env=env)
    return p, r, (json.loads(r.stdout) if r.returncode == 0 else None)
