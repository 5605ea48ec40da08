# e2e_lib: what the end-to-end scripts share. Sourced first by each of them: runs in
# the source tree, takes the binary from $PERFCONV (the Makefile sets it), gives a
# temporary directory that goes away at exit, counts results, and reads kernel
# symbols from the kallsyms saved at recording time (so the tests hold on a machine
# running another kernel).
set -u
cd "$(dirname "$0")/.."
PERFCONV=${PERFCONV:-$PWD/perfconv}
TD=testdata
TMP=$(mktemp -d)
# extra clean-up a script needs before the directory goes (a server to stop)
at_exit() { :; }
trap 'at_exit; rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
KS=(--kallsyms $TD/kallsyms.gz)

# The closing line, and the script's status: NAME: N passed, M failed.
finish() { # NAME
	echo "$1: $pass passed, $fail failed"
	[ $fail -eq 0 ]
}
