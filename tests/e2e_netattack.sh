#!/bin/bash
# e2e_netattack: the upload's transport where its surroundings work against it (a
# security review of the upload): proxy variables in the environment, host names that
# look like loopback but are looked up (made to point at this machine's own
# non-loopback address with a hosts file of the test's, in a mount namespace), an
# answer cut short after its 2xx, and the API key in /proc (a watcher's environment and
# memory, read by root and by the user it runs as). The servers are
# tests/receivers/netlog.py, which writes down whatever reaches it. As root (unshare,
# setpriv); each wait is bounded.
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
	wait_for 120 test -s "$TMP/$name.port"
	printf -v "PORT_$name" %s "$(cat "$TMP/$name.port" 2>/dev/null)"
	printf -v "LOG_$name" %s "$TMP/$name.log"
}
# requests LOG: how many reached that server
requests() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
has_request() { [ "$(requests "$1")" -ge 1 ]; }
# upload ARGS...: a one-off upload of mt-g.data, stderr in $TMP/err; its exit status
upload() { timeout 30 "$PERFCONV" upload -i $TD/mt-g.data "${KS[@]}" "$@" 2>"$TMP/err"; }

# a receiver on loopback, where the uploads of 1 and 2 may go
serve rx ok

# 1. The environment's proxy variables are not obeyed: the rule "a key over http://
# only to loopback" read the URL, and libcurl sent the request, key and all, to
# whatever proxy http_proxy or ALL_PROXY named. Only --proxy sends through a proxy.
serve px proxy
for var in http_proxy HTTP_PROXY all_proxy ALL_PROXY; do
	before=$(requests "$LOG_rx")
	(export "$var=http://127.0.0.1:$PORT_px" DD_API_KEY=$KEY
		upload --to datadog --url http://127.0.0.1:$PORT_rx)
	rc=$?
	if [ $rc = 0 ] && [ "$(requests "$LOG_px")" = 0 ] && [ "$(requests "$LOG_rx")" = $((before + 1)) ] &&
		grep -q "$KEY" "$LOG_rx"; then
		ok "$var=http://127.0.0.1:$PORT_px: not used; the request went straight to the receiver"
	else
		bad "$var set: exit $rc, the proxy got $(requests "$LOG_px") requests$(grep -q "$KEY" "$LOG_px" && echo ' with the key'), the receiver $(($(requests "$LOG_rx") - before)): $(tail -2 "$TMP/err")"
	fi
	: >"$LOG_px"
done
before=$(requests "$LOG_rx")
DD_API_KEY=$KEY upload --to datadog --url http://127.0.0.1:$PORT_rx --proxy http://127.0.0.1:$PORT_px
rc=$?
if [ $rc = 0 ] && [ "$(requests "$LOG_px")" = 1 ] && [ "$(requests "$LOG_rx")" = $((before + 1)) ] &&
	grep -q "\"target\": \"http://127.0.0.1:$PORT_rx/api/v2/profile\"" "$LOG_px"; then
	ok "--proxy http://127.0.0.1:$PORT_px (on loopback, as the target is): the request went through it"
else
	bad "--proxy on loopback: exit $rc, the proxy got $(requests "$LOG_px"), the receiver $(($(requests "$LOG_rx") - before)): $(tail -2 "$TMP/err")"
fi
: >"$LOG_px"
before=$(requests "$LOG_rx")
DD_API_KEY=$KEY upload --to datadog --url http://127.0.0.1:$PORT_rx --proxy http://10.0.0.1:1 --allow-http
rc=$?
if [ $rc = 1 ] && grep -q "an API key goes through a proxy only to an https:// URL" "$TMP/err" &&
	[ "$(requests "$LOG_rx")" = "$before" ] && ! grep -q "$KEY" "$TMP/err"; then
	ok "--proxy http://10.0.0.1:1, a key, an http:// target: refused before anything is sent, even with --allow-http: '$(head -1 "$TMP/err")'"
else
	bad "--proxy off loopback with a key: exit $rc: $(tail -2 "$TMP/err")"
fi
upload --to pyroscope --url http://127.0.0.1:$PORT_rx --proxy http://10.0.0.1:1
rc=$?
[ $rc = 1 ] && grep -q "http:// through a proxy not on loopback, or to a host that is not a loopback address, sends the profile unencrypted" "$TMP/err" &&
	ok "--proxy http://10.0.0.1:1, an http:// target, no --allow-http: refused" ||
	bad "--proxy off loopback, http:// target: exit $rc: $(tail -2 "$TMP/err")"
DD_API_KEY=$KEY timeout 30 "$PERFCONV" upload -i $TD/mt-g.data "${KS[@]}" --to datadog --dry-run \
	--url https://intake.example:443 --proxy http://10.0.0.1:1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 0 ] && grep -q "^proxy: http://10.0.0.1:1 (a CONNECT tunnel: TLS to the target" "$TMP/out" &&
	ok "--proxy http://10.0.0.1:1 to an https:// target with a key: allowed (the proxy tunnels TLS it cannot read)" ||
	bad "--proxy to an https:// target: exit $rc: $(cat "$TMP/out" "$TMP/err" | tail -3)"
# an https:// target through the loopback proxy: the proxy gets a CONNECT, and the key
# (a header of the request inside the tunnel) is not in it
DD_API_KEY=$KEY timeout 10 "$PERFCONV" upload -i $TD/mt-g.data "${KS[@]}" --to datadog \
	--url https://127.0.0.1:$PORT_rx --proxy http://127.0.0.1:$PORT_px 2>"$TMP/err" &
UPID=$!
PIDS+=($UPID)
wait_for 120 has_request "$LOG_px"
kill $UPID 2>/dev/null
wait $UPID 2>/dev/null
if grep -q "\"method\": \"CONNECT\", \"target\": \"127.0.0.1:$PORT_rx\"" "$LOG_px" && ! grep -qi "$KEY\|dd-api-key" "$LOG_px"; then
	ok "--proxy with an https:// target: the proxy was asked to CONNECT, without the key"
else
	bad "--proxy, https:// target: the proxy got: $(head -c 600 "$LOG_px"): $(tail -2 "$TMP/err")"
fi

# 2. Loopback is an address, not a text: 127.0.0.1.5, 127.0.0.256 and 127.999.999.999
# are names a resolver looks up (the hosts file, DNS and its search domains).
for h in 127.0.0.1.5 127.0.0.256 127.999.999.999; do
	before=$(requests "$LOG_rx")
	DD_API_KEY=$KEY upload --to datadog --url http://$h:$PORT_rx
	rc=$?
	if [ $rc = 1 ] && grep -q "an API key is sent only over https:// (or to loopback: $h is not an address but a name to look up)" "$TMP/err" &&
		[ "$(requests "$LOG_rx")" = "$before" ]; then
		ok "http://$h with a key: refused at once, nothing sent: '$(head -1 "$TMP/err")'"
	else
		bad "http://$h with a key: exit $rc: $(tail -2 "$TMP/err")"
	fi
done
# The same names, and others, made by a hosts file to point at this machine's own
# non-loopback address, where a server on every address writes down what reaches it.
IP=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | grep -v '^127\.' | head -1)
if [ "$(id -u)" != 0 ]; then
	skip "names pointed elsewhere by a hosts file: needs root (unshare -m, mount --bind)"
