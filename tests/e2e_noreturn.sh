#!/bin/bash
# e2e_noreturn: the caller after a call that does not return (issue 22, item 1). nr's
# callers end with such a call, so their return addresses are the next functions' first
# bytes; every caller is named at its return address - 1, as perf's dwarf mode names it,
# but where a signal handler returns to its restorer or a signal interrupted a frame.
# testdata/noreturn/record.sh made the recordings: frame pointers and dwarf, nr's work
# and ld.so's start (_start calls _dl_start, which returns to _dl_start_user).
source "$(dirname "$0")/e2e_lib.sh"
N=$TD/noreturn
export PERFCONV_CACHE_DIR=$TMP/cache

compare() { # NAME [compare options]: every stack equal to perf script's, and a quirk count
	local name=$1
	shift
	"$PERFCONV" -q --symfs $TD --no-inline -f samples -i $N/$name.data -o "$TMP/$name.samples"
	if python3 tests/perfscript_compare.py "$@" $N/expected/$name.script.gz "$TMP/$name.samples" \
		>"$TMP/$name.cmp" 2>&1; then
		ok "$name: $(tail -1 "$TMP/$name.cmp" | sed 's/^perfscript_compare: //')"
	else
		bad "$name: $(tail -1 "$TMP/$name.cmp")"
		head -30 "$TMP/$name.cmp"
	fi
}
# perf's dwarf mode is right but for the restorer, which it looks up at the byte before
# (glibc's padding: [unknown]); its frame-pointer mode names the function after each
# noreturn call (perfscript_compare checks both on the symbol tables)
compare nr-dw --restorer $TD
compare start-dw
compare nr-fp --noreturn-callers $N --noreturn-callers $TD
compare start-fp --noreturn-callers $TD
if grep -q ', [1-9][0-9]* caller frames where perf names the function after a noreturn call' "$TMP/nr-fp.cmp" &&
	grep -q ', [1-9][0-9]* signal restorer frames' "$TMP/nr-dw.cmp"; then
	ok "nr: the recordings hold noreturn callers and restorers that perf names otherwise"
else
	bad "nr: no frame where perf's answer differs: $(tail -1 "$TMP/nr-fp.cmp")"
fi
for g in nr-dw nr-fp; do
	# the quirks accept nothing else: a dropped or swapped frame still differs
	if python3 tests/perfscript_compare.py --selftest $N/expected/$g.script.gz >"$TMP/self" 2>&1; then
		ok "perfscript_compare --selftest on $g: $(tail -1 "$TMP/self" | sed 's/^selftest: //')"
	else
		bad "perfscript_compare --selftest on $g: $(grep FAILED "$TMP/self" | head -3)"
	fi
done

# What a user sees: each caller, not the function after it; the lines are the calls'.
for mode in dw fp; do
	"$PERFCONV" -q --symfs $TD --srcline -f folded -i $N/nr-$mode.data -o "$TMP/nr-$mode.folded"
done
want_dw=(';main (nr.c:136);caller_a (nr.c:45);fail_hard (nr.c:38);spin '
	';main.cold (nr.c:138);caller_chk (nr.c:66);chk_fail (nr.c:55);spin '
	';main.cold (nr.c:143);caller_abrt (nr.c:85);abort'
	';main (nr.c:153);caller_exit (nr.c:122);exit'
	';main (nr.c:147);caller_trap (nr.c:110);trap_here;__restore_rt;on_ill (nr.c:104);spin ')
want_fp=(';main (nr.c:136);caller_a (nr.c:45);spin '
	';main.cold (nr.c:138);caller_chk (nr.c:66);spin '
	';main (nr.c:147);__restore_rt;spin ')
for mode in dw fp; do
	eval "want=(\"\${want_$mode[@]}\")"
	missing=()
	for w in "${want[@]}"; do
		grep -qF "$w" "$TMP/nr-$mode.folded" || missing+=("$w")
	done
	if [ ${#missing[@]} = 0 ] && ! grep -qE 'next_fn|after_chk|after_abrt|after_exit|before_trap|main\.cold[^;]*;abort|caller_abrt[^;]*;chk_fail' "$TMP/nr-$mode.folded"; then
		ok "nr-$mode: each noreturn call's caller named with the call's line (${#want[@]} stacks)"
	else
		bad "nr-$mode: missing ${missing[*]:-none}; $(grep -oE '[^;]*;(next_fn|after_[a-z]*|before_trap)[^;]*' "$TMP/nr-$mode.folded" | head -3)"
	fi
done
for mode in dw fp; do
	"$PERFCONV" -q --symfs $TD -f folded -i $N/start-$mode.data -o "$TMP/start-$mode.folded"
	if grep -q '^nr;_start;_dl_s' "$TMP/start-$mode.folded" && ! grep -q _dl_start_user "$TMP/start-$mode.folded"; then
		ok "start-$mode: ld.so's start is _start, not _dl_start_user after it"
	else
		bad "start-$mode: $(grep -m1 '_dl_s' "$TMP/start-$mode.folded")"
	fi
done

# V8's builtins: a return address in one is named the call's function
# (JSConstructStubGeneric, not what follows it); the jitdump names each builtin
# (here Builtin:JSConstructStubGeneric), as perf inject --jit maps them over node's
# text
"$PERFCONV" -q "${KS[@]}" --no-inline -f folded -i $TD/jit/node-wasm.data -o "$TMP/wasm.folded"
# (the three are named by the committed dump; what CEntry calls is node's own code,
# named only where the installed node is the recorded build)
if grep -q ';BytecodeHandler:Construct;Builtin:JSConstructStubGeneric;Builtin:CEntry_Return1_ArgvOnStack_NoBuiltinExit;' "$TMP/wasm.folded"; then
	ok "node-wasm: JSConstructStubGeneric between its caller and callee"
else
	bad "node-wasm: $(grep -o '[^;]*;[^;]*ConstructStub[^;]*;[^;]*' "$TMP/wasm.folded" | head -2)"
fi

finish e2e-noreturn
