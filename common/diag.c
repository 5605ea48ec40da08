/* diag: one-line diagnostics that name the file, the offset and what is wrong. */
#include "common/diag.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* The text kept of a cause: enough of a line to say it again with its count. */
#define CAUSE_TEXT 512

struct diag_cause {
	uint64_t key;        /* of the line, normalized (diag_per_cause) */
	time_t said_at;      /* when it was last printed: the monotonic clock's seconds */
	time_t said_wall;    /* ... and the wall clock's, for the message */
	unsigned repeats;    /* since then, counted and not printed */
	char text[CAUSE_TEXT]; /* the last one's line, without "perfconv: " */
};

void diag_init(struct diag *d)
{
	memset(d, 0, sizeof(*d));
}

void diag_release(struct diag *d)
{
	free(d->causes);
	d->causes = NULL;
	d->ncauses = 0;
	d->interval_s = 0;
}

/* The line "PATH: offset 0x..: KIND" + fmt into msg. */
static void format_line(char *msg, size_t cap, const char *path, uint64_t off, const char *kind,
			const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

static void format_line(char *msg, size_t cap, const char *path, uint64_t off, const char *kind,
			const char *fmt, va_list ap)
{
	int n = 0;

	msg[0] = '\0';
	if (path)
		n = snprintf(msg, cap, "%s: ", path);
	if (off != DIAG_NO_OFFSET && n >= 0 && (size_t)n < cap)
		n += snprintf(msg + n, cap - (size_t)n, "offset 0x%llx: ", (unsigned long long)off);
	if (kind && n >= 0 && (size_t)n < cap)
		n += snprintf(msg + n, cap - (size_t)n, "%s", kind);
	if (n >= 0 && (size_t)n < cap)
		vsnprintf(msg + n, cap - (size_t)n, fmt, ap);
}

/*
 * The length of the UTF-8 sequence at `s` that a terminal shows as text, or 0: a
 * control character (C0, DEL, C1: U+0080-U+009F, whose CSI starts escape sequences
 * as ESC [ does), a bidirectional override or isolate (U+202A-U+202E,
 * U+2066-U+2069: text shown in another order than it is), a malformed or overlong
 * sequence, a surrogate.
 */
static size_t shown_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (*s >= 0x20 && *s < 0x7f)
		return 1;
	if (*s < 0xc2 || *s > 0xf4)
		return 0;
	n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : 2;
	cp = *s & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return n;
}

/* `s` as text a terminal or a log shows as it is: what shown_len() refuses as \xNN,
 * so that a file name or a server's answer holding a newline or an escape sequence
 * cannot print a line of its own or move the cursor. */
static void put_escaped(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = shown_len(p);

		if (n) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fprintf(f, "\\x%02x", *p++);
		}
	}
}

static void print_line(struct diag *d, const char *msg, const char *tail)
{
	FILE *f = d->out ? d->out : stderr;

	fputs("perfconv: ", f);
	put_escaped(f, msg);
	if (tail)
		put_escaped(f, tail);
	fputc('\n', f);
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* FNV-1a of the line with each run of hex digits that holds a decimal digit as '#'. */
static uint64_t cause_key(const char *msg)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = msg; *p;) {
		const char *e = p;
		int digit = 0;
		unsigned char c;

		while (is_hex(*e)) {
			digit |= *e >= '0' && *e <= '9';
			e++;
		}
		if (e > p && digit) {
			c = '#';
			p = e;
		} else if (e > p) {
			/* a word of hex letters only ("dead", "cafe") is words, kept whole */
			for (; p < e; p++)
				h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
			continue;
		} else {
			c = (unsigned char)*p++;
		}
		h = (h ^ c) * 0x100000001b3ULL;
	}
	return h;
}

/* The interval is measured on the monotonic clock: a wall clock set back must not
 * silence a cause for as long. A test's clock serves for both. */
/* A line kept for saying it again: cut to CAUSE_TEXT - 1 bytes. */
static void keep_text(struct diag_cause *c, const char *msg)
{
	size_t n = strnlen(msg, sizeof(c->text) - 1);

	memcpy(c->text, msg, n);
	c->text[n] = '\0';
}

