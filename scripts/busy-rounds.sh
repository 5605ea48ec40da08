#!/bin/bash
# busy-rounds: `make check` N times in a row beside two busy CPU loops, the plain build
# and then the ASan/UBSan build, each round with an empty HOME (no cache from the round
# before) - the evidence issue 45.1 asks for ("three times in a row, plain and sanitizer
# build"). Run it in a clone, not in a tree you are editing: it cleans and builds.
#
#   scripts/busy-rounds.sh [N] [LOGDIR]     (N defaults to 3; LOGDIR to a new /var/tmp dir)
#
# Every round runs even after one fails; each round's log is kept in LOGDIR, and the last
# lines say each round's result and time. Exits 0 only when every round passed.
set -u
cd "$(dirname "$0")/.."
n=${1:-3}
logs=${2:-$(mktemp -d /var/tmp/perfconv-busy-rounds.XXXXXX)}
mkdir -p "$logs"
results=()
failed=0
round() { # NAME COMMAND...
	local name=$1 t=$SECONDS home rc
	shift
	home=$(mktemp -d)
	echo "=== $name ($(date -u +%H:%M:%S)): $*"
	env -u XDG_CACHE_HOME -u PERFCONV_CACHE_DIR -u DEBUGINFOD_URLS HOME="$home" "$@" \
		>"$logs/$name.log" 2>&1
	rc=$?
	rm -rf "$home"
	results+=("$(printf '%5ds  %-6s %s' $((SECONDS - t)) "$([ $rc -eq 0 ] && echo ok || echo FAILED)" "$name")")
	[ $rc -eq 0 ] || { failed=1; grep -a -E '^(FAIL|e2e: .*FAILED)|:[EF]:|runtime error:|^SUMMARY: ' "$logs/$name.log" | tail -20; }
	echo "${results[-1]}"
}
make clean >/dev/null
make -j2 check-build >/dev/null || { echo "busy-rounds: the plain build failed" >&2; exit 1; }
for i in $(seq "$n"); do round "plain-$i" scripts/busy.sh make check; done
make -j2 SANITIZE=address,undefined check-build >/dev/null ||
	{ echo "busy-rounds: the sanitizer build failed" >&2; exit 1; }
for i in $(seq "$n"); do
	round "sanitize-$i" env ASAN_OPTIONS=detect_leaks=1 scripts/busy.sh make -j2 SANITIZE=address,undefined check
done
echo "=== busy rounds at $(git log --oneline -1 | cut -c1-60), logs in $logs"
printf '%s\n' "${results[@]}"
exit $failed
