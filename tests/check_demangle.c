/* check_demangle: the one naming rule for C++, Rust, Java and prefixed JIT names. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "tests/testutil.h"

static void is(const char *mangled, const char *want)
{
	char *got = demangle_name(mangled);

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

int main(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cpp_and_rust);
	tcase_add_test(tc, java_methods);
	tcase_add_test(tc, prefixed_mangled_names);
	tcase_add_test(tc, plt_entries);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
