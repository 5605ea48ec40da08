#!/bin/bash
# e2e_userfiles: files another local user controls, met by a conversion running as root
# (issue 42): a debug file found by its .gnu_debuglink beside that user's binary whose
# dwz supplement (.gnu_debugaltlink) is a FIFO (libdw opened it blocking: the conversion
# hung for good); and the user's binary and perf map cut short while they are read
# (mapped, the next page read past the new end was SIGBUS: exit 135, nothing said). The
# moment is not luck: tests/watch_race.py, run as that user, cuts the file 100 ms after
# the conversion opens it, while strace holds each mmap and pread of it 300 ms.
source "$(dirname "$0")/e2e_lib.sh"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
at_exit() { kill_pids; }
for c in perf dwz strace gcc objcopy; do
	command -v $c >/dev/null || missing="$missing $c"
done
if [ "$(id -u)" != 0 ] || [ -n "${missing:-}" ] || ! id nobody >/dev/null 2>&1; then
	skip "e2e-userfiles: needs root, the user nobody and${missing:- perf, dwz, strace, gcc} (scripts/install-deps.sh)"
	finish e2e-userfiles
	exit $?
fi
chmod 755 "$TMP"
# the other user's own tools: the system's python, this tree's script copied where it
# can read it
cp tests/watch_race.py "$TMP/"
RACE=(/usr/bin/python3 "$TMP/watch_race.py")
# total COUNT of a folded file
total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
# ms since the epoch
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A program whose hot loop is a function inlined into another, with its DWARF, built as
# the other user, in that user's folder.
U=$TMP/user
mkdir -p "$U"
cat >"$U/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static inline __attribute__((always_inline)) double inner(double x)
{
	for (int i = 0; i < 200; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}
__attribute__((noinline)) double work(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += inner(i);
	return s;
}
int main(int argc, char **argv)
{
	double t = 0;
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	for (int k = 0; k < 20; k++)
		t += work(n);
	printf("%f\n", t);
	return 0;
}
C
chown -R nobody:nogroup "$U"
as_nobody() { (cd "$U" && "${NOBODY[@]}" "$@"); }

# 1. A split debug file made smaller by dwz, its supplement beside it (as Debian's
# -dbgsym are, with the binary stripped whole); and a binary dwz'd with its DWARF.
as_nobody gcc -g -O2 -o prog.full prog.c &&
	as_nobody objcopy --only-keep-debug prog.full prog.debug &&
	as_nobody cp prog.debug other.debug &&
	as_nobody dwz -m "$U/sup.debug" -M "$U/sup.debug" prog.debug other.debug &&
	as_nobody objcopy --strip-all --add-gnu-debuglink=prog.debug prog.full prog &&
	as_nobody cp prog.full whole && as_nobody cp prog.full whole2 &&
	as_nobody dwz -m "$U/whole.sup" -M "$U/whole.sup" whole whole2 2>"$TMP/dwz.err" ||
	bad "the program and its dwz'd debug files could not be made: $(cat "$TMP/dwz.err")"
for p in prog whole; do
	perf record -q -N -g -o "$TMP/$p.data" "$U/$p" 400000 >/dev/null 2>"$TMP/$p.rec" ||
		bad "perf record of $p: $(tail -1 "$TMP/$p.rec")"
done
# conv NAME RECORDING: converted, the time it took in $MS, its status in $RC
conv() {
	local t0
	t0=$(now_ms)
	timeout 20 "$PERFCONV" --cache-dir "$TMP/cache-$1" -i "$2" -f folded -o "$TMP/$1.folded" \
		2>"$TMP/$1.err"
	RC=$?
	MS=$(($(now_ms) - t0))
}
for p in prog whole; do
	conv "$p-ok" "$TMP/$p.data"
	n=$(total "$TMP/$p-ok.folded")
	inl=$(grep -c '^prog;work;inner \|^whole;work;inner ' "$TMP/$p-ok.folded")
	[ "$RC" = 0 ] && [ "$inl" = 1 ] && [ "$(grep ';inner ' "$TMP/$p-ok.folded" | awk '{print $NF}')" -ge $((n * 8 / 10)) ] &&
		ok "$p: the inlined function named through the dwz supplement ($n samples)" ||
		bad "$p with its supplement: status $RC, $(head -3 "$TMP/$p-ok.folded" | tr '\n' '|') $(tail -2 "$TMP/$p-ok.err")"
	eval "N_$p=$n"
done

# 2. The supplement swapped for a FIFO by its owner: the conversion ends at once, says
# which file was not read and why, and every sample is there, the inlined frames
# unnamed (the supplement named them).
as_nobody sh -c 'mv sup.debug sup.real && mkfifo sup.debug && mv whole.sup whole.real && mkfifo whole.sup'
for p in prog whole; do
	sup=$U/sup.debug
	[ $p = whole ] && sup=$U/whole.sup
	conv "$p-fifo" "$TMP/$p.data"
	n=$(total "$TMP/$p-fifo.folded")
	want=N_$p
	if [ "$RC" = 0 ] && [ "$MS" -lt 5000 ] && [ "$n" = "${!want}" ] &&
		grep -q "its dwz supplement $sup (.gnu_debugaltlink): not a regular file: not used" "$TMP/$p-fifo.err" &&
		! grep -q ';inner ' "$TMP/$p-fifo.folded" && grep -q "^$p;work " "$TMP/$p-fifo.folded"; then
		ok "$p: a FIFO as its dwz supplement: ended in $MS ms, said ('$(grep -o 'supplement.*regular file' "$TMP/$p-fifo.err")'), all $n samples"
	else
		bad "$p, a FIFO as its supplement: status $RC after $MS ms, $n of ${!want} samples; $(tail -2 "$TMP/$p-fifo.err" | cut -c1-250)"
	fi
done
# the watcher ends on SIGTERM however far it got (it got through: nothing to wait on)
W=$TMP/watch
mkdir -p "$W"
cp "$TMP/prog.data" "$W/.part" && mv "$W/.part" "$W/perf.data.2026120512000000"
"$PERFCONV" upload --watch "$W" --to pyroscope --url "http://127.0.0.1:$(closed_port)" \
	--cache-dir "$TMP/cache-watch" 2>"$W.err" >/dev/null &
WP=$!
PIDS+=("$WP")
wait_for 120 grep -q "not a regular file" "$W.err" 2>/dev/null
said=$?
kill -TERM "$WP" 2>/dev/null
if [ $said = 0 ] && wait_for 120 sh -c "! kill -0 $WP 2>/dev/null"; then
	wait "$WP"
	ok "upload --watch: the chunk converted, the supplement said ($(grep -c 'not a regular file' "$W.err") time), SIGTERM ends it (status $?)"
else
	bad "upload --watch with a FIFO as a supplement: $(tail -2 "$W.err" | cut -c1-200)"
	kill -KILL "$WP" 2>/dev/null # blocked in open(2), SIGTERM did not end it
fi

# 3. Cut short while read. race_conv NAME RECORDING FILE HOLD...: FILE (a name in $U)
# cut to 8,192 bytes by its owner 100 ms after the conversion opens it, each HOLD
# (mmap, pread64) of it held 300 ms on entry; $RC, $MS as conv.
race_conv() {
	local name=$1 rec=$2 file=$3 inj=() t0
	shift 3
	for h in "$@"; do inj+=(-e "inject=$h:delay_enter=300000"); done
	"${NOBODY[@]}" "${RACE[@]}" "$U" "$file:open:1:100:truncate" >"$TMP/$name.race" &
	PIDS+=($!)
	wait_for 120 grep -q ready "$TMP/$name.race"
	t0=$(now_ms)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 30 \
		strace -f -qq -o /dev/null -P "$U/$file" -e trace=mmap,pread64 "${inj[@]}" \
		"$PERFCONV" --cache-dir "$TMP/cache-$name" -i "$rec" -f folded -o "$TMP/$name.folded" \
		"${KS[@]}" 2>"$TMP/$name.err"
	RC=$?
	MS=$(($(now_ms) - t0))
	wait_for 120 grep -q "truncate $file" "$TMP/$name.race"
}
# the binary itself, unstripped: its symbols and DWARF
as_nobody cp prog.full cut
perf record -q -N -g -o "$TMP/cut.data" "$U/cut" 400000 >/dev/null 2>"$TMP/cut.rec"
conv cut-ok "$TMP/cut.data"
N_cut=$(total "$TMP/cut-ok.folded")
race_conv cut "$TMP/cut.data" cut mmap pread64
n=$(total "$TMP/cut.folded" 2>/dev/null)
if [ "$RC" = 0 ] && [ "$n" = "$N_cut" ] && grep -q "truncate cut" "$TMP/cut.race" &&
	grep -q "$U/cut: warning: changed while it was read (cut short or written again): its symbols not used" "$TMP/cut.err"; then
	ok "a binary cut short by its owner while read: said, all $n samples, exit 0"
else
	bad "a binary cut short while read: status $RC (135: SIGBUS), $n of $N_cut samples; $(cat "$TMP/cut.race" | tr '\n' ' ') $(grep -v stacks "$TMP/cut.err" | tail -2 | cut -c1-250)"
fi
# a runtime's perf map, found beside the recording (node --perf-basic-prof)
cp $TD/jit/node-map.data "$U/"
# nobody's (copied by root: the checkout may be where nobody cannot read, /root in CI)
cp $TD/jit/perf-30787.map "$U/" && chown 65534:65534 "$U/perf-30787.map"
conv map-ok "$U/node-map.data"
N_map=$(total "$TMP/map-ok.folded")
race_conv map "$U/node-map.data" perf-30787.map mmap pread64
n=$(total "$TMP/map.folded" 2>/dev/null)
if [ "$RC" = 0 ] && [ "$n" = "$N_map" ] && grep -q "truncate perf-30787.map" "$TMP/map.race" &&
	grep -q "perf-30787.map: warning: changed while it was read: it ends at byte 8192, not 118204 as when opened" "$TMP/map.err"; then
	ok "a perf map cut short by its owner while read: said, all $n samples, exit 0"
else
	bad "a perf map cut short while read: status $RC (135: SIGBUS), $n of $N_map samples; $(cat "$TMP/map.race" | tr '\n' ' ') $(grep -v stacks "$TMP/map.err" | tail -2 | cut -c1-250)"
fi
finish e2e-userfiles
