#!/bin/bash
# e2e_secretroute: no secret an upload carries goes over the network in clear (issue 42,
# finding 3): OTLP's headers ($OTEL_EXPORTER_OTLP_HEADERS, --header) are held to the
# rule Datadog's API key was alone held to: http:// only to loopback, through a proxy
# only to an https:// URL or with both on loopback, --allow-http or not. In a network
# namespace of the test's own, where 192.0.2.1 (TEST-NET-1) is an address of its lo:
# not loopback by perfconv's rule (127.0.0.0/8, ::1), yet nothing leaves the namespace.
# A mount namespace gives libcurl a CA bundle with the test's certificate, so that
# https:// to that host is verified, and sent. The servers are tests/receivers/netlog.py,
# which writes down whatever reaches it. As root (unshare, ip, mount).
if [ -z "${E2E_SECRETROUTE_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
	unshare -n -m true 2>/dev/null; then
	E2E_SECRETROUTE_NS=1 exec unshare -n -m bash "$0" "$@"
fi
source "$(dirname "$0")/e2e_lib.sh"
NETLOG=tests/receivers/netlog.py
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT OTEL_EXPORTER_OTLP_HEADERS \
	OTEL_EXPORTER_OTLP_PROFILES_HEADERS
at_exit() { kill_pids; }
if [ -z "${E2E_SECRETROUTE_NS:-}" ]; then
	skip "e2e-secretroute: needs root, ip (iproute2) and unshare -n -m (a network and mount namespace)"
	finish e2e-secretroute
	exit $?
fi
FAR=192.0.2.1
if ! ip link set lo up || ! ip addr add $FAR/32 dev lo; then
	bad "the namespace's lo cannot be given $FAR"
	finish e2e-secretroute
	exit 1
fi
SECRET=s$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
HDR="Authorization=Bearer%20$SECRET"

# serve NAME MODE BIND [netlog options]: a netlog.py server; $PORT_NAME, $LOG_NAME
serve() {
	local name=$1 mode=$2 bind=$3
	shift 3
	rm -f "$TMP/$name.port" "$TMP/$name.log"
	python3 $NETLOG --mode "$mode" --bind "$bind" --log "$TMP/$name.log" \
		--port-file "$TMP/$name.port" "$@" 2>"$TMP/$name.err" &
	PIDS+=($!)
	wait_for 120 test -s "$TMP/$name.port"
	printf -v "PORT_$name" %s "$(cat "$TMP/$name.port" 2>/dev/null)"
	printf -v "LOG_$name" %s "$TMP/$name.log"
}
requests() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
has_request() { [ "$(requests "$1")" -ge 1 ]; }
# otlp ARGS...: a one-off OTLP upload of mt-g.data, stderr in $TMP/err; its exit status
otlp() { timeout 30 "$PERFCONV" upload --to otlp -i $TD/mt-g.data "${KS[@]}" "$@" 2>"$TMP/err"; }
# said: the refusal's line, without the secret (it must not be there)
said() { head -1 "$TMP/err"; }

serve far ok $FAR       # a host that is not loopback
serve loop ok 127.0.0.1 # a receiver on loopback
serve px proxy 127.0.0.1
if [ -z "$PORT_far" ] || [ -z "$PORT_loop" ] || [ -z "$PORT_px" ]; then
	bad "the servers did not start: $(cat "$TMP"/*.err | head -3)"
	finish e2e-secretroute
	exit 1
fi

# 1. http:// to a host that is not loopback, with --allow-http: refused, nothing sent,
# whether the token came from the environment or the command line
for from in env header; do
	if [ $from = env ]; then
		OTEL_EXPORTER_OTLP_HEADERS=$HDR otlp --allow-http --url http://$FAR:$PORT_far
	else
		otlp --allow-http --url http://$FAR:$PORT_far --header "Authorization=Bearer $SECRET"
	fi
	rc=$?
	if [ $rc = 1 ] && [ "$(requests "$LOG_far")" = 0 ] &&
		grep -q "a secret (the OTLP headers, from .*) is sent only over https:// (or to loopback), --allow-http or not (it lets a profile go in clear, never a secret): use https://" "$TMP/err" &&
		! grep -q "$SECRET" "$TMP/err"; then
		ok "otlp, a token from $from, --allow-http to http://$FAR: refused before anything is sent: '$(said)'"
	else
		bad "otlp, a token from $from, --allow-http to http://$FAR: exit $rc, $(requests "$LOG_far") requests reached it$(grep -q "$SECRET" "$LOG_far" && echo ', the token with them'): $(tail -2 "$TMP/err")"
	fi
	: >"$LOG_far"
done

# 2. The same through a proxy on loopback (which reads an http:// request whole)
OTEL_EXPORTER_OTLP_HEADERS=$HDR otlp --allow-http --url http://$FAR:$PORT_far --proxy http://127.0.0.1:$PORT_px
rc=$?
if [ $rc = 1 ] && [ "$(requests "$LOG_px")" = 0 ] && [ "$(requests "$LOG_far")" = 0 ] &&
	grep -q "through --proxy http://127.0.0.1:$PORT_px: a secret (the OTLP headers, from \$OTEL_EXPORTER_OTLP_HEADERS, each of which may hold a token) goes through a proxy only to an https:// URL" "$TMP/err"; then
	ok "otlp with a token, --allow-http, through an http:// proxy on loopback to http://$FAR: refused, the proxy got nothing: '$(said)'"
else
	bad "otlp with a token through a proxy to http://$FAR: exit $rc, the proxy got $(requests "$LOG_px")$(grep -q "$SECRET" "$LOG_px" && echo ', the token among it'), $FAR $(requests "$LOG_far"): $(tail -2 "$TMP/err")"
fi
: >"$LOG_px"
: >"$LOG_far"

# 3. What the refusals are not about: the same routes without a secret go, so the
# network here would have carried it (--allow-http is for the profile)
otlp --allow-http --url http://$FAR:$PORT_far
rc1=$?
n1=$(requests "$LOG_far")
otlp --allow-http --url http://$FAR:$PORT_far --proxy http://127.0.0.1:$PORT_px
rc2=$?
if [ $rc1 = 0 ] && [ "$n1" = 1 ] && [ $rc2 = 0 ] && [ "$(requests "$LOG_px")" = 1 ] &&
	[ "$(requests "$LOG_far")" = 2 ]; then
	ok "otlp without headers, --allow-http: sent to http://$FAR, straight and through the proxy"
else
	bad "otlp without headers, --allow-http: exit $rc1 and $rc2, $FAR got $(requests "$LOG_far"), the proxy $(requests "$LOG_px"): $(tail -2 "$TMP/err")"
fi
: >"$LOG_px"
: >"$LOG_far"

# 4. To loopback the token goes (a collector on this machine), and the environment's
# proxy variables are not obeyed on the way
for var in none http_proxy HTTP_PROXY all_proxy ALL_PROXY; do
	before=$(requests "$LOG_loop")
	(
		[ $var = none ] || export "$var=http://127.0.0.1:$PORT_px"
		OTEL_EXPORTER_OTLP_HEADERS=$HDR otlp --url http://127.0.0.1:$PORT_loop
	)
	rc=$?
	if [ $rc = 0 ] && [ "$(requests "$LOG_px")" = 0 ] && [ "$(requests "$LOG_loop")" = $((before + 1)) ] &&
		grep -q "\"Authorization\", \"Bearer $SECRET\"" "$LOG_loop"; then
		ok "otlp with a token to http://127.0.0.1 ($var): sent to the receiver, token and all, no proxy"
	else
		bad "otlp with a token to loopback ($var): exit $rc, the proxy got $(requests "$LOG_px"), the receiver $(($(requests "$LOG_loop") - before)): $(tail -2 "$TMP/err")"
	fi
	: >"$LOG_px"
done

# 5. https:// to the host that is not loopback: sent, verified against a certificate the
# CA bundle (bind-mounted in this mount namespace) holds
(cd "$TMP" && openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.crt -days 1 \
	-subj /CN=$FAR -addext "subjectAltName=IP:$FAR" >/dev/null 2>&1)
BUNDLE=/etc/ssl/certs/ca-certificates.crt
cat "$BUNDLE" "$TMP/tls.crt" >"$TMP/bundle.crt" 2>/dev/null
if [ ! -s "$TMP/tls.crt" ] || ! mount --bind "$TMP/bundle.crt" "$BUNDLE" 2>"$TMP/mount.err"; then
	bad "https:// to $FAR: no certificate made, or $BUNDLE cannot be replaced in the mount namespace: $(cat "$TMP/mount.err" 2>/dev/null)"
else
	serve tls ok $FAR --tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key"
	OTEL_EXPORTER_OTLP_HEADERS=$HDR otlp --url https://$FAR:$PORT_tls
	rc=$?
	if [ $rc = 0 ] && [ "$(requests "$LOG_tls")" = 1 ] && grep -q "\"Authorization\", \"Bearer $SECRET\"" "$LOG_tls"; then
		ok "otlp with a token to https://$FAR: sent over verified TLS, token and all"
	else
		bad "otlp with a token to https://$FAR: exit $rc, $(requests "$LOG_tls") requests: $(tail -2 "$TMP/err")"
	fi
	# through the http:// proxy: a CONNECT, and the token only inside the tunnel
	OTEL_EXPORTER_OTLP_HEADERS=$HDR timeout 10 "$PERFCONV" upload --to otlp -i $TD/mt-g.data "${KS[@]}" \
		--url https://$FAR:$PORT_tls --proxy http://127.0.0.1:$PORT_px 2>"$TMP/err" &
	UPID=$!
	PIDS+=($UPID)
	wait_for 120 has_request "$LOG_px"
	kill $UPID 2>/dev/null
	wait $UPID 2>/dev/null
	if grep -q "\"method\": \"CONNECT\", \"target\": \"$FAR:$PORT_tls\"" "$LOG_px" && ! grep -q "$SECRET" "$LOG_px"; then
		ok "otlp with a token to https://$FAR through the http:// proxy: the proxy was asked to CONNECT, without the token"
	else
		bad "otlp with a token, https:// through the proxy: the proxy got: $(head -c 600 "$LOG_px"): $(tail -2 "$TMP/err")"
	fi
fi

finish e2e-secretroute
