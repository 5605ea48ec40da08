/* demangle: the one rule for showing C++ and Rust names, for native and JIT code alike. */
#ifndef PERFCONV_DEMANGLE_H
#define PERFCONV_DEMANGLE_H

/*
 * The demangled form of a C++ or Rust (legacy and v0) name as perf shows it: no
 * parameter lists (the mangled name tells overloads apart), no Rust hash; a PLT
 * entry's "@plt" kept after it ("operator delete@plt"). Returns a
 * malloc'ed string the caller frees, or NULL when `name` is not a mangled name
 * (it does not start with _Z or _R) or libiberty cannot read it.
 */
char *demangle_name(const char *name);

#endif
