/* mapfile: a whole regular file mapped read-only, a file's identity, a file written whole. */
#ifndef PERFCONV_MAPFILE_H
#define PERFCONV_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

struct mapped_file {
	void *map;   /* NULL for an empty file */
	size_t len;
};

/* Map `path`. Returns 0, or -1 after one error line through `d` (cannot open, not a
 * regular file, cannot map). */
int mapped_file_open(struct mapped_file *f, const char *path, struct diag *d);
/* The same without a word: -1 when the file is missing, not regular, or cannot be
 * mapped (a cache file that may not be there). */
int mapped_file_try(struct mapped_file *f, const char *path);
/* NULL-safe for an unmapped or empty file. */
void mapped_file_close(struct mapped_file *f);
/* Whether `n` items of `size` bytes at offset `off`, 8-aligned, lie within the file. */
static inline int mapped_file_holds(const struct mapped_file *f, uint64_t off, uint64_t n,
				    uint64_t size)
{
	return off % 8 == 0 && off <= f->len && n <= (f->len - off) / (size ? size : 1);
}

/* A regular file as it is now: what a cache records of the file it was made from, to
 * know later that the file is unchanged. */
struct file_id {
	uint64_t size, mtime_ns, ino, dev;
};
/* 0 and *id filled for a regular file of nonzero size (not /proc's), else -1. */
int file_id_of(const char *path, struct file_id *id);

/* Write `len` bytes as the file `path`, through a temporary name beside it renamed when
 * complete (mode 0644), so that a reader never sees half a file. 0, or -1 with nothing
 * left behind. */
int write_file_atomic(const char *path, const void *data, size_t len);

#endif
