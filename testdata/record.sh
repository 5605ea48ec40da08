#!/bin/sh
# record.sh: rebuilds the test programs and re-records every perf.data in testdata/.
#
# Made with (also written to testdata/VERSIONS by this script):
#   perf version 6.1.187 (Debian package linux-perf 6.1.187-1)
#   gcc (Debian 12.2.0-14+deb12u1) 12.2.0
#   libc6 2.36-9+deb12u14 (libc6-dbg installed: perf names libc frames from its .symtab)
#   kernel 6.18.44-fc-v669 (x86_64, 2 CPUs, no hardware PMU: software events only)
#
# Run as root (or with perf_event_paranoid <= 1 and readable kallsyms), from any
# directory: testdata/record.sh [NAME...]. With names, only those recordings and
# their goldens are remade (the programs are rebuilt either way; gcc and g++ are
# deterministic, so unchanged sources give identical binaries). Everything it writes is in testdata/; the
# scratch directory is deleted at the end.
#
# What it does:
# 1. Builds src/*.c into testdata/{mt,kheavy,execer} with BUILD_FLAGS below.
# 2. Copies the binaries to the scratch directory $REC and records there, so
#    the paths inside the recordings (/tmp/perfconv-rec/mt, ...) are NOT the
#    testdata paths: a converter has to find the binaries next to perf.data.
#    perf's build-id cache goes to $REC/.debug (perf --buildid-dir), not ~/.debug.
# 3. Writes the goldens in testdata/expected/ with perf script and perf report
#    while the binaries still sit at their recorded paths.
# 4. Saves what a converter needs to symbolize on another machine, all next to
#    the recordings: kallsyms.gz and kernel.buildid for the kernel, vdso.so
#    (perf's saved copy of the [vdso] image), and libc.so.6 and
#    ld-linux-x86-64.so.2 with their .symtab put back from libc6-dbg (eu-unstrip,
#    then objcopy --strip-debug: same build ids, same symbol names perf used).
# 5. Checks that perf, given only the files in testdata (--symfs, --kallsyms,
#    an empty build-id cache holding only vdso.so), prints exactly the goldens.
#
# The perf commands (cwd $REC; every one also gets `perf --buildid-dir $REC/.debug`):
#   perf record -F 2000 -g -o mt-g.data ./mt 1000
#   perf record -F 2000 -g --sample-cpu -z -o mt-z.data ./mt 1000
#   perf record -F 2000 -g --sample-cpu -o - ./mt 1000 > mt-pipe.data
#   perf record -F 2000 -g --sample-cpu --threads -o mt-threads.data ./mt 1000
#   perf record -F 2000 -g --sample-cpu -k 1 -o mt-k1.data ./mt 1000
#   perf record -F 4000 -g --sample-cpu -o kheavy.data ./kheavy 1000
#   perf record -F 2000 -g --sample-cpu -e cpu-clock -e page-faults -o two-event.data ./kheavy 1000
#   perf record -F 2000 -g --sample-cpu -o execer.data ./execer 1000
#   perf record -F 2000 -g --sample-cpu -o shapes.data ./shapes 1000
# shapes is C++ (g++ $CXX_FLAGS): demangled names and an inlined function.
# mt-g.data is the plain `perf record -g`: without -a, perf 6.1 does not sample
# the CPU (no PERF_SAMPLE_CPU), so its golden has no cpu field. The others add
# --sample-cpu. mt-threads.data is a directory (data, data.0, data.1).
#
# Goldens, for each recording NAME:
#   expected/NAME.script.gz:
#     perf script -i NAME.data --ns -F comm,pid,tid,cpu,time,event,period,ip,sym,dso | gzip -9n
#     (without cpu for mt-g.data, where perf refuses it)
#   expected/NAME.report:
#     perf report -i NAME.data --stdio --no-children -n -g none --sort comm,dso,sym
#     (self sample counts per comm/dso/symbol, one section per event)
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
REC=/tmp/perfconv-rec
BID=$REC/.debug
BUILD_FLAGS="-std=c11 -Wall -Wextra -O2 -g -fno-omit-frame-pointer -pthread"
CXX_FLAGS="-std=c++17 -Wall -Wextra -O2 -g -fno-omit-frame-pointer"
FIELDS=comm,pid,tid,cpu,time,event,period,ip,sym,dso
FIELDS_NOCPU=comm,pid,tid,time,event,period,ip,sym,dso
LIBDIR=/usr/lib/x86_64-linux-gnu
ALL_NAMES="mt-g mt-z mt-pipe mt-threads mt-k1 kheavy two-event execer shapes"
NAMES=${*:-$ALL_NAMES}
for n in $NAMES; do
	case " $ALL_NAMES " in *" $n "*) ;; *) echo "record.sh: no recording $n" >&2; exit 2 ;; esac
