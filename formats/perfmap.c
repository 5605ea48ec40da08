/* perfmap: a streaming reader of the /tmp/perf-PID.map files JIT runtimes write for perf.
 *
 * Spec: tools/perf/Documentation/jit-interface.txt in the Linux tree; perf's reader is
 * dso__load_perf_map() in tools/perf/util/symbol.c.
 */
#include "formats/perfmap.h"

#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

struct perfmap_reader {
	struct diag *d;
	char *path;
	const char *base;
	size_t len;
	struct mapped_file file; /* NULL map when reading from memory */
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
	r->path = xstrdup(name ? name : "perf map");
	return r;
}

struct perfmap_reader *perfmap_reader_open_mem(const void *buf, size_t len, const char *name,
					       struct diag *d)
{
	struct perfmap_reader *r = reader_new(name, d);

	r->base = buf;
	r->len = len;
	return r;
}

struct perfmap_reader *perfmap_reader_open(const char *path, struct diag *d)
{
	struct perfmap_reader *r = reader_new(path, d);

	if (mapped_file_open_st(&r->file, path, d, &r->st) != 0) {
		perfmap_reader_close(r);
		return NULL;
	}
	r->len = r->file.len;
	r->base = r->file.map;
	return r;
}

void perfmap_reader_close(struct perfmap_reader *r)
{
	if (!r)
		return;
	mapped_file_close(&r->file);
	free(r->name);
	free(r->path);
	free(r);
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
}

const struct stat *perfmap_reader_stat(const struct perfmap_reader *r)
{
	return &r->st;
}

uint64_t perfmap_reader_whole_lines(const struct perfmap_reader *r)
{
	const char *nl = r->len ? memrchr(r->base, '\n', r->len) : NULL;

	return nl ? (uint64_t)(nl - r->base) + 1 : 0;
}

void perfmap_reader_end(struct perfmap_reader *r, uint64_t end)
{
	if (end < r->len)
		r->len = (size_t)end;
	if (r->pos > r->len)
		r->pos = r->len;
}

uint64_t perfmap_reader_digest(const struct perfmap_reader *r, uint64_t end)
{
	uint64_t h = 0xcbf29ce484222325ull ^ end; /* FNV-1a */
	size_t from;

	if (end > r->len)
		return h ^ 1; /* no such bytes: matches no digest of bytes that were there */
	from = end > 256 ? (size_t)end - 256 : 0;
	for (size_t i = from; i < (size_t)end; i++)
		h = (h ^ (uint8_t)r->base[i]) * 0x100000001b3ull;
	return h;
}

int perfmap_reader_next(struct perfmap_reader *r, struct perfmap_entry *e)
{
	while (r->pos < r->len) {
		const char *line = r->base + r->pos, *nl, *end, *p, *name;
		size_t left = r->len - r->pos, n;
		uint64_t off = r->pos;

		nl = memchr(line, '\n', left);
		end = nl ? nl : line + left;
		r->pos = (size_t)(end - r->base) + (nl ? 1 : 0);
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
