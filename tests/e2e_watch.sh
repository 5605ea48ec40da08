#!/bin/bash
# e2e_watch: perfconv upload --watch over days (issue 30, parts 4 to 7), against the
# receivers of tests/receivers/: warnings said once per cause and never silenced, a
# refusal said after 30 warnings (and one for its age, with Pyroscope's limit); the
# backlog held to --max-backlog by dropping the oldest, each said; sent/ pruned to
# --keep-sent by size and by age; and the profiles of a real `perf record
# --switch-output` run tiling its time: each one's start is the one before's end, in
# the pprof (time_nanos, duration_nanos) and in each backend's request (Datadog's
# start/end, Pyroscope's from/until), across a restart of the watcher too.
source "$(dirname "$0")/e2e_lib.sh"
LOGQ=(python3 tests/receivers/logq.py)
# no agent or key of the machine's may leak into the tests
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
at_exit() { kill_pids; }
if ! receivers_ready; then
	finish e2e-watch
	exit 1
fi
# a small chunk that gives one warning each time it is converted (a damaged record)
DAMAGED=tests/bad/size-zero.data


# 1. Messages that last: 30 chunks that each give the same warning, then one
# Pyroscope refuses for its age (mt-k1.data: perf's clock data dates it to when it
# was recorded, and the receiver applies Pyroscope's default hour).
W=$TMP/w1
mkdir -p "$W"
for i in $(seq -w 1 30); do chunk $DAMAGED "$W" "perf.data.20261129100000$i"; done
chunk $TD/mt-k1.data "$W" perf.data.2026112910000031
start_receiver py pyroscope --reject-older-than 3600
watch "$W" --to pyroscope --url "$URL_py" --service watched
wait_for 90 test -e "$W/refused/perf.data.2026112910000031"
stop_watch
err=$W.err
n=$(grep -c 'damaged record' "$err")
if [ "$(count_in "$W/sent")" = 30 ] && [ "$("${LOGQ[@]}" "$LOG_py" count accepted)" = 30 ] &&
	grep -q "perf.data.2026112910000031: warning: refused by $URL_py/ingest as too old: Pyroscope refuses a profile that began more than 1 hour ago (its default -validation.reject-older-than=1h), and this one began [0-9]* [dh] [0-9]* [hmin]* ago; moved to refused/, not sent again (HTTP 4" "$err"; then
	ok "after 30 warnings the refusal is said: '$(grep -o 'perf.data.2026112910000031: warning: refused by.*ago;' "$err")'"
else
	bad "refusal after 30 warnings: $(count_in "$W/sent") sent, refused/: $(ls "$W/refused" 2>/dev/null); $(grep -v damaged "$err" | tail -4)"
fi
[ -e "$W/refused/perf.data.2026112910000031" ] && [ "$("${LOGQ[@]}" "$LOG_py" count refused)" = 1 ] &&
	ok "the chunk refused for its age is kept in refused/ and sent once, not again" ||
	bad "too old: refused/ $(ls "$W/refused" 2>/dev/null), $("${LOGQ[@]}" "$LOG_py" count refused) refusals"
if ! grep -q 'further warnings' "$err" && [ "$n" = 2 ] &&
	grep -q '^perfconv: .*/perf.data.2026112910000001: offset 0x1a8: warning: PERF_RECORD_ID_INDEX: damaged record (size 0): 144 bytes skipped' "$err" &&
	grep -q 'damaged record .*(also 29 times since [0-9:]* UTC, not shown)$' "$err"; then
	ok "the same warning of 30 chunks: said once, then its count when the watcher stops, never 'further warnings are counted'"
else
	bad "warnings of 30 chunks: 'damaged record' said $n times: $(grep -E 'damaged|further' "$err" | cut -c1-160)"
fi
stop_receiver py

