#!/bin/bash
# e2e_perfparser: KDAB perfparser's own test recordings (testdata/perfparser/, with the
# output its tests expect) converted by perfconv: whole user stacks, inlined frames and
# all, equal to perfparser's once its own errors are corrected (each correction named,
# justified and counted by tests/perfparser_compare.py) (issue 48, item 4):
#  - the LBR recording (PEBS cycles:P): the user leaf of a sample taken in user space
#    is its ip, not the callchain's first user address (taken later, at the interrupt:
#    in one sample in sysmalloc, on no stack, where the thread stored in
#    _M_realloc_insert);
#  - the dwarf recording of threads and lambdas: a lambda's operator() without a
#    linkage name is named in its function-local scope as GCC spells it in the
#    templates around it, main(int, char**)::<lambda()>::operator().
source "$(dirname "$0")/e2e_lib.sh"
P=$TD/perfparser
export PERFCONV_CACHE_DIR=$TMP/cache

compare() { # NAME DIR DATA BINARY [compare options]
	local name=$1 dir=$P/$2 data=$3 bin=$4
	shift 4
	gzip -dc "$dir/$data.expected.txt.gz" >"$TMP/$name.expected"
	"$PERFCONV" -q --symfs "$dir" -f samples -i "$dir/$data" -o "$TMP/$name.samples"
	"$PERFCONV" -q --symfs "$dir" --no-inline -f samples -i "$dir/$data" -o "$TMP/$name.noinl"
	if python3 tests/perfparser_compare.py "$@" --min-equal 99 "$TMP/$name.expected" \
		"$dir/$bin" "$TMP/$name.samples" "$TMP/$name.noinl" >"$TMP/$name.cmp" 2>&1; then
		ok "$name: $(tail -1 "$TMP/$name.cmp" | sed 's/^perfparser_compare: //')"
	else
		bad "$name: $(tail -1 "$TMP/$name.cmp")"
		head -40 "$TMP/$name.cmp" | cut -c1-300
	fi
}

compare vector-lbr vector_static_gcc perf.lbr.data vector_static_gcc_v9.1.0 --lbr
compare parallel parallel_static_gcc perf.data.zstd parallel_static_gcc

# the sample whose callchain reached sysmalloc: its leaf is the sampled instruction's
# (then its kernel frames, [unknown]: the recording holds no kernel map)
if grep -P '\t7037283\.204666523\t' "$TMP/vector-lbr.samples" | grep -Eq ';std::vector<double, std::allocator<double> >::_M_realloc_insert<double>;std::allocator_traits<std::allocator<double> >::construct<double, double>;__gnu_cxx::new_allocator<double>::construct<double, double>(;\[unknown\])*$' &&
	! grep -q 'sysmalloc' "$TMP/vector-lbr.samples"; then
	ok "vector-lbr: the PEBS sample in _M_realloc_insert's inlined construct, not sysmalloc"
else
	bad "vector-lbr: $(grep -P '\t7037283\.204666523\t' "$TMP/vector-lbr.samples" | cut -f7 | tr ';' '\n' | tail -3 | tr '\n' ' ')"
fi

# one closure, one spelling: every DWARF name of main's lambda, its operator() and the
# templates instantiated with its type, says main(int, char**)
if grep -q 'main(int, char\*\*)::<lambda()>::operator()' "$TMP/parallel.samples" &&
	! grep -q 'main::<lambda' "$TMP/parallel.samples"; then
	ok "parallel: main(int, char**)::<lambda()>::operator(), never main::<lambda()>"
else
	bad "parallel: $(cut -f7 "$TMP/parallel.samples" | tr ';' '\n' | grep -m3 'main.*lambda' | sort -u)"
fi

finish e2e_perfparser
