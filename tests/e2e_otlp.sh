#!/bin/bash
# e2e_otlp: -f otlp (issue 33.1), every committed recording written as OpenTelemetry
# profiles and read back with the official schema (opentelemetry-proto 1.11, as Debian
# compiles it into libopentelemetry-proto-dev: tests/otlp/fetch_official_schema.sh) by
# tests/otlp/otlp_decode.mjs, which applies the .proto's MUST rules: per event and per
# thread the sample counts and the periods' sums equal the pprof's, every stack (its
# names, root to leaf) and its count equal the folded output's, and the timestamps are
# the recording's sample times as perf script gives them.
source "$(dirname "$0")/e2e_lib.sh"
if ! receivers_ready; then
	finish e2e-otlp
	exit 1
fi
DEC=(node tests/otlp/otlp_decode.mjs)
accepted_sum() { python3 -c '
import json, sys
print(sum(r.get("samples", 0) for r in map(json.loads, open(sys.argv[1])) if r.get("outcome") == "accepted"))' "$1"; }
if sh tests/otlp/fetch_official_schema.sh "$TMP/official" >"$TMP/fetch.out" 2>&1; then
	DEC+=(--official "$TMP/official")
	if "${DEC[@]}" --compare-proto formats/proto >"$TMP/cmp.out" 2>&1; then
		ok "formats/proto/otlp_*.proto: every message the request and response reach is the official schema's ($(tail -1 "$TMP/fetch.out"))"
	else
		bad "formats/proto/otlp_*.proto differs from the official schema: $(head -5 "$TMP/cmp.out")"
	fi
	"${DEC[@]}" --self-test >"$TMP/self.out" 2>&1 &&
		ok "the decoder finds each broken rule (--self-test: $(tail -1 "$TMP/self.out"))" ||
		bad "decoder self-test: $(grep FAIL "$TMP/self.out" | head -3)"
else
	bad "the official schema could not be fetched (Debian's libopentelemetry-proto-dev): $(tail -3 "$TMP/fetch.out")"
fi

compare() { # NAME INPUT OPTIONS...
	local name=$1 in=$2
	shift 2
	"$PERFCONV" -q -i "$in" "$@" -f otlp -o "$TMP/$name.otlp.pb" 2>"$TMP/$name.err" &&
		"$PERFCONV" -q -i "$in" "$@" -f pprof -o "$TMP/$name.pb.gz" 2>>"$TMP/$name.err" &&
		"$PERFCONV" -q -i "$in" "$@" -f folded -o "$TMP/$name.folded" 2>>"$TMP/$name.err" || {
		bad "$name: perfconv failed: $(head -3 "$TMP/$name.err")"
		return
	}
	"${DEC[@]}" "$TMP/$name.otlp.pb" >"$TMP/$name.json" 2>"$TMP/$name.dec.err"
	local rc=$?
	node tests/otlp/pprof_threads.mjs "$TMP/$name.pb.gz" >"$TMP/$name.pprof.json"
	# (a pipe recording's perf script prints its callchains whatever -F says: time lines only)
	if [[ $name = simpleperf-* ]]; then
		# perf misreads simpleperf's files: it stops at simpleperf's own record types
		# ("failed to process type: 32775") and prints each counter of --add-counter as
		# a sample; their times are -f samples' (checked against simpleperf's own
		# expectations by e2e_simpleperf)
		"$PERFCONV" -q -i "$in" "$@" -f samples -o - 2>/dev/null | cut -f4 >"$TMP/$name.times"
	else
		TZ=UTC perf script -i "$in" -F time --ns 2>/dev/null |
			awk '$1 ~ /^[0-9]+\.[0-9]+:$/ { sub(/:$/, "", $1); print $1 }' >"$TMP/$name.times"
	fi
	python3 - "$name" "$rc" "$TMP/$name.json" "$TMP/$name.pprof.json" "$TMP/$name.folded" "$TMP/$name.times" <<'PY'
import hashlib, json, sys
name, rc, oj, pj, folded, times = sys.argv[1:]
why = []
try:
    o = json.load(open(oj))
except Exception as e:
    print(f"FAIL {name}: the decoder gave no JSON (exit {rc}): {e}")
    sys.exit(0)
p = json.load(open(pj))
if rc != "0" or o.get("problems"):
    why.append(f"decoder exit {rc}, problems {o.get('problems', [])[:3]}")
profs = o["profiles"]
if len(profs) != len(p):
    why.append(f"{len(profs)} profiles, the pprof has {len(p)} sample types")
for i, (q, c) in enumerate(zip(profs, p)):
    kind = "value" if i % 2 else "count"
    field = "value_sum" if kind == "value" else "count"
    ours = {k: str(v[field]) for k, v in q["by_thread"].items() if int(v[field])}
    theirs = {k: v for k, v in c["by_thread"].items() if int(v)}
    total = q["value_sum"] if kind == "value" else str(q["events"])
    if total != c["total"]:
        why.append(f"{q['sample_type']}: {total} in all, the pprof's {c['sample_type']} {c['total']}")
    if ours != theirs:
        diff = sorted(set(ours.items()) ^ set(theirs.items()))[:3]
        why.append(f"{q['sample_type']} by thread differs from {c['sample_type']}: {diff}")
# stacks: folded's (the first event with samples), its first frame (the thread's name) off
want = {}
for line in open(folded):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    rest = stack.split(";", 1)[1] if ";" in stack else ""
    want[rest] = want.get(rest, 0) + int(n)
got = {k: int(v) for k, v in profs[0]["stacks"].items()} if profs else {}
if got != want:
    d = sorted(set(got.items()) ^ set(want.items()))[:3]
    why.append(f"stacks differ from folded's ({len(got)} and {len(want)}): {d}")
# timestamps: one sampled event, its times as perf script's (after the first)
ts = [l.strip() for l in open(times) if l.strip()]
checked_ts = ""
if len(profs) == 2 and profs[0].get("timestamps_count"):
    ns = sorted(int(t.replace(".", "")) for t in ts if t.replace(".", "").isdigit())
    rel = hashlib.sha256("\n".join(str(t - ns[0]) for t in ns).encode()).hexdigest() if ns else ""
    if len(ns) != profs[0]["timestamps_count"] or rel != profs[0]["timestamps_rel_sha256"]:
        why.append(f"timestamps: {profs[0]['timestamps_count']}, the reference {len(ns)}, not the same times")
    else:
        ref = "-f samples'" if name.startswith("simpleperf-") else "perf script's"
        checked_ts = f", {len(ns)} timestamps = {ref} times"
if why:
    print(f"FAIL {name}: " + "; ".join(why))
else:
    print(f"ok   {name}: {len(profs)} profiles, counts and sums by thread = the pprof's, {len(got)} stacks = folded's{checked_ts}")
PY
}

for in in $(find testdata -name '*.data' -o -name '*.data.gz' | sort); do
	name=$(echo "${in#testdata/}" | tr '/' '-')
	name=${name%.gz}
	ks=testdata/kallsyms.gz
	[ -f "$(dirname "$in")/kallsyms.gz" ] && ks=$(dirname "$in")/kallsyms.gz
	if [[ $in = *.gz ]]; then
		gzip -dc "$in" >"$TMP/$(basename "${in%.gz}")" && cp -n "$(dirname "$in")"/jit-*.dump* "$TMP/" 2>/dev/null
		in=$TMP/$(basename "${in%.gz}")
	fi
	compare "$name" "$in" --kallsyms "$ks" >"$TMP/line" 2>&1
	cat "$TMP/line"
	grep -q '^ok' "$TMP/line" && pass=$((pass + 1)) || fail=$((fail + 1))
done

# perfconv upload --to otlp (33.2) against tests/receivers' OTLP receiver (the request
# decoded with the schema, the .proto's MUST rules and Pyroscope's OTLP ingest rules).
unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT OTEL_EXPORTER_OTLP_HEADERS \
	OTEL_EXPORTER_OTLP_PROFILES_HEADERS
LOGQ=(python3 tests/receivers/logq.py)
at_exit() { kill_pids; }
total() { folded_total_of "$@"; }
folded_total_of() { "$PERFCONV" -q -i "$1" --kallsyms "${2:-$TD/kallsyms.gz}" -f folded -o - | awk '{ s += $NF } END { print s + 0 }'; }
start_receiver ot otlp --reject-older-than 0
for r in mt-g.data jit/node.data offcpu/offcpu.data; do
	ks=$TD/kallsyms.gz
	[ -f "$(dirname $TD/$r)/kallsyms.gz" ] && ks=$(dirname $TD/$r)/kallsyms.gz
	before=$("${LOGQ[@]}" "$LOG_ot" count accepted)
	"$PERFCONV" upload --to otlp --url "$URL_ot" -q --kallsyms "$ks" -i $TD/$r 2>"$TMP/up.err"
	rc=$?
	want=$("$PERFCONV" -q -i $TD/$r --kallsyms "$ks" -f otlp -o - | node tests/otlp/otlp_decode.mjs - |
		python3 -c 'import json,sys; print(sum(int(p["events"]) for p in json.load(sys.stdin)["profiles"] if p["sample_type"].endswith("/count")))')
	got=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; print(r[-1].get("samples") if r and r[-1].get("outcome") == "accepted" else "none")' "$LOG_ot")
	if [ $rc = 0 ] && [ "$("${LOGQ[@]}" "$LOG_ot" count accepted)" = $((before + 1)) ] && [ "$got" = "$want" ] && [ "$want" -gt 0 ]; then
		ok "upload --to otlp $r: accepted, $got samples (every event's, as -f otlp has them)"
	else
		bad "upload --to otlp $r: exit $rc, got $got of $want; $(head -3 "$TMP/up.err"); $("${LOGQ[@]}" "$LOG_ot" refusals | head -2)"
	fi
done
# the resource and the headers: --service, --label, --header, $OTEL_EXPORTER_OTLP_HEADERS
# (percent-encoded, a token: taken out of the environment, redacted by --dry-run)
OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%20s3cr3t,x-team=a' "$PERFCONV" upload --to otlp \
	--url "$URL_ot" -q "${KS[@]}" --service checkout --label env=prod --header x-run=7 -i $TD/mt-g.data 2>"$TMP/h.err"
if python3 - "$LOG_ot" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
res, h = r["resources"][0], r["headers"]
ok = r["outcome"] == "accepted" and res.get("service.name") == "checkout" and res.get("env") == "prod"
ok = ok and res.get("host.name") and res.get("os.type") == "linux"
ok = ok and h.get("authorization") == "Bearer s3cr3t" and h.get("x-team") == "a" and h.get("x-run") == "7"
ok = ok and h.get("content-encoding") == "gzip" and h.get("content-type") == "application/x-protobuf"
sys.exit(0 if ok else 1)
PY
then
	ok "otlp: service.name, --label, host and os as resource attributes; --header and \$OTEL_EXPORTER_OTLP_HEADERS (percent-decoded) on the request, gzipped protobuf"
else
	bad "otlp resource/headers: $(tail -1 "$LOG_ot" | cut -c1-400)"
fi
OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%20s3cr3t' "$PERFCONV" upload --to otlp --url "$URL_ot" -q "${KS[@]}" \
	--dry-run -i $TD/mt-g.data >"$TMP/dry.out" 2>&1
grep -q "^Authorization: <redacted>$" "$TMP/dry.out" && ! grep -q s3cr3t "$TMP/dry.out" &&
	ok "--dry-run: the environment's header shown as <redacted>" || bad "dry-run: $(cat "$TMP/dry.out")"
# the endpoint from the environment, as the SDKs read it
OTEL_EXPORTER_OTLP_ENDPOINT=$URL_ot "$PERFCONV" upload --to otlp -q "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/e1.err" &&
	OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT=$URL_ot/v1development/profiles OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 \
		"$PERFCONV" upload --to otlp -q "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/e2.err" &&
	ok "\$OTEL_EXPORTER_OTLP_ENDPOINT (a base: /v1development/profiles added) and ..._PROFILES_ENDPOINT (as it is, first)" ||
	bad "otlp endpoint from the environment: $(cat "$TMP/e1.err" "$TMP/e2.err" | head -3)"
# a bad header is said, naming the variable and the header, never the value
OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%zz' "$PERFCONV" upload --to otlp --url "$URL_ot" -q "${KS[@]}" \
	-i $TD/mt-g.data 2>"$TMP/bad.err"
[ $? = 1 ] && grep -q "OTEL_EXPORTER_OTLP_HEADERS: a header's name must be an HTTP token" "$TMP/bad.err" &&
	! grep -q "Bearer" "$TMP/bad.err" && ok "a malformed \$OTEL_EXPORTER_OTLP_HEADERS: exit 1, said without its value" ||
	bad "bad header: $(cat "$TMP/bad.err")"
stop_receiver ot

# faults: a reset, 503 and 429 retried (the profile arrives once); a partial success is
# sent and said, not retried; a 500 with google.rpc.Status said and not retried (OTLP
# retries 429, 502, 503 and 504 only)
start_receiver of otlp --reject-older-than 0 --faults reset,503,429:1
"$PERFCONV" upload --to otlp --url "$URL_of" "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/f1.err"
rc1=$?
start_receiver op otlp --reject-older-than 0 --faults partial,rpc500
"$PERFCONV" upload --to otlp --url "$URL_op" "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/f2.err"
rc2=$?
"$PERFCONV" upload --to otlp --url "$URL_op" "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/f3.err"
rc3=$?
if [ $rc1 = 0 ] && [ "$("${LOGQ[@]}" "$LOG_of" count accepted)" = 1 ] && [ "$(wc -l <"$LOG_of")" = 4 ] &&
	[ $rc2 = 0 ] && grep -q "sent to .* (HTTP 200; partial success: 1 profiles rejected: one profile had no samples the backend takes)" "$TMP/f2.err" &&
	[ $rc3 = 1 ] && grep -q "otlp refused the profile: HTTP 500: the exporter behind the collector failed" "$TMP/f3.err" &&
	[ "$(wc -l <"$LOG_op")" = 2 ]; then
	ok "otlp faults: reset, 503, 429 retried and sent once; a partial success sent and said, not retried; a 500 (google.rpc.Status) said, not retried"
else
	bad "otlp faults: $rc1 $rc2 $rc3; $(grep -v '^perfconv:   ' "$TMP/f1.err" "$TMP/f2.err" "$TMP/f3.err" | tail -6); $(wc -l <"$LOG_of") and $(wc -l <"$LOG_op") requests"
fi
stop_receiver of
stop_receiver op
# ... a 400 refused, not retried; a 403 said as the key's or tenant's; an answer holding a
# terminal's escapes printed escaped; the backend down: could not be reached
start_receiver ox otlp --reject-older-than 0 --faults 400,403,evil
for f in 400 403 evil; do
	"$PERFCONV" upload --to otlp --url "$URL_ox" -q "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/x$f.err"
	echo "rc=$?" >>"$TMP/x$f.err"
done
"$PERFCONV" upload --to otlp --url "http://127.0.0.1:$(closed_port)" -q "${KS[@]}" --retry-cap 1 \
	-i $TD/mt-g.data 2>"$TMP/xdown.err"
echo "rc=$?" >>"$TMP/xdown.err"
if grep -q "otlp refused the profile: HTTP 400: fault 400" "$TMP/x400.err" && grep -q "rc=1" "$TMP/x400.err" &&
	grep -q "otlp turned the request down: HTTP 403: fault 403 (the API key or the tenant is refused" "$TMP/x403.err" &&
	grep -qF 'otlp refused the profile: HTTP 400: bad request' "$TMP/xevil.err" &&
	grep -qF '\xc2\x9b31m red \xe2\x80\xaegnp.exe' "$TMP/xevil.err" &&
	! grep -q $'\x1b' "$TMP/xevil.err" &&
	grep -q "otlp could not be reached: Couldn't connect to server" "$TMP/xdown.err" &&
	[ "$(wc -l <"$LOG_ox")" = 3 ]; then
	ok "otlp: a 400 refused and not retried, a 403 said as the key's, an evil answer escaped, the backend down said (exit 1 each)"
else
	bad "otlp 400/403/evil/down: $(cat "$TMP"/x*.err | grep -v '^perfconv:  ' | head -8)"
fi
stop_receiver ox

# --watch to OTLP: chunks copied in, each sent once and moved to sent/
W=$TMP/wo
mkdir -p "$W"
start_receiver ow otlp --reject-older-than 0
for i in 1 2 3; do chunk $TD/mt-g.data "$W" perf.data.202612050000000$i; done
watch "$W" --to otlp --url "$URL_ow"
wait_for 60 holds "$W/sent" 3
stop_watch
if [ "$(count_in "$W/sent")" = 3 ] && [ "$("${LOGQ[@]}" "$LOG_ow" count accepted)" = 3 ] &&
	[ "$(accepted_sum "$LOG_ow")" = $((3 * $(folded_total_of $TD/mt-g.data))) ]; then
	ok "--watch --to otlp: 3 chunks sent once each, every sample, moved to sent/"
else
	bad "--watch otlp: sent/ $(count_in "$W/sent"), $("${LOGQ[@]}" "$LOG_ow" count accepted) accepted; $(tail -3 "$W.err")"
fi
stop_receiver ow
finish e2e-otlp
