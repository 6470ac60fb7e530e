#!/usr/bin/env bash
# docs/performance.md, the event queries: times `taskie query --stuck`, `history`,
# `history T` and `log` against jq selecting the same events from the same
# events.jsonl (100,000 and 1,000,000 realistic events, internal/benchfix),
# and measures each command's peak memory piped and on a terminal (a pty
# made by script(1)). Every figure is printed beside its target:
#   queries ≥ 3× faster than jq; < 50 MB piped and on a terminal;
#   `taskie query` over 100,000 events < 300 ms.
#
#   bench/queries.sh [taskie binary]   # both sizes; builds taskie when none is given
#   SIZES=100000 RUNS=5 bench/queries.sh
# It prints MISSED beside a figure that misses its target and exits 0 (as
# bench/run expects), or 1 with STRICT=1.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"100000 1000000"}
RUNS=${RUNS:-3}
for tool in jq script /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "queries.sh: $tool is needed (apt-get install -y jq util-linux time)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/taskie-queries.XXXXXX")
trap 'rm -rf "$work"' EXIT
taskie=${1:-}
if [ -z "$taskie" ]; then
	CGO_ENABLED=0 go build -trimpath -o "$work/taskie" ./cmd/taskie
	taskie="$work/taskie"
fi

# measure runs a command RUNS times, stdout to /dev/null, and prints its
# best wall time, best CPU time (user + system), in seconds, and its peak
# memory in MB: "wall cpu mb". The speed-up is the ratio of CPU times (the
# work each does), which a busy machine disturbs far less than wall time;
# both are printed.
measure() {
	local best_wall="" best_cpu="" mb=0 wall cpu m
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>/dev/null || true
		read -r wall u sy m <"$work/time"
		cpu=$(echo "$u + $sy" | bc -l)
		if [ -z "$best_wall" ] || [ "$(echo "$wall < $best_wall" | bc -l)" = 1 ]; then best_wall=$wall; fi
		if [ -z "$best_cpu" ] || [ "$(echo "$cpu < $best_cpu" | bc -l)" = 1 ]; then best_cpu=$cpu; fi
		if [ "$m" -gt "$mb" ]; then mb=$m; fi
	done
	printf '%.2f %.2f %.1f' "$best_wall" "$best_cpu" "$(echo "$mb / 1024" | bc -l)"
}

# rss_tty prints the peak memory in MB of a command whose stdout is a
# terminal (a pty made by script(1)).
rss_tty() {
	local cmd
	cmd=$(printf '%q ' "$@")
	/usr/bin/time -f '%M' -o "$work/rss" script -qec "$cmd" /dev/null >/dev/null 2>/dev/null || true
	awk '{printf "%.1f", $1/1024}' "$work/rss"
}

lifecycle_kinds='select(.event == "TASK_CREATED" or .event == "STATE_TRANSITION" or .event == "FAILURE" or .event == "CTO_INTERVENTION" or .event == "ESCALATED" or .event == "RECOVERY")'
history_row='[.ts, .event, (.task // "-"), ((.from // "") + " → " + (.to // "")), (.reason // "-")] | @tsv'
log_line='"[\(.ts)] \(.event): \(.reason // "")"'

fail=0
printf '%-8s %-13s %14s %14s %9s %9s %9s\n' events query "taskie s" "jq s" "speed-up" "MB piped" "MB tty"
printf '%-8s %-13s %14s %14s %9s %9s %9s\n' "" "" "wall / cpu" "wall / cpu" "cpu ≥ 3×" "(< 50)" "(< 50)"
for n in $SIZES; do
	dir="$work/q$n"
	info=$(go run ./bench/eventgen -n "$n" -dir "$dir")
	log="$dir/.taskie/plans/log/events.jsonl"
	tasks=$(grep -c '^| [0-9]' "$dir/.taskie/plans/log/tasks.md")
	mid=$((tasks / 2))
	last=$(tail -n 1 "$log" | jq -r .ts)
	export TASKIE_NOW
	TASKIE_NOW=$(date -u -d "$last + 2 hours" +%Y-%m-%dT%H:%M:%SZ)
	echo "# $info; history T = task $mid; TASKIE_NOW=$TASKIE_NOW; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

	run_case() { # name, jq filter, jq flags, taskie args…
		local name=$1 filter=$2 jqflag=$3
		shift 3
		local tw tc tm jw jc _ speed mt ok
		read -r tw tc tm <<<"$(measure "$taskie" -C "$dir" "$@")"
		read -r jw jc _ <<<"$(measure jq "$jqflag" "$filter" "$log")"
		speed=$(echo "$jc / ($tc + ($tc == 0) * 0.01)" | bc -l)
		mt=$(rss_tty "$taskie" -C "$dir" "$@")
		ok=ok
		if [ "$(echo "$speed < 3" | bc -l)" = 1 ] || [ "$(echo "$tm >= 50 || $mt >= 50" | bc -l)" = 1 ]; then ok=MISSED; fail=1; fi
		if [ "$name" = "query --stuck" ] && [ "$n" = 100000 ] && [ "$(echo "$tw >= 0.3" | bc -l)" = 1 ]; then ok="MISSED (< 300 ms)"; fail=1; fi
		printf '%-8s %-13s %14s %14s %8.1f× %9s %9s  %s\n' "$n" "$name" "$tw / $tc" "$jw / $jc" "$speed" "$tm" "$mt" "$ok"
	}
	run_case "query --stuck" "$lifecycle_kinds" -c query --stuck
	run_case "history" "$history_row" -r history
	run_case "history T" "select(.task == \"$mid\")" -c history "$mid"
	run_case "log" "$log_line" -r log
	rm -rf "$dir"
done
if [ "${STRICT:-0}" = 1 ]; then exit $fail; fi
