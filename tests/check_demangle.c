/* check_demangle: the one naming rule for C++, Rust, Java, Julia and prefixed JIT names. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "tests/testutil.h"

static void is(const char *mangled, const char *want)
{
	char *got = demangle_name(mangled, NULL);

	if (!want) {
		ck_assert_msg(got == NULL, "%s: %s, not left as it is", mangled, got);
		return;
	}
	ck_assert_msg(got != NULL, "%s: not demangled", mangled);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(cpp_and_rust)
{
	is("_ZN5shape4areaEv", "shape::area");
	is("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back");
	/* legacy Rust: the hash dropped, $LT$ and friends read */
	is("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place");
	/* an LTO suffix after the E: still Rust, as libiberty's automatic style (perf)
	 * reads it, not C++ with the hash as a path segment */
	is("_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.4711", "core::ptr::drop_in_place");
	is("_RNvCs1234_7mycrate4main", "mycrate::main");
	is("main", NULL);
	is("_Zbogus", NULL);
}
END_TEST

/* Issue 22 item 5: perf's JVMTI agent names methods in the JVM's form. */
START_TEST(java_methods)
{
	is("LHot;fib(I)I", "Hot.fib(int)");
	is("Ljava/lang/String;indexOf(II)I", "java.lang.String.indexOf(int, int)");
	is("Ljava/lang/StringBuilder;appendChars(Ljava/lang/String;II)V",
	   "java.lang.StringBuilder.appendChars(java.lang.String, int, int)");
	is("LMain;main([Ljava/lang/String;)V", "Main.main(java.lang.String[])");
	is("Lp/Outer$Inner;run([[JZ)[B", "p.Outer$Inner.run(long[][], boolean)");
	is("Ljava/lang/Object;<init>()V", "java.lang.Object.<init>()");
	/* not the form: left as they are */
	is("LHot;fib(I)", NULL);      /* no return type */
	is("LHot;fib(Q)I", NULL);     /* no such type */
	is("LHot;fib(V)I", NULL);     /* void is no parameter */
	/* perf-map-agent's msig: "::" between the class and the method */
	is("LHot;::fib(I)J", "Hot.fib(int)");
	is("Ljava/util/HashMap;::get(Ljava/lang/Object;)Ljava/lang/Object;",
	   "java.util.HashMap.get(java.lang.Object)");
	is("LHot;::(I)J", NULL);      /* no method */
	is("LHot;a::b(I)J", NULL);    /* a colon inside a name */
	is("Lbroken", NULL);
	is("Interpreter", NULL);
	is("LazyInit::run", NULL);
}
END_TEST

/* Wasmtime names its functions "module::" and the Rust symbol. */
START_TEST(prefixed_mangled_names)
{
	is("wasm_module::_ZN3fib3fib17h0123456789abcdefE", "wasm_module::fib::fib");
	is("JS:*fib /x.js:1:1", NULL);
	is("a::_Zbogus", NULL);
}
END_TEST

/* perf names a PLT entry by its target, demangled, and "@plt" (testdata/cxx) */
START_TEST(plt_entries)
{
	is("_ZdlPvm@plt", "operator delete@plt");
	is("_Znwm@plt", "operator new@plt");
	is("_ZNSt13runtime_errorC1EPKc@plt", "std::runtime_error::runtime_error@plt");
	is("malloc@plt", NULL);
	is("_Zbogus@plt", NULL);
}
END_TEST

/* The name demangle_jit_name shows for JIT code `raw`; NULL: left as it is. */
static void jit_is(const char *raw, const char *want)
{
	char *got = demangle_jit_name(raw, NULL);

	if (!want) {
		ck_assert_msg(got == NULL, "%s: %s, not left as it is", raw, got);
		return;
	}
	ck_assert_msg(got != NULL, "%s: not demangled", raw);
	ck_assert_str_eq(got, want);
	free(got);
}

