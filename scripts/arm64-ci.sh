#!/bin/bash
# arm64-ci: perfconv built and tested for arm64 on an x86-64 Debian 12 host (issue 48,
# item 3), as CI's arm64 stage runs it (.ci/run), as root:
#   1. what it needs, installed on the host when missing: Debian's multiarch (dpkg
#      --add-architecture arm64), crossbuild-essential-arm64, qemu-user-static, and the
#      libraries the Makefile links as :arm64 packages (protoc-c runs on the host);
#   2. the cross build, in build-arm64/ (the checkout's sources; build/ is the host's);
#   3. the unit tests, every Check suite, each run under qemu-aarch64-static;
#   4. the arm64 binary's outputs of the self-contained recordings, under qemu: each
#      the same bytes as tests/outputs.sha256 holds (scripts/output-digests.sh);
#   5. the Debian package for arm64 (make deb DEB_ARCH=arm64: dpkg-buildpackage
#      -aarm64, lintian), its binary run under qemu.
# Each step says its time. About 5 minutes once the packages are installed (their
# first install, about 100 packages, adds one or two).
#
# Under qemu-user, left out of the unit tests by their tag (CK_EXCLUDE_TAGS), not
# skipped: the Check cases tagged `cputime` (check_demangle's output_bounds,
# check_elfsyms' alias_bombs), whose names must pass the demangler's output bound
# (256 KiB) before its bound of 5 ms of CPU time, as a CPU running libiberty does; an
# emulator runs it about ten times slower and meets the time bound first (the time
# bound itself, check_demangle's time_bound, runs here). They run on arm64 hardware as
# on x86-64.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
T=aarch64-linux-gnu
QEMU=qemu-aarch64-static
# the libraries of the Makefile's PKGS, HEADER_PKGS and CHECK_LIBS, and libiberty
LIBS="libdw-dev libelf-dev libzstd-dev zlib1g-dev libdeflate-dev libbz2-dev liblzma-dev \
libiberty-dev libprotobuf-c-dev libcjson-dev libcurl4-openssl-dev check"
PKGS="crossbuild-essential-arm64 qemu-user-static pkg-config:arm64 $(printf '%s:arm64 ' $LIBS)"
CROSS=(BUILD=build-arm64 BIN=build-arm64/perfconv DEPS_MK=build-arm64/deps.mk CC=$T-gcc
	AR=$T-ar PKG_CONFIG=$T-pkg-config INSTALL_DEPS=true)
t0=$SECONDS
step() { echo "arm64-ci: $1 ($((SECONDS - t0)) s)"; }

# 1. packages (apt waits for another apt of this machine to finish)
APT=(apt-get -q -o DPkg::Lock::Timeout=900)
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	"${APT[@]}" update -qq
	# an :arm64 -dev package (Multi-Arch: same) brings its amd64 twin to its version
	"${APT[@]}" install -y --no-install-recommends $missing >/tmp/arm64-ci-apt.log 2>&1 ||
		{ tail -20 /tmp/arm64-ci-apt.log; exit 1; }
	step "installed:$missing"
fi

# 2. the cross build
make -j2 "${CROSS[@]}" build-arm64/perfconv $(ls tests/check_*.c |
	sed 's|^tests/check_\(.*\)\.c$|build-arm64/tests/check_\1|') >/dev/null
file -b build-arm64/perfconv | grep -q 'ARM aarch64' ||
	{ echo "arm64-ci: build-arm64/perfconv is not an aarch64 program: $(file -b build-arm64/perfconv)" >&2; exit 1; }
step "cross-built build-arm64/perfconv and the $(ls tests/check_*.c | wc -l) Check suites"

# 3. the unit tests under qemu
echo "arm64-ci: left out under qemu: Check cases tagged cputime (the demangler's output bound, met after its CPU-time bound under an emulator)"
CK_EXCLUDE_TAGS=cputime make "${CROSS[@]}" UNIT_RUN=$QEMU unit
step "unit tests under $QEMU: passed"

# 4. the arm64 binary's outputs, byte for byte the committed digests'
wrap=$(mktemp)
trap 'rm -f "$wrap"' EXIT
printf '#!/bin/sh\nexec %s %s "$@"\n' "$QEMU" "$PWD/build-arm64/perfconv" >"$wrap"
chmod +x "$wrap"
scripts/output-digests.sh "$wrap"
step "outputs of the recordings under $QEMU: as tests/outputs.sha256"

# 5. the Debian package for arm64, and its binary run
make deb DEB_ARCH=arm64
deb=$(ls build/deb/perfconv_*_arm64.deb)
dpkg-deb -f "$deb" Architecture | grep -qx arm64
x=$(mktemp -d)
trap 'rm -rf "$wrap" "$x"' EXIT
dpkg-deb -x "$deb" "$x"
"$QEMU" "$x/usr/bin/perfconv" --version
step "$deb built (lintian: no error), its perfconv run under $QEMU"
echo "arm64-ci: ok in $((SECONDS - t0)) s"
