#!/bin/bash
# names: what a long name costs (issue 42 item 1): testdata/jit/node-map.data converted
# with the hot JavaScript function's perf map line (17 of its stacks, recursive: the
# name 264 times in the folded output) named
# - plainly, 1 KiB to 1 MiB long (no demangling: reading, interning, the writers);
# - by C++ back-references of 8 to 40 levels, each doubling the demangled form: 3 KiB
#   to 213 KiB demangled, then past the demangler's bound of 256 KiB (kept mangled);
# - by a pack expansion whose search doubles at each level and prints nothing (cut
#   after 5 ms of CPU time).
# Folded and pprof, CPU time (user + system) and peak RSS of each, the median of REPS
# (default 5) runs, from bench/runstat. The verdict: the CPU time a name adds grows
# with its length no faster than the length (plain names: 1 MiB's cost per byte within
# twice 256 KiB's), and a name past a bound costs what one at the bound does.
# BASELINE=/path/to/old/perfconv: the same with it, under a 4 GiB address-space limit
# and 60 s ("failed": past one of them), for comparison. Run from the tree's top after
# `make`: bench/names.sh
set -eu
cd "$(dirname "$0")/.."
W=bench/work/names
REPS=${REPS:-5}
mkdir -p $W
cc -O2 -o $W/runstat bench/runstat.c
J=testdata/jit

# the map with the line of JS:*fibonacci named by KIND ARG
mkmap() { # KIND ARG DIR
	mkdir -p "$3"
	python3 - "$1" "$2" $J/perf-30787.map "$3/len" >"$3/perf-30787.map" <<'PY'
import sys
D36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
def sub(i):
    if i == 0:
        return "S_"
    n, s = i - 1, ""
    while True:
        s = D36[n % 36] + s
        n //= 36
        if n == 0:
            return "S" + s + "_"
def cpp(levels, pack):
    base = 1 if pack else 0
    s = ("_Z1fIDp1CI1BI" if pack else "_Z1fI1BI") + (sub(base + 1) + "I") * levels
    s += "1A" + sub(base + 2) + "E" + "".join(sub(base + 3 + i) + "E" for i in range(levels))
    return s + ("T_EEEv" if pack else "Evv")
kind, arg = sys.argv[1], int(sys.argv[2])
name = {"plain": lambda: "JS:*" + "x" * (arg * 1024 - 4),
        "cpp": lambda: cpp(arg, False), "walk": lambda: cpp(arg, True)}[kind]()
for line in open(sys.argv[3]):
    if " JS:*fibonacci " in line:
        line = " ".join(line.split(" ", 2)[:2] + [name]) + "\n"
    sys.stdout.write(line)
print(len(name), file=open(sys.argv[4], "w"))
PY
}

# one line per (binary, kind, arg): median CPU ms and largest peak RSS of folded, pprof
run() { # LABEL BINARY KIND ARG
	local label=$1 bin=$2 kind=$3 arg=$4 d=$W/$3-$4 f i out
	[ -d "$d" ] || mkmap "$kind" "$arg" "$d"
	printf '%s\t%s\t%s\t%s' "$label" "$kind" "$arg" "$(cat "$d/len")"
	for f in folded pprof; do
		out=$W/out.$f
		: >$W/runs
		for ((i = 0; i < REPS; i++)); do
			rm -f $out
			if [ "$label" = old ]; then
				$W/runstat $W/stat timeout 60 prlimit --as=4294967296 "$bin" -q -i $J/node-map.data \
					--jit-dir "$d" -f $f -o $out >/dev/null 2>&1 || { echo "failed" >$W/stat; }
			else
				$W/runstat $W/stat "$bin" -q -i $J/node-map.data --jit-dir "$d" -f $f -o $out \
					2>/dev/null
			fi
			cat $W/stat >>$W/runs
		done
		python3 - $W/runs <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
if any(r[0] == "failed" for r in rows):
    print("\tfailed\t-", end="")
else:
    cpu = statistics.median_low(int(r[2]) for r in rows) / 1000
    print(f"\t{cpu:.1f}\t{max(int(r[1]) for r in rows) / 1024:.1f}", end="")
PY
		[ $f = folded ] && printf '\t%s' "$(grep -q failed $W/runs || stat -c %s $out 2>/dev/null || echo -)"
	done
	echo
}

echo "# names: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $REPS runs each, medians of CPU time"
{
	printf 'build\tkind\targ\tname_bytes\tfolded_cpu_ms\tfolded_rss_MB\tfolded_bytes\tpprof_cpu_ms\tpprof_rss_MB\n'
	for b in new ${BASELINE:+old}; do
		bin=./perfconv
		[ $b = old ] && bin=$BASELINE
		for k in 1 64 128 256 512 1024; do run $b $bin plain $k; done
		for l in 8 11 14 15 20 40; do run $b $bin cpp $l; done
		for l in 16 20 24 28 40; do run $b $bin walk $l; done
	done
} | tee $W/results.tsv | column -t -s $'\t'

python3 - $W/results.tsv <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if line.startswith("#") or f[0] != "new":
        continue
    rows[(f[1], int(f[2]))] = f
def cpu(kind, arg, col):  # col 4: folded, 7: pprof
    return float(rows[(kind, arg)][col])
bad = 0
for col, fmt in ((4, "folded"), (7, "pprof")):
    base = cpu("plain", 1, col)
    per = {k: (cpu("plain", k, col) - base) / (k - 1) for k in (256, 1024)}
    ok = per[1024] <= 2 * max(per[256], 0.001)
    bad += not ok
    print(f"names: {fmt}, plain names: {per[256] * 1024:.1f} ms per MiB of name at 256 KiB, "
          f"{per[1024] * 1024:.1f} at 1 MiB: {'linear: met' if ok else 'MISSED'}")
    capped = cpu("cpp", 40, col) <= 2 * cpu("cpp", 15, col) + 5
    walked = cpu("walk", 40, col) <= cpu("walk", 16, col) + 15
    bad += not capped or not walked
    print(f"names: {fmt}, C++ names past the bounds: 2^40 demangled {cpu('cpp', 40, col):.1f} ms "
          f"(2^15: {cpu('cpp', 15, col):.1f}), a 2^40 search {cpu('walk', 40, col):.1f} ms "
          f"(2^16: {cpu('walk', 16, col):.1f}): {'capped: met' if capped and walked else 'MISSED'}")
sys.exit(1 if bad else 0)
PY
