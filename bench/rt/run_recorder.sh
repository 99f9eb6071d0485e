#!/usr/bin/env bash
# The flight recorder's cost (docs/flight-recorder.md): the same blocking all-reduces with the
# recorder on (the default) and off (CHORUS_RT_RECORD=0), alternated round by round in one run so
# that both see the same machine; per size and backend the median over the rounds of each job's
# mean time per call.
#   bench/rt/run_recorder.sh [BUILD_DIR] [ROUNDS] [ITERS]
set -euo pipefail
BUILD="${1:-build}"
ROUNDS="${2:-7}"
ITERS="${3:-3000}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
for round in $(seq "$ROUNDS"); do
  for mode in on off; do
    if [[ "$mode" == off ]]; then export CHORUS_RT_RECORD=0; else unset CHORUS_RT_RECORD; fi
    "$BUILD/chorus" launch -n 2 -- "$BUILD/chorus" bench --backends shm,gloo --sizes 8,4KiB,64KiB \
      -n "$ITERS" -w 300 -c 0 --jsonl 2>/dev/null | grep '^{' > "$OUT/$mode.$round.jsonl"
  done
done
unset CHORUS_RT_RECORD
/usr/bin/python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
times = {}
for mode in ("on", "off"):
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{mode}.{r}.jsonl"):
            row = json.loads(line)
            times.setdefault((row["backend"], row["bytes"]), {}).setdefault(mode, []).append(row["mean_us"])
print(f"# flight recorder on (default, 256 entries per lane) vs off (CHORUS_RT_RECORD=0); 2 ranks, f32 sum "
      f"all-reduce, blocking; median of {rounds} alternated rounds of each job's mean per call")
print("| backend | bytes | recorder on (us) | off (us) | on - off (us) | on / off |")
print("| --- | --- | --- | --- | --- | --- |")
for (backend, size), t in sorted(times.items()):
    on, off = statistics.median(t["on"]), statistics.median(t["off"])
    print(f"| {backend} | {size} | {on:.3f} | {off:.3f} | {on - off:+.3f} | {on / off:.3f} |")
PY
