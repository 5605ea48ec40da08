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
 * 0 when libiberty's Rust demangler cannot read `name`, a "_Z" name: a legacy Rust
 * name is "_ZN", path segments, a hash segment ("17h" and 16 hex digits), "E", and
 * perhaps a ".suffix" after it (".llvm.123", from LTO). 1 when it may be one: then
 * libiberty's automatic style (what perf shows) tries it as Rust before C++.
 */
int demangle_may_be_rust(const char *name);

#endif
