#!/bin/sh
# fetch_official_schema.sh DEST: unpack Debian's libopentelemetry-proto-dev 1.11.0-1, the
# official opentelemetry-proto schema compiled by protoc (its *.pb.cc files hold each
# .proto as a serialized FileDescriptorProto), into DEST for
#   node tests/otlp/otlp_decode.mjs --official DEST FILE
# No npm package ships the profiles protos, and bookworm has no such package (trixie's
# 1.5.0 predates the v1.10 wire format and otlp_decode.mjs refuses it).
#
# The input is pinned: one .deb, by its pool path and its SHA-256, not a suite (forky
# moves: its version changes, and the old file leaves the mirror's pool). No Release
# file is read, so a snapshot mirror past its Valid-Until (the archive here is one) and
# a root without this machine's apt settings fetch it the same way. Sources, in order:
# the Debian mirror this machine's apt sources name and deb.debian.org (by the pool
# path), then snapshot.debian.org (by the file's SHA-1: it keeps every file Debian ever
# shipped, when forky has moved on and the pool no longer holds this one).
# apt-helper (in apt, so on every Debian) downloads with apt's own proxy settings and
# checks the hash; the hash is checked again here. The machine's apt configuration and
# installed packages are not touched; nothing is installed. Prints the package version.
# Exit 2 when no source could give the file, saying what each answered.
set -eu
dest=${1:?usage: fetch_official_schema.sh DEST}
pkg=libopentelemetry-proto-dev
version=1.11.0-1
pool=pool/main/o/opentelemetry-proto/${pkg}_${version}_all.deb
sha256=ae5604e475eeae038c5d1c396ad42dec4d992edf49c4eef9b05361af3a5b7cbb
sha1=34cc012cfc32713ddb66172a3a77d7dc29ec633e

# The configured Debian archive (deb822 .sources first, then one-line .list entries): a
# URI ending in /debian (not another vendor's, not -security), else the first that is
# not -security; then Debian's own, deb.debian.org.
uris=$({
	grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{ for (i = 2; i <= NF; i++) print $i }'
	grep -hsE '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
		sed 's/\[[^]]*\]//' | awk '{ print $2 }'
} | grep -v -- '-security')
uri=$(echo "$uris" | grep -E '/debian/?$' | head -n 1)
[ -n "$uri" ] || uri=$(echo "$uris" | head -n 1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
deb=$work/${pkg}_${version}_all.deb
helper=/usr/lib/apt/apt-helper
[ -x "$helper" ] || { echo "fetch_official_schema: $helper missing (Debian's apt)" >&2; exit 2; }
tried= tried_url=
for url in ${uri:+"${uri%/}/$pool"} "http://deb.debian.org/debian/$pool" \
	"https://snapshot.debian.org/file/$sha1"; do
	[ "$url" = "$tried_url" ] && continue # the configured mirror was deb.debian.org
	tried_url=$url
	# (as root apt drops to _apt for downloads, which cannot write into $work)
	if "$helper" -o APT::Sandbox::User=root -o Acquire::Check-Valid-Until=false -o Acquire::Retries=2 \
		download-file "$url" "$deb" "SHA256:$sha256" >"$work/log" 2>&1 &&
		[ "$(sha256sum <"$deb" | cut -d' ' -f1)" = "$sha256" ]; then
		tried=
		break
	fi
	tried="$tried
  $url: $(sed -n 's/^E: Failed to fetch [^ ]*  *//p' "$work/log" | head -1)"
	rm -f "$deb"
done
if [ -n "$tried" ]; then
	echo "fetch_official_schema: $pkg $version (sha256 $sha256) could not be fetched; tried:$tried" >&2
	exit 2
fi
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$deb" "$dest"
dpkg-deb -f "$deb" Version