/* Issue 34: Julia's JIT code as its codegen names it, shown as Julia's profiler does. */
START_TEST(julia_names)
{
	/* each calling convention's prefix, and the uniquifier dropped */
	jit_is("julia_b_11", "b");
	jit_is("japi1_b_11", "b");
	jit_is("japi3_b_11", "b");
	jit_is("jsys1_b_11", "b");
	jit_is("jlsys_b_11", "b");
	jit_is("j_b_11", "b");
	jit_is("j1_b_11", "b");
	/* what Julia's names may hold: spaces, #, !, _, digits, UTF-8 */
	jit_is("japi1_top-level scope_8", "top-level scope");
	jit_is("julia_#1_23", "#1");
	jit_is("julia_#b#3_15", "#b#3");
	jit_is("julia_push!_4", "push!");
	jit_is("julia_my_func_2_17", "my_func_2");
	jit_is("julia_\xe2\x88\x87" "f_5", "\xe2\x88\x87" "f");  /* ∇f */
	jit_is("julia_f2_3", "f2");
	jit_is("julia_b_18446744073709551615", "b");
	/* wrappers: the method's name, the wrapper said */
	jit_is("jfptr_b_12", "b [jfptr wrapper]");
	jit_is("jfptr_top-level scope_9", "top-level scope [jfptr wrapper]");
	jit_is("jlcapi_callback_7", "callback [jlcapi wrapper]");
	/* not the shape: left as they are */
	jit_is("julia_b", NULL);            /* no uniquifier */
	jit_is("j_foo", NULL);
	jit_is("jfptr_b", NULL);
	jit_is("julia_b_", NULL);           /* an empty one */
	jit_is("julia__12", NULL);          /* no name */
	jit_is("julia_12", NULL);
	jit_is("julia_", NULL);
	jit_is("julia_b_1x", NULL);         /* not decimal */
	jit_is("julia_b_-5", NULL);
	jit_is("julia_b_123456789012345678901", NULL); /* over 64 bits' 20 digits */
	jit_is("jl_gc_collect", NULL);      /* Julia's runtime: C */
	jit_is("jlplt_ijl_apply_generic_1_got", NULL);
	jit_is("tojlinvoke42", NULL);
	jit_is("Julia_b_11", NULL);
	jit_is("xjulia_b_11", NULL);
	jit_is("jx_b_11", NULL);
	jit_is("main", NULL);
	/* the other rules first, and unchanged */
	jit_is("_ZN5shape4areaEv", "shape::area");
	jit_is("LHot;fib(I)I", "Hot.fib(int)");
	jit_is("JS:*julia_b_11 /x.js:1:1", NULL);
	/* native code is not Julia's JIT code: a C program's julia_init_2 keeps its name */
	is("julia_b_11", NULL);
	is("j_foo_1", NULL);
	is("jfptr_b_12", NULL);
	ck_assert_ptr_null(demangle_jit_name(NULL, NULL));
}
END_TEST


/*
 * Hostile names (issue 42 item 1): back-references that make libiberty's output or
 * work double at each level. Made here rather than written out: each level is a few
 * bytes, so 40 levels (under 330 bytes) are 2^40 times the first.
 */
static void sub(char *out, size_t size, unsigned i) /* the i-th C++ substitution: S_, S0_, ... */
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char num[8];
	size_t n = 0;

	if (i == 0) {
		snprintf(out, size, "S_");
		return;
	}
	for (i--; n == 0 || i; i /= 36)
		num[n++] = digits[i % 36];
	snprintf(out, size, "S");
	for (size_t k = n; k-- > 0;)
		snprintf(out + strlen(out), size - strlen(out), "%c", num[k]);
	snprintf(out + strlen(out), size - strlen(out), "_");
}

/*
 * f<B<B<...<A, A>...>, B<...>>>: each level a B of the level before, twice, through
 * its substitution. `pack` makes it a pack expansion's pattern that ends in an unknown
 * template parameter: libiberty searches the whole tree (every path of it, 2^levels)
 * for a pack and prints nothing.
 */
static char *cpp_bomb(unsigned levels, int pack)
{
	char *s = calloc(1, 16 * levels + 64), s_[8];
	unsigned base = pack ? 1 : 0;

	strcpy(s, pack ? "_Z1fIDp1CI1BI" : "_Z1fI1BI");
	for (unsigned i = 0; i < levels; i++) {
		sub(s_, sizeof(s_), base + 1);
		strcat(s, s_);
		strcat(s, "I");
	}
	strcat(s, "1A");
	sub(s_, sizeof(s_), base + 2);
	strcat(s, s_);
	strcat(s, "E");
	for (unsigned i = 0; i < levels; i++) {
		sub(s_, sizeof(s_), base + 3 + i);
		strcat(s, s_);
		strcat(s, "E");
	}
	strcat(s, pack ? "T_EEEv" : "Evv");
	return s;
}

