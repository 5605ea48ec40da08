#!/bin/sh
# install-deps: install what perfconv needs to build and test on Debian 12, from nothing
# but a shell: make and the compilers, the libraries, perf, and the tools the tests run
# (Go's pprof, node and npm, chromium, debuginfod, lli-14, llvm-symbolizer from
# Debian's llvm). Idempotent: when every package is
# present it returns at once without touching apt. As root it runs apt-get; otherwise
# through sudo when there is a sudo, else it names the packages to install and fails.
set -e

PKGS="make build-essential pkg-config libdw-dev libelf-dev libzstd-dev zlib1g-dev libdeflate-dev libbz2-dev libiberty-dev \
protobuf-c-compiler libprotobuf-c-dev golang-go \
check elfutils linux-perf clang libclang-rt-14-dev time python3 binutils gzip debuginfod g++ \
libcjson-dev libcurl4-openssl-dev chromium openjdk-17-jdk-headless libc6-dbg strace openssl llvm-14 llvm \
scdoc man-db bash-completion systemd debhelper lintian dwz xz-utils liblzma-dev iproute2"
# The browser tests run the speedscope app from npm under node; a machine that has node
# and npm already (from elsewhere than Debian) keeps them.
command -v node >/dev/null && command -v npm >/dev/null || PKGS="$PKGS nodejs npm"

# The tests' npm packages (the speedscope app, pprof-format, the Firefox Profiler's
# profiler-cli...), at the versions and digests tests/browser/package-lock.json pins:
# npm ci there when one of them is missing (the tests do the same when they start).
# Run last: it moves to the source tree.
npm_packages() {
	command -v node >/dev/null && command -v npm >/dev/null || return 0
	cd "$(dirname "$0")/.." || exit 1
	node -e 'const p = require("./tests/browser/package.json"), fs = require("fs");
		process.exit(Object.keys(p.dependencies).every(d =>
			fs.existsSync("tests/browser/node_modules/" + d + "/package.json")) ? 0 : 1)' 2>/dev/null &&
		return 0
	echo "install-deps: npm ci in tests/browser (the tests' npm packages, as package-lock.json pins them)" >&2
	(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) >&2 ||
		{ echo "install-deps: npm ci in tests/browser failed" >&2; exit 1; }
}

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && { npm_packages; exit 0; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "install-deps: run as root, or install these packages:$missing" >&2
		exit 1
	fi
	SUDO=sudo
fi

echo "install-deps: installing with apt-get (Debian 12; on a bare system about 850 packages," \
	"550 MB, several minutes):$missing" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
$SUDO apt-get update -qq
# apt's own lines go to $log; what it is doing is said every tenth of the packages.
# The exit status is apt-get's (through fd 3: sh has no pipefail).
status=$({ { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Use-Pty=0 \
	$missing 2>&1; echo $? >&3; } | tee "$log" | awk '
	BEGIN { step = 50 }
	function say(s) { print "install-deps: " s; fflush() }
	/ newly installed, / { total = $3 + $1; step = int(total / 10) + 1; say($0) }
	/^Need to get / { say($0) }
	/^Get:[0-9]+ / { got++; if (got % step == 0) say("downloaded " got " of " total " packages") }
	/^Unpacking / { unp++; if (unp % step == 0) say("unpacked " unp " of " total " packages") }
	/^Setting up / { set++; if (set % step == 0 || set == total) say("set up " set " of " total " packages (" $3 ")") }
	/^(E|W): / { print; fflush() }' >&2; } 3>&1)
if [ "$status" -ne 0 ]; then
	tail -n 20 "$log" >&2
	echo "install-deps: apt-get install failed (exit $status)" >&2
	exit 1
fi
npm_packages
