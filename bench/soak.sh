#!/bin/bash
# bench/soak.sh: what `perfconv upload --watch` costs a chunk as a node service's
# jitdump grows (issue 30, part 8; acceptance 1).
#
#   bench/soak.sh                      10 minutes, the acceptance run
#   SOAK_MINUTES=1.5 bench/soak.sh     short (CI): correctness only, slopes not judged
#
# Runs bench/soak_service.js under `node --perf-prof --interpreted-frames-native-stack`
# (a service that keeps making, compiling and dropping JavaScript functions, so that
# its jitdump grows by SOAK_RATE MB a minute while its live code stays bounded),
# recorded by `perf record -k 1 -g -F SOAK_FREQ --switch-output=SOAK_CHUNK_S s` for
# SOAK_MINUTES and on to perf's next switch, into a folder that `perfconv upload
# --watch` sends to the backend's receiver (tests/receivers/, on loopback, behind
# bench/soak_tap.mjs, which keeps what arrived).
# bench/soak_monitor.py measures the watcher idle for SOAK_IDLE_S seconds, then for
# each chunk that reaches sent/: its CPU time since the previous one (taskstats: every
# thread, in ns), its peak RSS (VmHWM, reset after each chunk) and the jitdump's size.
# bench/soak_report.py fits both by least squares against the dump's size and judges
# the slopes (<= 0.1 ms and <= 0.25 MB per MB of dump) when the dump ran from about
# 5 to >= 100 MB, and always checks that each chunk perf finished arrived once with
# every sample perf recorded in it, and that >= 99% of the JIT samples have every JIT
# frame named. Exit status 1 when something judged is missed.
#
# SOAK_MINUTES (10)  SOAK_CHUNK_S (20)  SOAK_RATE (10, MB of jitdump a minute)
# SOAK_BACKEND (pyroscope; parca, datadog)  SOAK_FREQ (199)  SOAK_IDLE_S (10)
# SOAK_BUSY (0.5: the service's share of a core)  PERFCONV (./perfconv)
#
# Needs root (perf recording, /proc/PID/clear_refs), perf, node and npm. Everything
# goes under bench/work/soak/ (the last run, kept for a look, and made again by the
# next) and bench/work/soak-cache/ (perfconv's caches).
set -euo pipefail
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
MINUTES=${SOAK_MINUTES:-10}
CHUNK_S=${SOAK_CHUNK_S:-20}
RATE=${SOAK_RATE:-10}
BACKEND=${SOAK_BACKEND:-pyroscope}
FREQ=${SOAK_FREQ:-199}
IDLE_S=${SOAK_IDLE_S:-10}
BUSY=${SOAK_BUSY:-0.5}
W=$PWD/bench/work
R=$W/soak
CACHE=$W/soak-cache

case $BACKEND in pyroscope | parca | datadog) ;; *) echo "soak.sh: SOAK_BACKEND $BACKEND: pyroscope, parca or datadog" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "soak.sh: needs root (perf record of the service, /proc/PID/clear_refs of the watcher)" >&2; exit 2; }
for c in perf node npm python3; do command -v $c >/dev/null || { echo "soak.sh: needs $c" >&2; exit 2; }; done
[ -x "$PERFCONV" ] || { echo "soak.sh: no $PERFCONV: make first" >&2; exit 2; }
[ -d tests/browser/node_modules/pprof-format ] || (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)