done
want() { case " $NAMES " in *" $1 "*) return 0 ;; esac; return 1; }

# perf's output has no locale-dependent parts we rely on, but keep sort stable.
LC_ALL=C
export LC_ALL

perf_() {
	perf --buildid-dir "$BID" "$@"
}

# Prints the version lines of everything that made the recordings.
versions() {
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo '?')"
	echo "gcc: $(gcc --version | head -1)"
	echo "libc6: $(dpkg-query -W -f '${Version}' libc6)"
	echo "libc6-dbg: $(dpkg-query -W -f '${Version}' libc6-dbg 2>/dev/null || echo 'not installed')"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "kernel build id: $(cat "$TD/kernel.buildid")"
	echo "cpus: $(nproc)"
	echo "build flags: $BUILD_FLAGS"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

rm -rf "$REC"
mkdir -p "$REC" "$BID"
# KEEP=1 keeps the scratch directory for debugging.
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT

# 1. Build.
for p in mt kheavy execer; do
	gcc $BUILD_FLAGS -o "$TD/$p" "$TD/src/$p.c"
done
g++ $CXX_FLAGS -o "$TD/shapes" "$TD/src/shapes.cpp"

# 2. Record in the scratch directory.
for p in mt kheavy execer shapes; do
	cp "$TD/$p" "$REC/$p"
done
cd "$REC"
want mt-g && perf_ record -F 2000 -g -o mt-g.data ./mt 1000
want mt-z && perf_ record -F 2000 -g --sample-cpu -z -o mt-z.data ./mt 1000
want mt-pipe && perf_ record -F 2000 -g --sample-cpu -o - ./mt 1000 > mt-pipe.data
want mt-threads && perf_ record -F 2000 -g --sample-cpu --threads -o mt-threads.data ./mt 1000
want mt-k1 && perf_ record -F 2000 -g --sample-cpu -k 1 -o mt-k1.data ./mt 1000
want kheavy && perf_ record -F 4000 -g --sample-cpu -o kheavy.data ./kheavy 1000
want two-event && perf_ record -F 2000 -g --sample-cpu -e cpu-clock -e page-faults -o two-event.data ./kheavy 1000
want execer && perf_ record -F 2000 -g --sample-cpu -o execer.data ./execer 1000
want shapes && perf_ record -F 2000 -g --sample-cpu -o shapes.data ./shapes 1000

# Kernel symbols and build id, taken right after recording.
cat /proc/kallsyms > "$REC/kallsyms"
gzip -9n -c "$REC/kallsyms" > "$TD/kallsyms.gz"
perf_ buildid-list -i "$(echo $NAMES | cut -d' ' -f1).data" | awk '$2 == "[kernel.kallsyms]" { print $1 }' > "$TD/kernel.buildid"
test -s "$TD/kernel.buildid"
versions > "$TD/VERSIONS"

