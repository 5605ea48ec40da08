/* artframes: ART's own frames hidden from a simpleperf recording's stacks. */
#include "convert/artframes.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

enum art_class {
	AC_UNSET = 0,
	AC_NATIVE,        /* shown as it is */
	AC_RUNTIME,       /* libart.so's: hidden next to Java frames */
	AC_TRAMPOLINE,    /* *jni_trampoline: hidden likewise, its callee kept */
	AC_INTERPRETED,   /* a dex file's method */
	AC_JIT,           /* a JIT region's method */
};

struct art_ctx {
	const struct profile *p;
	const struct sp_info *si;
	uint8_t *cls;     /* by frame id, computed when first met */
	uint8_t *hide;    /* by position in the stack being rewritten */
	size_t hide_cap;
};

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && memcmp(s + n - t, tail, t) == 0;
}

static enum art_class classify(const struct art_ctx *a, uint32_t f)
{
	const struct pc_frame *fr = &a->p->frames[f];
	const char *path, *base, *name = profile_text(a->p, fr->func);
	const struct sp_file *sf;

	if (fr->kind == FRAME_KERNEL || !fr->mapping || fr->mapping >= a->p->nmappings)
		return ends_with(name, "jni_trampoline") ? AC_TRAMPOLINE : AC_NATIVE;
	path = profile_text(a->p, a->p->mappings[fr->mapping].file);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* simpleperf's JITDebugReader names its symbol files so; old ones TemporaryFile-* */
	if (strstr(path, "_jit_app_cache:") || strstr(path, "_jit_zygote_cache:") ||
	    strncmp(base, "TemporaryFile", 13) == 0)
		return AC_JIT;
	sf = sp_info_file(a->si, path);
	if (sf && sf->type == SP_DSO_DEX)
		return AC_INTERPRETED;
	if (ends_with(name, "jni_trampoline"))
		return AC_TRAMPOLINE;
	if (ends_with(path, "/libart.so") || ends_with(path, "/libartd.so"))
		return AC_RUNTIME;
	return AC_NATIVE;
}

static enum art_class class_of(struct art_ctx *a, uint32_t f)
{
	if (!a->cls[f])
		a->cls[f] = (uint8_t)classify(a, f);
	return (enum art_class)a->cls[f];
}

static int is_java(enum art_class c)
{
	return c == AC_INTERPRETED || c == AC_JIT;
}

static int is_runtime(enum art_class c)
{
	return c == AC_RUNTIME || c == AC_TRAMPOLINE;
}

static size_t rewrite(void *arg, uint32_t *fr, size_t n)
{
	struct art_ctx *a = arg;
	int near_java = 0;
	size_t m = 0;

	if (n > a->hide_cap) {
		a->hide_cap = n * 2;
		a->hide = xrealloc(a->hide, a->hide_cap);
	}
	memset(a->hide, 0, n);
	/* leaf first: the runtime's frames right below a Java frame (its callees), and
	 * those right above it (its callers) while only runtime frames come between */
	for (size_t i = 0; i < n; i++) {
		enum art_class c = class_of(a, fr[i]);

		if (is_java(c)) {
			near_java = 1;
			for (size_t j = i; j-- > 0 && !a->hide[j] && is_runtime(class_of(a, fr[j]));)
				a->hide[j] = 1;
		} else if (near_java && is_runtime(c)) {
			a->hide[i] = 1;
		} else {
			near_java = 0;
		}
	}
	/* what a trampoline calls is a JNI method (Object.wait's art::Monitor::Wait):
	 * the program's own call, kept */
	for (size_t i = 1; i < n; i++)
		if (a->hide[i] && class_of(a, fr[i]) == AC_TRAMPOLINE && a->hide[i - 1] == 1)
			a->hide[i - 1] = 2;
	for (size_t i = 0; i < n; i++)
		if (a->hide[i] != 1)
			fr[m++] = fr[i];
	/* a JIT frame whose caller is the same method interpreted: one frame */
	n = m;
	m = 0;
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && class_of(a, fr[i]) == AC_JIT &&
		    class_of(a, fr[i + 1]) == AC_INTERPRETED &&
		    a->p->frames[fr[i]].func == a->p->frames[fr[i + 1]].func)
			continue;
		fr[m++] = fr[i];
	}
	return m;
}

void artframes_hide(struct profile *p, const struct sp_info *si)
{
	struct art_ctx a;

	memset(&a, 0, sizeof(a));
	a.p = p;
	a.si = si;
	a.cls = xcalloc(p->nframes ? p->nframes : 1, 1);
	profile_rewrite_stacks(p, rewrite, &a);
	free(a.cls);
	free(a.hide);
}