static time_t now_of(const struct diag *d)
{
	struct timespec ts;

	if (d->now)
		return d->now();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static time_t wall_of(const struct diag *d)
{
	return d->now ? d->now() : time(NULL);
}

/* " (also N times since HH:MM:SS UTC, not shown)" for a cause's count. */
static void count_tail(const struct diag_cause *c, char *buf, size_t cap)
{
	struct tm tm;

	gmtime_r(&c->said_wall, &tm);
	snprintf(buf, cap, " (also %u time%s since %02d:%02d:%02d UTC, not shown)", c->repeats,
		 c->repeats == 1 ? "" : "s", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void say_count(struct diag *d, struct diag_cause *c, time_t now)
{
	char tail[96];

	count_tail(c, tail, sizeof(tail));
	print_line(d, c->text, tail);
	c->said_at = now;
	c->said_wall = wall_of(d);
	c->repeats = 0;
}

/* Per cause: print `msg` now (1) or count it (0). */
static int per_cause(struct diag *d, const char *msg)
{
	uint64_t key = cause_key(msg);
	time_t now = now_of(d);
	struct diag_cause *c = NULL;
	char tail[96];

	for (size_t i = 0; i < d->ncauses && !c; i++)
		if (d->causes[i].key == key)
			c = &d->causes[i];
	if (c && now - c->said_at < (time_t)d->interval_s) {
		c->repeats++;
		keep_text(c, msg);
		return 0;
	}
	if (!c && d->ncauses < DIAG_CAUSES) {
		c = &d->causes[d->ncauses++];
		memset(c, 0, sizeof(*c));
	} else if (!c) {
		/* the one said longest ago makes room, its count said first */
		c = &d->causes[0];
		for (size_t i = 1; i < d->ncauses; i++)
			if (d->causes[i].said_at < c->said_at)
				c = &d->causes[i];
		if (c->repeats)
			say_count(d, c, now);
		memset(c, 0, sizeof(*c));
	}
	tail[0] = '\0';
	if (c->repeats)
		count_tail(c, tail, sizeof(tail));
	print_line(d, msg, tail);
	c->key = key;
	c->said_at = now;
	c->said_wall = wall_of(d);
	c->repeats = 0;
	keep_text(c, msg);
	return 1;
}

void diag_per_cause(struct diag *d, unsigned interval_s)
{
	if (!d->causes)
		d->causes = xcalloc(DIAG_CAUSES, sizeof(*d->causes));
	d->interval_s = interval_s ? interval_s : 1;
}

void diag_tick(struct diag *d)
{
	time_t now;

	if (!d->causes)
		return;
	now = now_of(d);
	for (size_t i = 0; i < d->ncauses; i++)
		if (d->causes[i].repeats && now - d->causes[i].said_at >= (time_t)d->interval_s)
			say_count(d, &d->causes[i], now);
}

void diag_flush(struct diag *d)
{
	time_t now;

	if (!d->causes)
		return;
	now = now_of(d);
	for (size_t i = 0; i < d->ncauses; i++)
		if (d->causes[i].repeats)
			say_count(d, &d->causes[i], now);
}

void diag_error(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	d->nerrors++;
	va_start(ap, fmt);
	format_line(msg, sizeof(msg), path, off, NULL, fmt, ap);
	va_end(ap);
	snprintf(d->last_error, sizeof(d->last_error), "%s", msg);
	print_line(d, msg, NULL);
}

void diag_warn(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	unsigned limit = d->max_warnings ? d->max_warnings : 20;

	d->nwarnings++;
	if (d->quiet)
		return;
	if (!d->causes && d->nwarnings > limit) {
		if (d->nwarnings == limit + 1)
			fprintf(d->out ? d->out : stderr,
				"perfconv: further warnings are counted, not printed\n");
		return;
	}
	va_start(ap, fmt);
	format_line(msg, sizeof(msg), path, off, "warning: ", fmt, ap);
	va_end(ap);
	if (!d->causes)
		print_line(d, msg, NULL);
	else
		per_cause(d, msg);
}

void diag_warn_always(struct diag *d, const char *path, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	d->nwarnings++;
	va_start(ap, fmt);
	format_line(msg, sizeof(msg), path, off, "warning: ", fmt, ap);
	va_end(ap);
	print_line(d, msg, NULL);
}

void diag_note(struct diag *d, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	print_line(d, msg, NULL);
}
