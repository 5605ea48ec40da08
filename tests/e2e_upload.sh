#!/bin/bash
# e2e_upload: perfconv upload and --watch against receivers on loopback that apply
# each backend's published acceptance rules (tests/receivers/, docs/BACKENDS.md):
# not the backends themselves. Every committed recording sent to each is accepted
# with its whole sample count, its time and its labels; go tool pprof reads every
# --for flavour; then the faults: a reset and two refusals, a refusal, a backend
# that is down, a watcher stopped mid-upload and started again, chunks that appear
# while watching (copied in, and from a real `perf record --switch-output` as root).
source "$(dirname "$0")/e2e_lib.sh"
RCV=tests/receivers
LOGQ=(python3 $RCV/logq.py)
export HOME=$TMP/home GOCACHE=$TMP/gocache GOTOOLCHAIN=local GOFLAGS= PPROF_TMPDIR=$TMP
mkdir -p "$HOME"
# no agent or key of the machine's may leak into the tests
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT

if ! receivers_ready; then
	finish e2e-upload
	exit 1
fi

# libcurl is opened when an upload starts (upload/upload.c), not loaded by every run
if readelf -d "$PERFCONV" | grep NEEDED | grep -q libcurl; then
	bad "perfconv links libcurl: every conversion loads it and its 27 libraries"
elif "$PERFCONV" -q -i testdata/mt-g.data --kallsyms testdata/kallsyms.gz -o /dev/null \
	--cache-dir "$TMP/nocurl" 2>/dev/null && ! LD_DEBUG=files "$PERFCONV" -q -i testdata/mt-g.data \
	--kallsyms testdata/kallsyms.gz -o /dev/null --cache-dir "$TMP/nocurl" 2>&1 | grep -q libcurl; then
	ok "a conversion does not load libcurl; the uploads below open it"
else
	bad "a conversion loads libcurl"
fi

at_exit() { kill_pids; }

# time_nanos of a pprof file (Datadog's decoder)
pprof_time() {
	node --input-type=module -e "const {decodePprof} = await import('$PWD/$RCV/rules.mjs');
		const fs = await import('node:fs'); console.log(String(decodePprof(fs.readFileSync('$1')).prof.timeNanos))"
}

RECS=()
for f in $TD/{mt-g,mt-z,mt-pipe,mt-threads,mt-k1,kheavy,two-event,execer,shapes}.data \
	$TD/jit/{node,node-wasm,lli,erlang,node-map}.data $TD/dwarf/{dw,dwpp}.data; do
	[ -e "$f" ] && RECS+=("$f")
done

