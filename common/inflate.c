/* inflate: whole buffers of gzip and zlib data inflated at once, through libdeflate. */
#include "common/inflate.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapfile.h"
#include "common/util.h"

/* Members of a gzip file larger than this are not believed (a damaged size field
 * would otherwise ask for gigabytes at once): the buffer grows as needed instead. */
#define GZIP_FIRST_GUESS_MAX (256u << 20)

int inflate_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	struct libdeflate_decompressor *dec = libdeflate_alloc_decompressor();
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	int ret = -1;

	*out = NULL;
	*out_len = 0;
	if (!dec)
		return -1;
	while (len >= 18 && in[0] == 0x1f && in[1] == 0x8b) {
		/* the member's size mod 2^32 is its last 4 bytes when it is the only one */
		uint32_t isize = (uint32_t)in[len - 4] | (uint32_t)in[len - 3] << 8 |
				 (uint32_t)in[len - 2] << 16 | (uint32_t)in[len - 1] << 24;
		size_t want = isize && isize <= GZIP_FIRST_GUESS_MAX ? isize : 4 * len + 4096;

		for (;;) {
			size_t used, got;
			enum libdeflate_result r;

			if (n + want + 1 > cap)
				grow_array((void **)&buf, &cap, n + want + 1, 1);
			r = libdeflate_gzip_decompress_ex(dec, in, len, buf + n, cap - n - 1, &used,
							  &got);
			if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
				want = 2 * (cap - n);
				continue;
			}
			if (r != LIBDEFLATE_SUCCESS)
				goto out;
			n += got;
			in += used;
			len -= used;
			break;
		}
	}
	if (!buf)
		goto out; /* no member at all */
	/* bytes after the last member that begin no other are ignored, as gzip and
	 * zlib's gzread ignore them */
	buf[n] = 0;
	*out = buf;
	*out_len = n;
	buf = NULL;
	ret = 0;
out:
	free(buf);
	libdeflate_free_decompressor(dec);
	return ret;
}

int inflate_zlib(const uint8_t *in, size_t len, uint8_t *out, size_t out_len)
{
	struct libdeflate_decompressor *dec = libdeflate_alloc_decompressor();
	size_t got = 0;
	enum libdeflate_result r;

	if (!dec)
		return -1;
	r = libdeflate_zlib_decompress(dec, in, len, out, out_len, &got);
	libdeflate_free_decompressor(dec);
	return r == LIBDEFLATE_SUCCESS && got == out_len ? 0 : -1;
}

void *inflate_file(const char *path, size_t *len)
{
	struct mapped_file mf;
	const char *why;
	const uint8_t *m;
	uint8_t *buf = NULL;

	*len = 0;
	if (mapped_file_try_why(&mf, path, &why, NULL) != 0)
		return NULL;
	m = mf.map;
	if (mf.len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
		if (inflate_gzip(m, mf.len, &buf, len) < 0)
			buf = NULL;
	} else {
		buf = xmalloc(mf.len + 1);
		if (mf.len)
			memcpy(buf, m, mf.len);
		buf[mf.len] = '\0';
		*len = mf.len;
	}
	mapped_file_close(&mf);
	return buf;
}
