/* diag: one-line diagnostics that name the file, the offset and what is wrong. */
#include "common/diag.h"

#include <string.h>

void diag_init(struct diag *d)
{
	memset(d, 0, sizeof(*d));
}

static void emit(struct diag *d, const char *path, uint64_t off, const char *kind,
		 const char *fmt, va_list ap, char *copy, size_t copylen)
	__attribute__((format(printf, 5, 0)));

static void emit(struct diag *d, const char *path, uint64_t off, const char *kind,
		 const char *fmt, va_list ap, char *copy, size_t copylen)
{
	char msg[1024];
	int n = 0;

	if (path)
		n = snprintf(msg, sizeof(msg), "%s: ", path);
	if (off != DIAG_NO_OFFSET && n >= 0 && (size_t)n < sizeof(msg))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "offset 0x%llx: ",
			      (unsigned long long)off);
	if (kind && n >= 0 && (size_t)n < sizeof(msg))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s", kind);
	if (n >= 0 && (size_t)n < sizeof(msg))
		vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	if (copy && copylen) {
		size_t len = strnlen(msg, copylen - 1);

		memcpy(copy, msg, len);
		copy[len] = '\0';
	}
	if (!d->quiet || !kind || strcmp(kind, "warning: ") != 0)
		fprintf(d->out ? d->out : stderr, "perfconv: %s\n", msg);
}

void diag_error(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	d->nerrors++;
	va_start(ap, fmt);
	emit(d, path, off, NULL, fmt, ap, d->last_error, sizeof(d->last_error));
	va_end(ap);
}

void diag_warn(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	unsigned limit = d->max_warnings ? d->max_warnings : 20;

	d->nwarnings++;
	if (d->nwarnings > limit) {
		if (d->nwarnings == limit + 1 && !d->quiet)
			fprintf(d->out ? d->out : stderr,
				"perfconv: further warnings are counted, not printed\n");
		return;
	}
	va_start(ap, fmt);
	emit(d, path, off, "warning: ", fmt, ap, NULL, 0);
	va_end(ap);
}

void diag_note(struct diag *d, const char *fmt, ...)
{
	va_list ap;
	FILE *f = d->out ? d->out : stderr;

	fputs("perfconv: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}