# 2. The backlog: the backend down, --max-backlog 3 of 5 chunks: the two oldest are
# dropped (the one being retried too), each said; then by size, deleted.
W=$TMP/w2
mkdir -p "$W"
for i in 1 2 3 4 5; do chunk $DAMAGED "$W" "perf.data.202611291100000$i"; done
watch "$W" --to parca --url "http://127.0.0.1:$(closed_port)" --max-backlog 3
wait_for 120 holds "$W/dropped" 2
chunk $DAMAGED "$W" perf.data.2026112911000006
wait_for 120 holds "$W/dropped" 3
stop_watch
err=$W.err
if [ "$(ls "$W/dropped" | tr '\n' ' ')" = "perf.data.2026112911000001 perf.data.2026112911000002 perf.data.2026112911000003 " ] &&
	[ "$(ls "$W" | grep '^perf' | tr '\n' ' ')" = "perf.data.2026112911000004 perf.data.2026112911000005 perf.data.2026112911000006 " ] &&
	grep -q "perf.data.2026112911000001: warning: dropped, never sent: the backlog of 5 chunks (40 KiB) is over --max-backlog 3 chunks; moved to dropped/ (1 dropped since perfconv started)" "$err" &&
	grep -q "perf.data.2026112911000002: warning: dropped, never sent: .*(2 dropped since perfconv started)" "$err" &&
	grep -q "perf.data.2026112911000003: warning: dropped, never sent: the backlog of 4 chunks .*(3 dropped since perfconv started)" "$err"; then
	ok "--max-backlog 3, backend down: the oldest dropped to dropped/ as chunks come, each said: '$(grep -m1 -o 'perf.data.2026112911000001: warning: dropped.*' "$err")'"
else
	bad "--max-backlog 3: dropped/ $(ls "$W/dropped" 2>/dev/null | tr '\n' ' '), left $(ls "$W" | tr '\n' ' '): $(grep -E 'dropped|error' "$err" | head -4)"
fi
watch "$W" --to parca --url "http://127.0.0.1:$(closed_port)" --max-backlog 20K --delete-sent
wait_for 120 holds "$W" 2
stop_watch
[ "$(ls "$W" | grep '^perf' | tr '\n' ' ')" = "perf.data.2026112911000005 perf.data.2026112911000006 " ] &&
	[ "$(count_in "$W/dropped")" = 3 ] &&
	grep -q "perf.data.2026112911000004: warning: dropped, never sent: the backlog of 3 chunks (24 KiB) is over --max-backlog 20 KiB; deleted (1 dropped since perfconv started)" "$W.err" &&
	ok "--max-backlog 20K --delete-sent: the oldest deleted until 16 KiB are left, said" ||
	bad "--max-backlog 20K: left $(ls "$W" | tr '\n' ' '): $(grep -E 'dropped|error' "$W.err" | head -3)"

# 3. --keep-sent: by size (20K holds two 8 KiB chunks), then by age (a chunk whose
# window ended long ago goes at once, today's stays)
W=$TMP/w3
mkdir -p "$W"
for i in 1 2 3 4 5; do chunk $DAMAGED "$W" "perf.data.202611291200000$i"; done
start_receiver pa parca
watch "$W" --to parca --url "$URL_pa" --keep-sent 20K
wait_for 120 holds "$W" 0
stop_watch
[ "$("${LOGQ[@]}" "$LOG_pa" count accepted)" = 5 ] &&
	[ "$(ls "$W/sent" | tr '\n' ' ')" = "perf.data.2026112912000004 perf.data.2026112912000005 " ] &&
	grep -q "$W/sent: pruned to --keep-sent 20 KiB: its oldest chunks are deleted from now on" "$W.err" &&
	ok "--keep-sent 20K: 5 chunks sent, sent/ keeps the newest 2 (16 KiB)" ||
	bad "--keep-sent 20K: $("${LOGQ[@]}" "$LOG_pa" count accepted) accepted, sent/: $(ls "$W/sent" | tr '\n' ' ')"
