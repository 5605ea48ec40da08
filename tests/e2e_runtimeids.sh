#!/bin/bash
# e2e_runtimeids: the watcher's .perfconv-runtime-ids cannot be kept from being saved
# by what another user plants in the folder (issue 42, finding 11). It was written
# through one fixed temporary name, .perfconv-runtime-ids.new: a directory there (or any
# thing that name could not be removed from) stopped every save without a word, and
# each restart gave the same run of perf record a new Datadog runtime-id and profile_seq
# from 0. Now each save takes a name no one can foresee, what a crash left is removed
# when it is perfconv's own (nothing else is), and a save that fails is said. Against
# the Datadog receiver of tests/receivers/ on loopback; as root (setpriv for the
# other user's plants).
source "$(dirname "$0")/e2e_lib.sh"
LOGQ=(python3 tests/receivers/logq.py)
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
at_exit() { kill_pids; }
if ! receivers_ready; then
	finish e2e-runtimeids
	exit 1
fi
if [ "$(id -u)" != 0 ] || ! setpriv --version >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	skip "e2e-runtimeids: needs root, setpriv and the user nobody"
	finish e2e-runtimeids
	exit $?
fi
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
GOOD=$TD/mt-g.data
chmod 755 "$TMP" # the other user reaches the folder below it
STATE=.perfconv-runtime-ids
# ids LOG: "runtime-id:profile_seq ..." of the profiles the receiver accepted, in order
ids() { python3 -c '
import json, sys
print(" ".join("%s:%s" % (r["runtime_id"], r["profile_seq"]) for r in map(json.loads, open(sys.argv[1]))
               if r.get("outcome") == "accepted"))' "$1"; }
# one_run IDS N: N profiles, one runtime-id, profile_seq 0 to N-1
one_run() { python3 -c '
import sys
got, n = sys.argv[1].split(), int(sys.argv[2])
ok = len(got) == n and len({g.split(":")[0] for g in got}) == 1 and [int(g.split(":")[1]) for g in got] == list(range(n))
sys.exit(0 if ok else 1)' "$1" "$2"; }
# watch_until DIR N: a watcher of DIR until sent/ holds N chunks, then stopped
watch_until() {
	watch "$1" --to datadog --url "$URL_dd"
	wait_for 120 holds "$1/sent" "$2"
	stop_watch
	cat "$1.err" >>"$1.errs"
}

start_receiver dd datadog

# 1. A folder anyone may write (sticky, as /tmp is): a directory at the old temporary
# name, root's, and the other user's links and files at names of the new pattern; a
# leftover of perfconv's own, one of root's with two names. Two chunks of one run sent,
# the watcher started again, a third sent: one runtime-id, profile_seq 0, 1, 2.
W=$TMP/w1
mkdir -p "$W"
chmod 1777 "$W"
mkdir "$W/$STATE.new"                                                 # root's directory
"${AS_NOBODY[@]}" ln -s /etc/shadow "$W/$STATE.tmp-00000000"          # a link at the pattern
"${AS_NOBODY[@]}" sh -c 'echo nobody >"$1"' sh "$W/$STATE.tmp-11111111"  # another's file
echo leftover >"$W/$STATE.tmp-22222222"                               # a crash's leftover
echo kept >"$TMP/elsewhere"
ln "$TMP/elsewhere" "$W/$STATE.tmp-33333333"                          # root's, two names
chunk $GOOD "$W" perf.data.2026120700000001
chunk $GOOD "$W" perf.data.2026120700000002
watch_until "$W" 2
chunk $GOOD "$W" perf.data.2026120700000003
watch_until "$W" 3
got=$(ids "$LOG_dd")
if one_run "$got" 3 && [ -d "$W/$STATE.new" ] && [ -f "$W/$STATE" ] && ! grep -q "not saved" "$W.errs"; then
	ok "a directory at $STATE.new and others' things beside it: one runtime-id across the restart, profile_seq 0 1 2: $got"
else
	bad "planted $STATE.new: got '$got'; $STATE: $(ls -ld "$W/$STATE" 2>&1 | cut -c1-60); $(grep -v damaged "$W.errs" | tail -3)"
fi
left=$(cd "$W" && ls -A | grep "^$STATE\.tmp-" | sort | tr '\n' ' ')
if [ "$left" = "$STATE.tmp-00000000 $STATE.tmp-11111111 $STATE.tmp-33333333 " ] &&
	[ "$(cat "$TMP/elsewhere")" = kept ] && [ -L "$W/$STATE.tmp-00000000" ] && [ -s /etc/shadow ]; then
	ok "at the start, perfconv's own leftover removed; another's link and file, and root's file with two names, left alone"
else
	bad "leftovers: '$left' in the folder; elsewhere: $(cat "$TMP/elsewhere")"
fi

# 2. The same planted by the other user alone, then the watcher started once more: the
# run goes on (profile_seq 3), the receiver's log read afresh
W=$TMP/w2
mkdir -p "$W"
chmod 1777 "$W"
"${AS_NOBODY[@]}" mkdir "$W/$STATE.new"
"${AS_NOBODY[@]}" mkdir "$W/$STATE.new/sub"
: >"$LOG_dd"
chunk $GOOD "$W" perf.data.2026120700000001
watch_until "$W" 1
chunk $GOOD "$W" perf.data.2026120700000002
watch_until "$W" 2
chunk $GOOD "$W" perf.data.2026120700000003
watch_until "$W" 3
got=$(ids "$LOG_dd")
if one_run "$got" 3 && ! grep -q "not saved" "$W.errs"; then
	ok "the other user's directory (not empty) at $STATE.new: one runtime-id across two restarts, profile_seq 0 1 2: $got"
else
	bad "nobody's $STATE.new: got '$got'; $(grep -v damaged "$W.errs" | tail -3)"
fi

# 3. What cannot be mended: a directory at the file's own name. Said, naming the file,
# and nothing of the saves left behind.
W=$TMP/w3
mkdir -p "$W/$STATE"
: >"$LOG_dd"
chunk $GOOD "$W" perf.data.2026120700000001
watch_until "$W" 1
msg="$W/$STATE: not saved (the new file renamed over it: Is a directory): a perfconv started again would give the runs going on a new Datadog runtime-id and profile_seq from 0"
if grep -qF "$msg" "$W.errs" && [ -z "$(cd "$W" && ls -A | grep "^$STATE\.tmp-")" ] &&
	[ "$(ids "$LOG_dd" | wc -w)" = 1 ]; then
	ok "a directory at $STATE itself: the profile sent, and said: '$(grep -o "not saved.*" "$W.errs" | head -1)'"
else
	bad "a directory at $STATE: $(ids "$LOG_dd"); $(grep -v damaged "$W.errs" | tail -3); left: $(ls -A "$W")"
fi

finish e2e-runtimeids
