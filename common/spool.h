/* spool: records of one size, in memory up to a limit and in a temporary file past it. */
#ifndef PERFCONV_SPOOL_H
#define PERFCONV_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Records are appended in order and read back, forward or backward, from any one of
 * them, by any number of readers at a time. The first `mem_limit` bytes stay in
 * memory; once the records need more, all of them go to a temporary file (made in
 * $TMPDIR, else /tmp, and unlinked at once), written through a buffer of its own,
 * so that the memory a spool holds does not grow with its records.
 *
 * An I/O error (a full disk) is kept: from then on appends are dropped and reads
 * end, and spool_error() says which error it was. The records a reader returns are
 * borrowed until its next read.
 */
struct spool;

struct spool *spool_new(size_t rec_size, size_t mem_limit);
/* NULL-safe. */
void spool_free(struct spool *s);
void spool_append(struct spool *s, const void *rec);
uint64_t spool_count(const struct spool *s);
/* Forget every record (the file, if any, is kept for the next ones). */
void spool_clear(struct spool *s);
/* 0, or the errno of the first write or read that failed. */
int spool_error(const struct spool *s);

/* Reads records [from, to): forward from `from`, or backward from `to` - 1. */
struct spool_reader {
	struct spool *s;
	uint64_t next, end;   /* forward: next to read, end; backward: one past the next */
	int backward;
	uint8_t *buf;         /* records [buf_first, buf_first + buf_n) of the file */
	uint64_t buf_first;
	size_t buf_n, buf_cap;
};

void spool_reader_init(struct spool_reader *r, struct spool *s, uint64_t from, uint64_t to,
		       int backward);
/* The next record, or NULL at the end (or after an I/O error). */
const void *spool_read(struct spool_reader *r);
void spool_reader_release(struct spool_reader *r);

#endif
