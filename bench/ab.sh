#!/bin/bash
# ab: two builds of perfconv on the bench recordings, in alternating turns in one run,
# so that a change of the code is measured against the code before it on the same
# machine under the same load.
#
#   bench/ab.sh OLD_BINARY NEW_BINARY [TURNS]
#
# Uses bench/work/native.data and long.data (bench/run.sh records them) and the
# committed Erlang JIT recording. Prints, per case, the median wall time and the peak
# RSS of each build and NEW/OLD, and exits 1 when a median is more than 5% slower
# (the bar for a change that should change no speed).
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=$(realpath "$1")
NEW=$(realpath "$2")
TURNS=${3:-11}
W=$PWD/bench/work
# a cache of its own, which no other build on the machine rewrites (the two builds
# here share it: a change of the cache's format shows in the first turns)
export PERFCONV_CACHE_DIR=$W/cache-ab
[ -e "$W/native.data" ] && [ -e "$W/long.data" ] || {
	echo "ab: run bench/run.sh once first (it records bench/work/native.data and long.data)" >&2
	exit 2
}
KS=(--kallsyms testdata/kallsyms.gz)
RAW=$(mktemp)
OUT=$(mktemp -d)
trap 'rm -rf "$RAW" "$OUT"' EXIT

# case LABEL ARGS...: TURNS runs of each build, alternating which goes first
one() { # BUILD LABEL ARGS...
	local b=$1 label=$2 bin=$OLD t0 t1
	shift 2
	[ "$b" = new ] && bin=$NEW
	t0=$(date +%s%N)
	/usr/bin/time -f %M -o "$OUT/rss" "$bin" -q "$@" >/dev/null
	t1=$(date +%s%N)
	printf '%s\t%s\t%s\t%s\n' "$label" "$b" "$((t1 - t0))" "$(tail -1 "$OUT/rss")" >>"$RAW"
}
case_() {
	local label=$1 i
	shift
	for ((i = 0; i < TURNS; i++)); do
		if ((i % 2)); then one old "$label" "$@"; one new "$label" "$@"
		else one new "$label" "$@"; one old "$label" "$@"; fi
	done
}
case_ "native folded" -i "$W/native.data" "${KS[@]}" --symfs testdata -o "$OUT/a.folded"
case_ "native --no-symbols" -i "$W/native.data" "${KS[@]}" --no-symbols -o "$OUT/b.folded"
case_ "native pprof" -i "$W/native.data" "${KS[@]}" --symfs testdata -o "$OUT/c.pb.gz"
case_ "native speedscope" -i "$W/native.data" "${KS[@]}" --symfs testdata -o "$OUT/d.speedscope.json"
case_ "long folded" -i "$W/long.data" "${KS[@]}" --symfs testdata -o "$OUT/e.folded"
case_ "erlang JIT folded" -i testdata/jit/erlang.data -o "$OUT/f.folded"

python3 - "$RAW" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, b, wall, rss = line.rstrip("\n").split("\t")
    runs.setdefault(label, {}).setdefault(b, []).append((int(wall) / 1e9, int(rss)))
worse = 0
print(f"{'case':24} {'old s':>8} {'new s':>8} {'new/old':>8} {'old MB':>7} {'new MB':>7}")
for label, v in runs.items():
    o = statistics.median([w for w, _ in v["old"]])
    n = statistics.median([w for w, _ in v["new"]])
    orss = max(r for _, r in v["old"]) / 1024
    nrss = max(r for _, r in v["new"]) / 1024
    flag = "  SLOWER" if n > o * 1.05 else ""
    worse += bool(flag)
    print(f"{label:24} {o:8.4f} {n:8.4f} {n / o:8.3f} {orss:7.1f} {nrss:7.1f}{flag}")
print(f"ab: {len(runs) - worse} passed, {worse} failed")
sys.exit(1 if worse else 0)
PY
