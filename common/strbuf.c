/* strbuf: a growing string, NUL-terminated after every change. */
#include "common/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void strbuf_init(struct strbuf *b, size_t hint)
{
	b->s = NULL;
	b->len = b->cap = 0;
	if (hint)
		strbuf_grow(b, hint);
}

void strbuf_grow(struct strbuf *b, size_t extra)
{
	size_t need, cap;

	/* len + extra + 1 checked before it is made: a wrapped sum would pass the test
	 * below and let the add write past the buffer */
	if (extra > SIZE_MAX - 1 - b->len)
		xalloc_failed(SIZE_MAX);
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	/* doubled, so that n adds of a byte cost O(n) copying */
	cap = b->cap < 16 ? 16 : b->cap;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	b->s = xrealloc(b->s, cap);
	if (!b->cap)
		b->s[0] = '\0';
	b->cap = cap;
}

void strbuf_addstr(struct strbuf *b, const char *s)
{
	strbuf_add(b, s, strlen(s));
}

void strbuf_addch(struct strbuf *b, char c)
{
	strbuf_add(b, &c, 1);
}

void strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort(); /* a format this code wrote wrong: no text to make */
	if (!b->s || (size_t)n > strbuf_avail(b)) {
		strbuf_grow(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void strbuf_setlen(struct strbuf *b, size_t len)
{
	if (!b->s)
		strbuf_grow(b, 0);
	if (len > b->len)
		abort(); /* a caller's error: the bytes past len were never written */
	b->len = len;
	b->s[len] = '\0';
}

char *strbuf_detach(struct strbuf *b)
{
	char *s;

	if (!b->s)
		strbuf_grow(b, 0);
	s = b->s;
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void strbuf_release(struct strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}
