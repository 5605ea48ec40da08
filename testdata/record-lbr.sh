#!/bin/sh
# record-lbr.sh: makes the `perf record --call-graph lbr` recordings in testdata/lbr/
# and perf's goldens for them.
#
# No machine here has Intel's LBR, so the recordings are made from a real one of
# --call-graph dwarf, dwarf/dw.data, whose true stacks perf knows (its golden,
# dwarf/expected/dw.script.gz): lbr/make-lbr.py turns each sample's user stack into
# the LBR call stack the hardware would have recorded (the call instruction of each
# caller from the binaries, objdump) and lays the file out as perf 6.1 writes an LBR
# recording: see make-lbr.py. Made with (also written to lbr/VERSIONS):
#   perf version 6.1.187 (Debian package linux-perf 6.1.187-1), binutils' objdump and nm
#
#   lbr/dw-lbr.data    32 calls deep at most (Skylake and later): none of dw's stacks
#                      (19 calls at most) is cut
#   lbr/dw-lbr16.data  16 calls deep at most (Haswell, Broadwell): the deeper ones cut
#
# Goldens:
#   lbr/expected/NAME.script.gz: perf script -i NAME.data --no-inline --ns
#       -F comm,pid,tid,time,event,period,ip,sym,dso, the binaries given by --symfs
#       (their recorded paths; perf finds no [vdso] file there: it names its frames
#       [unknown]) and --kallsyms: perf's own LBR stacks (tools/perf/util/machine.c,
#       resolve_lbr_callchain_sample), whose user leaf is the first entry's `to`
#   lbr/expected/NAME.truth.script.gz: the true stacks (dwarf/expected/dw.script.gz,
#       the event renamed, each user stack cut after the LBR's depth)
#
# Run as root or not, from any directory; everything it writes is in testdata/lbr/.
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
L=$TD/lbr
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
LC_ALL=C
export LC_ALL

# the binaries at their recorded paths, the vdso as [vdso]
mkdir -p "$W/symfs/tmp/perfconv-rec-dwarf" "$W/symfs/usr/lib/x86_64-linux-gnu" "$L/expected"
cp "$TD/dwarf/dw" "$W/symfs/tmp/perfconv-rec-dwarf/"
cp "$TD/libc.so.6" "$TD/ld-linux-x86-64.so.2" "$W/symfs/usr/lib/x86_64-linux-gnu/"
cp "$TD/vdso.so" "$W/symfs/[vdso]"
zcat "$TD/kallsyms.gz" > "$W/kallsyms"

for depth in 32 16; do
	n=dw-lbr
	[ $depth = 32 ] || n=dw-lbr$depth
	python3 "$L/make-lbr.py" "$TD/dwarf/dw.data" "$TD/dwarf/expected/dw.script.gz" "$L/$n.data" \
		--symfs "$W/symfs" --depth $depth --truth "$L/expected/$n.truth.script.gz" \
		--cmdline "/usr/bin/perf record -q -F 999 --call-graph lbr -o $n.data ./dw 1000"
	perf script -i "$L/$n.data" --symfs "$W/symfs" --kallsyms "$W/kallsyms" --no-inline --ns \
		-F comm,pid,tid,time,event,period,ip,sym,dso 2>/dev/null | gzip -9n > "$L/expected/$n.script.gz"
done
# perfconv finds dw next to the recordings
ln -sf ../dwarf/dw "$L/dw"

{
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo '?')"
	echo "objdump: $(objdump --version | head -1)"
	echo "python3: $(python3 --version)"
	echo "source: dwarf/dw.data ($(sed -n 's/^perf: //p' "$TD/dwarf/VERSIONS"))"
	echo "made at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$L/VERSIONS"
for n in dw-lbr dw-lbr16; do
	printf '%s: %s samples\n' $n "$(zcat "$L/expected/$n.script.gz" | grep -c '^[^[:space:]]')"
done
du -sh "$L"/*
