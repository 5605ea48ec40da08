/* frametext: a frame as one field of a line of text (folded and samples output). */
#include "formats/write/frametext.h"

#include <stdio.h>
#include <string.h>

void frame_name_sanitize(char *s)
{
	for (; *s; s++) {
		if (*s == ';')
			*s = ':';
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			*s = ' ';
	}
}

/* The bytes of `s` that fit in buf[at, size - 1): at most `size - 1` in all, as
 * snprintf would keep them. The new length. */
static size_t put(char *buf, size_t size, size_t at, const char *s, size_t n)
{
	if (at + 1 >= size)
		return at;
	if (n > size - 1 - at)
		n = size - 1 - at;
	memcpy(buf + at, s, n);
	return at + n;
}

/* Written piece by piece, not by snprintf: a folded file formats every frame of every
 * distinct stack (19,566 on the Erlang recording), and the format string's parsing was
 * most of the cost. The bytes are snprintf's, truncation included. */
void frame_text(const struct profile *p, const struct pc_frame *f, const struct write_options *o,
		char *buf, size_t size)
{
	const char *name = profile_text(p, f->func);
	size_t at;

	if (!size)
		return;
	at = put(buf, size, 0, name, strlen(name));
	if (o->srcline && f->line && f->file) {
		const char *base = path_base(profile_text(p, f->file));
		char num[16], *d = num + sizeof(num);
		unsigned v = f->line;

		do
			*--d = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		at = put(buf, size, at, " (", 2);
		at = put(buf, size, at, base, strlen(base));
		at = put(buf, size, at, ":", 1);
		at = put(buf, size, at, d, (size_t)(num + sizeof(num) - d));
		at = put(buf, size, at, ")", 1);
	}
	buf[at] = 0;
	frame_name_sanitize(buf);
}

const char *frame_text_all(const struct profile *p, const struct pc_frame *f,
			   const struct write_options *o, char **buf, size_t *cap)
{
	size_t need = strlen(profile_text(p, f->func)) + 32;

	if (o->srcline && f->line && f->file)
		need += strlen(profile_text(p, f->file));
	if (need > *cap)
		grow_array((void **)buf, cap, need, 1);
	frame_text(p, f, o, *buf, *cap);
	return *buf;
}

const char *root_label_all(const struct profile *p, const struct write_options *o, uint32_t comm,
			   uint32_t pid, uint32_t tid, char **buf, size_t *cap)
{
	const char *name = profile_text(p, comm);
	size_t len = strlen(name);

	if (len + 32 > *cap)
		grow_array((void **)buf, cap, len + 32, 1);
	memcpy(*buf, name, len + 1);
	for (char *c = *buf; *c; c++)
		if (*c == ' ')
			*c = '_';
	frame_name_sanitize(*buf);
	if (o->with_tid)
		snprintf(*buf + len, *cap - len, "-%d/%d", (int)pid, (int)tid);
	else if (o->with_pid)
		snprintf(*buf + len, *cap - len, "-%d", (int)pid);
	return *buf;
}
