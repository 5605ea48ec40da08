#!/bin/bash
# e2e_cxx: C++ through PLT entries and through an epilogue that keeps its return address
# in a register (issue 22, item 10): testdata/cxx, recorded with frame pointers and with
# --call-graph dwarf. PLT entries keep "@plt" once demangled ("operator delete@plt", as
# perf names them); ra_in_rcx's CFI (CFA=rsp+0, the return address in rcx, as at the end
# of libgcc_s's _Unwind_RaiseException) is stepped through to main and _start.
source "$(dirname "$0")/e2e_lib.sh"
X=$TD/cxx
export PERFCONV_CACHE_DIR=$TMP/cache
bid() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
libs_ok=1
for l in libstdc++.so.6 libgcc_s.so.1; do
	grep -q "$(bid /lib/x86_64-linux-gnu/$l)" $X/VERSIONS || libs_ok=
done
# perf's leaf count of a function (the first frame of each sample)
perf_leaves() { # GOLDEN NAME
	zcat "$1" | awk -v f="$2" 'BEGIN { RS = "" } { split($0, l, "\n"); sub(/^[ \t]*[0-9a-f]+ /, "", l[2]);
		sub(/ \([^()]*\)$/, "", l[2]); if (l[2] == f) c++ } END { print c + 0 }'
}
our_leaves() { # FOLDED NAME
	awk -v f="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";"); if (a[k] == f) s += n }
		END { print s + 0 }' "$1"
}

for m in fp dw; do
	"$PERFCONV" -q --no-inline -f samples -i $X/cxx-$m.data -o "$TMP/$m.samples"
	"$PERFCONV" -q --no-inline -i $X/cxx-$m.data -o "$TMP/$m.folded"
	if [ -z "$libs_ok" ]; then
		skip "cxx-$m: whole stacks: libstdc++ or libgcc_s is not the one recorded ($X/VERSIONS)"
	elif python3 tests/perfscript_compare.py --noreturn-callers $TD $X/expected/cxx-$m.script.gz "$TMP/$m.samples" \
		>"$TMP/$m.cmp" 2>&1; then
		ok "cxx-$m: $(tail -1 "$TMP/$m.cmp" | sed 's/^perfscript_compare: //')"
	else
		bad "cxx-$m: $(tail -1 "$TMP/$m.cmp")"
		head -20 "$TMP/$m.cmp"
	fi
	for f in 'operator delete@plt' 'operator new@plt'; do
		want=$(perf_leaves $X/expected/cxx-$m.script.gz "$f")
		got=$(our_leaves "$TMP/$m.folded" "$f")
		if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
			ok "cxx-$m: $got samples in $f, as perf's"
		else
			bad "cxx-$m: $f: $got samples, perf $want"
		fi
	done
done
want=$(perf_leaves $X/expected/cxx-dw.script.gz ra_in_rcx)
got=$(grep -c $'\t_start;__libc_start_main;__libc_start_call_main;main;land;ra_in_rcx$' "$TMP/dw.samples")
if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
	ok "cxx-dw: all $got samples in ra_in_rcx (CFA=rsp+0, ra in rcx) unwound to _start"
else
	bad "cxx-dw: $got samples in ra_in_rcx unwound to _start, perf $want: $(grep -m1 'ra_in_rcx$' "$TMP/dw.samples" | cut -f7)"
fi

finish e2e-cxx
