/* gzout: bytes gzipped into a FILE as they are written, through zlib. */
#ifndef PERFCONV_GZOUT_H
#define PERFCONV_GZOUT_H

#include <stddef.h>
#include <stdio.h>

/*
 * The bytes are gathered 64 KB at a time and deflated; nothing is flushed before
 * the end, and then zlib's output does not depend on how its input was split: the
 * file is the one a single deflate() over all the bytes at once would give. zlib
 * writes no time or name into the gzip header: the same bytes give the same file.
 */
struct gzout;

/* A stream at zlib `level` into `out`; never NULL (a failure shows at gzout_close). */
struct gzout *gzout_open(FILE *out, int level);
/* `len` bytes more; nothing once the stream has failed. */
void gzout_write(struct gzout *g, const void *data, size_t len);
/* Ends the stream and frees it: 0, or -1 with errno set when a write or zlib failed. */
int gzout_close(struct gzout *g);

#endif
