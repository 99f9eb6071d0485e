#!/bin/bash
# shellcheck disable=SC2015  # `a && b || fail`
# `chorus sweep` under mpirun on two "hosts": two network namespaces joined by a veth pair
# (198.19.0.1 "sw-a", 198.19.0.2 "sw-b"), mpirun started in the first and reaching the second
# only through tests/rt/multihost/netns_agent.sh (its stand-in for ssh), Open MPI on TCP over
# the veth alone. One rank per "host" runs a 48-point sweep; rank 1's rows reach rank 0, the one
# writer, across the veth. Checks: the CSV equals a serial run's byte for byte, the database
# holds every point once, half of them run by rank 1, and the veth carried the rows.
# Exit status: 0 pass, 1 fail, 77 skipped (namespaces cannot be made here; a failure instead
# under CHORUS_REQUIRE_MULTIHOST=1).
# usage: run_sweep_multihost.sh CHORUS [MPIRUN]
set -u
SKIP=77
chorus=${1:?usage: run_sweep_multihost.sh CHORUS [MPIRUN]}
mpirun=${2:-mpirun}
here=$(cd "${0%/*}" && pwd)
agent=$here/../rt/multihost/netns_agent.sh
skip() {
  if [[ "${CHORUS_REQUIRE_MULTIHOST:-0}" == 1 ]]; then echo "run_sweep_multihost: FAILED: cannot run: $*"; exit 1; fi
  echo "run_sweep_multihost: SKIPPED: $*"; exit $SKIP
}
fail() { echo "run_sweep_multihost: FAILED: $*"; exit 1; }
command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"
command -v unshare >/dev/null || skip "no 'unshare' command (Debian package util-linux)"
command -v "$mpirun" >/dev/null || skip "no mpirun ('$mpirun')"
[ "$(id -u)" = 0 ] || skip "needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to make network and UTS namespaces"

prefix=chorus-sw-
ns_a=$prefix$$-a ns_b=$prefix$$-b veth_a=csw$$a veth_b=csw$$b
addr_a=198.19.0.1 addr_b=198.19.0.2 net=198.19.0.0/24
made_etc_netns=0
[ -d /etc/netns ] || made_etc_netns=1
work=$(mktemp -d "/tmp/$prefix$$.XXXXXX") || fail "mktemp"
remove_ns() {
  local pids
  if ip netns list | awk '{print $1}' | grep -qx "$1"; then
    pids=$(ip netns pids "$1" 2>/dev/null)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    sleep 0.2
    ip netns del "$1" 2>/dev/null
  fi
  rm -rf "/etc/netns/$1"
}
cleanup() {
  trap - EXIT INT TERM HUP
  remove_ns "$ns_a"; remove_ns "$ns_b"
  ip link del "$veth_a" 2>/dev/null
  [ "$made_etc_netns" = 1 ] && rmdir /etc/netns 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add "$ns_a" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
ip netns add "$ns_b" || fail "ip netns add $ns_b"
for ns in "$ns_a" "$ns_b"; do
  mkdir -p "/etc/netns/$ns" || fail "mkdir /etc/netns/$ns"
  printf '127.0.0.1 localhost\n%s sw-a\n%s sw-b\n' "$addr_a" "$addr_b" >"/etc/netns/$ns/hosts"
done
ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b" 2>"$work/err" ||
  skip "cannot create a veth pair: $(cat "$work/err")"
ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a" && ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b" &&
  ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up &&
  ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up || fail "cannot configure the veth pair"

cat >"$work/spec.yaml" <<'SPEC'
command: sim collective
grid:
  topology: [3D-SW_SW_SW_homo, 4D-Ring_FC_Ring_SW]
  scheduler: [baseline, themis-fifo, themis-scf]
  size: [256MiB, 512MiB, 1GiB, 2GiB]
  chunks: [1024, 4096]
SPEC
points=48
"$chorus" sweep "$work/spec.yaml" --db "$work/serial.db" --csv "$work/serial.csv" -j 1 >/dev/null ||
  fail "the serial sweep exited with $?"

export CHORUS_MH_HOSTS="sw-a=$ns_a sw-b=$ns_b"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$work/ompi"
rx0=$(ip netns exec "$ns_a" cat "/sys/class/net/$veth_a/statistics/rx_bytes")
ip netns exec "$ns_a" unshare --uts /bin/sh -c 'hostname sw-a && exec "$@"' sh \
  timeout -k 5 120 "$mpirun" --oversubscribe -n 2 --host sw-a:1,sw-b:1 --map-by node \
  --mca plm rsh --mca plm_rsh_agent "$agent" --mca orte_tmpdir_base "$work/ompi" \
  --mca oob_tcp_if_include "$net" --mca btl_tcp_if_include "$net" --mca pml ob1 --mca btl tcp,self \
  "$chorus" sweep "$work/spec.yaml" --db "$work/mpi.db" --csv "$work/mpi.csv" -j 1 >"$work/mpi.out" 2>&1
st=$?
cat "$work/mpi.out"
[ $st = 0 ] || fail "the sweep under mpirun exited with $st"
rx=$(( $(ip netns exec "$ns_a" cat "/sys/class/net/$veth_a/statistics/rx_bytes") - rx0 ))
grep -q "$points run now (1 worker on each of 2 ranks)" "$work/mpi.out" || fail "not $points points on 2 ranks"
cmp "$work/serial.csv" "$work/mpi.csv" || fail "the rows under mpirun differ from the serial run's"
counts=$(/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(*c.execute("SELECT count(*), count(DISTINCT key), sum(rank = 1) FROM points").fetchone())' "$work/mpi.db")
echo "database: rows, distinct keys, rows of rank 1: $counts; veth bytes into sw-a: $rx"
[ "$counts" = "$points $points $((points / 2))" ] || fail "expected $points rows, each point once, $((points / 2)) of rank 1"
# Each of rank 1's rows (a JSON object of about 1.5 KB) crossed the veth to rank 0.
[ "$rx" -ge $((points / 2 * 1000)) ] || fail "fewer bytes reached sw-a than rank 1's rows"
echo "run_sweep_multihost: passed"