# 3. Goldens, while the binaries are at their recorded paths.
mkdir -p "$TD/expected"
for n in $NAMES; do
	if perf_ script -i "$n.data" --ns -F $FIELDS > "$REC/$n.script" 2> "$REC/$n.err"; then
		:
	elif grep -q "do not have CPU attribute set" "$REC/$n.err"; then
		perf_ script -i "$n.data" --ns -F $FIELDS_NOCPU > "$REC/$n.script"
	else
		cat "$REC/$n.err" >&2
		exit 1
	fi
	gzip -9n -c "$REC/$n.script" > "$TD/expected/$n.script.gz"
	perf_ report -i "$n.data" --stdio --no-children -n -g none \
		--sort comm,dso,sym > "$TD/expected/$n.report" 2> /dev/null
done

# 4. Files for symbolizing elsewhere.
want mt-threads && rm -rf "$TD/mt-threads.data"
for n in $NAMES; do
	cp -r "$REC/$n.data" "$TD/"
done
chmod -R u+rwX,go+rX "$TD"/*.data
vdso=$(find "$BID/[vdso]" -name vdso -type f | head -1)
cp "$vdso" "$TD/vdso.so"
for lib in libc.so.6 ld-linux-x86-64.so.2; do
	id=$(readelf -n "$LIBDIR/$lib" | sed -n 's/.*Build ID: //p')
	dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	if [ -f "$dbg" ]; then
		eu-unstrip -o "$REC/$lib.full" "$LIBDIR/$lib" "$dbg"
		objcopy --strip-debug "$REC/$lib.full" "$TD/$lib"
	else
		echo "record.sh: warning: no $dbg: goldens will name fewer libc frames" >&2
		cp "$LIBDIR/$lib" "$TD/$lib"
	fi
done

# 5. Prove the committed files are enough: perf sees only testdata's files.
SYMFS=$REC/symfs
BID2=$REC/.debug-empty
mkdir -p "$SYMFS$REC" "$SYMFS$LIBDIR"
vdso_id=$(basename "$(dirname "$vdso")")
# With --symfs, perf 6.1 looks for the vdso at SYMFS/.debug/.build-id/xx/yyyy/vdso.
VB=$SYMFS/.debug/.build-id/$(echo "$vdso_id" | cut -c1-2)/$(echo "$vdso_id" | cut -c3-)
mkdir -p "$BID2" "$VB"
cp "$TD/vdso.so" "$VB/vdso"
for p in mt kheavy execer shapes; do
	cp "$TD/$p" "$SYMFS$REC/$p"
done
for lib in libc.so.6 ld-linux-x86-64.so.2; do
	cp "$TD/$lib" "$SYMFS$LIBDIR/$lib"
done
for n in $NAMES; do
	f=$FIELDS
	zcat "$TD/expected/$n.script.gz" | head -1 | grep -q '\[[0-9]*\]' || f=$FIELDS_NOCPU
	perf --buildid-dir "$BID2" script -i "$TD/$n.data" --symfs="$SYMFS" \
		--kallsyms="$REC/kallsyms" --ns -F $f > "$REC/$n.check" 2> /dev/null
	cp "$REC/$n.script" "$REC/$n.want"
	# perf 6.1 writes no build ids with -z or in pipe mode: perf script then
	# symbolizes [vdso] from a copy of its own vdso, which --symfs hides.
	if ! perf_ buildid-list -i "$n.data" | grep -q '^[0-9a-f]\{40\} \[vdso\]$'; then
		sed -i 's/ [^ ]* (\[vdso\])$/ [unknown] ([vdso])/' "$REC/$n.want" "$REC/$n.check"
	fi
	if ! cmp -s "$REC/$n.want" "$REC/$n.check"; then
		echo "record.sh: $n: perf with only testdata's files differs from the golden:" >&2
		diff "$REC/$n.want" "$REC/$n.check" | head -20 >&2
		exit 1
	fi
done

cd "$TD"
for n in $NAMES; do
	printf '%s: %s samples\n' "$n" \
		"$(zcat "expected/$n.script.gz" | grep -c '^[^[:space:]]')"
done
du -sh "$TD"
