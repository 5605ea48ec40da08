/* strbuf: a growing string, NUL-terminated after every change. */
#ifndef PERFCONV_STRBUF_H
#define PERFCONV_STRBUF_H

#include <stddef.h>
#include <string.h>

/*
 * s[0..len) is the text and s[len] is '\0' once anything was added (strbuf_grow or
 * an add of 0 bytes makes s, ""); s is NULL before. The buffer owns s until
 * strbuf_detach() hands it over or strbuf_release() frees it. Bytes of any value may
 * be added ('\0' too): len counts them. Memory that cannot be had, or a length that
 * does not fit in size_t, ends perfconv with "out of memory" (common/util.h's rule),
 * never a short string.
 */
struct strbuf {
	char *s;
	size_t len, cap; /* cap: bytes at s, the NUL's included */
};

#define STRBUF_INIT { NULL, 0, 0 }

/* An empty buffer with room for `hint` bytes (0: none made yet). */
void strbuf_init(struct strbuf *b, size_t hint);
/* Room for `extra` more bytes and the NUL: adds of up to strbuf_avail() bytes after
 * it do not allocate (for a caller that may not allocate at the time, demangle.c). */
void strbuf_grow(struct strbuf *b, size_t extra);
static inline size_t strbuf_avail(const struct strbuf *b)
{
	return b->cap ? b->cap - b->len - 1 : 0;
}
/* Inline: the demangler's output callback adds a few bytes at a time, under a bound
 * of CPU time (common/demangle.c). */
static inline void strbuf_add(struct strbuf *b, const void *p, size_t n)
{
	if (n >= b->cap - b->len) /* no room for n bytes and the NUL (or no text yet) */
		strbuf_grow(b, n);
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}
void strbuf_addstr(struct strbuf *b, const char *s);
void strbuf_addch(struct strbuf *b, char c);
void strbuf_addf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Cut to its first `len` bytes (len <= b->len). */
void strbuf_setlen(struct strbuf *b, size_t len);
static inline void strbuf_reset(struct strbuf *b)
{
	if (b->s)
		strbuf_setlen(b, 0);
}
/* The text, malloc'ed, for the caller to free ("" when nothing was added); the
 * buffer is left empty. */
char *strbuf_detach(struct strbuf *b);
/* Frees the text; the buffer is empty after (and may be used again). */
void strbuf_release(struct strbuf *b);

#endif
