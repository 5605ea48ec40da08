/* perfmap: a streaming reader of the /tmp/perf-PID.map files JIT runtimes write for perf.
 *
 * Spec: tools/perf/Documentation/jit-interface.txt in the Linux tree; perf's reader is
 * dso__load_perf_map() in tools/perf/util/symbol.c.
 */
#include "formats/read/perfmap.h"

#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/*
 * A file is read a window at a time (pread into one buffer, never mapped): runtimes
 * write their map again with O_TRUNC, and a mapped page past a file's new end is
 * SIGBUS; read, a file cut short gives less to read, which is said.
 */
#define WINDOW ((size_t)256 << 10)
#define SEEK_WINDOW ((size_t)4 << 10)
/* A longer line is skipped (names are kept to far less: common/demangle.h). */
#define LINE_MAX_BYTES ((size_t)16 << 20)

struct perfmap_reader {
	struct diag *d;
	char *path;
	const char *base;      /* the bytes, when read from memory; else NULL */
	int fd;                /* the file, when read from one; else -1 */
	size_t len;            /* where reading ends: the size as opened, or less */
	size_t opened_len;     /* the size as opened */
	char *win;             /* file bytes [win_off, win_off + win_len) */
	size_t win_off, win_len, win_cap;
	int sought;            /* a seek since the last read: the next window is small */
	int cut_said;
	size_t pos;
	char *name;            /* the current name, NUL-terminated */
	size_t name_cap;
	struct perfmap_stats stats;
	struct stat st;        /* as opened; zero from memory */
};

static struct perfmap_reader *reader_new(const char *name, struct diag *d)
{
	struct perfmap_reader *r = xcalloc(1, sizeof(*r));

	r->d = d;
	r->fd = -1;
	r->path = xstrdup(name ? name : "perf map");
	return r;
}

struct perfmap_reader *perfmap_reader_open_mem(const void *buf, size_t len, const char *name,
					       struct diag *d)
{
	struct perfmap_reader *r = reader_new(name, d);

	r->base = buf;
	r->len = r->opened_len = len;
	return r;
}

struct perfmap_reader *perfmap_reader_open(const char *path, struct diag *d)
{
	struct perfmap_reader *r = reader_new(path, d);
	const char *why;

	r->fd = file_open_regular(path, &r->st, &why);
	if (r->fd < 0) {
		if (r->fd == -1)
			diag_error(d, path, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		else
			diag_error(d, path, DIAG_NO_OFFSET, "%s", why);
		r->fd = -1;
		perfmap_reader_close(r);
		return NULL;
	}
	r->len = r->opened_len = (size_t)r->st.st_size;
	return r;
}

void perfmap_reader_close(struct perfmap_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->win);
	free(r->name);
	free(r->path);
	free(r);
}

/* The file ends at `at`, before where it ended when opened: it was cut short (or
 * written again) while it was read. Reading stops there; said once. */
static void file_cut(struct perfmap_reader *r, size_t at)
{
	if (at >= r->len)
		return;
	r->len = at;
	if (r->pos > r->len)
		r->pos = r->len;
	if (!r->cut_said) {
		r->cut_said = 1;
		diag_warn(r->d, r->path, DIAG_NO_OFFSET,
			  "changed while it was read: it ends at byte %zu, not %zu as when opened "
			  "(cut short or written again): read up to there", at, r->opened_len);
	}
}

/* `n` bytes of the file at `off` read into `buf`: how many there were (fewer at the
 * file's end, said as a cut when before r->len). */
static size_t read_at(struct perfmap_reader *r, char *buf, size_t n, size_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(r->fd, buf + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got < n)
		file_cut(r, off + got);
	return got;
}

/*
 * The bytes from `off` (< r->len) on, at least `want` of them where the file has them
 * (a window of WINDOW or more is read): a pointer to them, borrowed until the next
 * call, and their count in *avail (0 when the file proved shorter).
 */
static const char *bytes_at(struct perfmap_reader *r, size_t off, size_t want, size_t *avail)
{
	size_t keep = 0, target;

	if (r->base) {
		*avail = r->len - off;
		return r->base + off;
	}
	if (off < r->win_off || off + want > r->win_off + r->win_len) {
		/* what the window holds from `off` on stays */
		if (off >= r->win_off && off < r->win_off + r->win_len) {
			keep = r->win_off + r->win_len - off;
			memmove(r->win, r->win + (off - r->win_off), keep);
		}
		/* a seek is mostly to read one line again (a name looked up): not a
		 * whole window for it; reading on from there, whole windows again */
		target = r->sought ? SEEK_WINDOW : WINDOW;
		r->sought = 0;
		if (want > target)
			target = want;
		if (target > r->len - off)
			target = r->len - off;
		if (target > r->win_cap)
			grow_array((void **)&r->win, &r->win_cap, target, 1);
		r->win_off = off;
		r->win_len = keep + (target > keep ? read_at(r, r->win + keep, target - keep, off + keep) : 0);
	}
	*avail = off < r->len ? r->win_off + r->win_len - off : 0;
	if (*avail > r->len - off)
		*avail = off < r->len ? r->len - off : 0;
	return r->win + (off - r->win_off);
}

const struct perfmap_stats *perfmap_reader_stats(const struct perfmap_reader *r)
{
	return &r->stats;
}


