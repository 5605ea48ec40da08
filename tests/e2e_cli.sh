#!/bin/bash
# e2e_cli: every command's command line read by the one parser (cli/options.c): each
# command's --help, --version where it is perfconv's, an unknown option, a missing
# argument of a short and of a long option, each said in one line naming the option
# and with status 2; and an option of one command refused by another.
source "$(dirname "$0")/e2e_lib.sh"

# said NAME STATUS TEXT ARGS...: perfconv ARGS exits STATUS and its first line of
# standard error is TEXT
said() {
	local name=$1 want=$2 text=$3 got err
	shift 3
	"$PERFCONV" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	got=$?
	err=$(head -1 "$TMP/err")
	[ "$got" = "$want" ] && [ "$err" = "$text" ] && ok "$name: status $got, '$text'" ||
		bad "$name: status $got (want $want), '$(head -1 "$TMP/err" | cat -v)' (want '$text')"
}

for cmd in "" info diff upload; do
	# shellcheck disable=SC2086
	"$PERFCONV" $cmd --help >"$TMP/help" 2>"$TMP/err" && [ ! -s "$TMP/err" ] &&
		grep -q "^usage: perfconv $cmd" "$TMP/help" &&
		ok "perfconv $cmd --help: its usage on standard output, status 0" ||
		bad "perfconv $cmd --help: $(head -2 "$TMP/help" "$TMP/err")"
done
"$PERFCONV" --version | grep -q '^perfconv [0-9]' && ok "--version" || bad "--version: $("$PERFCONV" --version 2>&1)"
said "diff --version" 2 "perfconv: --version is perfconv's, not diff's" diff --version
said "upload --version" 2 "perfconv: unknown option" upload --version
for cmd in "" info diff upload; do
	# shellcheck disable=SC2086
	said "perfconv $cmd --nope" 2 "perfconv: unknown option: --nope" $cmd --nope
	# shellcheck disable=SC2086
	said "perfconv $cmd -x" 2 "perfconv: unknown option: -x" $cmd -x
	# shellcheck disable=SC2086
	said "perfconv $cmd -i" 2 "perfconv: option needs an argument: -i" $cmd -i
done
# a long option's missing argument is named by its word (it was a byte of its id)
said "--pid" 2 "perfconv: option needs an argument: --pid" --pid
said "diff --top" 2 "perfconv: option needs an argument: --top" diff --top
said "info --top" 2 "perfconv: option needs an argument: --top" info --top
said "upload --to" 2 "perfconv: option needs an argument: --to" upload --to
said "upload --header" 2 "perfconv: option needs an argument: --header" upload --header
# each command's own options are its own
said "info --json for a conversion" 2 "perfconv: unknown option: --json" --json
said "info -q" 2 "perfconv: unknown option: -q" info -q
said "--absolute for a conversion" 2 "perfconv: unknown option: --absolute" --absolute
said "upload --absolute" 2 "perfconv: unknown option: --absolute" upload --absolute
said "--to for a conversion" 2 "perfconv: unknown option: --to" --to parca
said "diff --watch" 2 "perfconv: unknown option: --watch" diff --watch d
finish e2e-cli