# What each recording holds, from perfconv info (another reading of the file than the
# conversion's): samples, and the start the upload must carry: perf's clock data
# where -k recorded it (today's time_nanos), else the file's time less the span.
declare -A WANT_SAMPLES WANT_START
for f in "${RECS[@]}"; do
	"$PERFCONV" info -i "$f" "${KS[@]}" --json >"$TMP/info.json"
	WANT_SAMPLES[$f]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$TMP/info.json")
	"$PERFCONV" -q -i "$f" "${KS[@]}" -o "$TMP/plain.pb.gz"
	t=$(pprof_time "$TMP/plain.pb.gz")
	if [ "$t" = 0 ]; then
		span=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["time"]["span_ns"])' "$TMP/info.json")
		m=$f
		[ -d "$f" ] && m=$f/data
		t=$(( $(stat -c %Y "$m") * 1000000000 + 10#$(stat -c %y "$m" | sed 's/.*\.\([0-9]*\).*/\1/') - span ))
	fi
	WANT_START[$f]=$t
done

# near WANT NS TOLERANCE_NS: 0 when |WANT - NS| <= TOLERANCE
near() { python3 -c 'import sys; a,b,t=map(float,sys.argv[1:4]); sys.exit(0 if abs(a-b)<=t else 1)' "$@"; }
same_day() { [ "$(date -u -d "@$(($1 / 1000000000))" +%F)" = "$(date -u -d "@$(($2 / 1000000000))" +%F)" ]; }

# 1. Every recording, to each backend: accepted, every sample, the time, the labels.
start_receiver dd datadog
start_receiver py pyroscope --reject-older-than 0
start_receiver pa parca
for f in "${RECS[@]}"; do
	name=${f#$TD/}
	want=${WANT_SAMPLES[$f]}
	start=${WANT_START[$f]}
	for be in datadog pyroscope parca; do
		case $be in datadog) url=$URL_dd log=$LOG_dd;; pyroscope) url=$URL_py log=$LOG_py;; parca) url=$URL_pa log=$LOG_pa;; esac
		before=$("${LOGQ[@]}" "$log" count accepted)
		if ! timeout 60 "$PERFCONV" upload -q --to $be --url "$url" -i "$f" "${KS[@]}" \
			--service checkout --label env=test --label version=1.2 2>"$TMP/err"; then
			bad "$name to $be: perfconv upload failed: $(head -3 "$TMP/err"); the receiver: $("${LOGQ[@]}" "$log" refusals | tail -3)"
			continue
		fi
		if [ "$("${LOGQ[@]}" "$log" count accepted)" != $((before + 1)) ]; then
			bad "$name to $be: not accepted once: $("${LOGQ[@]}" "$log" refusals | tail -3)"
			continue
		fi
		got=$("${LOGQ[@]}" "$log" last samples)
		case $be in
		datadog)
			t=$(python3 -c 'import sys,datetime; s=sys.argv[1]; d=datetime.datetime.fromisoformat(s[:26]+"+00:00"); print(int(d.timestamp())*10**9 + int(s[20:29]))' "$("${LOGQ[@]}" "$log" last start)")
			labels="service:$("${LOGQ[@]}" "$log" last tags.service) env:$("${LOGQ[@]}" "$log" last tags.env) version:$("${LOGQ[@]}" "$log" last tags.version) host:$("${LOGQ[@]}" "$log" last tags.host)"
			wantl="service:checkout env:test version:1.2 host:vm";;
		pyroscope)
			t=$("${LOGQ[@]}" "$log" last time_nanos)
			dropped=$("${LOGQ[@]}" "$log" last dropped)
			[ "$dropped" = 0 ] || { bad "$name to pyroscope: normalization would drop $dropped samples"; }
			labels="service_name:$("${LOGQ[@]}" "$log" last labels.service_name) env:$("${LOGQ[@]}" "$log" last labels.env) version:$("${LOGQ[@]}" "$log" last labels.version) host:$("${LOGQ[@]}" "$log" last labels.host)"
			wantl="service_name:checkout env:test version:1.2 host:vm";;
		parca)
			t=$("${LOGQ[@]}" "$log" last time_nanos)
			labels="service:$("${LOGQ[@]}" "$log" last labels.service) env:$("${LOGQ[@]}" "$log" last labels.env) version:$("${LOGQ[@]}" "$log" last labels.version) host:$("${LOGQ[@]}" "$log" last labels.host)"
			wantl="service:checkout env:test version:1.2 host:vm"
			same_day "$t" "$start" || bad "$name to parca: filed on $(date -u -d "@$((${t%.*} / 1000000000))" +%F), the recording is of $(date -u -d "@$((start / 1000000000))" +%F)";;
		esac
		if [ "$got" != "$want" ]; then
			bad "$name to $be: $got samples accepted, the recording has $want"
		elif ! near "$start" "$t" 1.5e9; then
			bad "$name to $be: start $t, want $start (within 1.5 s)"
		elif [ "$labels" != "$wantl" ]; then
			bad "$name to $be: labels '$labels', want '$wantl'"
		else
			ok "$name to $be: accepted, $got samples, start $(date -u -d "@$((${t%.*} / 1000000000))" +%FT%TZ), $wantl"
		fi
	done
done
for r in dd py pa; do
	v=LOG_$r
	[ "$("${LOGQ[@]}" "${!v}" unique)" = 1 ] && ok "$r receiver: no profile arrived twice" || bad "$r receiver: a profile arrived twice"
done

