#!/bin/sh
# record-arm64.sh: rebuilds the aarch64 test programs and re-makes the aarch64
# `--call-graph dwarf` recordings in testdata/arm64/ and their truths, without arm64
# hardware: the programs run under qemu-aarch64 (user mode), stopped by gdb-multiarch,
# each stop one sample, gdb's backtrace its truth (arm64/make-arm64.py says how).
#
# Needs (Debian 12): apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
#   qemu-user-static gdb-multiarch. The versions used are written to arm64/VERSIONS.
# The aarch64 libc and ld.so the programs ran with (Debian's cross packages
# libc6-arm64-cross) are copied into arm64/symfs/ at the paths a Debian arm64 machine
# maps them from: convert with --symfs testdata/arm64/symfs.
#
# Run from any directory, as root or not. Everything it writes is in testdata/arm64/.
set -eu

cd "$(dirname "$0")"
LC_ALL=C
export LC_ALL
python3 arm64/make-arm64.py arm64
{
	for p in gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-arm64-cross \
		libstdc++-12-dev-arm64-cross qemu-user-static gdb-multiarch; do
		echo "$p: $(dpkg-query -W -f '${Version}' $p 2>/dev/null || echo '?')"
	done
	echo "gcc: $(aarch64-linux-gnu-gcc --version | head -1)"
	echo "qemu: $(qemu-aarch64-static --version | head -1)"
	echo "gdb: $(gdb-multiarch --version | head -1)"
	echo "flags: -O2 -g -fomit-frame-pointer (C++: -static-libstdc++ -static-libgcc)"
	echo "made at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >arm64/VERSIONS
echo "record-arm64: done (arm64/VERSIONS)"
