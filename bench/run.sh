#!/bin/bash
# bench: perfconv against perf report and perf script on the same recording, in one run.
# Reports wall time and peak RSS of each, and the ratios to perfconv.
#
#   bench/run.sh [SECONDS]     record (once) a native frame-pointer recording of
#                              testdata/mt running SECONDS (default 6: ~48,000 samples
#                              at -F 4000 on 2 CPUs), then time every tool on it.
# The recording is kept in bench/work/ (not committed); delete it to re-record.
set -euo pipefail
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
W=$PWD/bench/work
SECS=${1:-6}
mkdir -p "$W"

if [ ! -e "$W/native.data" ]; then
	cp testdata/mt "$W/mt"
	(cd "$W" && perf record -q -F 4000 -g -o native.data ./mt $((SECS * 1000)) >/dev/null 2>&1)
fi
samples=$(perf report -i "$W/native.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
[ -n "$samples" ] || samples=$(perf script -i "$W/native.data" -F period 2>/dev/null | wc -l)

# One measurement: wall seconds (nanosecond clock) and peak RSS (KiB, from GNU time).
measure() {
	local label=$1
	shift
	cat "$W/native.data" >/dev/null # the file is in the page cache for everyone
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -f "%M" -o "$W/time.txt" "$@" >/dev/null 2>"$W/stderr.txt" || {
		echo "bench: $label failed:" >&2
		cat "$W/stderr.txt" >&2
		exit 1
	}
	t1=$(date +%s%N)
	read -r rss <"$W/time.txt"
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	printf '%s\t%s\t%s\n' "$label" "$wall" "$rss" >>"$W/results.tsv"
}

: >"$W/results.tsv"
measure "perfconv -f folded" "$PERFCONV" -q -i "$W/native.data" -f folded -o /dev/null
measure "perfconv -f folded --no-symbols" "$PERFCONV" -q -i "$W/native.data" -f folded --no-symbols -o /dev/null
# issue 5: pprof costs at most folded + 25% (the ratio column shows it)
measure "perfconv -f pprof" "$PERFCONV" -q -i "$W/native.data" -f pprof -o /dev/null
measure "perf report --stdio" perf report -i "$W/native.data" --stdio
measure "perf report --stdio --no-children -g none" perf report -i "$W/native.data" --stdio --no-children -g none
measure "perf script" perf script -i "$W/native.data"

{
	echo "# bench: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $(perf --version)"
	echo "# recording: bench/work/native.data, $samples samples, $(du -h "$W/native.data" | cut -f1)"
	printf '%-44s %9s %12s %14s\n' tool wall_s peak_rss_MB wall/perfconv
	base=$(awk -F'\t' 'NR == 1 {print $2}' "$W/results.tsv")
	while IFS=$'\t' read -r label wall rss; do
		ratio=$(awk -v a="$wall" -v b="$base" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
		printf '%-44s %9s %12.1f %14s\n' "$label" "$wall" "$(awk -v r="$rss" 'BEGIN{print r/1024}')" "$ratio"
	done <"$W/results.tsv"
} | tee "$W/report.txt"