RPID= TPID= WPID= MPID= PERFPID= SPID=
stop() { # PID...: SIGTERM, then wait; each only if it is still ours and alive
	for p in "$@"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
	for p in "$@"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
}
cleanup() {
	set +e # every step, whatever the one before it returned
	# perf first, with SIGINT as at the end of a run: it ends the service (its child)
	[ -n "$PERFPID" ] && kill -INT "$PERFPID" 2>/dev/null && wait "$PERFPID"
	# the service, if perf could not end it (only while that pid is still the service)
	if [ -s "$R/service.pid" ] && grep -qs soak_service "/proc/$(cat "$R/service.pid")/cmdline"; then
		kill "$(cat "$R/service.pid")" 2>/dev/null
	fi
	stop "$SPID" "$MPID" "$WPID" "$TPID" "$RPID"
	true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$W"
exec 9>"$W/soak.lock"
flock -n 9 || { echo "soak.sh: another soak run is under way (bench/work/soak.lock)" >&2; exit 2; }
rm -rf "$R"
# perfconv's caches new (the first run here): the first measured chunk still fills
# some, whatever was sent before it (180 to 280 ms against 35 to 60 with the caches
# of an earlier run; a warming chunk of 20 s, or one converted by a perfconv of its
# own first, did not change that), and the report leaves it out of the fit
cache_new=0
[ -n "$(ls -A "$CACHE" 2>/dev/null)" ] || cache_new=1
mkdir -p "$R/dir" "$R/svc" "$R/bodies" "$R/warm" "$R/tmp" "$CACHE"
export TMPDIR=$R/tmp
{
	echo "when=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "perf_version=$(perf --version)"
	echo "node_version=$(node --version)"
	echo "perfconv=$("$PERFCONV" --version | head -1) (${PERFCONV#"$PWD"/}), tree $(git describe --always --dirty 2>/dev/null || echo unknown)"
	echo "minutes=$MINUTES"
	echo "chunk_s=$CHUNK_S"
	echo "rate=$RATE"
	echo "backend=$BACKEND"
	echo "freq=$FREQ"
	echo "busy=$BUSY"
	echo "cache_new=$cache_new"
} >"$R/params"
NODE=(node --perf-prof --interpreted-frames-native-stack "$PWD/bench/soak_service.js")

# 2 s of the service, recorded to warm the watcher (below)
(cd "$R/warm" && SOAK_RATE=$RATE SOAK_BUSY=$BUSY timeout -s INT 2 \
	perf record -q -k 1 -g -F "$FREQ" -o warm.data -- "${NODE[@]}" >/dev/null 2>&1 || true)
[ -s "$R/warm/warm.data" ] || { echo "soak.sh: perf record of the service failed" >&2; exit 1; }

node tests/receivers/receiver.mjs --backend "$BACKEND" --log "$R/receiver.log" --port-file "$R/receiver.port" \
	2>"$R/receiver.err" &
RPID=$!
for i in $(seq 100); do [ -s "$R/receiver.port" ] && break; sleep 0.05; done
node bench/soak_tap.mjs proxy --to "$(cat "$R/receiver.port")" --dir "$R/bodies" --port-file "$R/tap.port" \
	2>"$R/tap.err" &
TPID=$!
for i in $(seq 100); do [ -s "$R/tap.port" ] && break; sleep 0.05; done
[ -s "$R/receiver.port" ] && [ -s "$R/tap.port" ] ||
	{ echo "soak.sh: the receiver or the tap did not start: $(cat "$R/receiver.err" "$R/tap.err")" >&2; exit 1; }

"$PERFCONV" upload --to "$BACKEND" --url "http://127.0.0.1:$(cat "$R/tap.port")" --watch "$R/dir" \
	--service soak --cache-dir "$CACHE" 2>"$R/watcher.err" &
WPID=$!
# the watcher's first chunk opens libcurl and fills perfconv's caches (node, libc, the
# kernel) and the page cache: a chunk of its own, sent before the measured ones and
# then taken out of sent/ (the report leaves its request out)
cp "$R/warm/warm.data" "$R/dir/.warm" && mv "$R/dir/.warm" "$R/dir/perf.data.2000010100000000"
for i in $(seq 600); do [ -e "$R/dir/sent/perf.data.2000010100000000" ] && break; sleep 0.1; done
[ -e "$R/dir/sent/perf.data.2000010100000000" ] ||
	{ echo "soak.sh: the warming chunk was not sent: $(cat "$R/watcher.err")" >&2; exit 1; }
mv "$R/dir/sent/perf.data.2000010100000000" "$R/warm/"
echo "warm_requests=$(ls "$R/bodies" | grep -c '\.json$')" >>"$R/params"
python3 bench/soak_monitor.py --pid "$WPID" --dir "$R/dir" --dump-dir "$R/svc" --out "$R/monitor.tsv" \
	--idle "$IDLE_S" --ready "$R/monitor.ready" &
MPID=$!
for i in $(seq $((IDLE_S * 10 + 100))); do [ -e "$R/monitor.ready" ] && break; sleep 0.1; done
[ -e "$R/monitor.ready" ] || { echo "soak.sh: the monitor did not start: watcher: $(cat "$R/watcher.err")" >&2; exit 1; }

echo "soak.sh: recording the service for $MINUTES min in $CHUNK_S s chunks (bench/work/soak/)" >&2
(cd "$R/svc" && exec env SOAK_RATE="$RATE" SOAK_BUSY="$BUSY" SOAK_STATUS="$R/service.status" SOAK_PIDFILE="$R/service.pid" \
	perf record -k 1 -g -F "$FREQ" --switch-output="${CHUNK_S}s" -o "$R/dir/perf.data" \
	-- "${NODE[@]}" >"$R/service.out" 2>"$R/perf.err") &
PERFPID=$!
# in the background, so that a signal is acted on at once (bash runs a trap only
# after the command in the foreground ends; wait is cut short by it)
sleep "$(awk -v m="$MINUTES" 'BEGIN { print m * 60 }')" &
SPID=$!
wait $SPID
SPID=
# then on to perf's next switch, so that the last whole chunk has the dump of the whole
# time, and until the watcher has sent that chunk, so that the one perf writes as it
# stops (a moment long) is not waiting while it is converted (its figures would mix)
dumps() { grep -c '^\[ perf record: Dump ' "$R/perf.err" || true; }
n=$(dumps)
for i in $(seq $((CHUNK_S * 10 + 100))); do [ "$(dumps)" -gt "$n" ] && break; sleep 0.1; done
last=$(sed -n 's/^\[ perf record: Dump .*\/\(perf\.data\.[0-9]*\) \]$/\1/p' "$R/perf.err" | tail -1)
for i in $(seq 600); do [ -e "$R/dir/sent/$last" ] && break; sleep 0.1; done
kill -INT "$PERFPID"
wait "$PERFPID" || true
PERFPID=
# the last chunk, and any backlog, sent
for i in $(seq 1200); do
	[ -z "$(ls "$R/dir" | grep -E '^perf\.data\.[0-9]{8,}$')" ] && break
	sleep 0.1
done
sleep 0.5
stop "$MPID"
MPID=
stop "$WPID" "$TPID" "$RPID"
WPID= TPID= RPID=
node bench/soak_tap.mjs names --backend "$BACKEND" --dir "$R/bodies" >"$R/names.jsonl"
python3 bench/soak_report.py "$R"
