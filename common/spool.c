/* spool: records of one size, in memory up to a limit and in a temporary file past it. */
#include "common/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

/* bytes of appends gathered before a write, and of records a reader reads at once */
#define SPOOL_WRITE_BUF (64 * 1024)
#define SPOOL_READ_BUF (32 * 1024)

struct spool {
	size_t rec, mem_limit;
	uint64_t n;            /* records */
	uint8_t *mem;          /* the records while in memory */
	size_t mem_cap;        /* bytes */
	int in_file;           /* the records are in the file (and wbuf), not in mem */
	int fd;                /* the file once made, -1 before */
	uint8_t *wbuf;         /* appends not yet written: records [flushed, n) */
	size_t wlen;
	uint64_t flushed;
	int err;
};

struct spool *spool_new(size_t rec_size, size_t mem_limit)
{
	struct spool *s = xcalloc(1, sizeof(*s));

	s->rec = rec_size;
	s->mem_limit = mem_limit;
	s->fd = -1;
	return s;
}

void spool_free(struct spool *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->mem);
	free(s->wbuf);
	free(s);
}

uint64_t spool_count(const struct spool *s)
{
	return s->n;
}

int spool_error(const struct spool *s)
{
	return s->err;
}

static void fail(struct spool *s, int err)
{
	if (!s->err)
		s->err = err ? err : EIO;
}

/* An unlinked file in $TMPDIR (else /tmp): nothing is left behind however we end. */
static int open_temp(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/perfconv-spool-XXXXXX", dir) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static int write_at(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static void flush(struct spool *s)
{
	if (!s->wlen || s->err)
		return;
	if (write_at(s->fd, s->wbuf, s->wlen, s->flushed * s->rec) < 0)
		fail(s, errno);
	s->flushed += s->wlen / s->rec;
	s->wlen = 0;
}

/* From memory to the file: the records so far are written, and mem let go. */
static void to_file(struct spool *s)
{
	if (s->fd < 0 && (s->fd = open_temp()) < 0) {
		fail(s, errno);
		return;
	}
	if (ftruncate(s->fd, 0) != 0 || write_at(s->fd, s->mem, s->n * s->rec, 0) < 0) {
		fail(s, errno);
		return;
	}
	s->flushed = s->n;
	s->in_file = 1;
	free(s->mem);
	s->mem = NULL;
	s->mem_cap = 0;
	if (!s->wbuf)
		s->wbuf = xmalloc(SPOOL_WRITE_BUF > s->rec ? SPOOL_WRITE_BUF : s->rec);
}

void spool_append(struct spool *s, const void *rec)
{
	if (s->err)
		return;
	if (!s->in_file) {
		size_t need = (size_t)(s->n + 1) * s->rec;

		if (need <= s->mem_limit) {
			if (need > s->mem_cap) {
				size_t cap = s->mem_cap ? 2 * s->mem_cap : 64 * s->rec;

				if (cap > s->mem_limit)
					cap = s->mem_limit;
				if (cap < need)
					cap = need;
				s->mem = xrealloc(s->mem, cap);
				s->mem_cap = cap;
			}
			memcpy(s->mem + s->n * s->rec, rec, s->rec);
			s->n++;
			return;
		}
		to_file(s);
		if (s->err)
			return;
	}
	if (s->wlen + s->rec > (SPOOL_WRITE_BUF > s->rec ? SPOOL_WRITE_BUF : s->rec))
		flush(s);
	memcpy(s->wbuf + s->wlen, rec, s->rec);
	s->wlen += s->rec;
	s->n++;
}

void spool_clear(struct spool *s)
{
	s->n = 0;
	s->flushed = 0;
	s->wlen = 0;
	s->in_file = 0;
	if (s->fd >= 0 && ftruncate(s->fd, 0) != 0)
		fail(s, errno);
}

void spool_reader_init(struct spool_reader *r, struct spool *s, uint64_t from, uint64_t to,
		       int backward)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	if (to > s->n)
		to = s->n;
	if (from > to)
		from = to;
	r->backward = backward;
	r->next = backward ? to : from;
	r->end = backward ? from : to;
	if (s->in_file) {
		flush(s);
		r->buf_cap = SPOOL_READ_BUF / s->rec ? SPOOL_READ_BUF / s->rec : 1;
		r->buf = xmalloc(r->buf_cap * s->rec);
	}
}

/* Records [first, first + n) of the file into the reader's buffer. */
static int fill(struct spool_reader *r, uint64_t first, size_t n)
{
	struct spool *s = r->s;
	uint8_t *p = r->buf;
	size_t len = n * s->rec;
	uint64_t off = first * s->rec;

	while (len) {
		ssize_t got = pread(s->fd, p, len, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fail(s, got < 0 ? errno : EIO);
			return -1;
		}
		p += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	r->buf_first = first;
	r->buf_n = n;
	return 0;
}

const void *spool_read(struct spool_reader *r)
{
	struct spool *s = r->s;
	uint64_t at;

	if (s->err || (r->backward ? r->next <= r->end : r->next >= r->end))
		return NULL;
	at = r->backward ? r->next - 1 : r->next;
	r->next = r->backward ? at : at + 1;
	if (!s->in_file)
		return s->mem + at * s->rec;
	if (at < r->buf_first || at >= r->buf_first + r->buf_n) {
		uint64_t first;
		size_t n;

		if (r->backward) {
			first = at + 1 - r->end > r->buf_cap ? at + 1 - r->buf_cap : r->end;
			n = (size_t)(at + 1 - first);
		} else {
			first = at;
			n = r->end - at > r->buf_cap ? r->buf_cap : (size_t)(r->end - at);
		}
		if (fill(r, first, n) < 0)
			return NULL;
	}
	return r->buf + (at - r->buf_first) * s->rec;
}

void spool_reader_release(struct spool_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