elif [ -z "$IP" ]; then
	bad "names pointed elsewhere by a hosts file: this machine has no non-loopback IPv4 address (hostname -I) to point them at"
else
	serve far ok 0.0.0.0
	echo "$IP 127.0.0.1.5 127.0.0.256 loopback.test localhost. localhost foo.localhost" >"$TMP/hosts"
	# with_hosts COMMAND...: run in a mount namespace whose /etc/hosts is $TMP/hosts
	with_hosts() { unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$TMP/hosts" "$@"; }
	# getaddrinfo, as libcurl asks (getent hosts would not look a name of digits and dots up)
	if ! got=$(with_hosts getent ahosts 127.0.0.1.5 2>&1) || [ "${got%% *}" != "$IP" ]; then
		bad "unshare -m with a hosts file bind-mounted over /etc/hosts is unusable here, the names cannot be pointed at $IP: $got"
	else
		for h in 127.0.0.1.5 127.0.0.256 loopback.test localhost.; do
			DD_API_KEY=$KEY with_hosts timeout 30 "$PERFCONV" upload -i $TD/mt-g.data "${KS[@]}" \
				--to datadog --url http://$h:$PORT_far 2>"$TMP/err"
			rc=$?
			if [ $rc != 0 ] && [ "$(requests "$LOG_far")" = 0 ]; then
				ok "http://$h, which the hosts file points at $IP: refused (exit $rc), nothing reached $IP"
			else
				bad "http://$h (the hosts file: $IP): exit $rc, $(requests "$LOG_far") requests reached the server$(grep -q "$KEY" "$LOG_far" && echo ", the key with them"): $(grep -o '"dst": "[^"]*"' "$LOG_far" | sort | uniq -c | tr '\n' ' ')"
			fi
			: >"$LOG_far"
		done
		# libcurl resolves localhost and *.localhost itself (7.78 and 7.85 on), never
		# asking the hosts file: they are loopback whatever it says
		for h in localhost foo.localhost; do
			DD_API_KEY=$KEY with_hosts timeout 30 "$PERFCONV" upload -i $TD/mt-g.data "${KS[@]}" \
				--to datadog --url http://$h:$PORT_far 2>"$TMP/err"
			rc=$?
			if [ $rc = 0 ] && [ "$(requests "$LOG_far")" = 1 ] && grep -q '"dst": "127.0.0.1"' "$LOG_far"; then
				ok "http://$h, which the hosts file points at $IP: sent to 127.0.0.1 (libcurl's own answer for it)"
			else
				bad "http://$h (the hosts file: $IP): exit $rc: $(grep -o '"dst": "[^"]*"' "$LOG_far" | tr '\n' ' '): $(tail -2 "$TMP/err")"
			fi
			: >"$LOG_far"
		done
	fi
fi

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
wait_for 120 test -e "$W/sent/perf.data.2026120500000001"
sleep 2 # a request sent again would come within a second (the first backoff)
kill -TERM $WPID
wait $WPID
if [ -e "$W/sent/perf.data.2026120500000001" ] && [ "$(requests "$LOG_cutw")" = 1 ]; then
	ok "--watch, 200 cut short: one request, the chunk moved to sent/"
else
	bad "--watch, 200 cut short: $(requests "$LOG_cutw") requests, sent/: $(ls "$W/sent" 2>/dev/null): $(tail -3 "$TMP/w3.err")"
fi

# 4. The key in /proc: gone from the environment a watcher shows, and the process not
# dumpable (no core dump, and its own user cannot read its environment or memory).
serve dd ok
W=$TMP/w4
mkdir -p "$W"
chunk $TD/mt-g.data "$W" perf.data.2026120500000001
DD_API_KEY=$KEY "$PERFCONV" upload --to datadog --url http://127.0.0.1:$PORT_dd --watch "$W" "${KS[@]}" 2>"$TMP/w4.err" &
WPID=$!
PIDS+=($WPID)
if wait_for 120 has_request "$LOG_dd" && grep -q "$KEY" "$LOG_dd"; then
	if ! grep -qa "$KEY" /proc/$WPID/environ; then
		ok "a watcher that has sent with the key: /proc/PID/environ does not hold it"
	else
		bad "a watcher's /proc/PID/environ holds the key: $(tr '\0' '\n' </proc/$WPID/environ | grep -a DD_API_KEY | sed "s/$KEY/<the key>/")"
	fi
else
	bad "the watcher sent nothing with the key: $(tail -3 "$TMP/w4.err")"
fi
kill -TERM $WPID
wait $WPID
if [ "$(id -u)" != 0 ] || ! setpriv --version >/dev/null 2>&1; then
	skip "a watcher's own user reading its /proc: needs root and setpriv (util-linux)"
else
	# a watcher run as nobody, from a folder of nobody's (the binary too: the tree may
	# be closed to other users)
	U=$TMP/nobody
	mkdir -p "$U/w"
	cp "$PERFCONV" "$U/perfconv"
	cp $TD/kallsyms.gz "$U/"
	chunk $TD/mt-g.data "$U/w" perf.data.2026120500000001
	chown -R 65534:65534 "$U"
	chmod 711 "$TMP"
	AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	: >"$LOG_dd"
	env HOME="$U" DD_API_KEY=$KEY "${AS_NOBODY[@]}" "$U/perfconv" upload --to datadog \
		--url http://127.0.0.1:$PORT_dd --watch "$U/w" --kallsyms "$U/kallsyms.gz" \
		--cache-dir "$U/cache" 2>"$TMP/w5.err" &
	WPID=$!
	PIDS+=($WPID)
	# what nobody can read of one of its own processes that is dumpable, to compare
	env KEYLIKE=$KEY "${AS_NOBODY[@]}" sleep 60 &
	CPID=$!
	PIDS+=($CPID)
	if wait_for 120 has_request "$LOG_dd" && grep -q "$KEY" "$LOG_dd"; then
		"${AS_NOBODY[@]}" cat /proc/$CPID/environ 2>/dev/null | grep -qa "$KEY" && control=1 || control=0
		"${AS_NOBODY[@]}" sh -c 'exec 3</proc/$1/mem' sh $CPID 2>/dev/null && cmem=1 || cmem=0
		"${AS_NOBODY[@]}" cat /proc/$WPID/environ >/dev/null 2>&1 && env_read=1 || env_read=0
		"${AS_NOBODY[@]}" sh -c 'exec 3</proc/$1/mem' sh $WPID 2>/dev/null && mem_read=1 || mem_read=0
		owner=$(stat -c %u /proc/$WPID/environ)
		if [ $control = 0 ]; then
			bad "nobody cannot read the environment of its own dumpable process here: the check tells nothing"
		elif [ $env_read = 0 ] && [ $mem_read = 0 ] && [ "$owner" = 0 ]; then
			ok "a watcher run as nobody with a key is not dumpable: nobody cannot open its /proc/PID/environ or mem (it can open those of a dumpable 'sleep' of its own: environ$([ $cmem = 1 ] && echo ' and mem')), and its /proc/PID/environ is root's"
		else
			bad "a watcher run as nobody with a key: nobody reads its environ: $env_read, its mem: $mem_read; /proc/PID/environ owned by uid $owner (0 when not dumpable)"
		fi
	else
		bad "the watcher run as nobody sent nothing with the key: $(tail -3 "$TMP/w5.err")"
	fi
	kill -TERM $WPID $CPID
	wait $WPID $CPID 2>/dev/null
	chmod 700 "$TMP"
fi

# SSLKEYLOGFILE: libcurl would write each TLS session's keys there (and so every
# request, the key's too, to whoever reads it): not obeyed, said. A TLS server on
# loopback with a certificate of its own (refused: nothing is sent, but the handshake
# that would write the keys happens).
(cd "$TMP" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.crt -days 1 \
	-subj /CN=127.0.0.1 >/dev/null 2>&1)
python3 - "$TMP/tls.crt" "$TMP/tls.key" "$TMP/tls.port" <<'PY' &
import http.server, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(sys.argv[3], "w").write(str(s.server_address[1]))
s.timeout = 10
s.handle_request()
PY
PIDS+=($!)
wait_for 120 test -s "$TMP/tls.port"
SSLKEYLOGFILE=$TMP/tls.keys "$PERFCONV" upload --to pyroscope --url "https://127.0.0.1:$(cat "$TMP/tls.port")" \
	-i $TD/mt-g.data "${KS[@]}" -q 2>"$TMP/tls.err"
[ ! -e "$TMP/tls.keys" ] && grep -q "warning: SSLKEYLOGFILE is set: not obeyed" "$TMP/tls.err" &&
	grep -q "certificate" "$TMP/tls.err" &&
	ok "SSLKEYLOGFILE: no TLS keys written, said; the self-signed server refused" ||
	bad "SSLKEYLOGFILE: keys file $(ls "$TMP/tls.keys" 2>/dev/null || echo absent); $(cat "$TMP/tls.err")"

finish e2e-netattack
