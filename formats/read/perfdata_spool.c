/* perfdata_spool: a recording read from a pipe (perfconv -i -), spooled to an unlinked
 * temporary file so that it can be read twice, and framed record by record as it
 * comes: bytes that are not perf.data end the spool at once instead of filling the
 * disk (issue 21 B5: a pipe header followed by endless bytes).
 *
 * The framing is the reader's (pd_frame), over a window of the stream that holds at
 * least two whole records past the one framed. Damage that a plausible record follows
 * within the window is passed over, as the reader will; a window without one is not a
 * perf.data stream any more: the spool ends there and says so. A file-mode stream
 * ends where its last feature section does.
 */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define READ_CHUNK (1u << 16)
/* A record and the one after it, whatever their sizes (u16), with room to spare: a
 * stretch this long without two plausible headers in a row is not perf.data. */
#define LOOKAHEAD (4u * 65536)
#define WINDOW (LOOKAHEAD + 2 * READ_CHUNK)
/* No feature section is near this large; a bigger one does not extend the spool. */
#define FEATURE_MAX (1ULL << 30)

struct spool {
	struct perf_reader *r;  /* its byte order; its events are not known yet */
	const char *name;
	uint8_t *win;           /* the stream's bytes [base, base + len) */
	uint64_t base, len;
	enum { SP_HEADER, SP_RECORDS, SP_FEATURES, SP_DONE } state;
	uint64_t pos;           /* the next record to frame */
	uint64_t rec_end;       /* the records end here (file mode), else UINT64_MAX */
	unsigned nfeat;         /* feature sections after them (file mode) */
	uint64_t stop;          /* the spool ends here (UINT64_MAX: at the end of input) */
	int garbage;            /* it ends because the bytes from `stop` are not perf.data */
};

/* Either byte order of either version's magic (the header check says which is wrong). */
static int stream_magic_ok(const uint8_t *b)
{
	uint64_t m = ld64(b, 0);

	return m == PERF_FILE_MAGIC2 || m == __builtin_bswap64(PERF_FILE_MAGIC2) ||
	       m == PERF_FILE_MAGIC1 || m == __builtin_bswap64(PERF_FILE_MAGIC1);
}

/*
 * File format (file mode, as read_file_header reads it): u64 magic, size, attr_size;
 * { u64 offset, size; } attrs, data, event_types; u64 features[4]; the records at
 * data.offset (to the end when data.size is 0); after them one { u64 offset, size; }
 * per feature bit.
 */
static void spool_header(struct spool *s, int eof)
{
	const uint8_t *p = s->win;
	uint64_t hsize, dof, dsz;
	unsigned i;

	if (s->len < FILE_HEADER_SIZE && !eof)
		return;
	/* whatever is wrong with the header, the reader says: nothing more is needed */
	s->state = SP_DONE;
	s->stop = s->len;
	if (s->len < 16)
		return;
	s->r->swapped = ld64(p, 0) == __builtin_bswap64(PERF_FILE_MAGIC2) ||
			ld64(p, 0) == __builtin_bswap64(PERF_FILE_MAGIC1);
	hsize = ld64(p + 8, s->r->swapped);
	if (ld64(p, s->r->swapped) != PERF_FILE_MAGIC2)
		return;
	if (hsize == PIPE_HEADER_SIZE) {
		s->pos = PIPE_HEADER_SIZE;
		s->stop = UINT64_MAX;
		s->state = SP_RECORDS;
		return;
	}
	if ((hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_SIZE_NOFEAT) || s->len < hsize)
		return;
	dof = ld64(p + 40, s->r->swapped);
	dsz = ld64(p + 48, s->r->swapped);
	if (dof < hsize)
		return;
	s->pos = dof;
	s->rec_end = dsz && dsz <= UINT64_MAX - dof ? dof + dsz : UINT64_MAX;
	if (hsize == FILE_HEADER_SIZE && dsz)
		for (i = 0; i < 4; i++)
			s->nfeat += (unsigned)__builtin_popcountll(ld64(p + 72 + 8 * i,
								    s->r->swapped));
	s->stop = UINT64_MAX;
	s->state = SP_RECORDS;
}

/* The feature table is in the window: the spool ends where the last section does. */
static void spool_features(struct spool *s, int eof)
{
	uint64_t at = s->rec_end, need = 16ULL * s->nfeat, end, i;

	if (at < s->base) { /* a record ran over the data's end: no bound to take */
		s->state = SP_DONE;
		return;
	}
	if (s->base + s->len - at < need) {
		if (eof)
			s->state = SP_DONE;
		return;
	}
	end = at + need;
	for (i = 0; i < s->nfeat; i++) {
		const uint8_t *e = s->win + (at - s->base) + 16 * i;
		uint64_t so = ld64(e, s->r->swapped), ss = ld64(e + 8, s->r->swapped);

		if (ss <= FEATURE_MAX && so <= FEATURE_MAX + at && so + ss > end)
			end = so + ss;
	}
	s->stop = end;
	s->state = SP_DONE;
}

