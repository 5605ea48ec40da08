#!/bin/bash
# e2e_watchattack: perfconv upload --watch attacked through its folder and its backend
# (issue 31), each attack as a reviewer made it, against the receivers of
# tests/receivers/ on loopback: a chunk swapped for a FIFO or truncated at the moment
# the watcher opens or maps it (tests/watch_race.py on inotify; strace holds the
# watcher's open, mmap or read of that one file so that the moment is not luck); files
# of another user, links and other names in a folder others may write; a second
# watcher; one chunk the backend never takes; thousands of junk chunks; a full disk;
# SIGHUP; names and answers that hold terminal escapes.
source "$(dirname "$0")/e2e_lib.sh"
LOGQ=(python3 tests/receivers/logq.py)
RACE=(python3 tests/watch_race.py)
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
at_exit() { kill_pids; }
if ! receivers_ready; then
	finish e2e-watchattack
	exit 1
fi
if [ "$(id -u)" != 0 ] || ! command -v strace >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip "e2e-watchattack: needs root, strace and the user nobody (scripts/install-deps.sh)"
	finish e2e-watchattack
	exit $?
fi
DAMAGED=tests/bad/size-zero.data    # a perf.data whose conversion warns, 16 samples
JUNK=tests/bad/attr-size.data       # a header perf could write, a conversion that fails
GOOD=$TD/mt-g.data                  # 3985 samples
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
as_nobody() { "${NOBODY[@]}" "$@"; }
chmod 755 "$TMP" # the other user reaches the folders below it
# ended PID SECONDS: SIGTERM, and the process gone within SECONDS
ended() {
	kill -TERM "$1" 2>/dev/null
	wait_for "$2" sh -c "! kill -0 $1 2>/dev/null"
}
# STRACE ARGS...: strace over a watcher. A sanitizer build's leak check stops the
# process's threads with ptrace, which a traced process cannot: it is off for these
# runs (the other runs check for leaks). Run in the background, the function's shell
# becomes strace (exec): $! is strace's pid, and its child the watcher.
STRACE() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 exec strace -f -qq -o /dev/null "$@"
}
# tracee PID: the process strace PID runs
tracee() { cat /proc/"$1"/task/*/children 2>/dev/null | awk '{ print $1; exit }'; }
accepted() { "${LOGQ[@]}" "$1" count accepted; }

start_receiver rc pyroscope --save "$TMP/got" --reject-older-than 0
mkdir -p "$TMP/got"

# 1. Two watchers on one folder (31.6): the second says who holds it and exits 1;
# each chunk is sent once.
W=$TMP/lock
mkdir -p "$W"
watch "$W" --to pyroscope --url "$URL_rc"
W1=$WPID
wait_for 60 watching "$W" "$W1"
"$PERFCONV" upload --watch "$W" --to pyroscope --url "$URL_rc" "${KS[@]}" 2>"$TMP/second.err" &
P2=$!
PIDS+=("$P2")
if wait_for 60 sh -c "! kill -0 $P2 2>/dev/null"; then wait "$P2"; rc=$?; else rc=running; fi
for i in $(seq -w 1 10); do chunk $DAMAGED "$W" "perf.data.202612050000$i"; done
wait_for 120 holds "$W/sent" 10
n0=$(accepted "$LOG_rc")
stop_watch
if [ "$rc" = 1 ] && grep -q "$W: --watch: another watcher sends this folder's chunks (pid $W1, perfconv): two would send each chunk twice" "$TMP/second.err" &&
	[ "$n0" = 10 ] && [ "$("${LOGQ[@]}" "$LOG_rc" unique)" = 1 ]; then
	ok "a second watcher of the folder exits 1 naming the first ($(grep -o "another watcher.*" "$TMP/second.err")); 10 chunks sent once each"
else
	kill "$P2" 2>/dev/null
	bad "two watchers: the second's status $rc ($(head -c 300 "$TMP/second.err")); $n0 requests for 10 chunks"
fi

# 2. A chunk swapped for a FIFO (31.3) at the watcher's open of it (A: strace holds
# each open of it 150 ms, the swap comes 50 ms in) and once it has read past its header
# (B: each read of it held 100 ms, the swap 20 ms into its second read: where a
# conversion that opens it by name again would open the FIFO and wait for good).
# Nothing may hang: the chunk after them is sent and SIGTERM ends the watcher.
W=$TMP/fifo
mkdir -p "$W"
A=perf.data.2026120501000001 B=perf.data.2026120501000002 C=perf.data.2026120501000003
"${RACE[@]}" "$W" "$A:open:1:50:fifo" "$B:access2:1:20:fifo" >"$TMP/race2.log" &
PIDS+=($!)
wait_for 120 grep -q ready "$TMP/race2.log"
chunk $DAMAGED "$W" $A
chunk $DAMAGED "$W" $B
chunk $GOOD "$W" $C
STRACE -P "$W/$A" -P "$W/$B" -e trace=openat,pread64 \
	-e inject=openat:delay_exit=150000 -e inject=pread64:delay_exit=100000 \
	"$PERFCONV" upload --watch "$W" --to pyroscope --url "$URL_rc" "${KS[@]}" 2>"$W.err" &
SP=$!
PIDS+=("$SP")
wait_for 120 test -e "$W/sent/$C"
sent_c=$?
sleep 0.3
if [ $sent_c = 0 ] && ended "$(tracee $SP)" 10 && wait "$SP"; then
	ok "chunks swapped for a FIFO at the watcher's first and second open: nothing hangs, the chunk after them sent, SIGTERM ends it ($(tr '\n' ' ' <"$TMP/race2.log"))"
else
	bad "FIFO swap: the chunk after it $([ $sent_c = 0 ] && echo sent || echo 'never sent'); the watcher $(kill -0 $SP 2>/dev/null && echo 'still running after SIGTERM' || echo ended); $(tail -3 "$W.err" | cut -c1-200)"
	kill -KILL "$SP" "$(tracee $SP)" 2>/dev/null
fi

# 3. A chunk truncated while it is converted (31.4), in two runs of a watcher, each
# over a folder of that chunk and a good one after it. D: 150 ms after the watcher's
# second read of it since it opened it (past its header: where a conversion that
# opens it by name again maps it; each read held 50 ms, so that inotify does not merge
# them), each mmap of it held 300 ms: a mapped file cut short is SIGBUS on the next
# read of a page past its end. E: truncated during the watcher's first
# read of it (each read of it held 200 ms): given up, said, not sent half. Each time
# the watcher goes on (the good chunk sent) and ends on SIGTERM with status 0.
# trunc_run DIR NAME RULE INJECT...: $rc (0, or how it died), $SENT (requests accepted)
trunc_run() {
	local w=$1 name=$2 rule=$3 n0 sp inj=()
	shift 3
	for i in "$@"; do inj+=(-e "inject=$i"); done
	mkdir -p "$w"
	"${RACE[@]}" "$w" "$name:$rule" >"$w.race" &
	PIDS+=($!)
	wait_for 60 grep -q ready "$w.race"
	chunk $GOOD "$w" "$name"
	chunk $DAMAGED "$w" perf.data.2026120502000009
	n0=$(accepted "$LOG_rc")
	STRACE -P "$w/$name" -e trace=openat,mmap,pread64 "${inj[@]}" \
		"$PERFCONV" upload --watch "$w" --to pyroscope --url "$URL_rc" "${KS[@]}" 2>"$w.err" &
	sp=$!
	PIDS+=("$sp")
	wait_for 120 test -e "$w/sent/perf.data.2026120502000009"
	sleep 0.3
	rc=dead
	kill -0 "$sp" 2>/dev/null && ended "$(tracee $sp)" 10 && wait "$sp" && rc=0
	[ "$rc" = dead ] && { wait "$sp"; rc="dead, status $?"; }
	SENT=$(($(accepted "$LOG_rc") - n0))
}
D=perf.data.2026120502000001 E=perf.data.2026120502000002
trunc_run "$TMP/truncD" $D access2:1:150:truncate pread64:delay_exit=50000 mmap:delay_exit=300000
[ "$rc" = 0 ] && [ -e "$TMP/truncD/sent/$D" ] && [ "$SENT" = 2 ] &&
	ok "a chunk truncated once the watcher has read past its header: it lives on, the chunk as read is sent, and the next" ||
	bad "truncated past its header: watcher $rc; $SENT sent; $(grep -v damaged "$TMP/truncD.err" | tail -3 | cut -c1-200)"
trunc_run "$TMP/truncE" $E access:1:50:truncate pread64:delay_exit=200000
if [ "$rc" = 0 ] && [ -e "$TMP/truncE/$E" ] && [ "$SENT" = 1 ] &&
	grep -q "$TMP/truncE/$E: warning: changed while it was read (8192 of [0-9]* bytes read): not sent: left in place" "$TMP/truncE.err"; then
	ok "a chunk truncated during the watcher's read of it: said, not sent ('$(grep -o 'changed while.*not sent' "$TMP/truncE.err")'), the next sent"
else
	bad "truncated during its read: watcher $rc; $SENT sent; $(grep -v damaged "$TMP/truncE.err" | tail -3 | cut -c1-200)"
fi

# 4. The folder is not trusted (31.5): chunks of another user, writable by others,
# with two names, links; a sent/ that is a link; then one good chunk, sent. With
# --trust-folder the other user's chunk is sent.
W=$TMP/trust
mkdir -p "$W" "$TMP/elsewhere"
chmod 1777 "$W"
as_nobody sh -c 'cat >"$1"' sh "$W/perf.data.2026120503000001" <$DAMAGED # another user's
chunk $DAMAGED "$W" perf.data.2026120503000002
chmod 0666 "$W/perf.data.2026120503000002"                            # anyone may write it
chunk $DAMAGED "$TMP" perf.data.hl
ln "$TMP/perf.data.hl" "$W/perf.data.2026120503000003"                # two names
as_nobody ln -s /root/secret.data "$W/perf.data.2026120503000004"  # a link
chunk $GOOD "$W" perf.data.2026120503000005
n0=$(accepted "$LOG_rc")
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 120 test -e "$W/sent/perf.data.2026120503000005"
stop_watch
e=$W.err
if [ "$(accepted "$LOG_rc")" = $((n0 + 1)) ] &&
	grep -q "perf.data.2026120503000001: warning: owned by uid 65534, not by perfconv's user (uid 0) or root: not sent (--trust-folder sends it)" "$e" &&
	grep -q "perf.data.2026120503000002: warning: writable by others (mode 666): not sent" "$e" &&
	grep -q "perf.data.2026120503000003: warning: has 2 names (hard links)" "$e" &&
	grep -q "perf.data.2026120503000004: warning: a symbolic link: perfconv follows no link in the folder" "$e"; then
	ok "another user's chunk, one anyone may write, one with two names, a link: not sent, each said; the good one sent"
else
	bad "untrusted chunks: $(($(accepted "$LOG_rc") - n0)) sent of 1; $(grep warning "$e" | cut -c1-160 | tr '\n' '|')"
fi
rm -rf "$W/sent"
ln -s "$TMP/elsewhere" "$W/sent"
chunk $DAMAGED "$W" perf.data.2026120503000006
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 120 grep -q "sent: not a folder" "$W.err"
stop_watch
[ -z "$(ls "$TMP/elsewhere")" ] && grep -q "$W/sent: not a folder (a link?): not used" "$W.err" &&
	ok "a sent/ that is a link: nothing moved through it, said" ||
	bad "sent/ link: moved into it: $(ls "$TMP/elsewhere"); $(tail -2 "$W.err")"
rm -f "$W/sent"
n0=$(accepted "$LOG_rc")
watch "$W" --to pyroscope --url "$URL_rc" --trust-folder
wait_for 120 test -e "$W/sent/perf.data.2026120503000001"
stop_watch
[ -e "$W/sent/perf.data.2026120503000001" ] && [ ! -e "$W/sent/perf.data.2026120503000004" ] &&
	ok "--trust-folder: another user's chunk is sent; a link still is not" ||
	bad "--trust-folder: sent/ $(ls "$W/sent" | tr '\n' ' ')"

# A perf map another user dropped beside a chunk renames its JIT frames: not used, said;
# the same map root's names them.
W=$TMP/map
mkdir -p "$W"
chmod 1777 "$W"
chunk $TD/jit/node-map.data "$W" perf.data.2026120504000001
as_nobody sh -c 'cat >"$1"' sh "$W/perf-30787.map" <$TD/jit/perf-30787.map
rm -rf "$TMP/got" && mkdir -p "$TMP/got"
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 120 test -e "$W/sent/perf.data.2026120504000001"
stop_watch
cp "$W.err" "$TMP/map.first.err"
named_other=$(zcat "$TMP"/got/*.pb.gz 2>/dev/null | grep -a -c 'JS:\*fibonacci')
rm -f "$W/perf-30787.map" "$TMP"/got/*
cp $TD/jit/perf-30787.map "$W/perf-30787.map"
mv "$W/sent/perf.data.2026120504000001" "$W/perf.data.2026120504000002"
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 120 test -e "$W/sent/perf.data.2026120504000002"
stop_watch
named_root=$(zcat "$TMP"/got/*.pb.gz 2>/dev/null | grep -a -c 'JS:\*fibonacci')
if [ "$named_other" = 0 ] && [ "$named_root" -gt 0 ] &&
	grep -q "$W/perf-30787.map: warning: owned by uid 65534, not by the recording's owner (uid 0) or root: not used (--trust-folder uses it)" "$TMP/map.first.err"; then
	ok "a perf map of another user's beside a chunk: not used, said; root's names its JIT frames"
else
	bad "perf map of another user: frames named by it: $named_other; by root's: $named_root; $(grep 'perf-30787' "$TMP/map.first.err" | head -2)"
fi

# The same for a jitdump another user dropped beside a chunk (node.data's dump of pid
# 30720): not used, said; the chunk's JIT frames are then addresses.
W=$TMP/dump
mkdir -p "$W"
chmod 1777 "$W"
chunk $TD/jit/node.data "$W" perf.data.2026120504100001
as_nobody sh -c 'cat >"$1"' sh "$W/jit-30720.dump" <$TD/jit/jit-30720.dump
rm -f "$TMP"/got/*
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 120 test -e "$W/sent/perf.data.2026120504100001"
stop_watch
named=$(zcat "$TMP"/got/*.pb.gz 2>/dev/null | grep -a -c 'JS:\*fibonacci')
[ -e "$W/sent/perf.data.2026120504100001" ] && [ "$named" = 0 ] &&
	grep -q "$W/jit-30720.dump: warning: owned by uid 65534, not by the recording's owner (uid 0) or root: not used" "$W.err" &&
	ok "a jitdump of another user's beside a chunk: not used, said" ||
	bad "a jitdump of another user: frames named by it: $named; $(grep -v damaged "$W.err" | tail -3 | cut -c1-200)"

# 5. One chunk the backend never takes (31.8): a 500 for each try of it. The chunks
# after it are sent meanwhile; it is set aside, said, then moved to refused/ after 10
# failed tries with later chunks sent.
stop_receiver rc
start_receiver poison pyroscope --fail-samples 3985 --reject-older-than 0
W=$TMP/poison
mkdir -p "$W"
chunk $GOOD "$W" perf.data.2026120505000001
for i in 2 3 4 5 6 7; do chunk $DAMAGED "$W" "perf.data.202612050500000$i"; done
watch "$W" --to pyroscope --url "$URL_poison" --retry-cap 2
wait_for 120 holds "$W/sent" 6
six=$?
wait_for 120 test -e "$W/refused/perf.data.2026120505000001"
stop_watch
if [ $six = 0 ] && [ -e "$W/refused/perf.data.2026120505000001" ] && [ "$(accepted "$LOG_poison")" = 6 ] &&
	grep -q "perf.data.2026120505000001: warning: set aside after 3 failed tries (last: HTTP 500: fault fail-samples): the chunks after it go first, then it is tried again" "$W.err" &&
	grep -q "perf.data.2026120505000001: warning: failed 10 times (last: HTTP 500: fault fail-samples) while 6 later chunks were sent: .* takes the others, not this one; moved to refused/" "$W.err"; then
	ok "a chunk the backend never takes: set aside after 3 tries, the 6 after it sent within 20 s, then refused/ after 10, each said"
else
	bad "one chunk always 500: $(count_in "$W/sent") of 6 others sent in 20 s; refused/: $(ls "$W/refused" 2>/dev/null); $(grep -E 'set aside|failed' "$W.err" | cut -c1-200)"
fi
stop_receiver poison
start_receiver rc pyroscope --reject-older-than 0

# 6. 3,000 junk chunks (31.10): named as perf names chunks, older than the good one, each
# a header perf could write and a conversion that fails. Each is opened once (counted
# with inotify: a watcher that looks at the folder again after each one opens them
# thousands of times) and given up, said once (one cause); the good one follows.
W=$TMP/junk
mkdir -p "$W"
for i in $(seq 1 3000); do cp $JUNK "$W/perf.data.20261205060$(printf %05d $i)"; done
chunk $GOOD "$W" perf.data.2026120506100000
"${RACE[@]}" --count "$W" >"$TMP/opens" &
CP=$!
PIDS+=("$CP")
# counting from its first open: python's start took over the 0.3 s once slept here on a
# loaded machine, and the watcher's first opens went uncounted (2,993 of 3,001)
wait_for 120 grep -q ready "$TMP/opens"
t0=$(date +%s%N)
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 90 test -e "$W/sent/perf.data.2026120506100000"
t=$(( ($(date +%s%N) - t0) / 1000000 ))
stop_watch
kill -TERM $CP
wait $CP
read -r _ files _ opens _ most < <(tail -1 "$TMP/opens")
if [ -e "$W/sent/perf.data.2026120506100000" ] && [ "$files" = 3001 ] && [ "$opens" -le 3002 ] &&
	[ "$most" -le 2 ] && [ "$(grep -c 'not converted' "$W.err")" -le 2 ]; then
	ok "3,000 junk chunks before a good one: each opened once ($opens opens of $files files), said once; the good one sent after $t ms"
else
	bad "3,000 junk chunks: $(tail -1 "$TMP/opens") (once each is 3001); the good one $([ -e "$W/sent/perf.data.2026120506100000" ] && echo "sent after $t ms" || echo "not sent in 90 s"); 'not converted' said $(grep -c 'not converted' "$W.err") times"
fi

# 7. A disk nearly full (31.11): a 4 MiB filesystem (tmpfs, in a mount namespace of its
# own) 97% full: said.
mkdir -p "$TMP/full"
unshare -m sh -c '
	mount -t tmpfs -o size=4M tmpfs "$1" || exit 3
	head -c 4000000 /dev/zero >"$1/filler"
	cp "$2" "$1/perf.data.2026120507000001"
	"$3" upload --watch "$1" --to pyroscope --url "$4" --kallsyms "$5" 2>"$6" &
	# stopped once it said so (or after 120 s), however long its start took
	i=0
	while [ $i -lt 1200 ] && ! grep -q "its filesystem has" "$6"; do sleep 0.1; i=$((i + 1)); done
	kill -TERM $!
	wait $!
' sh "$TMP/full" "$DAMAGED" "$PERFCONV" "$URL_rc" $TD/kallsyms.gz "$TMP/full.err" 2>"$TMP/unshare.err"
grep -q "$TMP/full: warning: its filesystem has [0-9.]* KiB free ([0-9]%): perf record stops writing chunks when it is full; 1 chunk (7.9 KiB) waits to be sent" "$TMP/full.err" &&
	ok "a folder whose filesystem is 97% full: said ('$(grep -o 'its filesystem.*' "$TMP/full.err")')" ||
	bad "full disk: $(cat "$TMP/unshare.err" "$TMP/full.err" | grep -v damaged | head -3)"

# 7b. At least once (31.13), as docs/UPLOADING.md says: a watcher killed (SIGKILL) after the
# backend took a chunk and before it was marked sent (strace holds each renameat 3 s)
# sends it again when it starts again: the receiver gets the same profile twice. The
# docs/UPLOADING.md's "At least once" names this case.
W=$TMP/twice
mkdir -p "$W"
chunk $DAMAGED "$W" perf.data.2026120507500001
n0=$(accepted "$LOG_rc")
STRACE -e trace=renameat,renameat2 -e inject=renameat,renameat2:delay_enter=3000000 \
	"$PERFCONV" upload --watch "$W" --to pyroscope --url "$URL_rc" "${KS[@]}" 2>"$W.err" &
SP=$!
PIDS+=("$SP")
wait_for 120 sh -c "[ \$(${LOGQ[*]} $LOG_rc count accepted) -gt $n0 ]"
kill -KILL "$(tracee $SP)" 2>/dev/null
wait "$SP" 2>/dev/null
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 120 test -e "$W/sent/perf.data.2026120507500001"
stop_watch
sha=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2]):]; a=[x.get("sha256") for x in r if x["outcome"]=="accepted"]; print(len(a), len(set(a)))' "$LOG_rc" "$n0")
if [ "$sha" = "2 1" ] && grep -q '^\*\*At least once\.\*\* A chunk is marked sent' docs/UPLOADING.md &&
	grep -q 'killed (`kill -9`, a crash' docs/UPLOADING.md; then
	ok "killed between the backend's 2xx and the rename: the chunk is sent again at the next start (the same profile twice), as docs/UPLOADING.md's 'At least once' says"
else
	bad "at least once: accepted, distinct after the kill: $sha (2 1 expected); the paragraph $(grep -c 'At least once' docs/UPLOADING.md)"
fi

# 8. SIGHUP (31.12): ends the watcher as SIGTERM does, status 0, and says why.
W=$TMP/hup
mkdir -p "$W"
watch "$W" --to pyroscope --url "$URL_rc"
wait_for 60 watching "$W" "$WPID"
kill -HUP "$WPID"
wait "$WPID"
rc=$?
[ $rc = 0 ] && grep -q "stopped watching $W on SIGHUP: perfconv re-reads no configuration" "$W.err" &&
	ok "SIGHUP: stopped cleanly, status 0, said ('$(grep -o 'on SIGHUP.*' "$W.err" | cut -c1-90)')" ||
	bad "SIGHUP: status $rc; $(tail -2 "$W.err")"

# 9. Names and answers that hold terminal escapes (31.14): a chunk named with a newline,
# a fake log line and an escape sequence; a backend answer with ESC, C1's CSI and a
# bidi override. Printed escaped: no line of their own, no escape byte.
W=$TMP/esc
mkdir -p "$W"
cp $JUNK "$W/perf"$'\n'"perfconv: fake line "$'\e[2J'".2026120509000001"
chunk $DAMAGED "$W" perf.data.2026120509000002
stop_receiver rc
start_receiver evil pyroscope --faults evil --reject-older-than 0
watch "$W" --to pyroscope --url "$URL_evil"
wait_for 120 test -e "$W/refused/perf.data.2026120509000002"
stop_watch
if ! grep -q '^perfconv: fake line' "$W.err" && ! grep -q $'\e' "$W.err" &&
	! grep -q $'\xc2\x9b' "$W.err" && ! grep -q $'\xe2\x80\xae' "$W.err" &&
	grep -qF 'perf\x0aperfconv: fake line \x1b[2J.2026120509000001' "$W.err" &&
	grep -qF 'HTTP 400: bad request [2J ]0;owned  \xc2\x9b31m red \xe2\x80\xaegnp.exe; moved to refused/' "$W.err"; then
	ok "a chunk name and an answer holding a newline, ESC, C1's CSI and a bidi override: printed escaped"
else
	bad "escapes: $(grep -a -c '' "$W.err") lines; $(cat -v "$W.err" | grep -v damaged | head -4 | cut -c1-200)"
fi
stop_receiver evil

finish e2e-watchattack
