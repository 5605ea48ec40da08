#!/bin/bash
# e2e_watchjunk: a folder of junk costs the watcher system calls linear in its size
# (issue 45.3). N and then 2N junk chunks beside one good chunk, named as perf names
# chunks and older than it, half of them damaged beyond converting (a header perf could
# write, a conversion that fails: given up on) and half damaged but sent (a conversion
# that warns): the good one is sent, and the watcher's stat, open and getdents calls
# until then (strace -c), counted for both folders, grow with the folder, not with its
# square. (A watcher that looked at the whole folder again, stat'ing every name, after
# each chunk it judged made 298,722 stats judging 150 of 2,000; one that read and
# stat'ed all of sent/ after each chunk sent, to prune it, did as much there.) Counts,
# not times: it holds on a busy machine. The 2,000-file case's time is bench/watch.sh's;
# 3,000 junk chunks' opens are counted by e2e_watchattack.
source "$(dirname "$0")/e2e_lib.sh"
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
at_exit() { kill_pids; }
if ! receivers_ready; then
	finish e2e-watchjunk
	exit 1
fi
if ! command -v strace >/dev/null; then
	skip "e2e-watchjunk: needs strace (scripts/install-deps.sh)"
	finish e2e-watchjunk
	exit $?
fi
JUNK=tests/bad/attr-size.data    # a header perf could write, a conversion that fails
DAMAGED=tests/bad/size-zero.data # a perf.data whose conversion warns, 16 samples: sent
GOOD=$TD/mt-g.data
N=${WATCHJUNK_N:-200}
start_receiver rc pyroscope --reject-older-than 0

# calls N: the watcher's file-system calls on a folder of N junk chunks and a good one,
# from its start until the good one is in sent/ (then stopped); empty when it never was
calls() {
	local w=$TMP/junk$1 sp tp
	mkdir -p "$w"
	for i in $(seq 1 "$1"); do
		cp "$([ $((i % 2)) = 0 ] && echo $JUNK || echo $DAMAGED)" "$w/perf.data.20261205060$(printf %05d "$i")"
	done
	chunk $GOOD "$w" perf.data.2026120506100000
	# (a sanitizer build's leak check cannot stop a traced process's threads: off here)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -c -U calls,name \
		-o "$TMP/strace$1" -e trace=%%stat,openat,open,getdents64 \
		"$PERFCONV" upload --watch "$w" "${KS[@]}" --to pyroscope --url "$URL_rc" 2>"$w.err" &
	sp=$!
	PIDS+=("$sp")
	wait_for 300 test -e "$w/sent/perf.data.2026120506100000"
	tp=$(cat /proc/"$sp"/task/*/children 2>/dev/null | awk '{ print $1; exit }')
	[ -n "$tp" ] && kill -TERM "$tp"
	wait "$sp"
	[ -e "$w/sent/perf.data.2026120506100000" ] || return
	# strace -c -U calls,name: a row per call ("COUNT NAME"), then "COUNT total"
	awk '$2 == "total" { print $1 }' "$TMP/strace$1"
}
a=$(calls "$N")
b=$(calls $((2 * N)))
if [ -z "$a" ] || [ -z "$b" ]; then
	bad "junk folders: the good chunk was not sent within 300 s ($N junk: '${a:-not sent}', $((2 * N)) junk: '${b:-not sent}'): $(tail -2 "$TMP/junk$N.err")"
# linear: twice the folder, at most 2.2 times the calls (and a constant: the start's)
elif [ $((b * 10)) -le $((a * 22 + 5000)) ]; then
	ok "junk folders: the good chunk sent; $a stat/open/getdents calls with $N junk chunks, $b with $((2 * N)) (linear: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }') times)"
else
	bad "junk folders: $a stat/open/getdents calls with $N junk chunks, $b with $((2 * N)): $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }') times, not linear (<= 2.2); $(grep -v total "$TMP/strace$((2 * N))" | sort -rn | head -3 | tr '\n' ' ')"
fi
# each damaged chunk sent, each junk one left in place and given up on, said once
W=$TMP/junk$((2 * N))
sent=$(count_in "$W/sent")
[ "$sent" = $((N + 1)) ] && [ "$(count_in "$W")" = "$N" ] && [ "$(grep -c 'not converted' "$W.err")" -le 2 ] &&
	ok "junk folders: the $N damaged chunks and the good one sent, the $N beyond converting left in place, said once" ||
	bad "junk folders: $sent of $((N + 1)) chunks sent; $(count_in "$W") left (of $N); 'not converted' said $(grep -c 'not converted' "$W.err") times"
finish e2e-watchjunk
