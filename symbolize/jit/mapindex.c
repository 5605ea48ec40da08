/* mapindex: a perf map's lines kept by address, each name read again only when an
 * address hits its line.
 *
 * A perf map beside a dump is consulted only where the dump names nothing, usually a
 * handful of addresses: its lines are kept sorted by start with their place in the
 * file, and a line is read again for its name only when an address hits it. A later
 * line over the same range wins, as in perf; one over all of the last line from the same
 * start replaces it as the map is read.
 */
#include "symbolize/jit/mapindex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/locate.h"

struct map_index {
	struct map_line *v;
	uint64_t *maxend;    /* max end of v[0..i] */
	size_t n;
	struct perfmap_reader *r; /* the file, for the names */
};

void map_index_free(struct map_index *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->maxend);
	perfmap_reader_close(m->r);
	free(m);
}

/* The cache's entry of a map: this header, then its `n` sorted lines. */
#define MCACHE_MAGIC "PCMAPIDX"
#define MCACHE_VERSION 1
struct mcache_header {
	struct cache_head head;
	uint64_t dev, ino;     /* the map's file */
	uint64_t resume;       /* read up to here: the end of its last whole line */
	uint64_t digest;       /* perfmap_reader_digest(resume) */
	uint64_t n, seq;       /* lines kept; lines with a range read */
};

/* The entry file for map (dev, ino), malloc'ed, or NULL. */
static char *mcache_file(const struct cache_ctx *cache, uint64_t dev, uint64_t ino, int make)
{
	uint64_t k[3] = { 0x7065726d61702d31ull /* "permap-1": not a jitdump's key */, dev, ino };
	char hex[22];

	snprintf(hex, sizeof(hex), "map-%016llx", (unsigned long long)hash_bytes(k, sizeof(k)));
	return cache_entry_path(cache->dir, CACHE_JIT, hex, make);
}

/* The lines of the entry for `r`'s file into *lines (malloc'ed), or 0 lines: no entry
 * holds. */
static int mcache_open(const struct cache_ctx *cache, struct perfmap_reader *r,
		       struct map_line **lines, size_t *n, uint32_t *seq, uint64_t *resume)
{
	const struct stat *st = perfmap_reader_stat(r);
	struct mcache_header h;
	struct mapped_file mf;
	const char *why = NULL;
	enum cache_verdict v;
	char *file = mcache_file(cache, (uint64_t)st->st_dev, (uint64_t)st->st_ino, 0);

	if (!file)
		return 0;
	v = cache_entry_open(file, MCACHE_MAGIC, MCACHE_VERSION, sizeof(h), &mf, &why);
	if (v != CACHE_GOOD) {
		if (v == CACHE_DAMAGED)
			cache_damaged(cache, file, why);
		free(file);
		return 0;
	}
	memcpy(&h, mf.map, sizeof(h));
	if (h.dev != (uint64_t)st->st_dev || h.ino != (uint64_t)st->st_ino ||
	    h.resume > (uint64_t)st->st_size || h.seq >= UINT32_MAX || h.n > h.seq ||
	    perfmap_reader_digest(r, h.resume) != h.digest) {
		mapped_file_close(&mf);
		free(file);
		return 0;
	}
	if (!mapped_file_holds(&mf, align8(sizeof(h)), h.n, sizeof(**lines)) ||
	    mf.len != align8(sizeof(h)) + h.n * sizeof(**lines)) {
		mapped_file_close(&mf);
		cache_damaged(cache, file, "inconsistent");
		free(file);
		return 0;
	}
	*lines = xmalloc((h.n ? h.n : 1) * sizeof(**lines));
	memcpy(*lines, (const char *)mf.map + align8(sizeof(h)), h.n * sizeof(**lines));
	mapped_file_close(&mf);
	free(file);
	for (size_t i = 0; i < h.n; i++) {
		const struct map_line *l = &(*lines)[i];

		/* sorted by start, each a range, each from before `resume` */
		if (l->end <= l->start || l->seq >= h.seq || l->offset >= h.resume ||
		    (i && l->start < (*lines)[i - 1].start)) {
			free(*lines);
			*lines = NULL;
			file = mcache_file(cache, (uint64_t)st->st_dev, (uint64_t)st->st_ino, 0);
			if (file)
				cache_damaged(cache, file, "inconsistent");
			free(file);
			return 0;
		}
	}
	*n = (size_t)h.n;
	*seq = (uint32_t)h.seq;
	*resume = h.resume;
	return 1;
}

/* Keep `m`, map `r` read up to `resume` (with `seq` lines), in the cache. */
static void mcache_save(const struct cache_ctx *cache, struct perfmap_reader *r,
			const struct map_index *m, uint32_t seq, uint64_t resume)
{
	const struct stat *st = perfmap_reader_stat(r);
	struct mcache_header h;
	size_t at = align8(sizeof(h)), len = at + m->n * sizeof(*m->v);
	uint8_t *entry;
	char *file;

	memset(&h, 0, sizeof(h));
	h.dev = (uint64_t)st->st_dev;
	h.ino = (uint64_t)st->st_ino;
	h.resume = resume;
	h.digest = perfmap_reader_digest(r, resume);
	h.n = m->n;
	h.seq = seq;
	file = mcache_file(cache, h.dev, h.ino, 1);
	if (!file)
		return;
	entry = xcalloc(1, len);
	memcpy(entry, &h, sizeof(h));
	for (size_t i = 0; i < m->n; i++) {
		struct map_line l;

		memset(&l, 0, sizeof(l)); /* no padding bytes of ours in the cache */
		l.start = m->v[i].start;
		l.end = m->v[i].end;
		l.offset = m->v[i].offset;
		l.seq = m->v[i].seq;
		memcpy(entry + at + i * sizeof(l), &l, sizeof(l));
	}
	cache_entry_write_later(cache, file, entry, len, MCACHE_MAGIC, MCACHE_VERSION, sizeof(h));
}

