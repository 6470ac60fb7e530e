#!/usr/bin/env bash
# Claims (docs/performance.md): twenty agents claiming at once, each with its own handle,
# file store beside PostgreSQL, and on PostgreSQL two clones of one
# repository with half the agents each (their plan keys resolved from their
# own checkouts): claims per second, p50/p99/max latency of a claim, against
# the target. Without TASKIE_DATABASE_URL a throwaway
# PostgreSQL server (fsync on) is started and stopped; without one the
# PostgreSQL line says why it was skipped. Measured in-process (no process
# start): the store's own cost, the same way for both stores.
# Usage: bench/claims_pg.sh [taskie binary (ignored)] [claimsbench flags]
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -*|"") ;; *) shift ;; esac
go run ./bench/claimsbench -agents "${AGENTS:-20}" -rounds "${ROUNDS:-50}" "$@"