# 2. go tool pprof reads each --for flavour, with every sample; Pyroscope's rules
# accept --for pyroscope and refuse today's default file, whose 0 callchain entries
# they would drop.
for f in $TD/mt-g.data $TD/two-event.data $TD/jit/node.data; do
	name=${f#$TD/}
	for fl in datadog pyroscope parca go; do
		"$PERFCONV" -q -i "$f" "${KS[@]}" --for $fl -o "$TMP/f.pb.gz"
		idx=samples
		[ $fl = datadog ] && idx=cpu-samples
		if out=$(go tool pprof -symbolize=none -top -sample_index=$idx "$TMP/f.pb.gz" 2>&1) &&
			total=$(echo "$out" | sed -n 's/.* of \([0-9]*\) total.*/\1/p' | head -1) && [ -n "$total" ]; then
			n=$total
			if [ $name = two-event.data ]; then
				other=page-faults-samples
				[ $fl != datadog ] && other=page_faults_samples
				n=$((n + $(go tool pprof -symbolize=none -top -sample_index=$other "$TMP/f.pb.gz" 2>&1 |
					sed -n 's/.* of \([0-9]*\) total.*/\1/p' | head -1)))
			fi
			[ "$n" = "${WANT_SAMPLES[$f]}" ] && ok "$name --for $fl: go tool pprof reads it, $n samples" ||
				bad "$name --for $fl: go tool pprof counts $n samples, the recording has ${WANT_SAMPLES[$f]}"
		else
			bad "$name --for $fl: go tool pprof: $(echo "$out" | head -3)"
		fi
		if [ $fl = pyroscope ] || [ $fl = parca ] || [ $fl = datadog ]; then
			if r=$(node $RCV/rules.mjs $fl "$TMP/f.pb.gz"); then
				ok "$name --for $fl: $fl's rules accept it and drop nothing"
			else
				bad "$name --for $fl: $fl's rules: $r"
			fi
		fi
	done
	"$PERFCONV" -q -i "$f" "${KS[@]}" -o "$TMP/plain.pb.gz"
	r=$(node $RCV/rules.mjs pyroscope "$TMP/plain.pb.gz")
	case "$r" in
	*'sample type contains -: cpu-samples'*"invalid label name 'thread id'"*) ok "$name default pprof: Pyroscope's rules refuse it ('-' in cpu-samples, 'thread id')";;
	*) bad "$name default pprof: Pyroscope's rules should refuse it: $r";;
	esac
