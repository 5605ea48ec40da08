#!/bin/sh
# record-jit.sh: re-records the JIT recordings in testdata/jit/ and perf's goldens for them.
#
# Made with (also written to testdata/jit/VERSIONS by this script):
#   perf version 6.1.187 (Debian package linux-perf 6.1.187-1)
#   node v20.20.2 (package nodejs 20.20.2-1nodesource1+repack1)
#   LLVM 14.0.6 (packages llvm-14 and clang-14 1:14.0.6-12): lli-14, clang-14
#   Erlang/OTP 25, erts 13.1.5 (package erlang-base 1:25.2.3+dfsg-1+deb12u4)
#   kernel 6.18.44-fc-v669 (x86_64, 2 CPUs, no hardware PMU: cpu-clock samples)
# Re-recording needs those runtimes (apt-get install nodejs llvm-14 clang-14 erlang-base);
# the tests need only the committed files.
#
# Run as root, from any directory: testdata/record-jit.sh. Sources are in jit/src/.
# Everything is recorded in the scratch directory $REC, so that the paths the
# recordings and dumps name (/tmp/perfconv-rec-jit/..., /tmp/jit-PID.dump) are not
# the committed ones: a converter must find the dumps next to the recording.
#
# Recordings (cwd $REC; every perf command also gets --buildid-dir $REC/.debug):
#   node.data      perf record -k 1 -g -F 999 node --perf-prof js/fibonacci-bench.js 1
#                  V8 writes jit-PID.dump in the working directory. The script path is
#                  39 characters: Node 20 writes the first 16 bytes of every DEBUG_INFO
#                  file name from freed memory (see docs/FORMATS.md).
#   node-wasm.data perf record -k 1 -g -F 999 node --perf-prof js/wasm-fib-bench.js 1
#                  a hand-assembled WebAssembly module; wasm_fib is compiled by Liftoff,
#                  then by TurboFan (two code loads, no DEBUG_INFO).
#   lli.data       JITDUMPDIR=$REC/llvm perf record -k 1 -g -F 999 \
#                      lli-14 -jit-kind=mcjit c/hotloop.ll 8000000
#                  hotloop.ll is `clang-14 -g -O1 -S -emit-llvm c/hotloop.c`; the dump
#                  is in $REC/llvm/.debug/jit/llvm-IR-jit-DATE-RAND/jit-PID.dump.
#   erlang.data    perf record -k 1 -g -F 999 erl +JPperf true -noshell -pa erl \
#                      -run hotfib main 1000
#                  BEAM writes /tmp/jit-PID.dump (about 15,000 code loads, most of them
#                  at boot) and /tmp/perf-PID.map. The dump is committed gzipped
#                  (jit-PID.dump.gz, 6 MB unpacked): unpack it next to erlang.data.
#   node-map.data  perf record -k 1 -g -F 999 node --perf-basic-prof js/fibonacci-bench.js 1
#                  a perf map only: /tmp/perf-PID.map.
#
# Goldens in expected/, for each recording NAME, made while the dumps are at their
# recorded paths (perf inject --jit -i NAME.data -o NAME.injected; for node-map the
# recording itself):
#   NAME.sym      perf report --stdio --no-children -n -g none --sort sym
#   NAME.srcline  perf report --stdio --no-children -n -g none --sort sym,srcline
#                 (shows perf's ??:0 and garbage file names)
#   erlang.inject-seconds   wall time of perf inject --jit on erlang.data
# RECORDINGS lists NAME, the recorded pid, and the dump or map the recording needs.
set -eu

cd "$(dirname "$0")/jit"
TD=$(pwd)
REC=/tmp/perfconv-rec-jit
BID=$REC/.debug
REPORT="--stdio --no-children -n -g none"
LC_ALL=C
export LC_ALL

perf_() {
	perf --buildid-dir "$BID" "$@"
}

versions() {
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo '?')"
	echo "node: $(node --version) (nodejs $(dpkg-query -W -f '${Version}' nodejs 2>/dev/null || echo '?'))"
	echo "lli-14: $(lli-14 --version | sed -n 's/.*LLVM version //p' | head -1) (llvm-14 $(dpkg-query -W -f '${Version}' llvm-14 2>/dev/null || echo '?'))"
	echo "clang-14: $(clang-14 --version | head -1)"
	echo "erlang: OTP $(erl -noshell -eval 'io:format("~s erts ~s", [erlang:system_info(otp_release), erlang:system_info(version)]), halt().') (erlang-base $(dpkg-query -W -f '${Version}' erlang-base 2>/dev/null || echo '?'))"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "cpus: $(nproc)"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

rm -rf "$REC"
mkdir -p "$REC/js" "$REC/c" "$REC/erl" "$REC/llvm" "$BID"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT

