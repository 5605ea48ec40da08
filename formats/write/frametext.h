/* frametext: a frame as one field of a line of text (folded and samples output). */
#ifndef PERFCONV_FRAMETEXT_H
#define PERFCONV_FRAMETEXT_H

#include <stddef.h>

#include "formats/model/profile.h"
#include "formats/write/writer.h"

/* Make `s` one field of a folded/samples line: ';' becomes ':', line breaks and
 * tabs become spaces. */
void frame_name_sanitize(char *s);

/*
 * The text of frame `f` in folded and samples output, sanitized: its name, and with
 * o->srcline " (file:line)" (the file's base name) when the line is known.
 */
void frame_text(const struct profile *p, const struct pc_frame *f, const struct write_options *o,
		char *buf, size_t size);
/* The same, whole however long (names of C++ templates and JIT code pass 4 KB), in
 * `*buf` grown as needed; returns *buf. */
const char *frame_text_all(const struct profile *p, const struct pc_frame *f,
			   const struct write_options *o, char **buf, size_t *cap);

/*
 * The first frame of a sample's stack in folded and svg output: the thread name
 * `comm` (spaces become '_', sanitized), with o->with_tid "-PID/TID", with
 * o->with_pid "-PID". Whole however long, in `*buf` grown as needed; returns *buf.
 */
const char *root_label_all(const struct profile *p, const struct write_options *o, uint32_t comm,
			   uint32_t pid, uint32_t tid, char **buf, size_t *cap);

#endif
