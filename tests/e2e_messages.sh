#!/bin/bash
# e2e_messages: what a new user is told (issue 22, items 11 and 13): the command line's
# errors said once and early, naming what is wrong; the summary's hints.
source "$(dirname "$0")/e2e_lib.sh"
IN=$TD/mt-g.data

# said() NAME WANT-RC PATTERN -- ARGS: the exit code, and stderr matching PATTERN
said() {
	local name=$1 want=$2 pat=$3 rc
	shift 4
	"$PERFCONV" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
	rc=$?
	if [ "$rc" = "$want" ] && grep -qE -- "$pat" "$TMP/$name.err"; then
		ok "$name: exit $rc: $(grep -E -m1 -- "$pat" "$TMP/$name.err")"
	else
		bad "$name: exit $rc (want $want), stderr: $(head -3 "$TMP/$name.err")"
	fi
}

# 13. a positional input, as pprof and speedscope take it
"$PERFCONV" -q "${KS[@]}" $IN -o "$TMP/pos.folded" && "$PERFCONV" -q "${KS[@]}" -i $IN -o "$TMP/i.folded" &&
	cmp -s "$TMP/pos.folded" "$TMP/i.folded" && [ -s "$TMP/pos.folded" ] &&
	ok "positional: perfconv FILE is perfconv -i FILE" || bad "positional: $(head -2 "$TMP/pos.folded")"
# a plain directory: no "DIR/data: cannot open"
mkdir -p "$TMP/plain"
said plain-dir 1 "plain: a directory, not a recording" -- -i "$TMP/plain" -o "$TMP/x.folded"
# -o errors before the conversion: no summary first
said bad-output 1 "cannot create the output in $TMP/nowhere" -- -i $IN -o "$TMP/nowhere/x.folded"
! grep -q 'samples in' "$TMP/bad-output.err" && ok "bad-output: said before converting" ||
	bad "bad-output: converted first: $(head -2 "$TMP/bad-output.err")"
said dir-output 1 "-o names a directory" -- -i $IN -o "$TMP"
# getopt's errors once, with the option
said bogus 2 "^perfconv: unknown option: --bogus$" -- --bogus
[ "$(grep -c 'bogus' "$TMP/bogus.err")" = 1 ] && ok "bogus: said once" ||
	bad "bogus: said $(grep -c bogus "$TMP/bogus.err") times: $(cat "$TMP/bogus.err")"
said no-arg 2 "^perfconv: option needs an argument: -i$" -- -i
said info-bogus 2 "^perfconv: unknown option: --frob$" -- info --frob
said upload-bogus 2 "^perfconv: unknown option: --frob$" -- upload --frob
# an unknown format lists the formats
said format 2 "unknown format: nope \(formats: folded, samples, pprof, speedscope, firefox, chrome, svg, otlp\)" -- -f nope -i $IN
# -o x.json is no format's suffix: folded, said even with -q
said json-suffix 0 "x.json: warning: no format has its suffix: writing folded" -- -q "${KS[@]}" -i $IN -o "$TMP/x.json"
cmp -s "$TMP/x.json" "$TMP/i.folded" && ok "json-suffix: folded written" || bad "json-suffix: not folded"
# pprof's gzip is not written to a terminal (script gives a pseudo-terminal)
if command -v script >/dev/null; then
	script -qec "$PERFCONV -q ${KS[*]} -i $IN -f pprof" /dev/null >"$TMP/tty.out" 2>&1
	if grep -q "pprof and otlp are protobuf, not for a terminal" "$TMP/tty.out" &&
		! grep -qa $'\x1f\x8b' "$TMP/tty.out"; then
		ok "tty: pprof refused on a terminal"
	else
		bad "tty: $(head -c 200 "$TMP/tty.out" | tr -c '[:print:]\n' '?')"
	fi
	"$PERFCONV" -q "${KS[@]}" -i $IN -f pprof | head -c 2 | od -An -tx1 | grep -q '1f 8b' &&
		ok "tty: a pipe gets it" || bad "tty: a pipe gets no gzip"
else
	bad "tty: 'script' (bsdutils) not found"
fi

# 13. perfconv info: perfconv's version and when the recording was made
"$PERFCONV" info -i $IN >"$TMP/info.txt" 2>&1
"$PERFCONV" info -i $IN --json >"$TMP/info.json" 2>&1
if grep -q "^perfconv:       $("$PERFCONV" --version | cut -d' ' -f2)$" "$TMP/info.txt" &&
	grep -qE '^recorded at:    20[0-9-]+T[0-9:]+Z \(the file' "$TMP/info.txt" &&
	python3 -c 'import json,sys; j = json.load(open(sys.argv[1])); assert j["perfconv_version"] and j["recorded_at"].endswith("Z")' "$TMP/info.json"; then
	ok "info: $(grep -E '^(perfconv|recorded at):' "$TMP/info.txt" | tr -s ' ' | tr '\n' ';')"