cp src/fibonacci-bench.js src/wasm-fib-bench.js "$REC/js/"
cp src/hotloop.c "$REC/c/"
cp src/hotfib.erl "$REC/erl/"
cd "$REC"
clang-14 -g -O1 -S -emit-llvm -o c/hotloop.ll c/hotloop.c
(cd erl && erlc +debug_info hotfib.erl)

# The pid of the one new file matching a pattern, after a recording.
newest_pid() { # GLOB-PREFIX SUFFIX
	ls -t $1*$2 2>/dev/null | head -1 | sed "s|.*-\([0-9]*\)$2\$|\1|"
}

REC_OPTS="-q -k 1 -g -F 999"

perf_ record $REC_OPTS -o node.data node --perf-prof js/fibonacci-bench.js 1
node_pid=$(newest_pid "$REC/jit-" .dump)
mkdir -p node-dump && mv "$REC/jit-$node_pid.dump" node-dump/
# perf inject needs the dump at its recorded path: put it back for the goldens.
cp node-dump/jit-$node_pid.dump "$REC/"

perf_ record $REC_OPTS -o node-wasm.data node --perf-prof js/wasm-fib-bench.js 1
wasm_pid=$(newest_pid "$REC/jit-" .dump)

JITDUMPDIR=$REC/llvm perf_ record $REC_OPTS -o lli.data lli-14 -jit-kind=mcjit c/hotloop.ll 8000000
lli_dump=$(ls "$REC"/llvm/.debug/jit/llvm-IR-jit-*/jit-*.dump)
lli_pid=$(echo "$lli_dump" | sed 's|.*/jit-\([0-9]*\)\.dump$|\1|')

perf_ record $REC_OPTS -o erlang.data erl +JPperf true -noshell -pa erl -run hotfib main 1000
erl_pid=$(newest_pid /tmp/jit- .dump)
test -f "/tmp/perf-$erl_pid.map"

perf_ record $REC_OPTS -o node-map.data node --perf-basic-prof js/fibonacci-bench.js 1
map_pid=$(newest_pid /tmp/perf- .map)

# Goldens, with every dump and map at its recorded path.
rm -rf "$TD/expected"
mkdir -p "$TD/expected"
for n in node node-wasm lli erlang; do
	start=$(date +%s.%N)
	perf_ inject --jit -i $n.data -o $n.injected
	end=$(date +%s.%N)
	[ $n != erlang ] || echo "$start $end" | awk '{ printf "%.2f\n", $2 - $1 }' \
		> "$TD/expected/erlang.inject-seconds"
	perf_ report -i $n.injected $REPORT --sort sym > "$TD/expected/$n.sym" 2> /dev/null
	perf_ report -i $n.injected $REPORT --sort sym,srcline > "$TD/expected/$n.srcline" 2> /dev/null
done
perf_ report -i node-map.data $REPORT --sort sym > "$TD/expected/node-map.sym" 2> /dev/null
perf_ report -i node-map.data $REPORT --sort sym,srcline > "$TD/expected/node-map.srcline" 2> /dev/null
rm -f /tmp/jitted-"$erl_pid"-*.so

# Move the recordings, dumps and maps into testdata/jit/, away from their recorded paths.
rm -f "$TD"/*.data "$TD"/jit-*.dump "$TD"/jit-*.dump.gz "$TD"/perf-*.map
for n in node node-wasm lli erlang node-map; do
	cp $n.data "$TD/"
done
mv node-dump/jit-$node_pid.dump "$TD/"
mv "$REC/jit-$wasm_pid.dump" "$TD/"
mv "$lli_dump" "$TD/"
gzip -9n -c "/tmp/jit-$erl_pid.dump" > "$TD/jit-$erl_pid.dump.gz"
rm -f "/tmp/jit-$erl_pid.dump"
mv "/tmp/perf-$erl_pid.map" "$TD/"
mv "/tmp/perf-$map_pid.map" "$TD/"
chmod 644 "$TD"/*.data "$TD"/jit-*.dump* "$TD"/perf-*.map

cd "$TD"
{
	echo "# NAME PID FILE: the dump or map the recording needs, next to it"
	echo "node $node_pid jit-$node_pid.dump"
	echo "node-wasm $wasm_pid jit-$wasm_pid.dump"
	echo "lli $lli_pid jit-$lli_pid.dump"
	echo "erlang $erl_pid jit-$erl_pid.dump.gz"
	echo "erlang $erl_pid perf-$erl_pid.map"
	echo "node-map $map_pid perf-$map_pid.map"
} > RECORDINGS
versions > VERSIONS
for n in node node-wasm lli erlang node-map; do
	printf '%s: hottest: %s\n' $n "$(grep -m1 '^ *[0-9.]*%' expected/$n.sym | sed 's/  */ /g')"
done
echo "perf inject --jit on erlang.data: $(cat expected/erlang.inject-seconds) s"
du -sh "$TD"