/* The lines of `r` from where it is into m (holding `keep` sorted lines, *seq lines
 * with a range read before), sorted, with their max ends. */
static void read_lines(struct map_index *m, struct perfmap_reader *r, struct map_line *lines,
		       size_t keep, uint32_t *seq)
{
	struct perfmap_entry e;
	struct sort_pair *keys;
	struct u64map latest; /* start + 1 -> the line of lines[] last written there */
	size_t cap = keep;
	uint64_t maxend = 0;
	int built = 0;

	m->n = keep;
	u64map_init(&latest);
	while (perfmap_reader_next(r, &e) == 1) {
		struct map_line l = { e.start, e.start + e.size, e.offset, *seq };
		uint32_t *at;

		if (!e.size || *seq == UINT32_MAX)
			continue;
		if (!built) {
			/* the lines kept: among equal starts in line order, the last the latest */
			for (size_t i = 0; i < keep; i++)
				u64map_put(&latest, lines[i].start + 1, (uint32_t)i);
			built = 1;
		}
		(*seq)++;
		/* a runtime restates its ranges for as long as it runs: a line over all of
		 * the last one from its start takes its place (no address finds that one
		 * again), so that the index holds the live ranges, not the map's history
		 * (e.start + e.size did not wrap: + 1 is never 0) */
		at = u64map_get(&latest, e.start + 1);
		if (at && lines[*at].end <= l.end) {
			lines[*at] = l;
			continue;
		}
		VEC_PUSH(lines, m->n, cap, l);
		u64map_put(&latest, e.start + 1, (uint32_t)(m->n - 1));
	}
	u64map_release(&latest);
	if (!built) { /* nothing new: the kept lines are in order */
		m->v = lines ? lines : xmalloc(sizeof(*m->v));
	} else {
		/* by start, in line order among equal starts (the sort is stable) */
		keys = xmalloc((2 * m->n + 1) * sizeof(*keys));
		for (size_t i = 0; i < m->n; i++)
			keys[i] = (struct sort_pair){ lines[i].start, i };
		sort_pairs(keys, keys + m->n, m->n);
		m->v = xmalloc((m->n ? m->n : 1) * sizeof(*m->v));
		for (size_t i = 0; i < m->n; i++)
			m->v[i] = lines[keys[i].val];
		free(keys);
		free(lines);
	}
	m->maxend = xmalloc((m->n ? m->n : 1) * sizeof(*m->maxend));
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].end > maxend)
			maxend = m->v[i].end;
		m->maxend[i] = maxend;
	}
}

struct map_index *map_index_load(const char *path, struct diag *d)
{
	return map_index_load_cached(path, NULL, d, NULL);
}

struct map_index *map_index_load_cached(const char *path, const struct cache_ctx *cache,
					struct diag *d, uint64_t *from)
{
	struct perfmap_reader *r = perfmap_reader_open(path, d);
	struct map_index *m;
	struct map_line *lines = NULL;
	size_t keep = 0;
	uint32_t seq = 0;
	uint64_t resume = 0, whole;

	if (from)
		*from = 0;
	if (!r)
		return NULL;
	if (!cache || !cache->dir || !cache->dir[0])
		cache = NULL;
	m = xcalloc(1, sizeof(*m));
	m->r = r;
	if (cache && mcache_open(cache, r, &lines, &keep, &seq, &resume)) {
		perfmap_reader_seek(r, resume);
		if (from)
			*from = resume;
	}
	read_lines(m, r, lines, keep, &seq);
	/* kept when every line read was whole (a last one without its newline may be
	 * half written: read again next time) */
	whole = perfmap_reader_whole_lines(r);
	if (cache && whole != resume && whole == (uint64_t)perfmap_reader_stat(r)->st_size)
		mcache_save(cache, r, m, seq, whole);
	return m;
}

/* The line that names `addr` (the latest of those that cover it), or NULL. */
static const struct map_line *find(const struct map_index *m, uint64_t addr)
{
	const struct map_line *best = NULL;
	size_t lo = 0, hi = m->n;

	lo = COUNT_LE(m->v, hi, start, addr);
	for (size_t i = lo; i-- > 0 && m->maxend[i] > addr;)
		if (addr < m->v[i].end && (!best || m->v[i].seq > best->seq))
			best = &m->v[i];
	return best;
}

size_t map_index_lines(const struct map_index *m)
{
	return m->n;
}

int map_index_lookup(struct map_index *m, uint64_t addr, struct map_line *line,
		     struct perfmap_entry *e)
{
	const struct map_line *l = find(m, addr);

	if (!l)
		return 0;
	perfmap_reader_seek(m->r, l->offset);
	if (perfmap_reader_next(m->r, e) != 1)
		return 0; /* it was read once: not reached */
	*line = *l;
	return 1;
}