done
"$PERFCONV" -q -i $TD/jit/node.data -o "$TMP/plain.pb.gz"
d=$(node $RCV/rules.mjs pyroscope "$TMP/plain.pb.gz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["dropped"])')
"$PERFCONV" -q -i $TD/jit/node.data --for pyroscope -o "$TMP/f.pb.gz"
d2=$(node $RCV/rules.mjs pyroscope "$TMP/f.pb.gz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["dropped"])')
[ "$d" -gt 0 ] && [ "$d2" = 0 ] && ok "jit/node.data: Pyroscope's normalization drops $d samples of the default file (perf's 0 callchain entry), none of --for pyroscope" ||
	bad "jit/node.data: dropped by normalization: default $d, --for pyroscope $d2"

# --start-time, and the estimate said once
"$PERFCONV" -i $TD/mt-g.data "${KS[@]}" --for parca -o "$TMP/f.pb.gz" 2>"$TMP/err"
[ "$(grep -c 'start time estimated from the file' "$TMP/err")" = 1 ] && ok "mt-g --for parca: the summary says once that the start is estimated" ||
	bad "mt-g --for parca: estimate note: $(cat "$TMP/err")"
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --for go --start-time 2026-05-01T12:00:00.25Z -o "$TMP/f.pb.gz"
[ "$(pprof_time "$TMP/f.pb.gz")" = 1777636800250000000 ] && ok "--start-time 2026-05-01T12:00:00.25Z: time_nanos 1777636800250000000" ||
	bad "--start-time: time_nanos $(pprof_time "$TMP/f.pb.gz")"
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --for go --start-time 1777636800 -o "$TMP/f.pb.gz"
[ "$(pprof_time "$TMP/f.pb.gz")" = 1777636800000000000 ] && ok "--start-time 1777636800 (Unix seconds)" || bad "--start-time UNIX"
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --label 'env=a,b' -o "$TMP/f.pb.gz" 2>"$TMP/err"
[ $? = 2 ] && grep -q "VALUE must be" "$TMP/err" && ok "--label env=a,b: refused (a ',' would split a Datadog tag list)" || bad "--label with a comma: $(cat "$TMP/err")"

# Pyroscope's size and sample limits, as the receiver applies them (4 MiB uncompressed,
# 16,000 samples, 100 labels a sample, its rate limiter's 2 MiB burst, the ingestion
# window of an hour back and 10 minutes ahead): mt-g.data's profile (87 samples), its
# time now, grown past each and posted as perfconv would post it; accepted as it is.
start_receiver lim pyroscope
"$PERFCONV" -q -i $TD/mt-g.data "${KS[@]}" --for pyroscope -o "$TMP/lim.pb.gz"
node --input-type=module - "$TMP/lim.pb.gz" "$URL_lim" >"$TMP/lim.out" 2>&1 <<'JS'
import { readFileSync } from 'node:fs'
import { gzipSync, gunzipSync } from 'node:zlib'
import { createRequire } from 'node:module'
const { Profile, Sample, Label } = createRequire(process.cwd() + '/tests/browser/package.json')('pprof-format')
const [file, url] = process.argv.slice(2)
const now = BigInt(Date.now()) * 1000000n
const load = () => { const p = Profile.decode(gunzipSync(readFileSync(file))); p.timeNanos = now; return p }
const post = async (prof, what) => {
  const r = await fetch(`${url}/ingest?name=lim&format=pprof&from=${Math.floor(Date.now() / 1000)}&until=${Math.floor(Date.now() / 1000) + 1}`,
    { method: 'POST', body: gzipSync(Buffer.from(prof.encode())) })
  console.log(`${what} ${r.status}`)
}
await post(load(), 'as-is')
let p = load()
const base = p.sample.slice()
while (p.sample.length <= 16000) p.sample.push(...base.map(s => new Sample({ locationId: s.locationId, value: s.value, label: s.label })))
await post(p, 'samples')
p = load()
const k = p.stringTable.dedup('k')
p.sample[0].label = Array.from({ length: 101 }, (_, i) => new Label({ key: k, num: i }))
await post(p, 'labels')
p = load()
p.stringTable.dedup('x'.repeat(4300000))
await post(p, 'size')
p = load()
p.stringTable.dedup('x'.repeat(3000000))
await post(p, 'burst')
p = load()
p.timeNanos = now - 3700n * 1000000000n
await post(p, 'old')
p = load()
p.timeNanos = now + 700n * 1000000000n
await post(p, 'ahead')
JS
if [ "$(tr '\n' ' ' <"$TMP/lim.out")" = "as-is 200 samples 422 labels 422 size 422 burst 429 old 422 ahead 422 " ] &&
	[ "$(grep -c "is outside of ingestion window (profile timestamp: 20[0-9-]* [0-9:]* +0000 UTC, the ingestion window starts at .* and ends at .*)" "$LOG_lim")" = 2 ] &&
	grep -q "push rate limit (4.0 MiB) exceeded" "$LOG_lim" &&
	grep -q "exceeds the samples count limit (max_profile_stacktrace_samples, actual: 16.*, limit: 16000)" "$LOG_lim" &&
	grep -q "exceeds the sample labels limit (max_profile_stacktrace_sample_labels, actual: 101, limit: 100)" "$LOG_lim" &&
	grep -q "decompressed size exceeds maximum allowed size of 4194304 bytes" "$LOG_lim"; then
	ok "the pyroscope receiver refuses (422) a profile over 16,000 samples, one with a sample of 101 labels, one over 4 MiB uncompressed, one begun over an hour ago or over 10 minutes ahead, and (429) one over its 2 MiB burst, as Pyroscope's defaults do"
else
	bad "pyroscope limits: $(cat "$TMP/lim.out"); $("${LOGQ[@]}" "$LOG_lim" refusals | cut -c1-200)"
fi
stop_receiver lim

# 3. Faults: the first connection reset, the next two refused (503, 429 with
# Retry-After): the profile arrives once.
start_receiver fa pyroscope --faults reset,503,429:1 --reject-older-than 0
if timeout 60 "$PERFCONV" upload --to pyroscope --url "$URL_fa" -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err" &&
	[ "$("${LOGQ[@]}" "$LOG_fa" count fault)" = 3 ] && [ "$("${LOGQ[@]}" "$LOG_fa" count accepted)" = 1 ]; then
	ok "reset, 503, 429: retried, accepted once: $(grep -c 'trying again' "$TMP/err") retries said"
else
	bad "reset, 503, 429: $(tail -5 "$TMP/err")"
fi
stop_receiver fa
# Pyroscope's tenant; Datadog's agent found from DD_AGENT_HOST and DD_TRACE_AGENT_PORT
start_receiver te pyroscope --reject-older-than 0
timeout 60 "$PERFCONV" upload -q --to pyroscope --url "$URL_te" --tenant team-a -i $TD/mt-g.data "${KS[@]}" &&
	[ "$("${LOGQ[@]}" "$LOG_te" last tenant)" = team-a ] && ok "--tenant team-a: X-Scope-OrgID: team-a" || bad "--tenant: $("${LOGQ[@]}" "$LOG_te" last tenant)"
stop_receiver te
start_receiver ah datadog
DD_AGENT_HOST=127.0.0.1 DD_TRACE_AGENT_PORT=${URL_ah##*:} timeout 60 "$PERFCONV" upload -q --to datadog -i $TD/mt-g.data "${KS[@]}" &&
	[ "$("${LOGQ[@]}" "$LOG_ah" count accepted)" = 1 ] && ok "datadog agent at DD_AGENT_HOST:DD_TRACE_AGENT_PORT: accepted" || bad "DD_AGENT_HOST: $("${LOGQ[@]}" "$LOG_ah" refusals)"
stop_receiver ah
# a refusal: exit 1 naming the file and the answer
start_receiver fb parca --faults 400
timeout 60 "$PERFCONV" upload -q --to parca --url "$URL_fb" -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && grep -q "testdata/mt-g.data: parca refused the profile: HTTP 400: fault 400" "$TMP/err" &&
	[ "$("${LOGQ[@]}" "$LOG_fb" count fault)" = 1 ] && ok "a 400: exit 1, '$(head -1 "$TMP/err")', not tried again" ||
	bad "a 400: exit $rc: $(cat "$TMP/err")"
stop_receiver fb
# a request turned down whatever the profile (the key, the URL): said as such, exit 1,
# not tried again by a one-off upload; a Retry-After longer than --retry-cap waits the cap
start_receiver fd datadog --faults 403
DD_API_KEY=k-e2e timeout 60 "$PERFCONV" upload -q --to datadog --url "$URL_fd" -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && grep -q "testdata/mt-g.data: datadog turned the request down: HTTP 403: fault 403 (the API key or the tenant is refused: wrong, expired or without the right)" "$TMP/err" &&
	[ "$("${LOGQ[@]}" "$LOG_fd" count fault)" = 1 ] && ok "a 403: exit 1, said as the key's: '$(head -1 "$TMP/err")'" ||
	bad "a 403: exit $rc: $(cat "$TMP/err")"
stop_receiver fd
start_receiver ra pyroscope --faults 429:3600 --reject-older-than 0
t0=$(date +%s)
timeout 60 "$PERFCONV" upload -q --to pyroscope --url "$URL_ra" --retry-cap 2 -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err"
rc=$? t=$(( $(date +%s) - t0 ))
[ $rc = 0 ] && [ $t -lt 30 ] && [ "$("${LOGQ[@]}" "$LOG_ra" count accepted)" = 1 ] &&
	ok "429 with Retry-After: 3600 and --retry-cap 2: tried again after the cap, sent in $t s" ||
	bad "Retry-After over the cap: exit $rc after $t s: $(cat "$TMP/err")"
stop_receiver ra
# down: exit 1 after the tries, naming the file
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
timeout 60 "$PERFCONV" upload -q --to pyroscope --url "http://127.0.0.1:$port" -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err"
[ $? = 1 ] && grep -q "testdata/mt-g.data: pyroscope could not be reached: " "$TMP/err" && ok "backend down: exit 1, '$(tail -1 "$TMP/err")'" ||
	bad "backend down: $(cat "$TMP/err")"

# 4. Datadog: the agent on a Unix socket; the intake with a key that shows nowhere.
start_receiver ux datadog --unix "$TMP/apm.socket"
if DD_TRACE_AGENT_URL="unix://$TMP/apm.socket" timeout 60 "$PERFCONV" upload -q --to datadog -i $TD/mt-k1.data "${KS[@]}" --service api 2>"$TMP/err" &&
	[ "$("${LOGQ[@]}" "$LOG_ux" count accepted)" = 1 ] && [ "$("${LOGQ[@]}" "$LOG_ux" last tags.service)" = api ]; then
	ok "datadog agent at DD_TRACE_AGENT_URL=unix://...: accepted, service:api"
else
	bad "datadog agent on a Unix socket: $(cat "$TMP/err") $("${LOGQ[@]}" "$LOG_ux" refusals)"
fi
stop_receiver ux
KEY=0123456789abcdef0123456789abcdef
echo "$KEY" >"$TMP/key"
chmod 600 "$TMP/key"
start_receiver in datadog --api-key-file "$TMP/key"
for how in env file; do
	if [ $how = env ]; then
		DD_API_KEY=$KEY timeout 60 "$PERFCONV" upload --to datadog --url "$URL_in" -i $TD/mt-g.data "${KS[@]}" >"$TMP/out" 2>"$TMP/err"
	else
		timeout 60 "$PERFCONV" upload --to datadog --url "$URL_in" --api-key-file "$TMP/key" -i $TD/mt-g.data "${KS[@]}" >"$TMP/out" 2>"$TMP/err"
	fi
	rc=$?
	if [ $rc = 0 ] && [ "$("${LOGQ[@]}" "$LOG_in" last intake)" = True ] && ! grep -q "$KEY" "$TMP/out" "$TMP/err"; then
		ok "datadog intake, key from $how: accepted with DD-API-KEY, the key in no output line, body or URL"
	else
		bad "datadog intake ($how): rc $rc: $(cat "$TMP/err") $("${LOGQ[@]}" "$LOG_in" refusals)"
	fi
done
DD_API_KEY=$KEY "$PERFCONV" upload -q --to datadog -i $TD/mt-g.data "${KS[@]}" --dry-run -o "$TMP/dry" >"$TMP/out" 2>&1
grep -q "^POST https://intake.profile.datadoghq.com/api/v2/profile" "$TMP/out" && grep -q "DD-API-KEY: <redacted>" "$TMP/out" &&
	! grep -rq "$KEY" "$TMP/out" "$TMP"/dry.* && ok "--dry-run: the intake's URL, the key redacted, the bodies in dry.event.json and dry.profile.pprof" ||
	bad "--dry-run: $(cat "$TMP/out")"
DD_SITE=datadoghq.eu DD_API_KEY=$KEY "$PERFCONV" upload -q --to datadog -i $TD/mt-g.data "${KS[@]}" --dry-run | grep -q "^POST https://intake.profile.datadoghq.eu/" &&
	ok "DD_SITE=datadoghq.eu: the intake of that site" || bad "DD_SITE"
"$PERFCONV" upload -q --to pyroscope --url http://192.0.2.1:4040 -i $TD/mt-g.data 2>"$TMP/err"
[ $? = 1 ] && grep -q "http:// to a host not on loopback" "$TMP/err" && ok "http:// to a host not on loopback: refused before anything is sent" || bad "http:// refusal: $(cat "$TMP/err")"
DD_API_KEY=$KEY "$PERFCONV" upload -q --to datadog --allow-http --url http://192.0.2.1:8126 -i $TD/mt-g.data 2>"$TMP/err"
[ $? = 1 ] && grep -q "API key is sent only over https" "$TMP/err" && ok "an API key over http:// to another host: refused even with --allow-http" || bad "key over http: $(cat "$TMP/err")"
"$PERFCONV" upload --to datadog --api-key $KEY -i $TD/mt-g.data 2>"$TMP/err"
[ $? = 2 ] && ! grep -q "$KEY" "$TMP/err" && ok "--api-key KEY (a prefix of --api-key-file): refused, the key not shown" || bad "--api-key: $(cat "$TMP/err")"
# a key file others can read is said (and used: a service that would not start for it
# sends nothing); a FIFO is refused at once, not waited on
cp "$TMP/key" "$TMP/key644" && chmod 644 "$TMP/key644"
timeout 60 "$PERFCONV" upload -q --to datadog --url "$URL_in" --api-key-file "$TMP/key644" -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err"
[ $? = 0 ] && grep -q "^perfconv: warning: --api-key-file: the file is open to others (mode 0644): the key should be its owner's alone (chmod 600)" "$TMP/err" &&
	! grep -q "$KEY" "$TMP/err" && ! grep -q "$KEY" "$TMP/err" && ok "a key file open to others (0644): said, with what to do; the key not shown" ||
	bad "key file 0644: $(cat "$TMP/err")"
mkfifo "$TMP/keyfifo"
timeout 10 "$PERFCONV" upload -q --to datadog --url "$URL_in" --api-key-file "$TMP/keyfifo" -i $TD/mt-g.data "${KS[@]}" 2>"$TMP/err"
[ $? = 1 ] && grep -q -- "--api-key-file: cannot read the file: not a regular file" "$TMP/err" &&
	ok "a FIFO as --api-key-file: refused at once ('$(cat "$TMP/err")')" || bad "key FIFO: $? $(cat "$TMP/err")"
stop_receiver in

# 5. Watch. Chunks named as perf names them; the one perf still writes (perf.data)
# and a chunk still being copied are not touched.
W=$TMP/watch
mkdir -p "$W"
chunk() { # SRC NAME: copied in whole, then renamed, as perf renames a finished chunk
	cp "$1" "$W/.part" && mv "$W/.part" "$W/$2"
}
start_receiver wa parca
cp $TD/mt-g.data "$W/perf.data"
"$PERFCONV" upload --to parca --url "$URL_wa" --watch "$W" "${KS[@]}" --service watched 2>"$TMP/watch.err" &
WPID=$!
PIDS+=("$WPID")
sleep 1
chunk $TD/mt-k1.data perf.data.2026112910000001
head -c 4096 $TD/shapes.data >"$W/perf.data.2026112910000002" # a copy cut short
wait_for 120 test -e "$W/sent/perf.data.2026112910000001"
if [ -e "$W/sent/perf.data.2026112910000001" ] && [ "$("${LOGQ[@]}" "$LOG_wa" count accepted)" = 1 ] &&
	[ "$("${LOGQ[@]}" "$LOG_wa" last samples)" = "${WANT_SAMPLES[$TD/mt-k1.data]}" ]; then
	ok "watch: a chunk that appeared while watching arrived ($("${LOGQ[@]}" "$LOG_wa" last samples) samples) and moved to sent/"
else
	bad "watch: the chunk did not arrive: $(cat "$TMP/watch.err")"
fi
[ -e "$W/perf.data" ] && [ -e "$W/perf.data.2026112910000002" ] && [ ! -e "$W/sent/perf.data" ] &&
	ok "watch: perf.data (perf still writing) and a chunk whose data runs past its end left alone" || bad "watch: touched an unfinished file: $(ls -R "$W")"
kill -TERM $WPID
wait $WPID
rc=$?
[ $rc = 0 ] && grep -q "stopped watching" "$TMP/watch.err" && ok "watch: SIGTERM ends it, exit 0" || bad "watch: SIGTERM: exit $rc"
rm -f "$W/perf.data" "$W/perf.data.2026112910000002"
stop_receiver wa

# the backend down: nothing is marked, the backlog is said; stopped and started again
# with the backend up, every chunk arrives once and only then is deleted
rm -rf "$W" && mkdir -p "$W"
chunk $TD/mt-g.data perf.data.2026112911000001
chunk $TD/shapes.data perf.data.2026112911000002
chunk $TD/kheavy.data perf.data.2026112911000003
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$PERFCONV" upload --to pyroscope --url "http://127.0.0.1:$port" --watch "$W" --delete-sent "${KS[@]}" 2>"$TMP/watch.err" &
WPID=$!
PIDS+=("$WPID")
# SIGINT once the backlog and why it grows were said (after the first failed try):
# nothing answered, which is not said as the backend's answer (issue 44, item 5)
down="backlog of 3 chunks (oldest perf.data.2026112911000001): nothing answered at http://127.0.0.1:$port/ingest (Couldn't connect to server)"
wait_for 120 grep -qF "$down" "$TMP/watch.err"
kill -INT $WPID
wait $WPID
rc=$?
left=$(ls "$W" | grep -c '^perf.data.2026')
if [ $rc = 0 ] && [ "$left" = 3 ] && grep -qF "$down" "$TMP/watch.err" && ! grep -q "the backend answered" "$TMP/watch.err"; then
	ok "watch, backend down: SIGINT after retries, exit 0, all 3 chunks kept; '$(grep -m1 backlog "$TMP/watch.err" | cut -c1-150)...'"
else
	bad "watch, backend down: exit $rc, $left chunks left: $(cat "$TMP/watch.err")"
fi
start_receiver wb pyroscope --faults hang --reject-older-than 0
"$PERFCONV" upload --to pyroscope --url "$URL_wb" --watch "$W" --delete-sent --timeout 30 "${KS[@]}" 2>"$TMP/watch.err" &
WPID=$!
PIDS+=("$WPID")
hung() { [ "$("${LOGQ[@]}" "$LOG_wb" count fault)" = 1 ]; }
wait_for 120 hung
kill -TERM $WPID
wait $WPID
rc=$?
left=$(ls "$W" | grep -c '^perf.data.2026')
[ $rc = 0 ] && [ "$left" = 3 ] && ok "watch: SIGTERM during an upload: exit 0, the chunk not marked" || bad "watch: SIGTERM mid-upload: exit $rc, $left left"
stop_receiver wb
start_receiver wc pyroscope --reject-older-than 0
"$PERFCONV" upload -q --to pyroscope --url "$URL_wc" --watch "$W" --delete-sent "${KS[@]}" 2>"$TMP/watch.err" &
WPID=$!
PIDS+=("$WPID")
none_left() { [ "$(ls "$W" | grep -c '^perf.data.2026')" = 0 ]; }
wait_for 120 none_left
kill -TERM $WPID
wait $WPID
got=$("${LOGQ[@]}" "$LOG_wc" count accepted)
if [ "$got" = 3 ] && [ "$("${LOGQ[@]}" "$LOG_wc" unique)" = 1 ] && [ ! -e "$W/sent" ] && [ -z "$(ls "$W")" ]; then
	ok "watch restarted, backend up: the 3 chunks arrived once each, oldest first, and were deleted (--delete-sent)"
else
	bad "watch restarted: $got accepted, left: $(ls "$W") $(cat "$TMP/watch.err")"
fi
order=$(python3 -c '
import json,sys
print(" ".join(str(json.loads(l)["samples"]) for l in open(sys.argv[1]) if json.loads(l)["outcome"]=="accepted"))' "$LOG_wc")
[ "$order" = "${WANT_SAMPLES[$TD/mt-g.data]} ${WANT_SAMPLES[$TD/shapes.data]} ${WANT_SAMPLES[$TD/kheavy.data]}" ] &&
	ok "watch: oldest first ($order samples)" || bad "watch: order $order"
stop_receiver wc

# a real perf record --switch-output, as root (skipped where perf cannot record). Its
# chunks are made at the test's signal, not at perf's alarm: perf sets its alarm before
# its setup and arms the switch after, so on a loaded machine its first alarm is lost
# and it makes one chunk for the whole run (and a chunk of a run recorded again, removed
# while the watcher sent it, was counted as sent twice and moved once). SIGUSR2 is
# sent once perf catches it (by default it ends perf), again until perf named a chunk
# (before the switch is armed perf ignores it); the workload spins a while before
# (so that the first chunk has samples), waits for that chunk, and spins a while
# after (the second, perf's last, made when it ends).
R=$TMP/rec
mkdir -p "$R"
if [ "$(id -u)" = 0 ] && perf record -q -e cpu-clock -o "$TMP/probe.data" true 2>/dev/null; then
	start_receiver wd parca
	"$PERFCONV" upload --to parca --url "$URL_wd" --watch "$R" --service live 2>"$TMP/watch.err" &
	WPID=$!
	PIDS+=("$WPID")
	spin='i=0; while [ $i -lt 50000 ]; do i=$((i + 1)); done'
	perf record -q -e cpu-clock -F 999 -g --switch-output=signal -o "$R/perf.data" -- \
		sh -c "$spin; touch $TMP/spun; while [ ! -e $TMP/chunked ]; do :; done; $spin" 2>"$R.perf.err" &
	RPID=$!
	PIDS+=("$RPID")
	switched() { first_chunk "$R" || { kill -USR2 "$RPID" 2>/dev/null; false; }; }
	wait_for 120 test -e "$TMP/spun" && wait_for 120 catches_usr2 "$RPID" && wait_for 120 switched ||
		bad "perf record --switch-output=signal: no chunk in 120 s: $(cat "$R.perf.err")"
	touch "$TMP/chunked"
	wait "$RPID"
	all_out() { [ -z "$(ls "$R" | grep '^perf.data.')" ]; }
	wait_for 120 all_out
	kill -TERM $WPID
	wait $WPID
	got=$("${LOGQ[@]}" "$LOG_wd" count accepted)
	sent=$(ls "$R/sent" 2>/dev/null | wc -l)
	chunks=$((sent + $(ls "$R" | grep -c '^perf.data')))
	[ "$chunks" -ge 2 ] && [ "$got" = "$chunks" ] && [ "$sent" = "$chunks" ] && [ "$("${LOGQ[@]}" "$LOG_wd" unique)" = 1 ] &&
		ok "perf record --switch-output: $chunks chunks, each sent once while perf ran, all in sent/" ||
		bad "perf record --switch-output: $chunks chunks, $got accepted, $sent in sent/: $(tail -5 "$TMP/watch.err")"
	stop_receiver wd
else
	ok "perf record --switch-output: skipped (needs root and a perf that can record here)"
fi

finish e2e-upload
