#!/bin/bash
# bench/offcpu.sh: off-CPU time from a system-wide recording of a million scheduler
# switches, against perf sched timehist and perf script on the same file (issue 19
# item 5: memory follows threads and distinct stacks, not switches; a million switches
# convert in a few seconds).
#
#   bench/offcpu.sh [ROUNDS]   records (once, as root) bench/pingpong ROUNDS round trips
#                              (default 500,000: over a million switches on 2 CPUs)
#                              system-wide with -e sched:sched_switch -e cpu-clock -g
#                              -k 1 into bench/work/switches-1.data, and grows it to
#                              switches-2.data with every sample twice (bench/grow.py:
#                              twice the records, the same threads and stacks); then
#                              times, alternating, 5 runs of each command on both
#                              (medians, peak RSS).
# Prints a table and one verdict line per target; exits 1 when one is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
W=$PWD/bench/work
ROUNDS=${1:-500000}
REPS=5
mkdir -p "$W"
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$W/pingpong" bench/pingpong.c
[ -e "$W/switches-1.data" ] || perf record -q -a -e sched:sched_switch -e cpu-clock -g -k 1 \
	-o "$W/switches-1.data" -- "$W/pingpong" "$ROUNDS" >/dev/null 2>&1
[ -e "$W/switches-2.data" ] || python3 bench/grow.py "$W/switches-1.data" "$W/switches-2.data" \
	$(($(stat -c %s "$W/switches-1.data") * 2 >> 20)) >/dev/null
count() { perf script -i "$1" -F event 2>/dev/null | grep -c 'sched:sched_switch'; }
n1=$(count "$W/switches-1.data")
n2=$(count "$W/switches-2.data")

: >"$W/offcpu.tsv"
run() { # LABEL COMMAND...: one timed run, a line of offcpu.tsv
	local label=$1 t0 t1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f "%M" -o "$W/time.txt" "$@" >/dev/null 2>"$W/stderr.txt" ||
		{ echo "bench: $label failed:" >&2; cat "$W/stderr.txt" >&2; exit 1; }
	t1=$(date +%s%N)
	printf '%s\t%s\t%s\n' "$label" "$((t1 - t0))" "$(cat "$W/time.txt")" >>"$W/offcpu.tsv"
}
for ((i = 0; i < REPS; i++)); do
	for n in 1 2; do
		f=$W/switches-$n.data
		run "perfconv --time offcpu -f folded ($n)" "$PERFCONV" -q -i "$f" --time offcpu -o "$W/o.folded"
		run "perfconv --time offcpu -f pprof ($n)" "$PERFCONV" -q -i "$f" --time offcpu -o "$W/o.pb.gz"
		run "perfconv (every sample type) -f pprof ($n)" "$PERFCONV" -q -i "$f" -o "$W/o.pb.gz"
		run "perf sched timehist ($n)" perf sched timehist -i "$f"
		run "perf script ($n)" perf script -i "$f"
	done
done
python3 - "$W/offcpu.tsv" "$n1" "$n2" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, wall, rss = line.rstrip("\n").split("\t")
    runs.setdefault(label, []).append((int(wall), int(rss)))
n1, n2 = int(sys.argv[2]), int(sys.argv[3])
print(f"# offcpu: bench/work/switches-1.data ({n1} switches), switches-2.data ({n2}: each sample twice)")
print(f"{'command':52s} {'wall_s':>8s} {'peak_rss_MB':>12s}")
med = {}
for label, v in runs.items():
    w = statistics.median_low([x for x, _ in v]) / 1e9
    r = max(y for _, y in v) / 1024
    med[label] = (w, r)
    print(f"{label:52s} {w:8.3f} {r:12.1f}")
missed = 0
def verdict(ok, text):
    global missed
    missed += not ok
    print(f"{'target met' if ok else 'target MISSED'}: {text}")
f1, f2 = med["perfconv --time offcpu -f folded (1)"], med["perfconv --time offcpu -f folded (2)"]
per_million = f1[0] / n1 * 1e6
verdict(per_million <= 5, f"a million switches to folded off-CPU time in {per_million:.2f} s (a few seconds)")
verdict(f2[1] <= f1[1] * 1.2, f"peak RSS {f1[1]:.1f} MB at {n1} switches, {f2[1]:.1f} MB at {n2} "
        f"of the same threads and stacks: {100 * (f2[1] / f1[1] - 1):+.0f}% (memory follows "
        f"threads and stacks, not switches)")
t = med["perf sched timehist (2)"][0]
s = med["perf script (2)"][0]
print(f"ratios at {n2} switches: perfconv folded {f2[0] / t:.2f}x perf sched timehist, "
      f"{f2[0] / s:.2f}x perf script")
sys.exit(1 if missed else 0)
PY
