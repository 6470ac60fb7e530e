#!/usr/bin/env bash
# Claims (docs/performance.md): twenty agents claiming at once, each with its own handle,
# file store beside PostgreSQL, and on PostgreSQL two clones of one
# repository with half the agents each (their plan keys resolved from their
# own checkouts): claims per second, p50/p99/max latency of a claim, against
# the target. Without TASKIE_DATABASE_URL a throwaway
# PostgreSQL server (fsync on) is started and stopped; without one the
# PostgreSQL line says why it was skipped. Measured in-process (no process
# start): the store's own cost, the same way for both stores.
# Then through the binary on PostgreSQL: 20 agent loops, each one `taskie
# claim --next` after another, drain a plan of 200 tasks, beside the same
# loops of `taskie --version` (target: >= 70 % of the floor's claims/s);
# CYCLE=1: each loop claims, heartbeats, reports a result and releases.
# Usage: bench/claims_pg.sh [taskie binary] [claimsbench flags]
set -euo pipefail
cd "$(dirname "$0")/.."
taskie=""
case "${1:-}" in -*|"") ;; *) taskie=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); shift ;; esac
go run ./bench/claimsbench -agents "${AGENTS:-20}" -rounds "${ROUNDS:-50}" "$@"
if [ -z "$taskie" ]; then
	make -s build
	taskie=$PWD/bin/taskie
fi
loop_args=(-taskie "$taskie" -only postgres -tasks "${TASKS:-200}" -loops "${AGENTS:-20}" -reps "${REPS:-3}")
[ -n "${CYCLE:-}" ] && loop_args+=(-cycle)
go run ./bench/claimsbench "${loop_args[@]}"
