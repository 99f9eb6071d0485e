#!/usr/bin/env bash
# Installs dependencies, builds chorus (Release) and runs the main job:
# the Themis microbenchmark study on the embedded Table 2 presets, then the real-workload
# study (Fig. 12) into results/themis-workloads, then the same schedules executed on real
# ranks beside the simulator (results/themis-real), then TopoOpt: costs, Figs. 12-13 and 15, heatmaps (results/topoopt),
# then SYNDICATE: the joint optimizer against its baselines (results/syndicate) and its motif
# microbenchmarks on real ranks (results/syndicate-real).
# Extra arguments are passed to `chorus reproduce themis` (e.g. --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DCHORUS_BUILD_TESTS=OFF >/dev/null
cmake --build build-release -j"$(nproc)" --target chorus chorus_py_rt
# `import chorus` for Debian's python3 from anywhere: a .pth file in the user's site-packages
# pointing at the package the build wrote (docs/python.md).
site=$(/usr/bin/python3 -m site --user-site)
mkdir -p "$site" && echo "$PWD/build-release/python" > "$site/chorus.pth"
echo "run.sh: python3 -c 'import chorus' now finds $PWD/build-release/python (via $site/chorus.pth)"
./build-release/chorus reproduce themis "$@"
./build-release/chorus reproduce themis-workloads
./build-release/chorus reproduce themis-real
./build-release/chorus reproduce topoopt
./build-release/chorus reproduce syndicate
./build-release/chorus reproduce syndicate-real
