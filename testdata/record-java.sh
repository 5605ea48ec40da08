#!/bin/sh
# record-java.sh: re-records the Java recordings in testdata/java/ and perf's goldens for them.
#
# Made with (also written to testdata/java/VERSIONS by this script):
#   perf version 6.1.187 (Debian package linux-perf 6.1.187-1)
#   OpenJDK 17.0.15+6-Debian-1deb12u1 (package openjdk-17-jdk-headless 17.0.15+6-1~deb12u1)
#   the agent of this tree, build/libperfconv-jvmti.so (make jvmti)
#   kernel 6.18.44-fc-v1045 (x86_64, 2 CPUs, no hardware PMU: cpu-clock samples)
# Re-recording needs those (apt-get install openjdk-17-jdk-headless linux-perf); the tests
# need only the committed files.
#
# Run as root, from any directory: testdata/record-java.sh. The source is java/src/Hot.java.
# Everything is recorded in the scratch directory $REC, so that the paths the recordings
# and dumps name (/tmp/perfconv-rec-java/...) are not the committed ones: a converter must
# find the dumps next to the recording.
#
# Recordings (cwd $REC; every perf command also gets --buildid-dir $REC/.debug):
#   java.data        perf record -k 1 -g -F 999 java -XX:+PreserveFramePointer \
#                        -agentpath:build/libperfconv-jvmti.so Hot 3
#                    the agent writes jit-PID.dump in the working directory.
#   java-dwarf.data  perf record -k 1 --call-graph dwarf -F 999 java -XX:+PreserveFramePointer \
#                        -agentpath:build/libperfconv-jvmti.so Hot 1
#                    committed gzipped with its dump (java-dwarf.data.gz, jit-PID.dump.gz).
#
# Goldens in expected/, for each recording NAME, made while the dumps are at their
# recorded paths, from perf inject --jit -i NAME.data -o NAME.injected:
#   NAME.sym        perf report --stdio --no-children -n -g none --sort sym
#   NAME.srcline    perf report --stdio --no-children -n -g none --sort sym,srcline
#   NAME.script.gz  perf script --ns -F comm,pid,tid,time,event,period,ip,sym,dso
#                   (the dwarf one with --no-inline, as testdata/dwarf's)
# Beside them: kallsyms.gz and kernel.buildid (the recording kernel's), libjvm.buildid
# (the recorded libjvm.so: the stack tests need that one installed), RECORDINGS (NAME,
# the recorded pid, the dump the recording needs).
set -eu

cd "$(dirname "$0")/.."
TOP=$(pwd)
TD=$TOP/testdata/java
REC=/tmp/perfconv-rec-java
BID=$REC/.debug
REPORT="--stdio --no-children -n -g none"
FIELDS=comm,pid,tid,time,event,period,ip,sym,dso
LC_ALL=C
export LC_ALL

make -s jvmti
AGENT=$TOP/build/libperfconv-jvmti.so
LIBJVM=$(dirname "$(readlink -f "$(command -v java)")")/../lib/server/libjvm.so

perf_() {
	perf --buildid-dir "$BID" "$@"
}

versions() {
	echo "perf: $(perf --version)"
	echo "linux-perf package: $(dpkg-query -W -f '${Version}' linux-perf 2>/dev/null || echo '?')"
	echo "java: $(java -version 2>&1 | sed -n 2p)"
	echo "openjdk-17-jdk-headless package: $(dpkg-query -W -f '${Version}' openjdk-17-jdk-headless 2>/dev/null || echo '?')"
	echo "javac: $(javac -version 2>&1)"
	echo "libjvm.so: $(readlink -f "$LIBJVM"), build id $(cat "$TD/libjvm.buildid")"
	echo "agent: build/libperfconv-jvmti.so of $(git -C "$TOP" rev-parse --short HEAD)"
	echo "kernel: $(uname -r) $(uname -m)"
	echo "cpus: $(nproc)"
	echo "recorded at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

rm -rf "$REC"
mkdir -p "$REC" "$BID"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$REC"' EXIT
cp "$TD/src/Hot.java" "$REC/"
cd "$REC"
javac -g Hot.java

# The pid of the one dump a recording left in $REC (each is moved away after).
dump_pid() {
	ls jit-*.dump | sed 's|^jit-\([0-9]*\)\.dump$|\1|'
}

JAVA="java -XX:+PreserveFramePointer -agentpath:$AGENT"
perf_ record -q -k 1 -g -F 999 -o java.data $JAVA Hot 3
fp_pid=$(dump_pid)
perf_ inject --jit -i java.data -o java.injected
mkdir -p fp && mv "jit-$fp_pid.dump" fp/
rm -f jitted-*.so

perf_ record -q -k 1 --call-graph dwarf -F 999 -o java-dwarf.data $JAVA Hot 1
dw_pid=$(dump_pid)
perf_ inject --jit -i java-dwarf.data -o java-dwarf.injected
mkdir -p dw && mv "jit-$dw_pid.dump" dw/
rm -f jitted-*.so

# perf report and script of the injected files need the jitted-*.so perf inject wrote
# next to the dump: inject again with each dump back at its recorded path.
rm -rf "$TD/expected"
mkdir -p "$TD/expected"
for n in java java-dwarf; do
	case $n in java) pid=$fp_pid d=fp o="" ;; *) pid=$dw_pid d=dw o=--no-inline ;; esac
	cp "$d/jit-$pid.dump" .
	perf_ inject --jit -i $n.data -o $n.injected
	perf_ report -i $n.injected $REPORT --sort sym > "$TD/expected/$n.sym" 2> /dev/null
	perf_ report -i $n.injected $REPORT --sort sym,srcline > "$TD/expected/$n.srcline" 2> /dev/null
	perf_ script -i $n.injected $o --ns -F $FIELDS 2> /dev/null | gzip -9n > "$TD/expected/$n.script.gz"
	rm -f "jit-$pid.dump" jitted-*.so
done

rm -f "$TD"/*.data "$TD"/*.data.gz "$TD"/jit-*.dump "$TD"/jit-*.dump.gz
cp java.data "$TD/"
mv "fp/jit-$fp_pid.dump" "$TD/"
gzip -9n -c java-dwarf.data > "$TD/java-dwarf.data.gz"
gzip -9n -c "dw/jit-$dw_pid.dump" > "$TD/jit-$dw_pid.dump.gz"
cat /proc/kallsyms > kallsyms
gzip -9n -c kallsyms > "$TD/kallsyms.gz"
perf_ buildid-list -i java.data | awk '$2 == "[kernel.kallsyms]" { print $1 }' > "$TD/kernel.buildid"
readelf -n "$LIBJVM" | sed -n 's/.*Build ID: //p' > "$TD/libjvm.buildid"
chmod 644 "$TD"/*.data "$TD"/*.gz "$TD"/jit-*.dump

cd "$TD"
{
	echo "# NAME PID FILE: the dump the recording needs, next to it"
	echo "java $fp_pid jit-$fp_pid.dump"
	echo "java-dwarf $dw_pid jit-$dw_pid.dump.gz"
} > RECORDINGS
versions > VERSIONS
for n in java java-dwarf; do
	printf '%s: hottest: %s\n' $n "$(grep -m1 '^ *[0-9.]*%' expected/$n.sym | sed 's/  */ /g')"
done
du -sh "$TD"
