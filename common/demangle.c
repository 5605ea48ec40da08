/* demangle: the one rule for showing C++, Rust, Java and Julia names, for native and JIT code alike. */
#include "common/demangle.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "common/cpulimit.h"
#include "common/strbuf.h"
#include "common/util.h"

/* The Java type of the field descriptor at *p (JVMS 4.3.2), advancing *p past it: 1,
 * or 0 when it is not one. A class's '/' become '.'. */
static int java_type(const char **p, struct strbuf *b, int allow_void)
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
			strbuf_add(b, *c == '/' ? "." : c, 1);
		}
		s = end + 1;
	} else {
		size_t i;

		for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
			if (*s && *s == base[i][0][0])
				break;
		if (i == sizeof(base) / sizeof(base[0]) || (*s == 'V' && (!allow_void || dims)))
			return 0;
		strbuf_addstr(b, base[i][1]);
		s++;
	}
	while (dims--)
		strbuf_addstr(b, "[]");
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
	struct strbuf b = STRBUF_INIT;
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
	strbuf_addstr(&b, ".");
	strbuf_add(&b, method, (size_t)(open - method));
	strbuf_addstr(&b, "(");
	p = open + 1;
	while (*p && *p != ')') {
		if (!first)
			strbuf_addstr(&b, ", ");
		first = 0;
		if (!java_type(&p, &b, 0))
			goto bad;
	}
	if (*p != ')')
		goto bad;
	p++;
	strbuf_addstr(&b, ")");
	{
		struct strbuf ret = STRBUF_INIT;
		int ok = java_type(&p, &ret, 1) && *p == '\0';

		strbuf_release(&ret);
		if (!ok)
			goto bad;
	}
	return strbuf_detach(&b);
bad:
	strbuf_release(&b);
	return NULL;
}

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

/*
 * A v0 Rust name that may hold a Punycode identifier ("u", its length, its bytes):
 * libiberty's Rust demangler decodes one in a malloc'ed buffer, so its run must not be
 * cut by time (a cut inside malloc would leave the heap's lock held). Any "u" before
 * a digit counts ("to_u8" too): such a run is bounded by its output alone, which the
 * Rust demangler's work follows (it does not follow back-references it does not print).
 */
static int may_hold_punycode(const char *name)
{
	for (const char *p = name; (p = strchr(p, 'u')) != NULL; p++)
		if (p[1] >= '0' && p[1] <= '9')
			return 1;
	return 0;
}

/* One run of a libiberty demangler: its output gathered, up to DEMANGLE_OUT_MAX. */
struct run {
	const char *name;
	int options, rust;
	struct strbuf out;
	size_t seen;   /* bytes the demangler gave, those past the bound included */
	int ok;
};

static void on_output(const char *s, size_t n, void *opaque)
{
	struct run *r = opaque;

	r->seen += n;
	if (r->out.len + n > DEMANGLE_OUT_MAX)
		cpulimit_stop();
	if (n > strbuf_avail(&r->out)) {
		cpulimit_hold();
		strbuf_grow(&r->out, n);
		cpulimit_release();
	}
	strbuf_add(&r->out, s, n);
}

/* Runs under cpulimit_run(): libiberty's callback demanglers allocate nothing (their
 * arrays are on the stack), on_output only inside a hold. */
static void run_demangler(void *arg)
{
	struct run *r = arg;

	if (r->rust)
		r->ok = rust_demangle_callback(r->name, r->options, on_output, r);
	else
		r->ok = cplus_demangle_v3_callback(r->name, r->options, on_output, r);
}

/*
 * libiberty's demangler on `name` (the Rust one with `rust`), as cplus_demangle() with
 * `options` gives it, within the bounds (common/demangle.h): malloc'ed, or NULL, the
 * name kept mangled. Without a CPU timer for the thread only names of at most
 * DEMANGLE_UNTIMED_MAX bytes are tried, bounded by their output alone.
 */
