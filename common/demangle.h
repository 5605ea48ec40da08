/* demangle: the one rule for showing C++, Rust and Java names, for native and JIT code alike. */
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

#endif
