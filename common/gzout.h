/* gzout: bytes gzipped into a FILE, through libdeflate (or zlib past a size). */
#ifndef PERFCONV_GZOUT_H
#define PERFCONV_GZOUT_H

#include <stddef.h>
#include <stdio.h>

/*
 * The bytes are gathered and gzipped at the end in one libdeflate call; a stream
 * longer than 8 MB goes on through zlib, 64 KB at a time, so that memory stays
 * bounded. Either way the file is one gzip member whose bytes depend only on the
 * bytes written, not on how they were split, and whose header holds no time or name:
 * the same bytes give the same file.
 */
struct gzout;

/* A stream at compression `level` (1 to 9) into `out`; never NULL (a failure shows
 * at gzout_close). */
struct gzout *gzout_open(FILE *out, int level);
/* `len` bytes more; nothing once the stream has failed. */
void gzout_write(struct gzout *g, const void *data, size_t len);
/* Ends the stream and frees it: 0, or -1 with errno set when a write or the
 * compressor failed. */
int gzout_close(struct gzout *g);

#endif