/* Frame what the window holds. */
static void spool_frame(struct spool *s, int eof)
{
	for (;;) {
		uint64_t avail, rem;
		struct pd_frame fr;

		if (s->state == SP_HEADER) {
			spool_header(s, eof);
			if (s->state == SP_HEADER)
				return;
			continue;
		}
		if (s->state == SP_FEATURES) {
			spool_features(s, eof);
			return;
		}
		if (s->state != SP_RECORDS)
			return;
		if (s->pos >= s->rec_end) {
			s->state = s->nfeat ? SP_FEATURES : SP_DONE;
			continue;
		}
		if (s->pos >= s->base + s->len)
			return; /* a record longer than the window (AUXTRACE): bytes pass */
		avail = s->base + s->len - s->pos;
		if (avail < LOOKAHEAD && !eof)
			return;
		rem = avail < s->rec_end - s->pos ? avail : s->rec_end - s->pos;
		if (rem < 8)
			return;
		pd_frame(s->r, s->win + (s->pos - s->base), rem, 0, &fr);
		if ((fr.kind == PD_DAMAGE || fr.kind == PD_OVERSIZED) && fr.len >= rem && !eof &&
		    rem == avail) {
			s->stop = s->pos;
			s->garbage = 1;
			s->state = SP_DONE;
			return;
		}
		if (fr.kind == PD_RECORD && fr.len > rem && eof)
			return; /* cut short: the reader says so */
		if (fr.kind == PD_RECORD && fr.len > rem && rem < avail) {
			/* over the data section's end: the reader says so */
			s->state = s->nfeat ? SP_FEATURES : SP_DONE;
			s->pos = s->rec_end;
			continue;
		}
		s->pos += fr.len;
	}
}

/* Keep only what framing still needs. */
static void spool_slide(struct spool *s)
{
	uint64_t keep_from = s->state == SP_HEADER ? 0 :
			     s->state == SP_FEATURES ? s->rec_end : s->pos;
	uint64_t drop;

	if (s->state == SP_DONE)
		keep_from = s->base + s->len;
	if (keep_from <= s->base)
		return;
	drop = keep_from - s->base < s->len ? keep_from - s->base : s->len;
	memmove(s->win, s->win + drop, (size_t)(s->len - drop));
	s->len -= drop;
	s->base += drop;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = ENOSPC;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int tmp_file(const char **dir)
{
	char tmpl[4096];
	int tfd;

	*dir = getenv("TMPDIR");
	if (!*dir || !**dir)
		*dir = "/tmp";
	tfd = open(*dir, O_TMPFILE | O_RDWR | O_EXCL, 0600);
	if (tfd < 0) {
		snprintf(tmpl, sizeof(tmpl), "%s/perfconv-XXXXXX", *dir);
		tfd = mkstemp(tmpl);
		if (tfd >= 0)
			unlink(tmpl);
	}
	return tfd;
}

int pd_spool(struct perf_reader *r, int fd, const char *name, struct pd_file *f)
{
	struct spool s = { r, name, NULL, 0, 0, SP_HEADER, 0, UINT64_MAX, 0, UINT64_MAX, 0 };
	struct diag *d = r->d;
	const char *dir;
	uint64_t total = 0;
	int tfd = tmp_file(&dir), eof = 0, ret = -1;

	if (tfd < 0) {
		diag_error(d, name, DIAG_NO_OFFSET, "cannot create a temporary file in %s: %s",
			   dir, strerror(errno));
		return -1;
	}
	s.win = malloc(WINDOW);
	if (!s.win) {
		diag_error(d, name, DIAG_NO_OFFSET, "out of memory");
		goto out;
	}
	while (!eof && total < s.stop) {
		uint64_t want = WINDOW - s.len;
		ssize_t n;

		if (want > READ_CHUNK)
			want = READ_CHUNK;
		if (want > s.stop - total)
			want = s.stop - total;
		if (!want) { /* framing cannot go on (it never should): spool the rest */
			s.state = SP_DONE;
			spool_slide(&s);
			continue;
		}
		n = read(fd, s.win + s.len, (size_t)want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			diag_error(d, name, total, "read error: %s", strerror(errno));
			goto out;
		}
		eof = n == 0;
		/* what is not perf.data is said at once, not spooled until the disk is full
		 * (-i /dev/zero, an endless stream on -i -): the first 8 bytes, gathered */
		if (total + (uint64_t)n >= 8 && total < 8 && !stream_magic_ok(s.win)) {
			diag_error(d, name, 0, "bad magic 0x%016llx: not a perf.data file",
				   (unsigned long long)ld64(s.win, 0));
			goto out;
		}
		if (n && write_all(tfd, s.win + s.len, (size_t)n) < 0) {
			diag_error(d, name, DIAG_NO_OFFSET, "cannot spool the input to %s: %s", dir,
				   strerror(errno));
			goto out;
		}
		s.len += (uint64_t)n;
		total += (uint64_t)n;
		if (total >= 8 || eof) {
			spool_frame(&s, eof);
			spool_slide(&s);
		}
	}
	if (s.stop < total) {
		if (ftruncate(tfd, (off_t)s.stop) < 0) {
			diag_error(d, name, DIAG_NO_OFFSET, "cannot spool the input to %s: %s",
				   dir, strerror(errno));
			goto out;
		}
		total = s.stop;
	}
	if (s.garbage)
		diag_warn(d, name, s.stop, "not a perf.data record here nor in the %u bytes "
			  "after it: the input is read no further", LOOKAHEAD);
	else if (!eof && s.stop == total) {
		uint8_t more;

		if (read(fd, &more, 1) == 1)
			diag_warn(d, name, total, "the input goes on after the recording's last "
				  "feature section: read no further");
	}
	f->size = (size_t)total;
	if (total) {
		f->map = mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, tfd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			diag_error(d, name, DIAG_NO_OFFSET, "cannot map the spooled input: %s",
				   strerror(errno));
			goto out;
		}
		f->maplen = (size_t)total;
		f->base = f->map;
	}
	ret = 0;
out:
	free(s.win);
	close(tfd);
	return ret;
}
