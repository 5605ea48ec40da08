/* inflate: whole buffers of gzip and zlib data inflated at once, through libdeflate. */
#ifndef PERFCONV_INFLATE_H
#define PERFCONV_INFLATE_H

#include <stddef.h>
#include <stdint.h>

/*
 * libdeflate inflates a buffer whose inflated size is known 2 to 3 times as fast as
 * zlib's streaming inflate (0.39 of zlib's time on libc's debug file); every input
 * perfconv inflates is whole in memory or mapped.
 */

/* A gzip file's bytes (every member, as gzip -d takes concatenated ones): 0 and a
 * buffer of *out_len bytes and a NUL after them (the caller frees it), or -1 when
 * the data is not gzip or is damaged. */
int inflate_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len);
/* A zlib stream (an ELF section's, ELFCOMPRESS_ZLIB) of exactly `out_len` bytes
 * inflated into `out`: 0, or -1 when damaged or of another size. */
int inflate_zlib(const uint8_t *in, size_t len, uint8_t *out, size_t out_len);
/* File `path` whole in memory, inflated when it is gzip (a gzipped jitdump: runtimes
 * write them plain, people compress them), else as it is, as zlib's gzread takes it:
 * a buffer of *len bytes and a NUL (the caller frees it), or NULL when it cannot be
 * read (a FIFO is not waited on) or its gzip is damaged. */
void *inflate_file(const char *path, size_t *len);

#endif
