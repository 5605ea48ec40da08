/* mapindex: a perf map's lines kept by address, each name read again only when an
 * address hits its line.
 *
 * A perf map beside a dump is consulted only where the dump names nothing, usually a
 * handful of addresses: its lines are kept sorted by start with their place in the
 * file, and a line is read again for its name only when an address hits it. A later
 * line over the same range wins, as in perf; one over all of the last line from the same
 * start replaces it as the map is read.
 */
#include "symbolize/mapindex.h"

#include <stdlib.h>

#include "common/util.h"

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

struct map_index *map_index_load(const char *path, struct diag *d)
{
	struct perfmap_reader *r = perfmap_reader_open(path, d);
	struct map_index *m;
	struct perfmap_entry e;
	struct sort_pair *keys;
	struct map_line *lines = NULL;
	struct u64map latest; /* start + 1 -> the line of lines[] last written there */
	size_t cap = 0;
	uint64_t maxend = 0;
	uint32_t seq = 0;

	if (!r)
		return NULL;
	m = xcalloc(1, sizeof(*m));
	m->r = r;
	u64map_init(&latest);
	while (perfmap_reader_next(r, &e) == 1) {
		struct map_line l = { e.start, e.start + e.size, e.offset, seq };
		uint32_t *at;

		if (!e.size || seq == UINT32_MAX)
			continue;
		seq++;
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
	m->maxend = xmalloc((m->n ? m->n : 1) * sizeof(*m->maxend));
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].end > maxend)
			maxend = m->v[i].end;
		m->maxend[i] = maxend;
	}
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
