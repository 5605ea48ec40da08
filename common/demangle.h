/* demangle: the one rule for showing C++, Rust, Java and Julia names, for native and JIT code alike. */
#ifndef PERFCONV_DEMANGLE_H
#define PERFCONV_DEMANGLE_H

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
 * these or libiberty cannot read it.
 */
char *demangle_name(const char *name);

/*
 * A "_Z" or "_R" name demangled without parameters as libiberty's automatic style
 * (what perf uses) reads it: Rust (legacy or v0) where it can be, else C++. The
 * Rust attempt is made only on a name that can be Rust. malloc'ed, or NULL.
 */
char *demangle_auto(const char *name);

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
 * when `name` is none of these.
 */
char *demangle_jit_name(const char *name);

#endif