/* Rust v0: f::<(i32, i32), ((i32, i32), (i32, i32)), ...> through back-references to
 * the type before; `crate` names the crate (its length first). */
static char *rust_bomb(unsigned levels, const char *crate)
{
	static const char digits[] =
		"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char *s = calloc(1, 24 * levels + 64), ref[16];
	size_t prev;

	sprintf(s, "INvC%s1f", crate);
	prev = strlen(s);
	strcat(s, "TllE");
	for (unsigned i = 0; i < levels; i++) {
		size_t at = strlen(s), v = prev - 1, n = 0;
		char num[8];

		/* a back-reference: B, the position base 62 (minus one, "_" for 0), "_" */
		if (prev == 0) {
			snprintf(ref, sizeof(ref), "B_");
		} else {
			for (; n == 0 || v; v /= 62)
				num[n++] = digits[v % 62];
			strcpy(ref, "B");
			for (size_t k = n; k-- > 0;)
				snprintf(ref + strlen(ref), sizeof(ref) - strlen(ref), "%c", num[k]);
			strcat(ref, "_");
		}
		sprintf(s + at, "T%s%sE", ref, ref);
		prev = at;
	}
	strcat(s, "E");
	memmove(s + 2, s, strlen(s) + 1);
	memcpy(s, "_R", 2);
	return s;
}

/* The bounds: a name small enough demangles whole; past the output's bound the
 * demangler is stopped as its output passes it, and the name kept. */
START_TEST(output_bound)
{
	struct demangle_budget b;
	char *ok = cpp_bomb(14, 0), *bomb = cpp_bomb(40, 0), *got;

	/* 2^14 A's: 212,990 bytes, within the bound */
	memset(&b, 0, sizeof(b));
	got = demangle_name(ok, &b);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(strlen(got), 212990);
	ck_assert(strncmp(got, "f<B<B<B<", 8) == 0);
	ck_assert_uint_eq(b.last_seen, 212990);
	ck_assert_uint_eq(demangle_kept(&b), 0);
	free(got);
	/* 2^40 of them (terabytes, from 343 bytes): stopped just past 256 KiB (libiberty
	 * flushes its output 255 bytes at a time) */
	ck_assert_uint_eq(strlen(bomb), 343);
	memset(&b, 0, sizeof(b));
	ck_assert_ptr_null(demangle_name(bomb, &b));
	ck_assert_uint_eq(b.too_long, 1);
	ck_assert_uint_gt(b.last_seen, DEMANGLE_OUT_MAX);
	ck_assert_uint_le(b.last_seen, DEMANGLE_OUT_MAX + 255);
	/* the same through each way in: a PLT entry, a prefix, JIT code, the aliases' rule */
	{
		char *plt = malloc(strlen(bomb) + 8), *pre = malloc(strlen(bomb) + 16);

		sprintf(plt, "%s@plt", bomb);
		sprintf(pre, "wasm::%s", bomb);
		ck_assert_ptr_null(demangle_name(plt, &b));
		ck_assert_ptr_null(demangle_name(pre, &b));
		ck_assert_ptr_null(demangle_jit_name(bomb, &b));
		ck_assert_ptr_null(demangle_auto(bomb, &b));
		ck_assert_uint_eq(b.too_long, 5);
		free(plt);
		free(pre);
	}
	free(ok);
	free(bomb);
}
END_TEST

/* A name whose demangling prints nothing while its work doubles at each level: cut
 * by CPU time (how long it ran is not asserted: the machine may be busy; that it was
 * cut, and that it printed nothing, is). */
