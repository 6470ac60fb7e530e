#!/usr/bin/env bash
# Times the built binary on the parallel-execution figures of docs/performance.md, file store:
#   - claim latency under 20 concurrent agents: ROUNDS rounds of 20 `taskie claim --next`
#     processes started at once on a plan of 20 ready tasks, in a git repository (claims in
#     the git common directory); p50/p99/max per claim (process start included), claims/s,
#     and a check that every round gave 20 distinct tasks (none lost, none given twice);
#   - `taskie groups` on a plan of 1,000 tasks (dependencies and Files), median of RUNS runs,
#     with its peak memory piped and on a terminal (a pty made by script(1)).
# Each figure is printed beside its target with ok or OVER; the claim target holds for every
# claim, so its verdict is on the slowest one (max).
# The same bursts of 20 `taskie --version` give the floor: process start-up alone. The
# claim itself, without process start-up, is BenchmarkClaimNext20Agents (internal/store).
#   - 20 agent loops through the binary draining 200 tasks (bench/claimsbench -taskie),
#     claims/s against the same loops of `taskie --version`.
# Usage: bench/claims.sh [taskie binary]   (default: builds bin/taskie)
# Environment: ROUNDS (default 10), AGENTS (default 20), RUNS (default 20), TASKS (200),
# REPS (3 runs of the agent loops, the median reported), CYCLE (set: whole agent cycles),
# STATE (default 1: the loops' plan has the state.json `taskie plan new` writes, so each
# claim also moves the task's lifecycle; 0: no state.json, the claim alone).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-10}
agents=${AGENTS:-20}
runs=${RUNS:-20}
if [ $# -gt 0 ]; then
	taskie=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
	make -s build
	taskie=$PWD/bin/taskie
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now_ns() { date +%s%N; }

# ---------------------------------------------------------------- claims
repo=$work/repo
mkdir -p "$repo/.taskie/plans"
git -C "$repo" init -q -b main
for r in $(seq "$rounds"); do
	d=$repo/.taskie/plans/r$r
	mkdir -p "$d"
	echo "# Round $r" >"$d/plan.md"
	{
		echo "| Id | Status | Title |"
		echo "|----|--------|-------|"
		for i in $(seq "$agents"); do echo "| $i | pending | task $i |"; done
	} >"$d/tasks.md"
done
git -C "$repo" add -A
git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m plans

lat=$work/latencies
: >"$lat"
bad=0
wall_total=0
for r in $(seq "$rounds"); do
	out=$work/out$r
	mkdir -p "$out"
	start=$(now_ns)
	for i in $(seq "$agents"); do
		(
			s=$(now_ns)
			"$taskie" -C "$repo" --plan "r$r" claim --next --as "agent-$i" >"$out/$i" 2>/dev/null || echo fail >"$out/$i"
			e=$(now_ns)
			echo $(((e - s) / 1000)) >>"$lat"
		) &
	done
	wait
	end=$(now_ns)
	wall_total=$((wall_total + end - start))
	distinct=$(cat "$out"/* | grep -E '^[0-9]+$' | sort -u | wc -l)
	if [ "$distinct" -ne "$agents" ]; then
		echo "round $r: $distinct distinct tasks claimed by $agents agents" >&2
		bad=1
	fi
done
# The floor: the same bursts of 20 processes that only start and exit.
base=$work/baseline
: >"$base"
for r in $(seq "$rounds"); do
	for i in $(seq "$agents"); do
		(
			s=$(now_ns)
			"$taskie" --version >/dev/null
			e=$(now_ns)
			echo $(((e - s) / 1000)) >>"$base"
		) &
	done
	wait
done
claims=$(wc -l <"$lat")
sort -n "$lat" -o "$lat"
sort -n "$base" -o "$base"
pct() { sed -n "$(((claims * $1 + 99) / 100))p" "$2"; }
p50=$(pct 50 "$lat")
p99=$(pct 99 "$lat")
b50=$(pct 50 "$base")
b99=$(pct 99 "$base")
maxl=$(tail -1 "$lat")
bmax=$(tail -1 "$base")
cps=$(awk -v n="$claims" -v ns="$wall_total" 'BEGIN { printf "%.0f", n / (ns / 1e9) }')
stored=$(grep -c '"task": ' "$repo/.git/taskie/r1/claims.json")
# verdict prints ok when the value (µs) is under the target (ms), else OVER.
verdict() { awk -v u="$1" -v t="$2" 'BEGIN { print (u < t * 1000) ? "ok" : "OVER" }'; }
ms() { awk -v u="$1" 'BEGIN{printf "%.1f ms", u/1000}'; }
echo "== claims: $rounds rounds x $agents concurrent \`taskie claim --next\` (file store, git common dir)"
printf '%-38s %10s   %-34s %s\n' "claim latency p50" "$(ms "$p50")" "target < 50 ms per claim" "$(verdict "$p50" 50)"
printf '%-38s %10s   %-34s %s\n' "claim latency p99" "$(ms "$p99")" "target < 50 ms per claim" "$(verdict "$p99" 50)"
printf '%-38s %10s   %-34s %s\n' "claim latency max (every claim)" "$(ms "$maxl")" "target < 50 ms per claim" "$(verdict "$maxl" 50)"
printf '%-38s %10s   %s\n' "process start alone, p50 / p99 / max" "$(awk -v a="$b50" -v b="$b99" -v c="$bmax" 'BEGIN{printf "%.1f / %.1f / %.1f ms", a/1000, b/1000, c/1000}')" "(20 \`taskie --version\` at once: the floor)"
printf '%-38s %10s\n' "throughput" "$cps claims/s"
if [ "$bad" -eq 0 ] && [ "$stored" -eq "$agents" ]; then
	printf '%-38s %10s\n' "lost or double claims" "none"
else
	printf '%-38s %10s\n' "lost or double claims" "FOUND"
fi

# ---------------------------------------------------------------- agent loops
# 20 agent loops, each one `taskie claim --next` after another, drain a plan
# of 200 tasks; the floor is the same loops running `taskie --version`
# (target: >= 85 % of the floor's claims/s). CYCLE=1: each loop claims,
# heartbeats, reports a result and releases.
loop_args=(-taskie "$taskie" -only files -tasks "${TASKS:-200}" -loops "$agents" -reps "${REPS:-3}")
[ -n "${CYCLE:-}" ] && loop_args+=(-cycle)
if [ "${STATE:-1}" = 0 ]; then
	CLAIMSBENCH_NO_STATE=1 go run ./bench/claimsbench "${loop_args[@]}"
else
	go run ./bench/claimsbench "${loop_args[@]}"
fi

# ---------------------------------------------------------------- groups
big=$repo/.taskie/plans/big
mkdir -p "$big"
echo "# Big" >"$big/plan.md"
awk 'BEGIN {
	srand(7)
	print "| Id | Status | Priority | Depends on | Files | Title |"
	print "|----|--------|----------|------------|-------|-------|"
	split("high medium low", prio, " ")
	for (i = 1; i <= 1000; i++) {
		deps = ""
		n = (i > 1) ? int(rand() * 4) : 0
		for (k = 0; k < n; k++) deps = deps (k ? ", " : "") (1 + int(rand() * (i - 1)))
		files = ""
		for (k = 0; k < 3; k++) { f = int(rand() * 300); files = files (k ? ", " : "") sprintf("internal/pkg%02d/file%03d.go", f / 10, f) }
		status = (i <= 100) ? "done" : "pending"
		printf "| %d | %s | %s | %s | %s | task %d |\n", i, status, prio[1 + int(rand() * 3)], deps, files, i
	}
}' >"$big/tasks.md"
"$taskie" -C "$repo" groups big >/dev/null
times=$work/groups
: >"$times"
for _ in $(seq "$runs"); do
	s=$(now_ns)
	"$taskie" -C "$repo" groups big >/dev/null
	e=$(now_ns)
	echo $(((e - s) / 1000)) >>"$times"
done
sort -n "$times" -o "$times"
med=$(sed -n "$(((runs + 1) / 2))p" "$times")
waves=$("$taskie" -C "$repo" groups big | tail -n +2 | cut -f1 | sort -u | wc -l) # piped: a header, then one row per task, its wave first
# Peak memory (KiB) with GNU time, piped and on a terminal; "" when it cannot be measured.
peak_piped="" peak_tty=""
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o "$work/rss" "$taskie" -C "$repo" groups big >/dev/null 2>&1 && peak_piped=$(tail -1 "$work/rss")
	if command -v script >/dev/null; then
		/usr/bin/time -f '%M' -o "$work/rss" script -qec "$(printf '%q ' "$taskie" -C "$repo" groups big)" /dev/null </dev/null >/dev/null 2>&1 &&
			peak_tty=$(tail -1 "$work/rss")
	fi
fi
mem() { if [ -n "$1" ]; then awk -v k="$1" 'BEGIN{printf "%.1f MB", k/1024}'; else echo "n/a"; fi; }
mem_verdict() { if [ -z "$1" ]; then echo "n/a"; elif [ "$1" -lt $((50 * 1024)) ]; then echo ok; else echo OVER; fi; }
echo "== groups: \`taskie groups\` on 1,000 tasks ($waves waves), $runs runs"
printf '%-38s %10s   %-34s %s\n' "taskie groups, 1,000 tasks (median)" "$(ms "$med")" "target < 100 ms" "$(verdict "$med" 100)"
printf '%-38s %10s   %-34s %s\n' "taskie groups, peak memory piped" "$(mem "$peak_piped")" "target < 50 MB" "$(mem_verdict "$peak_piped")"
printf '%-38s %10s   %-34s %s\n' "taskie groups, peak memory on a tty" "$(mem "$peak_tty")" "target < 50 MB" "$(mem_verdict "$peak_tty")"
[ "$bad" -eq 0 ]
