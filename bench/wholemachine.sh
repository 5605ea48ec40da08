#!/bin/bash
# wholemachine: perfconv on whole-machine recordings (perf record -a -g, as a fleet's
# recorder makes them) against perf report, issue 43.
#
#   bench/wholemachine.sh record   make $WM/wm100.data and $WM/wm1g.data (about 100 MB and
#                                  1 GB: perf record -a -g -F 4999 --max-size) while a C
#                                  project (this one, a copy) builds over and over beside
#                                  a python and a node busy loop and a loop of short
#                                  processes; each made once (delete it to re-record)
#   bench/wholemachine.sh run [NAME...]
#                                  for each recording (default wm100 wm1g): every format
#                                  and perf report --stdio -g none, warm (files in the
#                                  page cache, perfconv's cache warm, medians of TURNS
#                                  turns, default 3, the commands taking turns) and first
#                                  run (page cache dropped, perfconv --no-cache with an
#                                  empty HOME, perf an empty build-id cache; once each),
#                                  wall seconds and peak RSS (bench/runstat), then the
#                                  issue's verdicts
# WM (default /var/tmp/perfconv-wm) holds the recordings, outside the tree: never committed.
set -euo pipefail
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
WM=${WM:-/var/tmp/perfconv-wm}
TURNS=${TURNS:-3}
FORMATS=${FORMATS:-folded samples pprof speedscope chrome svg otlp}
mkdir -p "$WM"
cc -O2 -o "$WM/runstat" bench/runstat.c

workload() { # runs until killed: the build, two busy loops, short processes
	rm -rf "$WM/src"
	mkdir -p "$WM/src"
	git archive HEAD | tar -x -C "$WM/src"
	(while :; do make -s -C "$WM/src" clean >/dev/null 2>&1; make -s -j2 -C "$WM/src" perfconv >/dev/null 2>&1; done) &
	python3 -c 'while True: pass' &
	node -e 'for (;;) {}' &
	(while :; do sh -c true; sleep 0.01; done) &
	wait
}
record_one() { # NAME SIZE
	[ -e "$WM/$1.data" ] && return
	setsid bash -c "$(declare -f workload); WM=$WM; cd $PWD; workload" >/dev/null 2>&1 &
	local wpid=$!
	sleep 5 # the build under way before the recording starts
	perf record -q -a -g -F 4999 --max-size="$2" -o "$WM/$1.data.tmp" -- sleep 3600 >/dev/null 2>&1 || true
	kill -- -"$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
	mv "$WM/$1.data.tmp" "$WM/$1.data"
	echo "recorded $WM/$1.data: $(du -h "$WM/$1.data" | cut -f1)"
}

measure() { # LABEL COMMAND...: one run, a line of raw.tsv
	local label=$1 wall rss cpu
	shift
	"$WM/runstat" "$WM/stat.txt" "$@" >/dev/null 2>"$WM/stderr.txt" || {
		echo "wholemachine: $label failed:" >&2
		cat "$WM/stderr.txt" >&2
		exit 1
	}
	read -r wall rss cpu <"$WM/stat.txt"
	printf '%s\t%s\t%s\t%s\n' "$label" "$wall" "$rss" "$cpu" >>"$WM/raw.tsv"
}
first() { # LABEL COMMAND...: the page cache dropped, caches and HOME empty
	rm -rf "$WM/cold"
	mkdir -p "$WM/cold/home"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	measure "$@"
}

run_one() { # NAME
	local d=$WM/$1.data f t
	[ -e "$d" ] || { echo "wholemachine: no $d (bench/wholemachine.sh record)" >&2; exit 1; }
	echo "# $1: $d, $(du -h "$d" | cut -f1), $(perf report -i "$d" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}') samples"
	cat "$d" >/dev/null
	"$PERFCONV" -q -i "$d" -o /dev/null
	for ((t = 0; t < TURNS; t++)); do
		measure "$1 perf report" perf report -i "$d" --stdio -g none
		for f in $FORMATS; do measure "$1 -f $f" "$PERFCONV" -q -i "$d" -f "$f" -o "$WM/out.$f"; done
	done
	first "$1 first perf report" env HOME="$WM/cold/home" perf --buildid-dir "$WM/cold/home/.debug" report -i "$d" --stdio -g none
	first "$1 first -f folded" env HOME="$WM/cold/home" "$PERFCONV" --no-cache -q -i "$d" -f folded -o "$WM/out.folded"
	first "$1 first -f pprof" env HOME="$WM/cold/home" "$PERFCONV" --no-cache -q -i "$d" -f pprof -o "$WM/out.pprof"
}

case ${1:-} in
record)
	record_one wm100 100M
	record_one wm1g 1G
	;;
run)
	shift
	: >"$WM/raw.tsv"
	for n in ${@:-wm100 wm1g}; do run_one "$n"; done
	python3 - "$WM/raw.tsv" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, wall, rss, cpu = line.rstrip("\n").split("\t")
    runs.setdefault(label, []).append((int(wall) / 1e9, int(rss) / 1024, int(cpu) / 1e6))
med = {k: (statistics.median_low([w for w, _, _ in v]), max(r for _, r, _ in v),
           statistics.median_low([c for _, _, c in v])) for k, v in runs.items()}
names = sorted({k.split()[0] for k in med}, key=lambda n: list(med).index(n + " perf report"))
print(f"{'':40s}{'wall_s':>9s}{'rss_MB':>9s}{'cpu_s':>9s}{'wall/perf':>11s}{'rss/perf':>10s}")
for n in names:
    for first in ("", "first "):
        base = med.get(f"{n} {first}perf report")
        for k, (w, r, c) in med.items():
            if k.startswith(f"{n} {first}") and (first or " first " not in k):
                print(f"{k:40s}{w:9.2f}{r:9.0f}{c:9.2f}{w / base[0]:11.2f}{r / base[1]:10.2f}")
def v(ok, what):
    print(("target met    " if ok else "target MISSED ") + what)
for n in names:
    pw, pr, _ = med[f"{n} perf report"]
    fo = med[f"{n} -f folded"][0]
    for k, (w, r, _) in med.items():
        if k.startswith(n + " -f"):
            v(w <= 0.8 * pw, f"43.2 {k}: wall {w / pw:.2f}x perf report's (<= 0.8)")
            v(r <= 0.5 * pr, f"43.2 {k}: peak RSS {r / pr:.2f}x perf report's (<= 0.5)")
        if k.startswith(n + " first -f"):
            pfw = med[f"{n} first perf report"][0]
            v(w <= pfw, f"43.2 {k}: wall {w / pfw:.2f}x perf report's first run (<= 1.0)")
    for f in ("chrome", "speedscope"):
        if f"{n} -f {f}" in med:
            w = med[f"{n} -f {f}"][0]
            v(w <= 2 * fo, f"43.2 {n} -f {f}: {w / fo:.2f}x -f folded's wall (<= 2)")
if len(names) > 1:
    a, b = names[0], names[-1]
    for k in med:
        if k.startswith(a + " -f"):
            f = k[len(a):]
            if b + f in med:
                g = med[b + f][1] / med[k][1]
                v(g < 1.5, f"43.2 peak RSS of{f} from {a} to {b}: {g:.2f}x (< 1.5)")
PY
	;;
*)
	echo "usage: bench/wholemachine.sh record | run [NAME...]" >&2
	exit 2
	;;
esac
