/* diag: one-line diagnostics that name the file, the offset and what is wrong. */
#ifndef PERFCONV_DIAG_H
#define PERFCONV_DIAG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A diag travels with a reader. Messages go to `out` (stderr by default) as
 *   perfconv: PATH: offset 0x1a2b0: MESSAGE
 * (the offset part only when one is given). Errors end the conversion; warnings
 * describe skippable damage. Messages say what went wrong first, lower case,
 * no final full stop. Nothing here calls exit(): main decides the exit code.
 */
struct diag {
	FILE *out;          /* NULL means stderr */
	int quiet;          /* 1: count warnings but print none */
	unsigned nerrors;
	unsigned nwarnings;
	unsigned max_warnings; /* print at most this many warnings (0 = 20); the rest are counted */
	char last_error[1024];  /* the text of the last error, for tests */
};

#define DIAG_NO_OFFSET UINT64_MAX

void diag_init(struct diag *d);
/* Print an error; `off` is a file offset or DIAG_NO_OFFSET; `path` may be NULL. */
void diag_error(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_warn(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A note that is always printed (summaries): "perfconv: MESSAGE". */
void diag_note(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
