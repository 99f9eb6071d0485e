#!/usr/bin/env bash
# Installs every build and run dependency of chorus from Debian 12 packages.
# Idempotent: packages already present are skipped quickly.
set -euo pipefail
PACKAGES=(
  g++ make cmake pkg-config git python3
  libcli11-dev          # command-line parsing
  nlohmann-json3-dev    # JSON output and tuning tables
  libyaml-cpp-dev       # network YAML files (with line numbers for errors)
  libfmt-dev            # formatting
  libgtest-dev libgmock-dev  # unit tests
  clang libclang-rt-14-dev   # fuzzing: clang with libFuzzer (scripts/test.sh --fuzz)
  libopenmpi-dev openmpi-bin # runtime backend "mpi"
  iproute2 util-linux   # multi-host test: network namespaces (ip netns), host names (unshare --uts)
  libgloo-dev           # runtime backend "gloo"
  python3-matplotlib    # the figures of `chorus reproduce` (python/chorus/plot)
  liblemon-dev          # TopoOpt: maximum-weight matching (Edmonds' Blossom) in TopologyFinder
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
