/* gzout: bytes gzipped into a FILE as they are written, through zlib. */
#include "common/gzout.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/util.h"

struct gzout {
	z_stream zs;
	FILE *out;
	int err;               /* errno of the first failure, 0 none */
	int open;
	size_t nin;
	uint8_t in[1 << 16], chunk[1 << 16];
};

/* Deflates what `in` holds, with `flush`, and writes what comes out. */
static void deflate_in(struct gzout *g, int flush)
{
	int zr;

	g->zs.next_in = g->in;
	g->zs.avail_in = (uInt)g->nin;
	g->nin = 0;
	do {
		size_t n;

		g->zs.next_out = g->chunk;
		g->zs.avail_out = sizeof(g->chunk);
		zr = deflate(&g->zs, flush);
		if (zr == Z_STREAM_ERROR) {
			g->err = EIO;
			return;
		}
		n = sizeof(g->chunk) - g->zs.avail_out;
		if (fwrite(g->chunk, 1, n, g->out) != n) {
			g->err = errno ? errno : EIO;
			return;
		}
	} while (flush == Z_FINISH ? zr != Z_STREAM_END : g->zs.avail_out == 0);
}

struct gzout *gzout_open(FILE *out, int level)
{
	struct gzout *g = xcalloc(1, sizeof(*g));

	g->out = out;
	/* 15 + 16: a gzip wrapper */
	if (deflateInit2(&g->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		g->err = ENOMEM;
	else
		g->open = 1;
	return g;
}

void gzout_write(struct gzout *g, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len && !g->err) {
		size_t n = sizeof(g->in) - g->nin < len ? sizeof(g->in) - g->nin : len;

		memcpy(g->in + g->nin, p, n);
		g->nin += n;
		p += n;
		len -= n;
		if (g->nin == sizeof(g->in))
			deflate_in(g, Z_NO_FLUSH);
	}
}

int gzout_close(struct gzout *g)
{
	int err;

	if (!g->err)
		deflate_in(g, Z_FINISH);
	if (g->open)
		deflateEnd(&g->zs);
	err = g->err;
	free(g);
	if (!err)
		return 0;
	errno = err;
	return -1;
}
