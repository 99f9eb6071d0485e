#!/bin/bash
# shellcheck disable=SC2015,SC2016,SC2054  # `a && b || fail`, sh -c scripts, --host a:2,b:2
# Two-"host" test of chorus::rt under mpirun. Two network namespaces joined by a veth pair
# stand in for two hosts (198.18.0.1 "mh-a", 198.18.0.2 "mh-b", from the 198.18.0.0/15
# benchmark range); each gets its own host name (UTS namespace) and its own /etc/hosts
# (/etc/netns/NS/hosts, bind-mounted by `ip netns exec`). mpirun runs inside the first
# namespace and reaches the second only through netns_agent.sh, its stand-in for ssh, so
# every byte between the "hosts" crosses the veth. 2 ranks per "host" then:
#   1. run `hostname` (the launch reaches both namespaces, 2 ranks each);
#   2. run rt_check on mpi and gloo with a 4 MiB all-reduce, every result checked against a
#      local reference; both veth ends must count at least 2 x 4 MiB received (each backend's
#      all-reduce must bring the other host's 4 MiB contribution in);
#   3. run rt_check on shm, which must refuse: chorus's bootstrap must see two hosts;
#   4. again 3 and a short 2, with both "hosts" named mh-same, which each resolves to its own
#      address (as cloned machines do): the bootstrap must not take them for one host, and the
#      store address rank 0 advertises must be its own (numeric), not a name each host
#      resolves to itself;
#   5. with mh-a's /etc/hosts mapping its own name to 127.0.1.1 (Debian's default), every rank
#      must stop at once with an error naming the loopback address and CHORUS_GLOO_HOST;
#      with CHORUS_GLOO_HOST set on each host (as the error says) the job runs;
#   7. rt_store_attack: the ranks on mh-b (and mh-a) open hostile connections to the store rank 0
#      serves across the veth — no token, a wrong token, garbage, oversized frames: each must be
#      refused with the error the protocol names — then a gloo job runs through the same store.
# Namespaces, the veth, the /etc/netns files and every process inside the namespaces are
# removed on every exit path (trap), and stale ones of an earlier killed run are swept first.
# Exit status: 0 pass, 1 fail, 77 skipped (namespaces cannot be made here; a failure instead under
# CHORUS_REQUIRE_MULTIHOST=1).
#
# usage: run_multihost.sh RT_CHECK [MPIRUN [BUDGET_S [RT_STORE_ATTACK]]]
#   (BUDGET_S bounds all mpirun steps, default 100; step 7 runs when RT_STORE_ATTACK is given)
set -u

SKIP=77
rt_check=${1:?usage: run_multihost.sh RT_CHECK [MPIRUN [BUDGET_S]]}
mpirun=${2:-mpirun}
here=$(cd "${0%/*}" && pwd)
agent=$here/netns_agent.sh
budget=${3:-100}
store_attack=${4:-}
step_timeout=40

exec 3>&1  # the test's own messages, even from inside a redirected step
# CHORUS_REQUIRE_MULTIHOST=1 (scripts/test.sh as root, so CI): not being able to run is a failure.
skip() {
  if [[ "${CHORUS_REQUIRE_MULTIHOST:-0}" == 1 ]]; then
    echo "run_multihost: FAILED: cannot run (CHORUS_REQUIRE_MULTIHOST=1): $*" >&3; exit 1
  fi
  echo "run_multihost: SKIPPED: $*" >&3; exit $SKIP
}
fail() { echo "run_multihost: FAILED: $*" >&3; exit 1; }

command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"
command -v unshare >/dev/null || skip "no 'unshare' command (Debian package util-linux)"
command -v timeout >/dev/null || skip "no 'timeout' command (Debian package coreutils)"
command -v "$mpirun" >/dev/null || skip "no mpirun ('$mpirun')"
[ -x "$rt_check" ] || fail "rt_check '$rt_check' is not an executable"
[ "$(id -u)" = 0 ] || skip "needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to make network and UTS namespaces"

prefix=chorus-mh-
ns_a=$prefix$$-a
ns_b=$prefix$$-b
veth_a=cmh$$a
veth_b=cmh$$b
host_a=mh-a
host_b=mh-b
addr_a=198.18.0.1
addr_b=198.18.0.2
net=198.18.0.0/24
made_etc_netns=0
[ -d /etc/netns ] || made_etc_netns=1
work=$(mktemp -d "/tmp/$prefix$$.XXXXXX") || fail "mktemp"

# Remove one namespace: kill what runs in it (only processes this test started live
# there), drop its /etc/netns files, delete it (which destroys its veth end and so the pair).
remove_ns() {
  local ns=$1 pids
  if ip netns list | awk '{print $1}' | grep -qx "$ns"; then
    pids=$(ip netns pids "$ns" 2>/dev/null)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
      sleep 0.1
    done
    ip netns del "$ns" 2>/dev/null
  fi
  rm -rf "/etc/netns/$ns"
}