else
	bad "info: $(head -3 "$TMP/info.txt")"
fi

# 11 and 13, recorded here: perf's dummy events (--switch-events adds them) are not
# counted as events; a recording without -g says its stacks are leaf-only
if [ "$(id -u)" = 0 ] && command -v perf >/dev/null &&
	perf record -q -e cpu-clock:u --switch-events -o "$TMP/nog.data" $TD/mt 100 >/dev/null 2>&1; then
	"$PERFCONV" -i "$TMP/nog.data" -o "$TMP/nog.folded" 2>"$TMP/nog.err"
	if grep -q 'distinct stacks (by address), 1 event$' "$TMP/nog.err"; then
		ok "dummy: '1 event' (perf record --switch-events adds dummy ones)"
	else
		bad "dummy: $(grep distinct "$TMP/nog.err")"
	fi
	grep -q 'no call graphs (perf record without -g): each stack is its sampled address alone' "$TMP/nog.err" &&
		ok "no -g: said leaf-only" || bad "no -g: $(cat "$TMP/nog.err")"
else
	bad "dummy, no -g: needs root and perf to record"
fi
"$PERFCONV" "${KS[@]}" -i $IN -o /dev/null 2>"$TMP/g.err"
! grep -q 'no call graphs' "$TMP/g.err" && ok "with -g: no such note" || bad "with -g: said leaf-only"

# 11. a file the unwinder needed and did not find is named by its path, and said missing
mkdir -p "$TMP/alone"
cp $TD/cxx/cxx-dw.data "$TMP/alone/"
"$PERFCONV" -i "$TMP/alone/cxx-dw.data" -o /dev/null 2>"$TMP/alone.err"
grep -q 'no CFI and no frame pointer to follow (most in /tmp/perfconv-rec-cxx/cxx: [0-9]*; its file was not found: give it with --symfs' "$TMP/alone.err" &&
	ok "missing module: named by its path, said not found" ||
	bad "missing module: $(grep -A3 unwound "$TMP/alone.err")"

# 11. the kernel's callchain limit (kernel.perf_event_max_stack, 127 by default) cuts
#     deep stacks: said, with the sysctl (a recursion 300 deep, built and recorded here)
if [ "$(id -u)" = 0 ] && command -v perf >/dev/null && command -v gcc >/dev/null &&
	[ "$(cat /proc/sys/kernel/perf_event_max_stack)" = 127 ]; then
	cat >"$TMP/deep.c" <<'C'
volatile unsigned long sink;
__attribute__((noinline)) void down(int n)
{
	if (n)
		down(n - 1);
	else
		for (unsigned long i = 0; i < 100000000; i++)
			sink += i;
	sink++;
}
int main(void) { down(300); return 0; }
C
	gcc -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$TMP/deep" "$TMP/deep.c" &&
		perf record -q -e cpu-clock:u -F 999 -g -o "$TMP/deep.data" "$TMP/deep" >/dev/null 2>&1
	"$PERFCONV" -i "$TMP/deep.data" -o "$TMP/deep.folded" 2>"$TMP/deep.err"
	# the samples at the bottom of the recursion (a sample of the start-up, before
	# it went deep, has a short stack and is not cut)
	n=$(awk '{ if (split($0, f, ";") > 100) s += $NF } END { print s + 0 }' "$TMP/deep.folded")
	if [ "$n" -gt 0 ] && grep -q "^perfconv: $n samples have callchains of 127 addresses, the kernel's limit (kernel.perf_event_max_stack)" "$TMP/deep.err"; then
		ok "max stack: all $n deep samples said cut at 127 addresses"
	else
		bad "max stack: $n samples: $(grep -i limit "$TMP/deep.err")"
	fi
else
	skip "max stack: needs root, perf, gcc and kernel.perf_event_max_stack 127"
fi
! grep -q "kernel's limit" "$TMP/g.err" && ok "max stack: not said of mt-g" || bad "max stack: said of mt-g"

# 11. a frame-pointer recording whose stacks mostly stop early: record with dwarf
"$PERFCONV" "${KS[@]}" -i $TD/jit/erlang.data -o /dev/null 2>"$TMP/erl.err"
"$PERFCONV" "${KS[@]}" --symfs $TD -i $TD/dwarf/dw.data -o /dev/null 2>"$TMP/dw.err"
if grep -qE "^perfconv: 1173 of 1176 user stacks \(99\.7%\) stop before their thread's start, in code without frame pointers: record with --call-graph dwarf" "$TMP/erl.err" &&
	! grep -q "record with --call-graph dwarf for whole" "$TMP/g.err" "$TMP/dw.err"; then
	ok "dwarf hint: erlang's stacks (99.7% stop early), not mt-g's nor a dwarf recording's"
else
	bad "dwarf hint: $(grep -h "thread's start" "$TMP/erl.err" "$TMP/g.err" "$TMP/dw.err")"
fi

