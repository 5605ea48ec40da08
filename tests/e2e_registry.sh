#!/bin/bash
# e2e_registry: the tables of formats, backends and pprof shapes (convert/output.c,
# upload/backend.c, formats/write/pprof.c) are what the binary says, and what the bash
# completion and the man pages list: a row added without them fails here (issue 46).
# The binary's own lists are read from it (--help's formats, the messages of a wrong
# -f, --to and --for), so each check holds the docs to the table, not to a copy of it.
# A self-test runs the same checks on a binary with a row more and wants them to fail.
source "$(dirname "$0")/e2e_lib.sh"
COMP=completion/perfconv.bash
MAN=man/perfconv.1.scd
MANUP=man/perfconv-upload.1.scd

# words BIN ARGS...: the list at the end of BIN's usage error "... takes a, b or c: x"
# (or "diff writes a, b or c: x"), one a line
words() {
	local bin=$1
	shift
	"$bin" "$@" 2>&1 >/dev/null | head -1 | sed -E 's/^perfconv: [^:]* (takes|writes) //; s/: [^:]*$//; s/,? or /, /' |
		tr -d ' ' | tr ',' '\n'
}
# man_items PAGE SECTION: the *NAME* items of the page's section, one a line
man_items() {
	awk -v s="# $2" '$0 == s { f = 1; next } f && /^# / { f = 0 } f && /^\*[a-z0-9-]+\*$/ { gsub(/\*/, ""); print }' "$1"
}
# man_item PAGE SECTION NAME: the text of item *NAME* of the page's section
man_item() {
	awk -v s="# $2" -v i="*$3*" '$0 == s { f = 1; next } f && /^# / { f = 0 }
		f && /^\*[a-z0-9-]+\*$/ { in_item = ($0 == i); next } f && in_item' "$1"
}
# comp_list VAR: a list of the completion's, one a line
comp_list() {
	(source "$COMP" && eval "echo \$$1") | tr ' ' '\n' | grep .
}
# comp_words PATTERN: the words the completion offers (-W '...') on the line after the
# one PATTERN matches, one a line
comp_words() {
	grep -A1 -- "$1" "$COMP" | grep -o -- "-W '[^']*'" | head -1 | sed "s/-W '//; s/'//" | tr ' ' '\n'
}
# missing WANT HAVE: the words of WANT not in HAVE
missing() { comm -23 <(sort -u <<<"$1") <(sort -u <<<"$2") | tr '\n' ' '; }

