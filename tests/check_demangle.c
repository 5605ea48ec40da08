/* check_demangle: the one naming rule for C++, Rust, Java, Julia and prefixed JIT names. */
#include <check.h>
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

int main(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cpp_and_rust);
	tcase_add_test(tc, java_methods);
	tcase_add_test(tc, prefixed_mangled_names);
	tcase_add_test(tc, plt_entries);
	tcase_add_test(tc, julia_names);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
