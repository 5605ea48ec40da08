/* demangle: the one rule for showing C++, Rust, Java and Julia names, for native and JIT code alike. */
#include "common/demangle.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "common/util.h"

/* A growing string. */
struct dbuf {
	char *s;
	size_t len, cap;
};

static void db_add(struct dbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
		grow_array((void **)&b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void db_str(struct dbuf *b, const char *s)
{
	db_add(b, s, strlen(s));
}

/* The Java type of the field descriptor at *p (JVMS 4.3.2), advancing *p past it: 1,
 * or 0 when it is not one. A class's '/' become '.'. */
static int java_type(const char **p, struct dbuf *b, int allow_void)
{
	static const char *const base[][2] = {
		{ "B", "byte" }, { "C", "char" }, { "D", "double" }, { "F", "float" },
		{ "I", "int" }, { "J", "long" }, { "S", "short" }, { "Z", "boolean" },
		{ "V", "void" },
	};
	size_t dims = 0;
	const char *s = *p;

	while (*s == '[')
		s++, dims++;
	if (dims > 255)
		return 0;
	if (*s == 'L') {
		const char *end = strchr(s + 1, ';');

		if (!end || end == s + 1)
			return 0;
		for (const char *c = s + 1; c < end; c++) {
			if (*c == '(' || *c == ')' || *c == '[')
				return 0;
			db_add(b, *c == '/' ? "." : c, 1);
		}
		s = end + 1;
	} else {
		size_t i;

		for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
			if (*s && *s == base[i][0][0])
				break;
		if (i == sizeof(base) / sizeof(base[0]) || (*s == 'V' && (!allow_void || dims)))
			return 0;
		db_str(b, base[i][1]);
		s++;
	}
	while (dims--)
		db_str(b, "[]");
	*p = s;
	return 1;
}

/*
 * A JVM method as HotSpot's JVMTI agents name it: class signature, method name,
 * method descriptor ("LHot;fib(I)I", "Ljava/lang/String;indexOf(II)I") becomes
 * "Hot.fib(int)", "java.lang.String.indexOf(int, int)", as perf and Java tools show
 * it (no return type). perf-map-agent's msig option puts "::" between the class and
 * the method ("LHot;::fib(I)J"): the same method, named the same. NULL when `name` is
 * not of that form.
 */
static char *java_demangle(const char *name)
{
	struct dbuf b = { NULL, 0, 0 };
	const char *p = name, *semi, *open, *method;
	int first = 1;

	if (name[0] != 'L' || !(semi = strchr(name, ';')) || semi == name + 1 ||
	    !(open = strchr(semi, '(')))
		return NULL;
	method = semi + 1;
	if (method[0] == ':' && method[1] == ':')
		method += 2;
	if (open == method)
		return NULL;
	for (const char *c = method; c < open; c++)
		if (*c == '/' || *c == ';' || *c == '[' || *c == ')' || *c == ':')
			return NULL;
	if (!java_type(&p, &b, 0) || p != semi + 1)
		goto bad;
	db_str(&b, ".");
	db_add(&b, method, (size_t)(open - method));
	db_str(&b, "(");
	p = open + 1;
	while (*p && *p != ')') {
		if (!first)
			db_str(&b, ", ");
		first = 0;
		if (!java_type(&p, &b, 0))
			goto bad;
	}
	if (*p != ')')
		goto bad;
	p++;
	db_str(&b, ")");
	{
		struct dbuf ret = { NULL, 0, 0 };
		int ok = java_type(&p, &ret, 1) && *p == '\0';

		free(ret.s);
		if (!ok)
			goto bad;
	}
	return b.s;
bad:
	free(b.s);
	return NULL;
}

/* Does a _Z name end as legacy Rust names do, with "17h", 16 hex digits of hash and "E"? */
/*
 * 0 when libiberty's Rust demangler cannot read `name`, a "_Z" name: a legacy Rust
 * name is "_ZN", path segments, a hash segment ("17h" and 16 hex digits), "E", and
 * perhaps a ".suffix" after it (".llvm.123", from LTO).
 */
static int may_be_rust(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z' || name[2] != 'N')
		return 0;
	for (const char *p = name + 3; (p = strstr(p, "17h")) != NULL; p++)
		if (strnlen(p, 20) == 20 && p[19] == 'E')
			return 1;
	return 0;
}

static char *native_demangle(const char *name)
{
	static const char plt[] = "@plt";
	size_t len = strlen(name), sl = sizeof(plt) - 1;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (len > sl && strcmp(name + len - sl, plt) == 0) {
		/* a PLT entry (elfsyms names them NAME@plt): libiberty drops the suffix,
		 * perf shows it after the demangled name */
		char *base = xstrndup(name, len - sl), *d = native_demangle(base);
		struct dbuf b = { NULL, 0, 0 };

		free(base);
		if (!d)
			return NULL;
		db_str(&b, d);
		db_str(&b, plt);
		free(d);
		return b.s;
	}
	return demangle_auto(name);
}

char *demangle_auto(const char *name)
{
	/* libiberty's DMGL_AUTO tries Rust first on every name: a C++ name goes to the
	 * C++ demangler alone, a v0 (_R) name to Rust's, a legacy Rust one to Rust's
	 * and, if it cannot read it, to C++'s */
	if (name[1] == 'R')
		return cplus_demangle(name, DMGL_RUST);
	if (may_be_rust(name)) {
		char *d = cplus_demangle(name, DMGL_RUST);

		if (d)
			return d;
	}
	return cplus_demangle(name, DMGL_GNU_V3);
}

char *demangle_name(const char *name)
{
	const char *sep;
	char *d;
	size_t n;

	if (!name)
		return NULL;
	n = strlen(name);
	if (n > 4 && strcmp(name + n - 4, "@plt") == 0 && name[0] == '_') {
		/* a PLT entry named after its target: the target demangled, as perf
		 * names it ("operator new@plt"; libiberty drops the suffix) */
		char *target = xstrdup(name), *inner;

		target[n - 4] = 0;
		inner = native_demangle(target);
		free(target);
		if (!inner)
			return NULL;
		d = xasprintf("%s@plt", inner);
		free(inner);
		return d;
	}
	d = native_demangle(name);
	if (d || (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		return d;
	d = java_demangle(name);
	if (d)
		return d;
	/* a mangled name after a prefix: "wasm_module::_ZN3fib3fib17h..E" (Wasmtime) */
	sep = strstr(name, "::_");
	if (sep && sep != name && (sep[3] == 'Z' || sep[3] == 'R')) {
		char *inner = native_demangle(sep + 2);

		if (inner) {
			struct dbuf b = { NULL, 0, 0 };

			db_add(&b, name, (size_t)(sep - name) + 2);
			db_str(&b, inner);
			free(inner);
			return b.s;
		}
	}
	return NULL;
}

/*
 * Julia's JIT code as its codegen names it (docs/FORMATS.md, "Julia's JIT names"): a
 * prefix for the calling convention, the method's name, "_" and the decimal value of a
 * process-wide counter (globalUniqueGeneratedNames). `wrapper` is the name of the
 * wrapper a prefix makes, NULL for the method's own code.
 */
static const struct {
	const char *prefix, *wrapper;
} julia_prefixes[] = {
	{ "julia_", NULL },     /* specialized signature */
	{ "japi1_", NULL },     /* the generic jlcall convention */
	{ "japi3_", NULL },     /* jlcall with static parameters */
	{ "jsys1_", NULL },     /* older system images' */
	{ "jlsys_", NULL },
	{ "j_", NULL },         /* a call site's name for its callee */
	{ "j1_", NULL },
	{ "jfptr_", "jfptr" },  /* the jlcall wrapper around specialized code */
	{ "jlcapi_", "jlcapi" } /* an @cfunction's wrapper */
};

/* Julia's counter is a 64-bit integer: 20 digits at most. */
#define JULIA_UNIQUE_DIGITS 20

static char *julia_demangle(const char *name)
{
	for (size_t i = 0; i < sizeof(julia_prefixes) / sizeof(julia_prefixes[0]); i++) {
		size_t pl = strlen(julia_prefixes[i].prefix);
		const char *start = name + pl, *us, *d;

		if (strncmp(name, julia_prefixes[i].prefix, pl) != 0)
			continue;
		us = strrchr(start, '_');
		/* Julia's jl_demangle takes an empty uniquifier too; codegen never writes
		 * one, and the stricter shape leaves other programs' names alone */
		if (!us || us == start || us[1] == '\0' || strlen(us + 1) > JULIA_UNIQUE_DIGITS)
			return NULL;
		for (d = us + 1; *d; d++)
			if (*d < '0' || *d > '9')
				return NULL;
		if (julia_prefixes[i].wrapper)
			return xasprintf("%.*s [%s wrapper]", (int)(us - start), start,
					 julia_prefixes[i].wrapper);
		return xstrndup(start, (size_t)(us - start));
	}
	return NULL;
}

char *demangle_jit_name(const char *name)
{
	char *d = demangle_name(name);

	if (d || !name)
		return d;
	return julia_demangle(name);
}
