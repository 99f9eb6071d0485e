#!/bin/sh
# usage: on_rank.sh RANK NAME=VALUE COMMAND [ARGS...]
# Runs COMMAND with NAME=VALUE in its environment on rank RANK only (CHORUS_RANK, which chorus launch sets),
# for tests of ranks whose settings disagree.
rank="$1"
setting="$2"
shift 2
if [ "${CHORUS_RANK:-}" = "$rank" ]; then
  export "$setting"
fi
exec "$@"
