#!/bin/bash
# e2e_cxxscope: C++ functions without a linkage name keep their scope (issue 34, item 1):
# testdata/cxxscope, recorded with frame pointers and with --call-graph dwarf. GCC writes
# no DW_AT_linkage_name for templates instantiated with a lambda's type (std::sort's and
# std::generate_n's, std::thread's _Invoker, std::function's __invoke_r) nor for a
# lambda's operator() inlined; perfconv names them with their declaration's scope, a
# function-local one spelt as GCC spells it in the template arguments around it: the
# function with its parameters, a lambda's body as its closure type (issue 48).
#  - every frame of the binary, inlined ones too, against llvm-symbolizer --inlines at
#    the same address (tests/llvmsym_compare.py lists the spellings allowed to differ),
#    and not one bare operator() or template without its scope;
#  - the names the source says, scope and all, are there;
#  - the whole stacks without inlined frames are perf script's (the goldens).
source "$(dirname "$0")/e2e_lib.sh"
X=$TD/cxxscope
export PERFCONV_CACHE_DIR=$TMP/cache
bid() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
libs_ok=1
for l in libstdc++.so.6 libgcc_s.so.1 libc.so.6; do
	grep -q "$(bid /lib/x86_64-linux-gnu/$l)" $X/VERSIONS || libs_ok=
done

for m in fp dw; do
	"$PERFCONV" -q -f samples --no-symbols -i $X/cxxscope-$m.data -o "$TMP/$m.addrs"
	"$PERFCONV" -q -f samples -i $X/cxxscope-$m.data -o "$TMP/$m.samples"
	"$PERFCONV" -q --no-inline -f samples -i $X/cxxscope-$m.data -o "$TMP/$m.noinl"
	if ! command -v llvm-symbolizer >/dev/null; then
		skip "cxxscope-$m: no llvm-symbolizer (Debian's llvm: scripts/install-deps.sh installs it)"
	elif python3 tests/llvmsym_compare.py $X/cxxscope "$TMP/$m.addrs" "$TMP/$m.samples" \
		>"$TMP/$m.llvm" 2>&1; then
		ok "cxxscope-$m: $(tail -1 "$TMP/$m.llvm" | sed 's/^llvmsym_compare: //')"
	else
		bad "cxxscope-$m: $(tail -1 "$TMP/$m.llvm")"
		head -20 "$TMP/$m.llvm" | cut -c1-400
	fi
	if [ -z "$libs_ok" ]; then
		skip "cxxscope-$m: whole stacks: libstdc++, libgcc_s or libc is not the one recorded ($X/VERSIONS)"
	elif python3 tests/perfscript_compare.py $X/expected/cxxscope-$m.script.gz "$TMP/$m.noinl" \
		>"$TMP/$m.cmp" 2>&1; then
		ok "cxxscope-$m: $(tail -1 "$TMP/$m.cmp" | sed 's/^perfscript_compare: //')"
	else
		bad "cxxscope-$m: $(tail -1 "$TMP/$m.cmp")"
		head -20 "$TMP/$m.cmp"
	fi
done

# the names the source gives, as frames of either recording (inlined or not)
cut -f7 "$TMP/fp.samples" "$TMP/dw.samples" | tr ';' '\n' | sort -u >"$TMP/names"
while IFS= read -r want; do
	[ -n "$want" ] || continue
	if grep -qxF -- "$want" "$TMP/names"; then
		ok "cxxscope: a frame named $want"
	else
		bad "cxxscope: no frame named $want"
	fi
done <<'NAMES'
std::generate_n<std::back_insert_iterator<std::vector<int> >, long unsigned int, fill_and_sort(std::vector<int>&, unsigned int&, long unsigned int)::<lambda()> >
fill_and_sort(std::vector<int>&, unsigned int&, long unsigned int)::<lambda()>::operator()
std::sort<__gnu_cxx::__normal_iterator<int*, std::vector<int> >, fill_and_sort(std::vector<int>&, unsigned int&, long unsigned int)::<lambda(int, int)> >
fill_and_sort(std::vector<int>&, unsigned int&, long unsigned int)::<lambda(int, int)>::operator()
std::thread::_Invoker<std::tuple<main(int, char**)::<lambda()> > >::_M_invoke<0>
main(int, char**)::<lambda()>::operator()
main(int, char**)::<lambda()>::<lambda(long unsigned int)>::operator()
std::__invoke_r<long unsigned int, main(int, char**)::<lambda(long unsigned int)>&, long unsigned int>
main(int, char**)::<lambda(long unsigned int)>::operator()
(anonymous namespace)::Mixer::Step::twist
outer::inner::Widget::work(unsigned long) const::{lambda(unsigned long, unsigned long)#1}::operator()
NAMES

finish e2e-cxxscope
