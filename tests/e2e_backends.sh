#!/bin/bash
# e2e_backends: profiles as the backends' own profilers send them (issue 32), against
# the receivers of tests/receivers/: Datadog's Timeline (every sample's end_timestamp_ns,
# the time perf gives it), its runtime-id (one per run of perf record, across chunks and
# a restarted watcher; a new one for a new run) and profile_seq (from 0, one more each
# profile); the runtime named; a system-wide recording whose profile is over Datadog's
# 10 MiB or Pyroscope's 16,000 samples and 2 MiB sent as profiles that pass, every sample
# once; a 413 answered by cutting the profile in two.
source "$(dirname "$0")/e2e_lib.sh"
LOGQ=(python3 tests/receivers/logq.py)
unset DD_API_KEY DD_SITE DD_TRACE_AGENT_URL DD_AGENT_HOST DD_TRACE_AGENT_PORT
at_exit() { kill_pids; }
if ! receivers_ready; then
	finish e2e-backends
	exit 1
fi
# sum SAMPLES (or another field) over the accepted requests of a receiver's log
accepted_sum() { python3 -c '
import json, sys
print(sum(r.get(sys.argv[2], 0) for r in map(json.loads, open(sys.argv[1])) if r.get("outcome") == "accepted"))' "$1" "${2:-samples}"; }
folded_total() { "$PERFCONV" -q "${KS[@]}" -i "$1" -f folded -o - | awk '{ s += $NF } END { print s + 0 }'; }

# 1. The Timeline: each sample of mt-k1.data (perf record -k 1: perf's clock data gives
# each sample its time of day) as a pprof Sample whose end_timestamp_ns is the time of day
# perf script gives it, to the nanosecond, on its thread; read with Datadog's decoder.
"$PERFCONV" upload --to datadog --dry-run -q "${KS[@]}" -i $TD/mt-k1.data -o "$TMP/tl" >/dev/null 2>"$TMP/tl.err"
node --input-type=module - "$TMP/tl.profile.pprof" >"$TMP/tl.ours" 2>&1 <<'JS'
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { createRequire } from 'node:module'
const { Profile } = createRequire(process.cwd() + '/tests/browser/package.json')('pprof-format')
const p = Profile.decode(gunzipSync(readFileSync(process.argv[2])))
const s = (i) => p.stringTable.strings[Number(i)]
for (const x of p.sample) {
  const l = Object.fromEntries(x.label.map(l => [s(l.key), s(l.key) === 'end_timestamp_ns' ? BigInt(l.num) : s(l.str)]))
  for (let k = 0; k < Number(x.value[0]); k++) console.log(`${l['thread id']} ${l.end_timestamp_ns}`)
}
JS
TZ=UTC perf script -i $TD/mt-k1.data -F tid,tod --ns 2>/dev/null |
	python3 -c '
import sys, datetime
for line in sys.stdin:
    tid, day, tod = line.split()[:3]
    sec, frac = tod.split(".")
    t = datetime.datetime.strptime(day + " " + sec, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    print(tid, int(t.timestamp()) * 10**9 + int(frac.ljust(9, "0")))' | sort >"$TMP/tl.perf"
sort "$TMP/tl.ours" >"$TMP/tl.ours.s"
n=$(wc -l <"$TMP/tl.perf")
if [ "$n" -gt 3000 ] && cmp -s "$TMP/tl.perf" "$TMP/tl.ours.s"; then
	ok "Datadog's Timeline: each of mt-k1.data's $n samples has end_timestamp_ns = its time of day in perf script, on its thread (read with pprof-format)"
else
	bad "Timeline: $n perf samples, $(wc -l <"$TMP/tl.ours") ours; first differences: $(diff "$TMP/tl.perf" "$TMP/tl.ours.s" | head -4 | tr '\n' ' ') $(head -c 300 "$TMP/tl.ours")"
fi

# 2. The runtime named from the objects the samples ran in, beside language:native.
for r in jit/node.data:node java/java.data:java jit/erlang.data:erlang jit/lli.data:native mt-g.data:native; do
	f=${r%%:*} want=${r##*:}
	"$PERFCONV" upload --to datadog --dry-run -q "${KS[@]}" -i $TD/$f -o "$TMP/rt" >/dev/null 2>&1
	got=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tags_profiler"].split(","); print(",".join(x for x in t if x.startswith(("runtime:", "language:"))))' "$TMP/rt.event.json" 2>/dev/null)
	[ "$got" = "language:native,runtime:$want" ] && ok "$f: tags language:native,runtime:$want" ||
		bad "$f: runtime tags '$got', not language:native,runtime:$want"
done

# 3. runtime-id and profile_seq across chunks: two runs of perf record --switch-output;
# the first run's first two chunks sent by one watcher, the rest (and the second run's)
# by a watcher started again. One runtime-id for each run, profile_seq 0, 1, 2... across
# the restart; the second run a new one from 0.
if [ "$(id -u)" = 0 ] && perf record -q -o "$TMP/probe.data" -e cpu-clock -- true >/dev/null 2>&1; then
	for run in 1 2; do
		mkdir -p "$TMP/run$run"
		record_chunks 3 "$TMP/run$run" -q -e cpu-clock -F 499 -g --switch-output=1s -o "$TMP/run$run/perf.data" \
			-- timeout 3.5 sh -c 'while :; do :; done' >/dev/null
		sleep 1.1 # the second run's chunk names (perf's timestamps) after the first's
	done
	R1=($(ls "$TMP/run1" | grep '^perf\.data\.' | sort)) R2=($(ls "$TMP/run2" | grep '^perf\.data\.' | sort))
	W=$TMP/w3
	mkdir -p "$W"
	start_receiver rid datadog
	for c in "${R1[@]:0:2}"; do chunk "$TMP/run1/$c" "$W" "$c"; done
	watch "$W" --to datadog --url "$URL_rid"
	wait_for 120 holds "$W/sent" 2
	stop_watch
	for c in "${R1[@]:2}"; do chunk "$TMP/run1/$c" "$W" "$c"; done
	for c in "${R2[@]}"; do chunk "$TMP/run2/$c" "$W" "$c"; done
	watch "$W" --to datadog --url "$URL_rid"
	wait_for 60 holds "$W/sent" $((${#R1[@]} + ${#R2[@]}))
	stop_watch
	got=$(python3 -c '
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("outcome") == "accepted"]
print(" ".join("%s:%s" % (r["runtime_id"], r["profile_seq"]) for r in recs))' "$LOG_rid")
	want=$(python3 -c '
import sys
n1, n2, got = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()
ids = [g.split(":")[0] for g in got]
ok = len(got) == n1 + n2 and len(set(ids[:n1])) == 1 and len(set(ids[n1:])) == 1 and ids[0] != ids[-1]
ok = ok and [int(g.split(":")[1]) for g in got] == list(range(n1)) + list(range(n2))
print("yes" if ok else "no")' ${#R1[@]} ${#R2[@]} "$got")
	if [ "$want" = yes ] && [ ${#R1[@]} -ge 3 ] && [ ${#R2[@]} -ge 2 ] && [ "$("${LOGQ[@]}" "$LOG_rid" count refused)" = 0 ]; then
		ok "runtime-id: one for each run of perf record (${#R1[@]} and ${#R2[@]} chunks), kept across a restarted watcher, profile_seq from 0 one more each: $got"
	else
		bad "runtime-id and profile_seq: ${#R1[@]} + ${#R2[@]} chunks, got '$got'; refusals: $("${LOGQ[@]}" "$LOG_rid" refusals | head -3)"
	fi
	stop_receiver rid
else
	skip "runtime-id across chunks: needs root and a perf that can record here"
fi

# 4. A system-wide recording over the backends' limits: perf record -a -g at 20 kHz
# for 6 s while a shell starts `ls` again and again (many short processes: many
# distinct stacks and threads). Whole, its Pyroscope profile is over 16,000 samples and
# the 2 MiB burst, its Datadog profile (a Sample per sample) over 10 MiB; perfconv sends
# each as several profiles that pass, every sample once, their windows tiling the whole.
if [ "$(id -u)" = 0 ] && perf record -q -o "$TMP/probe.data" -a -e cpu-clock -- true >/dev/null 2>&1; then
	perf record -q -a -g -F 20000 -o "$TMP/sys.data" \
		-- timeout 6 sh -c 'while :; do ls /usr/lib >/dev/null; done' >/dev/null 2>&1
	total=$(folded_total "$TMP/sys.data")
	"$PERFCONV" -q "${KS[@]}" -i "$TMP/sys.data" --for pyroscope -o "$TMP/sys-py.pb.gz"
	"$PERFCONV" -q "${KS[@]}" -i "$TMP/sys.data" --for datadog -o "$TMP/sys-dd.pb.gz"
	py_whole=$(node tests/receivers/rules.mjs pyroscope "$TMP/sys-py.pb.gz")
	dd_whole=$(node tests/receivers/rules.mjs datadog "$TMP/sys-dd.pb.gz")
	if grep -q "push rate limit\|exceeds the samples count limit\|decompressed size exceeds" <<<"$py_whole" &&
		grep -q '"skipped":"a profile larger than 10 MiB' <<<"$dd_whole"; then
		ok "system-wide recording ($total samples): whole, Pyroscope would refuse its profile and Datadog skip it: $(cut -c1-120 <<<"$py_whole"); $(grep -o '"skipped":"[^"]*"' <<<"$dd_whole")"
	else
		bad "system-wide recording ($total samples) not over the limits: $(cut -c1-300 <<<"$py_whole") $(cut -c1-300 <<<"$dd_whole")"
	fi
	# Pyroscope, one-off
	start_receiver sp pyroscope
	"$PERFCONV" upload --to pyroscope --url "$URL_sp" "${KS[@]}" -i "$TMP/sys.data" 2>"$TMP/sp.err"
	rc=$?
	parts=$("${LOGQ[@]}" "$LOG_sp" count accepted)
	tiles=$(python3 -c '
import json, sys
r = [x for x in map(json.loads, open(sys.argv[1])) if x.get("outcome") == "accepted"]
print("yes" if all(int(a["time_nanos"]) + int(a["duration_nanos"]) == int(b["time_nanos"]) for a, b in zip(r, r[1:])) else "no")' "$LOG_sp")
	if [ $rc = 0 ] && [ "$parts" -ge 2 ] && [ "$("${LOGQ[@]}" "$LOG_sp" count refused)" = 0 ] &&
		[ "$(accepted_sum "$LOG_sp")" = "$total" ] && [ "$tiles" = yes ] &&
		grep -q "warning: its profile (.* pprof samples, .* MiB) is over the limit (Pyroscope .*): sent as $parts profiles, each a span of its time" "$TMP/sp.err"; then
		ok "to Pyroscope: sent as $parts profiles that pass its limits, $total samples in all (every one once), each starting where the one before ended; said"
	else
		bad "to Pyroscope: exit $rc, $parts accepted, $(accepted_sum "$LOG_sp") of $total samples, tiles $tiles; $(grep -v '^perfconv:   ' "$TMP/sp.err" | head -5); $("${LOGQ[@]}" "$LOG_sp" refusals | head -3)"
	fi
	stop_receiver sp
	# Datadog, a watched chunk
	start_receiver sd datadog
	W=$TMP/w4
	mkdir -p "$W"
	chunk "$TMP/sys.data" "$W" perf.data.2026120500000001
	watch "$W" --to datadog --url "$URL_sd"
	wait_for 60 holds "$W/sent" 1
	stop_watch
	parts=$("${LOGQ[@]}" "$LOG_sd" count accepted)
	win=$(python3 -c '
import json, sys
r = [x for x in map(json.loads, open(sys.argv[1])) if x.get("outcome") == "accepted"]
seqs = [x["profile_seq"] for x in r]
ok = all(a["end"] == b["start"] for a, b in zip(r, r[1:])) and seqs == list(range(len(r))) and len({x["runtime_id"] for x in r}) == 1
ok = ok and all(p["bytes"] <= 10 * 1048576 for x in r for p in x["profiles"])
print("yes" if ok else "no")' "$LOG_sd")
	if [ "$parts" -ge 2 ] && [ "$("${LOGQ[@]}" "$LOG_sd" count refused)" = 0 ] &&
		[ "$("${LOGQ[@]}" "$LOG_sd" count skipped)" = 0 ] &&
		[ "$(accepted_sum "$LOG_sd")" = "$total" ] && [ "$win" = yes ]; then
		ok "to Datadog, a watched chunk: sent as $parts profiles under 10 MiB, $total samples (every one once, each end_timestamp_ns in its profile's window), one runtime-id, profile_seq 0 to $((parts - 1)), windows that tile"
	else
		bad "to Datadog: $parts accepted ($("${LOGQ[@]}" "$LOG_sd" count skipped) skipped), $(accepted_sum "$LOG_sd") of $total samples, windows/seq $win; $(grep -v '^perfconv:   ' "$W.err" | head -5); $("${LOGQ[@]}" "$LOG_sd" refusals | head -3)"
	fi
	stop_receiver sd
else
	skip "system-wide recording over the limits: needs root and a perf that can record here"
fi

# 5. A 413 (the body too large for the backend or a proxy before it): the profile cut in
# two by time and both sent, every sample once; one-off and watched.
start_receiver big datadog --faults 413
"$PERFCONV" upload --to datadog --url "$URL_big" "${KS[@]}" -i $TD/mt-g.data 2>"$TMP/big.err"
rc=$?
want=$(folded_total $TD/mt-g.data)
if [ $rc = 0 ] && [ "$("${LOGQ[@]}" "$LOG_big" count accepted)" = 2 ] && [ "$(accepted_sum "$LOG_big")" = "$want" ] &&
	grep -q "datadog refused it as too large (HTTP 413: fault 413): sent again in two parts" "$TMP/big.err"; then
	ok "413: cut in two and sent again, $want samples in the two (one-off), said"
else
	bad "413 one-off: exit $rc, $("${LOGQ[@]}" "$LOG_big" count accepted) accepted, $(accepted_sum "$LOG_big") of $want; $(head -3 "$TMP/big.err")"
fi
stop_receiver big
start_receiver big2 pyroscope --faults 413 --reject-older-than 0
W=$TMP/w5
mkdir -p "$W"
chunk $TD/mt-g.data "$W" perf.data.2026120500000001
watch "$W" --to pyroscope --url "$URL_big2"
wait_for 120 holds "$W/sent" 1
stop_watch
if [ "$("${LOGQ[@]}" "$LOG_big2" count accepted)" = 2 ] && [ "$(accepted_sum "$LOG_big2")" = "$want" ] &&
	[ -z "$(ls "$W/refused" 2>/dev/null)" ] && grep -q "found its profile too large (HTTP 413: fault 413): cut in two and sent again" "$W.err"; then
	ok "413 to a watcher: the chunk cut in two, both sent ($want samples), the chunk in sent/"
else
	bad "413 watched: $("${LOGQ[@]}" "$LOG_big2" count accepted) accepted, $(accepted_sum "$LOG_big2") of $want; $(head -3 "$W.err")"
fi
stop_receiver big2

finish e2e-backends