# check BIN: every row of BIN's tables in the completion and the man pages; prints one
# line per check (ok/FAIL), returns how many failed
check() {
	local bin=$1 n=0 formats diffs backends shapes hint m
	formats=$("$bin" --help | awk '/^Formats:/ { f = 1; next } f && /^  [a-z]/ { print $1 }')
	diffs=$(words "$bin" diff -f nope a b)
	backends=$(words "$bin" upload --to nope)
	shapes=$(words "$bin" --for nope -o /dev/null)
	if [ -z "$formats" ] || [ -z "$diffs" ] || [ -z "$backends" ] || [ -z "$shapes" ]; then
		echo "FAIL the tables read from $bin: formats '$formats', diff's '$diffs', backends '$backends', shapes '$shapes'"
		return 1
	fi
	m=$(missing "$formats" "$(comp_list _perfconv_formats)")
	[ -z "$m" ] && echo "ok   completion after -f: every format ($(echo $formats))" ||
		{ echo "FAIL completion after -f: no $m"; n=$((n + 1)); }
	m=$(missing "$formats" "$(man_items $MAN FORMATS)")
	[ -z "$m" ] && echo "ok   man perfconv FORMATS: every format" ||
		{ echo "FAIL man perfconv FORMATS: no $m"; n=$((n + 1)); }
	# the hint after an output name no format's suffix ends: every format but the default
	hint=$("$bin" -q "${KS[@]}" -i $TD/mt-g.data -o "$TMP/out.unknown" 2>&1 >/dev/null | grep 'no format has its suffix')
	m=$(for f in $formats; do [ "$f" = folded ] || grep -q " $f\b" <<<"${hint#*chooses;}" || echo "$f"; done)
	[ -z "$m" ] && echo "ok   the no-suffix hint names every format's suffix" ||
		{ echo "FAIL the no-suffix hint names no $(echo $m): $hint"; n=$((n + 1)); }
	m=$(missing "$diffs" "$(comp_words 'sub == diff')")
	[ -z "$m" ] && echo "ok   completion after diff -f: every diff format ($(echo $diffs))" ||
		{ echo "FAIL completion after diff -f: no $m"; n=$((n + 1)); }
	m=$(missing "$diffs" "$(man_items $MAN 'DIFFERENTIAL PROFILES')")
	[ -z "$m" ] && echo "ok   man perfconv DIFFERENTIAL PROFILES: every diff format" ||
		{ echo "FAIL man perfconv DIFFERENTIAL PROFILES: no $m"; n=$((n + 1)); }
	m=$(missing "$backends" "$(comp_list _perfconv_backends)")
	[ -z "$m" ] && echo "ok   completion after --to: every backend ($(echo $backends))" ||
		{ echo "FAIL completion after --to: no $m"; n=$((n + 1)); }
	m=$(missing "$backends" "$(man_items $MANUP BACKENDS)")
	[ -z "$m" ] && echo "ok   man perfconv-upload BACKENDS: every backend" ||
		{ echo "FAIL man perfconv-upload BACKENDS: no $m"; n=$((n + 1)); }
	m=$(for b in $backends; do "$bin" upload --help | grep -q "^  .*\b$b: " || echo "$b"; done)
	[ -z "$m" ] && echo "ok   upload --help: --to says where each backend's requests go" ||
		{ echo "FAIL upload --help: --to says nothing of $(echo $m)"; n=$((n + 1)); }
	# each backend's default URL, where a --dry-run says its request goes (the
	# environment's words unset), in its item of the man page's BACKENDS
	m=$(for b in $backends; do
		url=$(env -u DD_TRACE_AGENT_URL -u DD_AGENT_HOST -u DD_TRACE_AGENT_PORT \
			-u OTEL_EXPORTER_OTLP_ENDPOINT -u OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT \
			"$bin" upload --to "$b" --dry-run -q -i $TD/mt-g.data "${KS[@]}" 2>&1 |
			grep -o 'https\?://[^ /]*' | head -1)
		man_item $MANUP BACKENDS "$b" | grep -qF "_${url}_" || echo "$b (${url:-no URL said})"
	done)
	[ -z "$m" ] && echo "ok   man perfconv-upload BACKENDS: each backend's default URL" ||
		{ echo "FAIL man perfconv-upload BACKENDS: the default URL of $(echo $m)"; n=$((n + 1)); }
	m=$(missing "$shapes" "$(comp_words '^[[:space:]]*--for)')")
	[ -z "$m" ] && echo "ok   completion after --for: every shape ($(echo $shapes))" ||
		{ echo "FAIL completion after --for: no $m"; n=$((n + 1)); }
	m=$(missing "$shapes" "$(grep '^\*--for\*' $MAN | grep -o '\*[a-z]*\*' | tr -d '*' | grep -v '^for$')")
	[ -z "$m" ] && echo "ok   man perfconv --for: every shape" ||
		{ echo "FAIL man perfconv --for: no $m"; n=$((n + 1)); }
	return $n
}

out=$(check "$PERFCONV")
rc=$?
while IFS= read -r line; do
	case $line in ok*) ok "${line#ok   }" ;; *) bad "${line#FAIL }" ;; esac
done <<<"$out"
[ $rc -eq 0 ] || bad "$rc of the docs miss a row of the tables"

# self-test: a binary with one row more in each table (a format, a diff format, a
# backend, a shape), which no doc has: every check must fail
cat >"$TMP/plus-one" <<EOF
#!/bin/bash
"$PERFCONV" "\$@" > >(sed -E 's/^(  otlp .*)$/\1\n  frob       a format no doc has (.frob)/; s|localhost:4040|localhost:4041|') \
	2> >(sed -E 's/(takes|writes) ([a-z, ]*) or ([a-z]+)/\1 \2, \3 or frob/; s/(chooses; .*)\)$/\1, .frob frob)/; s|localhost:4040|localhost:4041|' >&2)
EOF
chmod +x "$TMP/plus-one"
out=$(check "$TMP/plus-one")
want=$(grep -c "frob" <<<"$out")
nfail=$(grep -c "^FAIL" <<<"$out")
[ "$nfail" -ge 8 ] && [ "$want" -ge 7 ] && grep -q "^FAIL .*default URL of pyroscope" <<<"$out" &&
	ok "self-test: a row more in each table, and a backend's default URL changed, fail $nfail checks (completion and man pages of formats, diff's, backends, shapes, URLs)" ||
	bad "self-test: a row more should fail the checks: $out"

finish e2e-registry