static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number with an optional 0x at *p, ending before a blank; 0 when malformed. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < end && hexval(*s) >= 0) {
		if (v >> 60)
			return 0;
		v = v << 4 | (uint64_t)hexval(*s);
		s++;
		digits++;
	}
	if (!digits || (s < end && !is_blank(*s)))
		return 0;
	*p = s;
	*out = v;
	return 1;
}

/*
 * File format: lines `START SIZE name\n`. perf splits on the first two runs of spaces;
 * the name is everything after the blanks that follow SIZE.
 */
void perfmap_reader_seek(struct perfmap_reader *r, uint64_t offset)
{
	r->pos = offset < r->len ? (size_t)offset : r->len;
	r->sought = 1;
}

const struct stat *perfmap_reader_stat(const struct perfmap_reader *r)
{
	return &r->st;
}

uint64_t perfmap_reader_whole_lines(struct perfmap_reader *r)
{
	char buf[4096];
	size_t end = r->len;

	if (r->base) {
		const char *nl = r->len ? memrchr(r->base, '\n', r->len) : NULL;

		return nl ? (uint64_t)(nl - r->base) + 1 : 0;
	}
	/* from the end back: a map's last line is short */
	while (end > 0) {
		size_t n = end < sizeof(buf) ? end : sizeof(buf), got;
		const char *nl;

		got = read_at(r, buf, n, end - n);
		if (got < n) { /* cut short meanwhile: its new end is r->len */
			end = r->len;
			continue;
		}
		nl = memrchr(buf, '\n', n);
		if (nl)
			return (uint64_t)(end - n) + (uint64_t)(nl - buf) + 1;
		end -= n;
	}
	return 0;
}

void perfmap_reader_end(struct perfmap_reader *r, uint64_t end)
{
	if (end < r->len)
		r->len = (size_t)end;
	if (r->pos > r->len)
		r->pos = r->len;
}

uint64_t perfmap_reader_digest(struct perfmap_reader *r, uint64_t end)
{
	uint64_t h = 0xcbf29ce484222325ull ^ end; /* FNV-1a */
	char buf[256];
	const char *p = buf;
	size_t from, n;

	if (end > r->len)
		return h ^ 1; /* no such bytes: matches no digest of bytes that were there */
	from = end > 256 ? (size_t)end - 256 : 0;
	n = (size_t)end - from;
	if (r->base)
		p = r->base + from;
	else if (read_at(r, buf, n, from) < n)
		return h ^ 1;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h;
}

/* Past a line longer than LINE_MAX_BYTES that starts at r->pos: to its end. */
static void skip_long_line(struct perfmap_reader *r)
{
	while (r->pos < r->len) {
		size_t avail;
		const char *p = bytes_at(r, r->pos, 1, &avail), *nl;

		if (!avail)
			break;
		nl = memchr(p, '\n', avail);
		if (nl) {
			r->pos += (size_t)(nl - p) + 1;
			return;
		}
		r->pos += avail;
	}
}

int perfmap_reader_next(struct perfmap_reader *r, struct perfmap_entry *e)
{
	while (r->pos < r->len) {
		const char *line, *nl, *end, *p, *name;
		size_t avail, want = 1, n;
		uint64_t off = r->pos;

		/* the line whole in the window: read on until its newline or the end */
		for (;;) {
			line = bytes_at(r, r->pos, want, &avail);
			nl = memchr(line, '\n', avail);
			if (nl || r->pos + avail >= r->len || avail >= LINE_MAX_BYTES)
				break;
			want = 2 * avail < LINE_MAX_BYTES ? 2 * avail : LINE_MAX_BYTES;
		}
		if (!nl && avail >= LINE_MAX_BYTES && r->pos + avail < r->len) {
			skip_long_line(r);
			r->stats.lines++;
			r->stats.skipped_bad++;
			diag_warn(r->d, r->path, off, "line %llu: longer than %zu MiB, skipped",
				  (unsigned long long)r->stats.lines, LINE_MAX_BYTES >> 20);
			continue;
		}
		if (!avail)
			break; /* cut short: said */
		end = nl ? nl : line + avail;
		r->pos += (size_t)(end - line) + (nl ? 1 : 0);
		r->stats.lines++;
		if (end > line && end[-1] == '\r')
			end--;
		p = line;
		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			continue;
		if (!parse_hex(&p, end, &e->start))
			goto bad;
		while (p < end && is_blank(*p))
			p++;
		if (!parse_hex(&p, end, &e->size))
			goto bad;
		while (p < end && is_blank(*p))
			p++;
		name = p;
		if (name == end || memchr(name, 0, (size_t)(end - name)) ||
		    e->start + e->size < e->start)
			goto bad;
		n = (size_t)(end - name);
		if (n + 1 > r->name_cap)
			grow_array((void **)&r->name, &r->name_cap, n + 1, 1);
		memcpy(r->name, name, n);
		r->name[n] = 0;
		e->name = r->name;
		e->line = r->stats.lines;
		e->offset = off;
		r->stats.entries++;
		return 1;
bad:
		r->stats.skipped_bad++;
		diag_warn(r->d, r->path, off, "line %llu: not `START SIZE name` in hex, skipped",
			  (unsigned long long)r->stats.lines);
	}
	return 0;
}
