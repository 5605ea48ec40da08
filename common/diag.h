/* diag: one-line diagnostics that name the file, the offset and what is wrong. */
#ifndef PERFCONV_DIAG_H
#define PERFCONV_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/*
 * A diag travels with a reader. Messages go to `out` (stderr by default) as
 *   perfconv: PATH: offset 0x1a2b0: MESSAGE
 * (the offset part only when one is given). Errors end the conversion; warnings
 * describe skippable damage. Messages say what went wrong first, lower case,
 * no final full stop. Nothing here calls exit(): main decides the exit code.
 *
 * How many warnings are printed: a conversion prints its first max_warnings (20)
 * and counts the rest. A process that runs for days (perfconv upload --watch)
 * calls diag_per_cause() instead: each distinct cause is then said once per
 * interval, never silenced for good (see there). Errors, notes and
 * diag_warn_always() are never held back.
 */
struct diag_cause; /* diag.c's: one remembered cause of warnings */

struct diag {
	FILE *out;          /* NULL means stderr */
	int quiet;          /* 1: count warnings but print none */
	unsigned nerrors;
	unsigned nwarnings;
	unsigned max_warnings; /* print at most this many warnings (0 = 20); the rest are counted */
	char last_error[1024];  /* the text of the last error, for tests */
	/* per cause (diag_per_cause): the interval, the causes said, and the clock
	 * (NULL: time(); tests set their own) */
	unsigned interval_s;
	struct diag_cause *causes;
	size_t ncauses;
	time_t (*now)(void);
};

#define DIAG_NO_OFFSET UINT64_MAX
/* How many causes diag_per_cause remembers: one more pushes out the one said longest ago. */
#define DIAG_CAUSES 64

void diag_init(struct diag *d);
/* Free what diag_per_cause() took; `d` may be used again (with the cap). Any diag may
 * be released, and more than once. */
void diag_release(struct diag *d);
/* Print an error; `off` is a file offset or DIAG_NO_OFFSET; `path` may be NULL. */
void diag_error(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_warn(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A warning that nothing holds back (neither the cap nor diag_per_cause): one the user
 * must see each time, such as a chunk refused by the backend or dropped unsent. */
void diag_warn_always(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A note that is always printed (summaries): "perfconv: MESSAGE". */
void diag_note(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * From now on, warnings are said once per distinct cause per `interval_s` seconds
 * (3600 for the watcher) instead of up to the cap:
 *
 * - A cause is the warning's whole line (path, offset and message) with each run of
 *   hexadecimal digits that holds a decimal digit taken as one character: a number,
 *   an offset, an address, a build id, a chunk's timestamp or a pid in a path. So
 *   "perf.data.2026112910000001: offset 0x1a8: ... (size 0): 144 bytes skipped" and
 *   the same words about the next chunk are one cause; the same damage in a library
 *   of another name is another.
 * - The first time a cause comes it is printed. Until `interval_s` has passed it is
 *   counted, not printed; the next time it comes after that, it is printed with the
 *   count: "... (also 41 times since 14:02:10 UTC, not shown)".
 * - diag_tick() prints a cause counted that way whose interval is over even when it
 *   does not come again, so that no count is kept for good.
 * - DIAG_CAUSES causes are remembered; a new one pushes out the one said longest ago
 *   (its count printed first), which may then be said again sooner, never later.
 */
void diag_per_cause(struct diag *d, unsigned interval_s);
/* Print, per cause, the warnings counted and not printed over an interval that is over:
 * the last one's line, with the count. Does nothing without diag_per_cause. */
void diag_tick(struct diag *d);
/* Print every count diag_per_cause still holds, whatever the interval (when stopping). */
void diag_flush(struct diag *d);

#endif
