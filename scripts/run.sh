#!/usr/bin/env bash
# The README's main command: installs the Debian packages, builds build/ (scripts/build.sh: the
# CLI, the Python runtime, the torch.distributed backend, the C++ example), proves the Python
# runtime works (a 2-rank all-reduce on shm and gloo, the torch backend registered), then runs
# every paper's headline study into results/:
#   Themis: the microbenchmarks (Figs. 8-11), the training workloads (Fig. 12), the schedules
#           executed on real ranks beside the simulator;
#   TopoOpt: fabric costs (Fig. 11), the traffic heatmaps (Figs. 4, 9), iteration times per fabric
#           (Figs. 12-13);
#   SYNDICATE: the joint optimizer against its baselines, its motif microbenchmarks on real ranks.
# About two minutes after the build on 2 cores. With --full, TopoOpt's Figs. 12-13 sweep every
# link bandwidth and both degrees and adds Fig. 15 (about 25 minutes more).
#   bash scripts/run.sh [--full]
set -euo pipefail
cd "$(dirname "$0")/.."
FULL=0
case "${1:-}" in
  "") ;;
  --full) FULL=1 ;;
  *) echo "usage: bash scripts/run.sh [--full]" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
bash scripts/build.sh
C=build/chorus

# `import chorus` for Debian's python3 from anywhere: a .pth file in the user's site-packages
# pointing at the package the build wrote (docs/python.md).
site=$(/usr/bin/python3 -m site --user-site)
mkdir -p "$site" && echo "$PWD/build/python" > "$site/chorus.pth"

# The promise, proven: the compiled runtime loads and two ranks all-reduce on shm and gloo; the
# torch backend is registered. Any failure stops here, loudly.
if ! out=$(cd / && $OLDPWD/$C launch -n 2 -- /usr/bin/python3 -W error::RuntimeWarning -c '
import numpy as np, chorus, torch.distributed as dist
chorus.init(["shm", "gloo"])
for b in ("shm", "gloo"):
    x = np.full(4, chorus.rank() + 1.0)
    chorus.all_reduce(b, x)
    assert (x == 3).all(), (b, x)
assert "CHORUS" in dist.Backend._plugins, "the torch backend is not registered"
rank = chorus.rank()
chorus.finalize()
if rank == 0:
    print("2 ranks: all_reduce on shm and gloo ok; torch backend \"chorus\" registered")
' 2>&1); then
  echo "$out" >&2
  echo "run.sh: FAILED: the Python runtime built into build/python does not work (above; docs/development.md)" >&2
  exit 1
fi
echo "run.sh: $out"
echo "run.sh: python3 -c 'import chorus' now finds $PWD/build/python (via $site/chorus.pth)"

$C reproduce themis -q
$C reproduce themis-workloads -q
$C reproduce themis-workloads --sensitivity -q   # Fig. 12 against batch and compute rate
$C reproduce themis-real
if ((FULL)); then
  $C reproduce topoopt
else
  # Figs. 12-13 at one link bandwidth (100 Gb/s) and degree 4; --full sweeps 10-200 Gb/s, d = 4 and 8.
  $C reproduce topoopt -q --degrees 4 --bandwidths 100 --no-fig15
fi
$C reproduce syndicate -q
$C reproduce syndicate-real
$C reproduce shared-fabric   # two jobs on one fabric: placements and start shifts
$C reproduce themis-degraded # Themis planned on stale bandwidths against re-planned
echo "run.sh: done; the tables and figures are in results/ (README.md, \"Quick start\")"
