#!/bin/sh
# install-deps: install what perfconv needs to build and test, on Debian 12. Idempotent:
# when every package is present it returns at once without touching apt.
set -e

PKGS="build-essential pkg-config libdw-dev libelf-dev libzstd-dev zlib1g-dev libdeflate-dev libiberty-dev \
protobuf-c-compiler libprotobuf-c-dev golang-go \
check elfutils linux-perf clang libclang-rt-14-dev time python3 binutils gzip debuginfod g++ \
libcjson-dev libcurl4-openssl-dev chromium openjdk-17-jdk-headless libc6-dbg"
# The browser tests run the speedscope app from npm under node; a machine that has node
# and npm already (from elsewhere than Debian) keeps them.
command -v node >/dev/null && command -v npm >/dev/null || PKGS="$PKGS nodejs npm"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
