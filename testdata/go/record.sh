#!/bin/sh
# record.sh: rebuilds gofib and re-records testdata/go/gofib.data, a Go program whose
# DWARF has no .debug_aranges (issue 22, item 10), and perf's source lines for it.
#
# Run as root (or with perf_event_paranoid <= 1), from any directory:
# testdata/go/record.sh (golang-go installed). Versions go to testdata/go/VERSIONS.
#
# 1. Builds src/gofib.go into testdata/go/gofib (go build, the defaults: its DWARF
#    compressed, no .debug_aranges).
# 2. Records it in /tmp/perfconv-rec-go (user space only):
#      perf record -e cpu-clock:u -F 999 -g --sample-cpu ./gofib 300000000
# 3. The golden, expected/gofib.srcline: perf report --stdio --no-children -n -g none
#    --sort sym,srcline (perf takes lines from binutils' addr2line).
set -eu

cd "$(dirname "$0")"
TD=$(pwd)
REC=/tmp/perfconv-rec-go
LC_ALL=C
export LC_ALL

rm -rf "$REC"
mkdir -p "$REC/.debug" "$REC/build" "$TD/expected"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT
cp "$TD/src/gofib.go" "$REC/build/"
(cd "$REC/build" && HOME=$REC GOCACHE=$REC/gocache GOTOOLCHAIN=local GOFLAGS= GO111MODULE=off \
	go build -o "$TD/gofib" gofib.go)
cp "$TD/gofib" "$REC/gofib"
cd "$REC"
perf --buildid-dir "$REC/.debug" record -q -e cpu-clock:u -F 999 -g --sample-cpu \
	-o gofib.data ./gofib 300000000 >/dev/null
perf --buildid-dir "$REC/.debug" report -i gofib.data --stdio --no-children -n -g none \
	--sort sym,srcline > "$TD/expected/gofib.srcline" 2>/dev/null
cp gofib.data "$TD/gofib.data"
{
	echo "perf: $(perf --version)"
	echo "go: $(go version)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$TD/VERSIONS"