W=$TMP/w3b
mkdir -p "$W"
chunk $TD/mt-k1.data "$W" perf.data.2026112913000001
chunk $DAMAGED "$W" perf.data.2026112913000002
watch "$W" --to parca --url "$URL_pa" --keep-sent 1d --keep-sent 1G
wait_for 120 holds "$W" 0
stop_watch
[ "$("${LOGQ[@]}" "$LOG_pa" count accepted)" = 7 ] &&
	[ "$(ls "$W/sent" | tr '\n' ' ')" = "perf.data.2026112913000002 " ] &&
	grep -q "$W/sent: pruned to --keep-sent 1 GiB and 1 d: its oldest chunks are deleted from now on" "$W.err" &&
	ok "--keep-sent 1d --keep-sent 1G: mt-k1.data's chunk (its window ended when it was recorded, days ago) pruned from sent/ once sent; today's kept" ||
	bad "--keep-sent 1d: sent/: $(ls -l --time-style=+%F "$W/sent" 2>/dev/null | tail -n +2)"
stop_receiver pa

# 4. Windows that tile time: a real perf record --switch-output, as root.
# windows LOG BACKEND: "start end" per accepted profile, ns, from the pprof; and for
# each backend's request its own pair (Datadog's start/end, Pyroscope's from/until)
windows() {
	python3 - "$1" "$2" <<'EOF'
import datetime, json, sys
log, be = sys.argv[1], sys.argv[2]
def rfc(s):  # RFC 3339 with nanoseconds, UTC
	d = datetime.datetime.fromisoformat(s[:19] + "+00:00")
	return int(d.timestamp()) * 10**9 + int((s[20:-1] + "000000000")[:9])
for l in open(log):
	j = json.loads(l)
	if j["outcome"] != "accepted":
		continue
	p = j["profiles"][0] if "profiles" in j else j
	t, d = int(p["time_nanos"]), int(p["duration_nanos"])
	req = {"datadog": lambda: (rfc(j["start"]), rfc(j["end"])),
	       "pyroscope": lambda: (j["from"], j["until"]),
	       "parca": lambda: (t, t + d)}[be]()
	print(t, t + d, *req)
EOF
}
# abut FILE: 0 when each line's end is the next line's start, in the pprof and in the
# request, and the request's pair is the pprof's (Pyroscope: its whole seconds, rounded).
# A window may be a moment long only where it is the first (perf's first chunk can
# hold a single sample when the machine is busy: the window runs from it to itself);
# the others follow one that ended, and span time.
abut() {
	python3 - "$1" "$2" <<'EOF'
import sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
be = sys.argv[2]
ok = len(rows) >= 2
for i, (s, e, rs, re) in enumerate(rows):
	want = ((s + 500000000) // 10**9, (e + 500000000) // 10**9) if be == "pyroscope" else (s, e)
	ok &= (rs, re) == want and (e > s or (i == 0 and e == s))
	if i + 1 < len(rows):
		ok &= e == rows[i + 1][0] and re == rows[i + 1][2]
sys.exit(0 if ok else 1)
EOF
}
if [ "$(id -u)" = 0 ] && perf record -q -e cpu-clock -o "$TMP/probe.data" true 2>/dev/null; then
	R=$TMP/rec
	mkdir -p "$R"
	for k in k1 nok; do
		mkdir -p "$R/$k"
		record_chunks 2 "$R/$k" -q $([ $k = k1 ] && echo -k 1) -e cpu-clock -F 499 -g --switch-output=1s \
			-o "$R/$k/perf.data" -- sh -c 'end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do :; done'
	done
	CH=($(ls "$R/k1" | grep '^perf\.data\.'))
	for be in datadog pyroscope parca; do
		start_receiver "t_$be" $be
		v=URL_t_$be
		W=$TMP/tile-$be
		mkdir -p "$W"
		if [ $be = parca ]; then
			# the first chunk alone, then the watcher stopped; the others come, and the
			# next run's first window starts where sent/'s newest ended
			cp -p "$R/k1/${CH[0]}" "$W/"
			watch "$W" --to $be --url "${!v}" --service tiled
			wait_for 120 test -e "$W/sent/${CH[0]}"
			stop_watch
			for c in "${CH[@]:1}"; do cp -p "$R/k1/$c" "$W/"; done
		else
			for c in "${CH[@]}"; do cp -p "$R/k1/$c" "$W/"; done
		fi
		watch "$W" --to $be --url "${!v}" --service tiled
		wait_for 60 holds "$W" 0
		stop_watch
		v=LOG_t_$be
		windows "${!v}" $be >"$TMP/win-$be"
		if [ "$(wc -l <"$TMP/win-$be")" = ${#CH[@]} ] && abut "$TMP/win-$be" $be; then
			ok "perf record -k 1 --switch-output=1s to $be: ${#CH[@]} profiles, each starting where the one before ended (pprof and request$([ $be = parca ] && echo ', across a restart')): $(awk '{printf "%.3f ", ($2 - $1) / 1e9}' "$TMP/win-$be")s"
		else
			bad "windows to $be: ${#CH[@]} chunks: $(cat "$TMP/win-$be" | tr '\n' ';') $(tail -3 "$W.err")"
		fi
		stop_receiver "t_$be"
	done
	# the first window is the first chunk's own (its first sample on), as a one-off
	# conversion gives it; sent/'s newest has its window's end as its time
	"$PERFCONV" -q -i "$R/k1/${CH[0]}" "${KS[@]}" --for parca -o "$TMP/first.pb.gz"
	first=$(node --input-type=module -e "const {decodePprof} = await import('$PWD/tests/receivers/rules.mjs');
		const fs = await import('node:fs'); console.log(String(decodePprof(fs.readFileSync('$TMP/first.pb.gz')).prof.timeNanos))")
	last_end=$(tail -1 "$TMP/win-parca" | cut -d' ' -f2)
	mtime=$(stat -c %.9Y "$TMP/tile-parca/sent/${CH[-1]}" | tr -d .)
	[ "$(head -1 "$TMP/win-parca" | cut -d' ' -f1)" = "$first" ] && [ "$mtime" = "$last_end" ] &&
		ok "the first window starts at the first chunk's first sample ($first); the last sent chunk's time is its window's end" ||
		bad "first window $(head -1 "$TMP/win-parca" | cut -d' ' -f1), its own start $first; sent/ time $mtime, window end $last_end"
	# without -k 1: times estimated from the files, the run known by its event ids
	CH=($(ls "$R/nok" | grep '^perf\.data\.'))
	start_receiver t_nok parca
	W=$TMP/tile-nok
	mkdir -p "$W"
	for c in "${CH[@]}"; do cp -p "$R/nok/$c" "$W/"; done
	watch "$W" --to parca --url "$URL_t_nok"
	wait_for 60 holds "$W" 0
	stop_watch
	windows "$LOG_t_nok" parca >"$TMP/win-nok"
	[ "$(wc -l <"$TMP/win-nok")" = ${#CH[@]} ] && abut "$TMP/win-nok" parca &&
		ok "perf record --switch-output=1s without -k 1 to parca: ${#CH[@]} profiles that tile: $(awk '{printf "%.3f ", ($2 - $1) / 1e9}' "$TMP/win-nok")s" ||
		bad "windows without -k 1: $(cat "$TMP/win-nok" | tr '\n' ';')"
	# a one-off upload is as before: its own first to last sample, not the window the
	# watcher tiled (whose start is the first chunk's end). Without -k 1 both are
	# estimates from the files, made apart: the chunk's first sample, just after the
	# switch, may come out up to a few ms before the window's start (0.3 ms seen once)
	timeout 60 "$PERFCONV" upload -q --to parca --url "$URL_t_nok" -i "$R/nok/${CH[1]}" "${KS[@]}"
	one=$("${LOGQ[@]}" "$LOG_t_nok" last time_nanos)
	wstart=$(sed -n 2p "$TMP/win-nok" | cut -d' ' -f1)
	[ "$one" != "$wstart" ] && [ "$one" -gt $((wstart - 5000000)) ] &&
		ok "perfconv upload -i of the second chunk: its own first sample ($one), not its window's start ($wstart)" ||
		bad "one-off upload: time_nanos $one, window $(sed -n 2p "$TMP/win-nok")"
	stop_receiver t_nok
else
	skip "windows of a real perf record --switch-output: needs root and a perf that can record here"
fi

# 4b. Requests turned down whatever the profile (a 403, a 401, a redirect, a 404: the key
# or the URL, while someone mends it): no chunk moved to refused/, each said once, the
# chunk sent when the backend takes requests again.
W=$TMP/w4b
mkdir -p "$W"
chunk $DAMAGED "$W" perf.data.2026120504000001
start_receiver dn pyroscope --faults 403,401,302,404 --reject-older-than 0
watch "$W" --to pyroscope --url "$URL_dn" --retry-cap 1
wait_for 120 test -e "$W/sent/perf.data.2026120504000001"
stop_watch
if [ -e "$W/sent/perf.data.2026120504000001" ] && [ ! -e "$W/refused" ] &&
	[ "$("${LOGQ[@]}" "$LOG_dn" count fault)" = 4 ] && [ "$("${LOGQ[@]}" "$LOG_dn" count accepted)" = 1 ] &&
	grep -q "warning: http://127.0.0.1:[0-9]*/ingest turned the request down: HTTP 403: fault 403 (the API key or the tenant is refused: wrong, expired or without the right); no chunk is sent or moved until that is mended, asked again every 1 s" "$W.err" &&
	grep -q "HTTP 302: fault 302 (a redirect, not followed: give where it leads as --url)" "$W.err" &&
	grep -q "HTTP 404: fault 404 (no such endpoint" "$W.err"; then
	ok "403, 401, 302, 404: the chunk kept (no refused/), each said as the key's or the URL's, then sent"
else
	bad "requests turned down: sent/ $(ls "$W/sent" 2>/dev/null), refused/ $(ls "$W/refused" 2>/dev/null); $(grep -v damaged "$W.err" | tail -4 | cut -c1-200)"
fi
stop_receiver dn

# 5. The options
"$PERFCONV" upload --to parca -i $DAMAGED --max-backlog 3 2>"$TMP/err"
[ $? = 2 ] && grep -q -- '--keep-sent and --trust-folder go with --watch' "$TMP/err" &&
	ok "--max-backlog without --watch: usage" || bad "--max-backlog without --watch: $(cat "$TMP/err")"
"$PERFCONV" upload --to parca --watch "$TMP" --keep-sent 5 2>"$TMP/err"
[ $? = 2 ] && grep -q -- "--keep-sent takes a size (1G, 512M), an age (7d, 12h, 30m) or all: 5$" "$TMP/err" &&
	ok "--keep-sent 5 (a size or an age?): usage, '$(cat "$TMP/err" | head -1)'" || bad "--keep-sent 5: $(cat "$TMP/err")"
"$PERFCONV" upload --to parca --watch "$TMP" --max-backlog 1X 2>"$TMP/err"
[ $? = 2 ] && grep -q -- "--max-backlog takes" "$TMP/err" && ok "--max-backlog 1X: usage" || bad "--max-backlog 1X: $(cat "$TMP/err")"
"$PERFCONV" upload --to parca --watch "$TMP" --start-time 1777636800 2>"$TMP/err"
[ $? = 2 ] && grep -q -- "--start-time is one recording's start" "$TMP/err" && ok "--start-time with --watch: usage" ||
	bad "--start-time with --watch: $(cat "$TMP/err")"
"$PERFCONV" upload --help | grep -q -- '--max-backlog N|SIZE' && "$PERFCONV" upload --help | grep -q -- '--keep-sent SIZE|AGE' &&
	ok "perfconv upload --help names --max-backlog and --keep-sent" || bad "--help"

finish e2e-watch
