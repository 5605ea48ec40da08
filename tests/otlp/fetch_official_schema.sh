#!/bin/sh
# fetch_official_schema.sh DEST [SUITE]: unpack Debian's libopentelemetry-proto-dev, the
# official opentelemetry-proto schema compiled by protoc (its *.pb.cc files hold each
# .proto as a serialized FileDescriptorProto), into DEST for
#   node tests/otlp/otlp_decode.mjs --official DEST FILE
# No npm package ships the profiles protos, and bookworm has no such package: SUITE
# (default forky, which has 1.11.0-1; trixie's 1.5.0 predates the v1.10 wire format and
# otlp_decode.mjs refuses it) is read with apt-get from a private list and cache under a
# temporary folder, from the Debian mirror this machine's apt sources already name. The
# machine's apt configuration and installed packages are not touched; nothing is
# installed. Prints the package version. Needs apt-get, dpkg-deb and write access to
# DEST (run as root, apt-get's download sandbox is switched off for the temporary folder).
set -eu
dest=${1:?usage: fetch_official_schema.sh DEST [SUITE]}
suite=${2:-forky}
pkg=libopentelemetry-proto-dev

# The configured Debian archive (deb822 .sources first, then one-line .list entries).
uri=$({
	grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{ for (i = 2; i <= NF; i++) print $i }'
	grep -hsE '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
		sed 's/\[[^]]*\]//' | awk '{ print $2 }'
} | grep -v -- '-security' | head -n 1)
[ -n "$uri" ] || { echo "fetch_official_schema: no Debian archive in the apt sources" >&2; exit 2; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/lists/partial" "$work/archives/partial"
echo "deb [signed-by=$keyring] $uri $suite main" >"$work/sources.list"
set -- -o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work" -o "Dir::Cache::archives=$work/archives" \
	-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root -qq
apt-get "$@" update
(cd "$work" && apt-get "$@" download "$pkg")
deb=$(ls "$work"/${pkg}_*_all.deb)
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$deb" "$dest"
dpkg-deb -f "$deb" Version
