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
if sh tests/otlp/fetch_official_schema.sh "$TMP/official" >"$TMP/fetch.out" 2>&1; then
	DEC+=(--official "$TMP/official")
	if "${DEC[@]}" --compare-proto formats >"$TMP/cmp.out" 2>&1; then
		ok "formats/otlp_*.proto: every message the request and response reach is the official schema's ($(tail -1 "$TMP/fetch.out"))"
	else
		bad "formats/otlp_*.proto differs from the official schema: $(head -5 "$TMP/cmp.out")"
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
	TZ=UTC perf script -i "$in" -F time --ns 2>/dev/null |
		awk '$1 ~ /^[0-9]+\.[0-9]+:$/ { sub(/:$/, "", $1); print $1 }' >"$TMP/$name.times"
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
        why.append(f"timestamps: {profs[0]['timestamps_count']}, perf script {len(ns)}, not the same times")
    else:
        checked_ts = f", {len(ns)} timestamps = perf script's times"
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
finish e2e-otlp