# 11. a signal handler on a sigaltstack: the interrupted stack is not in the copy, which
#     is not "damaged stack or CFI" (built and recorded here, --call-graph dwarf)
if [ "$(id -u)" = 0 ] && command -v perf >/dev/null && command -v gcc >/dev/null; then
	cat >"$TMP/alt.c" <<'C'
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
volatile unsigned long sink;
static void handler(int sig) { (void)sig; for (unsigned long i = 0; i < 3000000; i++) sink += i; }
__attribute__((noinline)) static void work(void) { for (;;) raise(SIGUSR1); }
int main(void)
{
	stack_t ss = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16, .ss_flags = 0 };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGALRM, _exit);
	alarm(1);
	work();
	return 0;
}
C
	gcc -O1 -g -o "$TMP/alt" "$TMP/alt.c" &&
		perf record -q -e cpu-clock:u -F 999 --call-graph dwarf -o "$TMP/alt.data" "$TMP/alt" >/dev/null 2>&1
	"$PERFCONV" -i "$TMP/alt.data" -o "$TMP/alt.folded" 2>"$TMP/alt.err"
	if grep -qE '^perfconv:   [0-9]+ samples: in a signal handler on a stack of its own \(sigaltstack\)' "$TMP/alt.err" &&
		! grep -q 'damaged stack or CFI' "$TMP/alt.err" && grep -q ';__restore_rt;handler ' "$TMP/alt.folded"; then
		ok "sigaltstack: $(grep -o '[0-9]* samples: in a signal handler on a stack of its own (sigaltstack)' "$TMP/alt.err")"
	else
		bad "sigaltstack: $(grep -A3 unwound "$TMP/alt.err")"
	fi
else
	bad "sigaltstack: needs root, perf and gcc"
fi
# 11. frame-pointer steps through code without CFI that run off the stack copy: the copy
#     was too small, not "no CFI": node's JIT code without its dump (so without its
#     UNWINDING_INFO), recorded now with the installed node (as root)
N=$TMP/nodump
mkdir -p "$N" && cp $TD/dwarf/src/rec.js "$N/"
if command -v node >/dev/null && (cd "$N" && perf record -q -k 1 --call-graph dwarf -o node.data \
	node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack rec.js 800 \
	>/dev/null 2>&1); then
	rm -f "$N"/jit-*.dump
	"$PERFCONV" "${KS[@]}" -i "$N/node.data" -o /dev/null 2>"$TMP/nodump.err"
	short=$(sed -n 's/^perfconv:   \([0-9]*\) samples: the stack copy was too small.*/\1/p' "$TMP/nodump.err")
	[ "${short:-0}" -gt 0 ] &&
		ok "short copy: $short samples' frame-pointer walks through JIT code off the copy said to be that" ||
		bad "short copy: $(grep -A5 unwound "$TMP/nodump.err")"
else
	bad "short copy: needs root, perf and node (scripts/install-deps.sh installs nodejs)"
fi

# 11. a library with its exported symbols only (stripped, no debug file): said, with
#     what would name its own functions (built and recorded here; libc.so.6 gets
#     libc6-dbg named, which this machine has installed, so it is not shown here)
if [ "$(id -u)" = 0 ] && command -v perf >/dev/null && command -v gcc >/dev/null; then
	mkdir -p "$TMP/hid"
	printf '%s\n' 'volatile unsigned long sink;' \
		'static __attribute__((noinline)) void own(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * i; }' \
		'void lib_entry(unsigned long n) { own(n); }' >"$TMP/hid/lib.c"
	printf '%s\n' 'void lib_entry(unsigned long n);' 'int main(void) { lib_entry(200000000); return 0; }' >"$TMP/hid/main.c"
	gcc -O1 -fPIC -shared -o "$TMP/hid/libhid.so" "$TMP/hid/lib.c" && strip --strip-unneeded "$TMP/hid/libhid.so" &&
		gcc -O1 -o "$TMP/hid/hid" "$TMP/hid/main.c" -L"$TMP/hid" -lhid -Wl,-rpath,"$TMP/hid" &&
		perf record -q -e cpu-clock:u -F 999 -g -o "$TMP/hid/hid.data" "$TMP/hid/hid" >/dev/null 2>&1
	"$PERFCONV" -i "$TMP/hid/hid.data" -o /dev/null 2>"$TMP/hid.err"
	grep -qE "^perfconv: $TMP/hid/libhid.so has its exported symbols only \(\.dynsym\): [0-9]+ samples in it may show a function of its own as the exported one before it; its debug symbols would name them" "$TMP/hid.err" &&
		ok "debug symbols: a stripped library said so" || bad "debug symbols: $(head -3 "$TMP/hid.err")"
else
	bad "debug symbols: needs root, perf and gcc"
fi
! grep -q 'exported symbols only' "$TMP/g.err" && ok "debug symbols: nothing said of mt-g" ||
	bad "debug symbols: said of mt-g"

finish e2e-messages