START_TEST(time_bound)
{
	struct demangle_budget b;
	char *bomb = cpp_bomb(40, 1), *small = cpp_bomb(3, 1);

	memset(&b, 0, sizeof(b));
	/* three levels: libiberty reads it through, and cannot print it (no template
	 * for T_): not demangled, but not kept by a bound either */
	ck_assert_ptr_null(demangle_name(small, &b));
	ck_assert_uint_eq(demangle_kept(&b), 0);
	/* forty: 2^40 paths searched, from 352 bytes */
	ck_assert_uint_eq(strlen(bomb), 352);
	ck_assert_ptr_null(demangle_name(bomb, &b));
	ck_assert_uint_eq(b.too_slow, 1);
	ck_assert_uint_eq(b.too_long, 0);
	ck_assert_uint_eq(b.last_seen, 0);
	free(bomb);
	free(small);
}
END_TEST

/* Rust v0's back-references: the same bound. A name that may hold a Punycode
 * identifier (its decoding mallocs, so no cut by time) is bounded by its output. */
START_TEST(rust_bounds)
{
	struct demangle_budget b;
	char *ok = rust_bomb(2, "1a"), *bomb = rust_bomb(40, "1a"), *puny = rust_bomb(40, "2u8");
	char *got;

	memset(&b, 0, sizeof(b));
	got = demangle_name(ok, &b);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "a::f::<(i32, i32), ((i32, i32), (i32, i32)), (((i32, i32), (i32, "
			      "i32)), ((i32, i32), (i32, i32)))>");
	free(got);
	ck_assert_ptr_null(demangle_name(bomb, &b));
	ck_assert_uint_eq(b.too_long, 1);
	ck_assert_uint_gt(b.last_seen, DEMANGLE_OUT_MAX);
	ck_assert_ptr_null(demangle_name(puny, &b));
	ck_assert_uint_eq(b.too_long, 2);
	ck_assert_uint_le(b.last_seen, DEMANGLE_OUT_MAX + 4096);
	free(ok);
	free(bomb);
	free(puny);
}
END_TEST

/* One object's budget: after DEMANGLE_KEPT_MAX names kept, its names that need
 * libiberty are kept without a try (a table of 100,000 hostile names costs 8 bounded
 * runs); Java and Julia names, demangled by perfconv's own linear code, still are. */
START_TEST(budget)
{
	struct demangle_budget b;
	char *bomb = cpp_bomb(40, 0);

	memset(&b, 0, sizeof(b));
	for (unsigned i = 0; i < DEMANGLE_KEPT_MAX; i++)
		ck_assert_ptr_null(demangle_name(bomb, &b));
	ck_assert_uint_eq(b.too_long, DEMANGLE_KEPT_MAX);
	b.last_seen = 7;
	ck_assert_ptr_null(demangle_name(bomb, &b));
	ck_assert_ptr_null(demangle_name("_ZN5shape4areaEv", &b));
	ck_assert_uint_eq(b.untried, 2);
	ck_assert_uint_eq(b.last_seen, 7); /* libiberty not run */
	ck_assert_uint_eq(demangle_kept(&b), DEMANGLE_KEPT_MAX + 2);
	{
		char *got = demangle_jit_name("LHot;fib(I)I", &b);

		ck_assert_str_eq(got, "Hot.fib(int)");
		free(got);
		got = demangle_jit_name("julia_b_11", &b);
		ck_assert_str_eq(got, "b");
		free(got);
	}
	/* another object's budget is its own */
	memset(&b, 0, sizeof(b));
	{
		char *got = demangle_name("_ZN5shape4areaEv", &b);

		ck_assert_str_eq(got, "shape::area");
		free(got);
	}
	free(bomb);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cpp_and_rust);
	tcase_add_test(tc, java_methods);
	tcase_add_test(tc, prefixed_mangled_names);
	tcase_add_test(tc, plt_entries);
	tcase_add_test(tc, julia_names);
	tcase_add_test(tc, time_bound);
	suite_add_tcase(s, tc);
	/* bounds met by the output before the 5 ms of CPU time: as fast as a CPU runs
	 * libiberty (an emulator's tenfold slower run meets the time bound first:
	 * CK_EXCLUDE_TAGS=cputime, scripts/arm64-ci.sh) */
	tc = tcase_create("output_bounds");
	tcase_set_tags(tc, "cputime");
	tcase_add_test(tc, output_bound);
	tcase_add_test(tc, rust_bounds);
	tcase_add_test(tc, budget);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
