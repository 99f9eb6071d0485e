#!/bin/sh
# Open MPI launch agent (plm_rsh_agent) for the two-"host" test: stands in for ssh.
# Called as `netns_agent.sh HOST WORD...` like `ssh HOST WORD...`; runs the words (mpirun's
# orted command line) through a shell inside HOST's network namespace, with its own UTS
# namespace whose host name is HOST. The map from host names to namespaces comes from
# CHORUS_MH_HOSTS="host1=netns1 host2=netns2" (set by run_multihost.sh, inherited from mpirun).
# CHORUS_MH_UTS_NAME, when set, is given as host name instead (hosts that share one name);
# CHORUS_MH_GLOO_HOSTS="host=address ..." sets CHORUS_GLOO_HOST per host, as a login profile would.
# shellcheck disable=SC2016  # $1, $2 expand in the inner shell
host=$1
shift
ns=
for pair in $CHORUS_MH_HOSTS; do
  [ "${pair%%=*}" = "$host" ] && ns=${pair#*=}
done
for pair in ${CHORUS_MH_GLOO_HOSTS:-}; do
  [ "${pair%%=*}" = "$host" ] && export CHORUS_GLOO_HOST="${pair#*=}"
done
if [ -z "$ns" ]; then
  echo "netns_agent.sh: unknown host '$host' (known: $CHORUS_MH_HOSTS)" >&2
  exit 255
fi
exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$1" && eval "$2"' sh "${CHORUS_MH_UTS_NAME:-$host}" "$*"
