#!/usr/bin/env bash
# Builds taskie, generates the large fixtures of SPEC §16 and prints the figures:
# the built binary timed end to end, then the Go benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
echo "== built binary (process start included)"
go run ./bench/hookbench -taskie "$PWD/bin/taskie" -runs "${RUNS:-200}"
echo "== go test -bench"
go test -run '^$' -bench . -benchmem -benchtime "${BENCHTIME:-1s}" ./internal/hook ./internal/plan ./internal/state | grep -E '^(Benchmark|ok)'
