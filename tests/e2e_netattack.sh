#!/bin/bash
# e2e_netattack: the upload's transport where its surroundings work against it (a
# security review of the upload): an answer cut short after its 2xx. The servers are
# tests/receivers/netlog.py, which writes down whatever reaches it; each wait is
# bounded.
source "$(dirname "$0")/e2e_lib.sh"
NETLOG=tests/receivers/netlog.py
# no agent, key or proxy of the machine's may leak into the tests
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
at_exit() { kill_pids; }
KEY=k$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')

# serve NAME MODE [BIND]: a netlog.py server; $PORT_NAME, $LOG_NAME
serve() {
	local name=$1 mode=$2 bind=${3:-127.0.0.1} i
	rm -f "$TMP/$name.port" "$TMP/$name.log"
	python3 $NETLOG --mode "$mode" --bind "$bind" --log "$TMP/$name.log" \
		--port-file "$TMP/$name.port" 2>"$TMP/$name.err" &
	PIDS+=($!)
	for i in $(seq 100); do [ -s "$TMP/$name.port" ] && break; sleep 0.05; done
	printf -v "PORT_$name" %s "$(cat "$TMP/$name.port" 2>/dev/null)"
	printf -v "LOG_$name" %s "$TMP/$name.log"
}
# requests LOG: how many reached that server
requests() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
# wait_for SECONDS COMMAND...: until the command succeeds; 1 when it never did
wait_for() {
	local s=$1 i
	shift
	for i in $(seq $((s * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
has_request() { [ "$(requests "$1")" -ge 1 ]; }
# upload ARGS...: a one-off upload of mt-g.data, stderr in $TMP/err; its exit status
upload() { timeout 30 "$PERFCONV" upload -i $TD/mt-g.data "${KS[@]}" "$@" 2>"$TMP/err"; }
chunk() { # SRC DIR NAME: copied in whole, then renamed, as perf renames a finished chunk
	cp "$1" "$2/.part" && mv "$2/.part" "$2/$3"
}

# 3. A 2xx cut short: the backend has the profile; sending it again would file it
# twice (and it was: at every try of a file, and again and again by a watcher).
serve cut short
upload --to pyroscope --url http://127.0.0.1:$PORT_cut
rc=$?
if [ $rc = 0 ] && [ "$(requests "$LOG_cut")" = 1 ] && grep -q "sent to .*(HTTP 200 (the answer was then cut short: " "$TMP/err"; then
	ok "200 with 5 of its 1000 bytes, then closed: sent once, said '$(grep -o 'HTTP 200 (the answer.*' "$TMP/err")'"
else
	bad "200 cut short: exit $rc, $(requests "$LOG_cut") requests: $(tail -3 "$TMP/err")"
fi
serve cutw short
W=$TMP/w3
mkdir -p "$W"
chunk $TD/mt-g.data "$W" perf.data.2026120500000001
"$PERFCONV" upload --to pyroscope --url http://127.0.0.1:$PORT_cutw --watch "$W" "${KS[@]}" 2>"$TMP/w3.err" &
WPID=$!
PIDS+=($WPID)
wait_for 10 test -e "$W/sent/perf.data.2026120500000001"
sleep 2 # a request sent again would come within a second (the first backoff)
kill -TERM $WPID
wait $WPID
if [ -e "$W/sent/perf.data.2026120500000001" ] && [ "$(requests "$LOG_cutw")" = 1 ]; then
	ok "--watch, 200 cut short: one request, the chunk moved to sent/"
else
	bad "--watch, 200 cut short: $(requests "$LOG_cutw") requests, sent/: $(ls "$W/sent" 2>/dev/null): $(tail -3 "$TMP/w3.err")"
fi

finish e2e-netattack
