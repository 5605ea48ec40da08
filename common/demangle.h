/* demangle: the one rule for showing C++, Rust, Java and Julia names, for native and JIT code alike. */
#ifndef PERFCONV_DEMANGLE_H
#define PERFCONV_DEMANGLE_H

#include <stddef.h>

/*
 * The bounds of one name's demangling by libiberty (C++ and Rust), whatever its
 * mangled form makes of it (back-references make a name of 150 bytes demangle to
 * gigabytes, or walk a tree of billions of nodes and print nothing):
 * - its demangled form at most DEMANGLE_OUT_MAX bytes: the demangler is stopped as
 *   its output passes them;
 * - at most DEMANGLE_CPU_NS of the thread's CPU time (common/cpulimit.h: the kernel
 *   checks on its tick, so up to 4 ms more at HZ=250), which its output takes too
 *   (about 230 MB/s: 1.1 ms for the bytes allowed);
 * - a stack of about 72 bytes per byte of the name: libiberty refuses C++ names of
 *   more than 1,024 bytes itself.
 * A name past a bound is kept as it is mangled, and counted in the caller's budget.
 * Without a CPU timer for the thread (timer_create failed), only names of at most
 * DEMANGLE_UNTIMED_MAX bytes are tried.
 */
#define DEMANGLE_OUT_MAX (256u * 1024)
#define DEMANGLE_CPU_NS 5000000u
#define DEMANGLE_UNTIMED_MAX 128
/* Names of one object kept past the bounds after which its other names that need
 * libiberty are kept without a try: a binary or map of many such names costs
 * DEMANGLE_KEPT_MAX bounded runs, not one per name. */
#define DEMANGLE_KEPT_MAX 8

/*
 * What demangling cost one object's names (a binary's symbols, a process's JIT
 * code): its owner keeps one, zeroed at first, gives it to every call for that
 * object, and says what it counts (once per object). Calls with NULL have no
 * budget. Not for two threads at once.
 */
struct demangle_budget {
	unsigned too_long;  /* kept: demangled they passed DEMANGLE_OUT_MAX bytes */
	unsigned too_slow;  /* kept: cut after DEMANGLE_CPU_NS of CPU time */
	unsigned untried;   /* kept without a try: DEMANGLE_KEPT_MAX kept before, or no
			       CPU timer and the name past DEMANGLE_UNTIMED_MAX */
	size_t last_seen;   /* bytes the last run of libiberty gave (for tests) */
};

static inline unsigned demangle_kept(const struct demangle_budget *b)
{
	return b->too_long + b->too_slow + b->untried;
}

/*
 * The demangled form of a name as perf shows it:
 * - C++ or Rust (legacy and v0): no parameter lists (the mangled name tells
 *   overloads apart), no Rust hash; a PLT entry's "@plt" kept after it
 *   ("operator delete@plt");
 * - a JVM method as JVMTI agents name it ("LHot;fib(I)I"): "Hot.fib(int)", the
 *   class with dots, the parameter types in Java's words, no return type;
 * - a mangled name after a prefix ("wasm_module::_ZN3fib3fib17h..E", as Wasmtime
 *   writes): the prefix kept, the rest demangled;
 * - a PLT entry of a mangled name ("_Znwm@plt"): "operator new@plt".
 * Returns a malloc'ed string the caller frees, or NULL when `name` is none of
 * these, libiberty cannot read it, or it is kept past a bound (counted in `b`).
 * Time and memory are linear in the name's length, but for libiberty's run, bounded.
 */
char *demangle_name(const char *name, struct demangle_budget *b);

/*
 * A "_Z" or "_R" name demangled without parameters as libiberty's automatic style
 * (what perf uses) reads it: Rust (legacy or v0) where it can be, else C++. The
 * Rust attempt is made only on a name that can be Rust. malloc'ed, or NULL (not
 * read, or kept past a bound: counted in `b`).
 */
char *demangle_auto(const char *name, struct demangle_budget *b);

/*
 * The name of JIT code (a jitdump's CODE_LOAD, a perf map's line) to show:
 * demangle_name()'s, else, for a name of the shape Julia's codegen gives its code
 * (docs/FORMATS.md, "Julia's JIT names"), the name Julia's profiler shows:
 * - "julia_", "japi1_", "japi3_", "jsys1_", "jlsys_", "j_" or "j1_", a name and "_"
 *   with 1 to 20 decimal digits: the name ("julia_b_11" is "b", "japi1_top-level
 *   scope_8" is "top-level scope");
 * - "jfptr_" or "jlcapi_" with the same: the wrapper of that method, the name with
 *   the wrapper said after it ("jfptr_b_12" is "b [jfptr wrapper]"), which Julia's
 *   backtraces count as C frames and hide.
 * Not for native code: a C function "julia_init_2" keeps its name. malloc'ed, or NULL
 * when `name` is none of these (or kept past a bound, counted in `b`).
 */
char *demangle_jit_name(const char *name, struct demangle_budget *b);

#endif