static char *bounded(const char *name, int options, int rust, struct demangle_budget *b)
{
	struct run r;
	enum cpulimit_result res;
	size_t len = strlen(name);
	uint64_t ns = rust && name[1] == 'R' && may_hold_punycode(name) ? 0 : DEMANGLE_CPU_NS;

	if (b && demangle_kept(b) - b->untried >= DEMANGLE_KEPT_MAX) {
		b->untried++;
		return NULL;
	}
	memset(&r, 0, sizeof(r));
	r.name = name;
	r.options = options;
	r.rust = rust;
	/* room for most names' output: no hold (no malloc) while the demangler runs */
	strbuf_init(&r.out, 4 * len + 256);
	res = cpulimit_run(run_demangler, &r, ns);
	if (res == CPULIMIT_NO_TIMER && len <= DEMANGLE_UNTIMED_MAX)
		res = cpulimit_run(run_demangler, &r, 0);
	if (b)
		b->last_seen = r.seen;
	if (res == CPULIMIT_DONE && r.ok)
		return strbuf_detach(&r.out);
	strbuf_release(&r.out);
	if (b) {
		if (res == CPULIMIT_STOPPED)
			b->too_long++;
		else if (res == CPULIMIT_CUT)
			b->too_slow++;
		else if (res == CPULIMIT_NO_TIMER)
			b->untried++;
	}
	return NULL;
}

static char *native_demangle(const char *name, struct demangle_budget *b)
{
	static const char plt[] = "@plt";
	size_t len = strlen(name), sl = sizeof(plt) - 1;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (len > sl && strcmp(name + len - sl, plt) == 0) {
		/* a PLT entry (elfsyms names them NAME@plt): libiberty drops the suffix,
		 * perf shows it after the demangled name */
		char *base = xstrndup(name, len - sl), *d = native_demangle(base, b);
		struct strbuf buf = STRBUF_INIT;

		free(base);
		if (!d)
			return NULL;
		strbuf_addstr(&buf, d);
		strbuf_addstr(&buf, plt);
		free(d);
		return strbuf_detach(&buf);
	}
	return demangle_auto(name, b);
}

char *demangle_auto(const char *name, struct demangle_budget *b)
{
	/* libiberty's DMGL_AUTO tries Rust first on every name: a C++ name goes to the
	 * C++ demangler alone, a v0 (_R) name to Rust's, a legacy Rust one to Rust's
	 * and, if it cannot read it, to C++'s (not when it was kept by a bound) */
	if (name[1] == 'R')
		return bounded(name, DMGL_RUST, 1, b);
	if (may_be_rust(name)) {
		unsigned kept = b ? demangle_kept(b) : 0;
		char *d = bounded(name, DMGL_RUST, 1, b);

		if (d || (b && demangle_kept(b) != kept))
			return d;
	}
	return bounded(name, DMGL_GNU_V3, 0, b);
}

char *demangle_name(const char *name, struct demangle_budget *b)
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
		inner = native_demangle(target, b);
		free(target);
		if (!inner)
			return NULL;
		d = xasprintf("%s@plt", inner);
		free(inner);
		return d;
	}
	d = native_demangle(name, b);
	if (d || (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		return d;
	d = java_demangle(name);
	if (d)
		return d;
	/* a mangled name after a prefix: "wasm_module::_ZN3fib3fib17h..E" (Wasmtime) */
	sep = strstr(name, "::_");
	if (sep && sep != name && (sep[3] == 'Z' || sep[3] == 'R')) {
		char *inner = native_demangle(sep + 2, b);

		if (inner) {
			struct strbuf buf = STRBUF_INIT;

			strbuf_add(&buf, name, (size_t)(sep - name) + 2);
			strbuf_addstr(&buf, inner);
			free(inner);
			return strbuf_detach(&buf);
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

char *demangle_jit_name(const char *name, struct demangle_budget *b)
{
	char *d = demangle_name(name, b);

	if (d || !name)
		return d;
	return julia_demangle(name);
}