cleanup() {
  trap - EXIT INT TERM HUP PIPE
  remove_ns "$ns_a"
  remove_ns "$ns_b"
  ip link del "$veth_a" 2>/dev/null
  [ "$made_etc_netns" = 1 ] && rmdir /etc/netns 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "run_multihost: interrupted" >&3; exit 1' INT TERM HUP
trap 'exit 1' PIPE

# Sweep namespaces of an earlier run that was killed before its trap could run.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${prefix}[0-9]*-[ab]$"); do
  pid=${ns#"$prefix"}; pid=${pid%-*}
  kill -0 "$pid" 2>/dev/null || { echo "run_multihost: removing stale namespace $ns"; remove_ns "$ns"; made_etc_netns=1; }
done
for dir in "/tmp/$prefix"[0-9]*.*; do
  [ -d "$dir" ] || continue
  pid=${dir#"/tmp/$prefix"}; pid=${pid%%.*}
  kill -0 "$pid" 2>/dev/null || rm -rf "$dir"
done

ip netns add "$ns_a" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
ip netns add "$ns_b" || fail "ip netns add $ns_b"
ip netns exec "$ns_a" unshare --uts true 2>"$work/err" ||
  skip "cannot create a UTS namespace: $(cat "$work/err")"
for ns in "$ns_a" "$ns_b"; do
  mkdir -p "/etc/netns/$ns" || fail "mkdir /etc/netns/$ns"
  me=$addr_a; [ "$ns" = "$ns_b" ] && me=$addr_b
  printf '127.0.0.1 localhost\n%s %s\n%s %s\n%s mh-same\n' "$addr_a" "$host_a" "$addr_b" "$host_b" "$me" \
    >"/etc/netns/$ns/hosts"
done
ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b" 2>"$work/err" ||
  skip "cannot create a veth pair (needs CAP_NET_ADMIN): $(cat "$work/err")"
ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a" &&
  ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b" &&
  ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up &&
  ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up ||
  fail "cannot configure the veth pair"

export CHORUS_MH_HOSTS="$host_a=$ns_a $host_b=$ns_b"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CHORUS_RT_TIMEOUT_S=20
mkdir -p "$work/ompi"
# Only the veth for Open MPI's out-of-band and byte transfer traffic, and only TCP (plus self):
# the two "hosts" share one kernel and one /dev/shm, so vader (shared memory) could otherwise
# carry bytes between them without touching the network. ob1 keeps UCX (which brings its own
# shared-memory transports) out.
mpi=("$mpirun" --oversubscribe -n 4 --host "$host_a:2,$host_b:2" --map-by node
     --mca plm rsh --mca plm_rsh_agent "$agent" --mca orte_tmpdir_base "$work/ompi"
     --mca oob_tcp_if_include "$net" --mca btl_tcp_if_include "$net"
     --mca pml ob1 --mca btl tcp,self -x CHORUS_RT_TIMEOUT_S)
in_host_a() {
  ip netns exec "$ns_a" unshare --uts /bin/sh -c 'hostname "$1" && shift && exec "$@"' sh "${CHORUS_MH_UTS_NAME:-$host_a}" "$@"
}
# mpirun ARGS... inside mh-a, each step bounded by 40 s and all of them by the budget.
mpirun_on_a() {
  local left=$((budget - SECONDS))
  [ "$left" -gt "$step_timeout" ] && left=$step_timeout
  [ "$left" -ge 1 ] || fail "time budget of $budget s used up"
  # In the background so that a signal to this script runs its trap at once (bash defers traps
  # while a foreground child runs).
  in_host_a timeout -k 5 "$left" "${mpi[@]}" "$@" &
  wait $!
}
rx() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"; }

echo "== 1: hostname on 2 + 2 ranks (at ${SECONDS} s)"
mpirun_on_a hostname >"$work/1.out" 2>&1
st=$?
cat "$work/1.out"
[ $st = 0 ] || fail "mpirun hostname exited with $st"
[ "$(grep -cx "$host_a" "$work/1.out")" = 2 ] && [ "$(grep -cx "$host_b" "$work/1.out")" = 2 ] ||
  fail "expected 2 ranks on $host_a and 2 on $host_b"

echo "== 2: rt_check --backends mpi,gloo across the veth (at ${SECONDS} s)"
big=4194304
rx_a0=$(rx "$ns_a" "$veth_a"); rx_b0=$(rx "$ns_b" "$veth_b")
mpirun_on_a "$rt_check" --backends mpi,gloo --sizes 0,1031 --big-bytes $big --quiet \
  >"$work/2.out" 2>&1
st=$?
cat "$work/2.out"
rx_a=$(( $(rx "$ns_a" "$veth_a") - rx_a0 )); rx_b=$(( $(rx "$ns_b" "$veth_b") - rx_b0 ))
echo "veth bytes received: $host_a $rx_a, $host_b $rx_b (each must be >= $((2 * big)))"
[ $st = 0 ] || fail "rt_check on mpi,gloo exited with $st"
grep -q "on mpi,gloo, world size 4: 0 failures" "$work/2.out" || fail "rt_check did not report 0 failures on 4 ranks"
[ "$rx_a" -ge $((2 * big)) ] && [ "$rx_b" -ge $((2 * big)) ] ||
  fail "fewer bytes crossed the veth than two 4 MiB all-reduces need"

# Ranks that do not see rank 0 refuse retry its store (gone with rank 0) until the timeout: 3 s.
refuse_shm() {
  CHORUS_RT_TIMEOUT_S=3 mpirun_on_a "$rt_check" --backends shm --sizes 1 --quiet >"$work/$1.out" 2>&1
  st=$?
  cat "$work/$1.out"
  [ $st = 0 ] && fail "shm ran across two hosts: the bootstrap took them for one"
  [ $st = 124 ] || [ $st = 137 ] && fail "rt_check on shm timed out instead of refusing"
  [ "$(grep -c "backend 'shm' needs every rank on one host" "$work/$1.out")" -ge 1 ] ||
    fail "rt_check on shm did not give the one-host error"
}
echo "== 3: rt_check --backends shm must refuse (two hosts) (at ${SECONDS} s)"
refuse_shm 3

export CHORUS_MH_UTS_NAME=mh-same
echo "== 4: both hosts named mh-same: hostname, shm must refuse, mpi,gloo must work (at ${SECONDS} s)"
mpirun_on_a hostname >"$work/4.out" 2>&1 || fail "mpirun hostname exited with $?"
[ "$(grep -cx mh-same "$work/4.out")" = 4 ] || { cat "$work/4.out"; fail "expected 4 ranks named mh-same"; }
refuse_shm 4s
mpirun_on_a "$rt_check" --backends mpi,gloo --ops all_reduce,all_gather,send --dtypes f32 \
  --sizes 1031 --quiet >"$work/4g.out" 2>&1
st=$?
cat "$work/4g.out"
[ $st = 0 ] || fail "rt_check on mpi,gloo (shared host name) exited with $st"
grep -q "on mpi,gloo, world size 4: 0 failures" "$work/4g.out" || fail "rt_check did not report 0 failures on 4 ranks"

unset CHORUS_MH_UTS_NAME
echo "== 5: mh-a resolves its own name to 127.0.1.1: a clear error on every rank (at ${SECONDS} s)"
printf '127.0.0.1 localhost\n127.0.1.1 %s\n%s %s\n' "$host_a" "$addr_b" "$host_b" >"/etc/netns/$ns_a/hosts"
mpirun_on_a "$rt_check" --backends mpi,gloo --sizes 1 --quiet >"$work/5.out" 2>&1
st=$?
cat "$work/5.out"
[ $st = 0 ] && fail "rt_check ran with rank 0's store advertised on a loopback address"
[ $st = 124 ] || [ $st = 137 ] && fail "rt_check timed out instead of naming the loopback address"
[ "$(grep -c "rank 0's host 'mh-a' resolves to the loopback address 127.0.1.1; set CHORUS_GLOO_HOST" \
     "$work/5.out")" = 4 ] || fail "expected the loopback error on all 4 ranks"

echo "== 6: the same with CHORUS_GLOO_HOST set on each host (at ${SECONDS} s)"
CHORUS_MH_GLOO_HOSTS="$host_b=$addr_b" CHORUS_GLOO_HOST=$addr_a mpirun_on_a "$rt_check" \
  --backends mpi,gloo --ops all_reduce,all_gather,send --dtypes f32 --sizes 1031 --quiet >"$work/6.out" 2>&1
st=$?
cat "$work/6.out"
[ $st = 0 ] || fail "rt_check on mpi,gloo with CHORUS_GLOO_HOST exited with $st"
grep -q "on mpi,gloo, world size 4: 0 failures" "$work/6.out" || fail "rt_check did not report 0 failures on 4 ranks"

if [ -n "$store_attack" ]; then
  echo "== 7: hostile clients from both hosts against rank 0's store, then a gloo job (at ${SECONDS} s)"
  printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "$addr_a" "$host_a" "$addr_b" "$host_b" >"/etc/netns/$ns_a/hosts"
  mpirun_on_a "$store_attack" --connections 30 --seed 7 --backends gloo >"$work/7.out" 2>&1
  st=$?
  cat "$work/7.out"
  [ $st = 0 ] || fail "rt_store_attack across the veth exited with $st"
  [ "$(grep -c "hostile connections to $addr_a:[0-9]* refused or survived; the job completed" "$work/7.out")" = 4 ] ||
    fail "expected all 4 ranks to reach rank 0's store at $addr_a, be refused without the token, and complete"
fi

echo "run_multihost: PASSED in ${SECONDS} s"
