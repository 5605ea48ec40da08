/* frametext: a frame as one field of a line of text (folded and samples output). */
#include "formats/frametext.h"

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

void frame_text(const struct profile *p, const struct pc_frame *f, const struct write_options *o,
		char *buf, size_t size)
{
	const char *name = profile_text(p, f->func);

	if (o->srcline && f->line && f->file)
		snprintf(buf, size, "%s (%s:%u)", name, path_base(profile_text(p, f->file)), f->line);
	else
		snprintf(buf, size, "%s", name);
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
		snprintf(*buf + len, *cap - len, "-%u/%u", pid, tid);
	else if (o->with_pid)
		snprintf(*buf + len, *cap - len, "-%u", pid);
	return *buf;
}
