/* jitcode_prune: what no lookup at or after a time can meet dropped, and the table
 * compacted in place; perf map lines written over dropped as a map is read. */
#include "symbolize/jit/jitcode_internal.h"

#include <stdlib.h>
#include <string.h>

/* Where an offset of the old names went (u64map: offset + 1 -> new offset + 1). */
static uint32_t keep_text(struct jitcode *jc, const char *old, struct u64map *moved,
			  uint32_t off, int is_file)
{
	uint32_t *v;
	uint32_t now;

	if (!off)
		return 0;
	v = u64map_get(moved, (uint64_t)off + 1);
	if (v)
		return *v - 1;
	now = is_file ? jitcode_file_n(jc, old + off, strlen(old + off)) : jitcode_add_name(jc, old + off);
	u64map_put(moved, (uint64_t)off + 1, now + 1);
	return now;
}

/* A perf map line no lookup meets, in a finished table: written over (jitcode_build_indexes()
 * ended it), or empty. A later line took all of it, or the part past its start that
 * the line did not keep (its size was cut then): the lines live at the end are what
 * they would be without it, whatever comes after. */
static int map_dead(const struct jc_code *c)
{
	return c->kind == KIND_MAP && (c->t1 != FOREVER || !c->size);
}

/* Is code `c` of no use to lookups from `floor` on, nor to a replay made again? (A code
 * replaced the moment it was loaded still ends what it was loaded over.) */
static int droppable(const struct jc_code *c, uint64_t floor)
{
	if (c->kind == KIND_MAP)
		return map_dead(c);
	return !c->size || c->t1 <= floor;
}

/* An array of `n` items whose capacity is over twice `want` (>= n): cut to `want`, so
 * that a table that held more than it holds now gives the memory back. */
static void shrink(void **arr, size_t *cap, size_t want, size_t size)
{
	if (*cap / 2 <= want)
		return;
	*arr = xrealloc(*arr, (want ? want : 1) * size);
	*cap = want ? want : 1;
}

/*
 * Move the runs of `base` (`size`-byte items) that `runs` names (key: the first item,
 * val: how many; sorted by key, no two overlapping unless equal) down to its start, in
 * order: each lands at or below where it was. `moved` maps each run's first item + 1
 * to its new first item + 1. Returns the items kept.
 */
static size_t move_runs_down(void *base, size_t size, const struct sort_pair *runs, size_t n,
			     struct u64map *moved)
{
	size_t w = 0;

	for (size_t k = 0; k < n; k++) {
		if (k && runs[k].key == runs[k - 1].key)
			continue; /* a copy's run: its load's */
		if (runs[k].val)
			memmove((char *)base + w * size, (char *)base + runs[k].key * size,
				runs[k].val * size);
		u64map_put(moved, runs[k].key + 1, (uint32_t)w + 1);
		w += runs[k].val;
	}
	return w;
}

/* Drop what droppable() says, the moves up to `floor`, and what only they used (lines,
 * names, unwinding tables), in place (a watcher's table is not held twice while it is
 * compacted); the live codes' treap and the indexes follow. `maps_only`: the map lines
 * map_dead() says and nothing else (no move, whatever the floor). */
static void compact(struct jitcode *jc, int maps_only)
{
	struct live_node *v;
	char *names = jc->names;
	uint32_t *remap;
	struct sort_pair *lruns, *uruns;
	struct u64map moved_names, moved_lines, moved_unwind;
	size_t nkept = 0, ncodes = jc->ncodes, nm = 0, nl = 0, nu = 0, lines, unwind;
	uint32_t last = 0;

	remap = xmalloc((ncodes + 1) * sizeof(*remap));
	lruns = xmalloc((2 * ncodes + 2) * sizeof(*lruns)); /* + sort_pairs' scratch */
	uruns = xmalloc((2 * ncodes + 2) * sizeof(*uruns));
	u64map_init(&moved_names);
	u64map_init(&moved_lines);
	u64map_init(&moved_unwind);
	for (size_t i = 0; i < ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		remap[i] = (maps_only ? map_dead(c) : droppable(c, jc->floor)) ? UINT32_MAX
									  : (uint32_t)nkept++;
		if (remap[i] == UINT32_MAX)
			continue;
		if (c->nlines)
			lruns[nl++] = (struct sort_pair){ c->lines_first, c->nlines };
		if (c->unwind_len)
			uruns[nu++] = (struct sort_pair){ c->unwind_off, c->unwind_len };
	}
	/* a DEBUG_INFO and an UNWINDING_INFO still waiting for their loads: the last */
	if (jc->pending)
		lruns[nl++] = (struct sort_pair){ jc->pend_first, jc->nlines - jc->pend_first };
	if (jc->unwind_pending)
		uruns[nu++] = (struct sort_pair){ jc->unwind_pend_off,
						  jc->unwind_len - jc->unwind_pend_off };
	sort_pairs(lruns, lruns + nl, nl);
	sort_pairs(uruns, uruns + nu, nu);
	lines = move_runs_down(jc->lines, sizeof(*jc->lines), lruns, nl, &moved_lines);
	unwind = move_runs_down(jc->unwind, 1, uruns, nu, &moved_unwind);
	/* the names again, from the kept codes' and entries' own */
	jc->names = NULL;
	jc->names_len = jc->names_cap = 0;
	u64map_release(&jc->files);
	u64map_init(&jc->files);
	jitcode_add_name(jc, "");
	for (size_t k = 0; k < lines; k++)
		if (jc->lines[k].file != FILE_INVALID)
			jc->lines[k].file = keep_text(jc, names, &moved_names, jc->lines[k].file, 1);
	for (size_t i = 0; i < ncodes; i++) {
		struct jc_code c = jc->codes[i];

		if (remap[i] == UINT32_MAX)
			continue;
		/* a copy whose move goes is live from t0 on its own */
		if (!maps_only && c.kind == KIND_COPY && c.t0 <= jc->floor)
			c.replayed = 1;
		c.name = keep_text(jc, names, &moved_names, c.name, 0);
		c.raw = keep_text(jc, names, &moved_names, c.raw, 0);
		c.file = keep_text(jc, names, &moved_names, c.file, 1);
		if (c.nlines)
			c.lines_first = *u64map_get(&moved_lines, (uint64_t)c.lines_first + 1) - 1;
		if (c.unwind_len)
			c.unwind_off = *u64map_get(&moved_unwind, c.unwind_off + 1) - 1;
		if (jc->last_load == i + 1)
			last = remap[i] + 1;
		jc->codes[remap[i]] = c;
	}
	if (jc->pending)
		jc->pend_first = *u64map_get(&moved_lines, (uint64_t)jc->pend_first + 1) - 1;
	if (jc->unwind_pending)
		jc->unwind_pend_off = *u64map_get(&moved_unwind, jc->unwind_pend_off + 1) - 1;
	for (size_t k = 0; k < jc->nmoves; k++)
		if (maps_only || jc->moves[k].time > jc->floor)
			jc->moves[nm++] = jc->moves[k];
	/* the live codes' treap, its nodes renumbered (their priorities kept: the shape
	 * stays a treap) */
	v = xcalloc(nkept + 2, sizeof(*v));
	for (size_t i = 0; i < ncodes; i++) {
		struct live_node x;
		const struct jc_code *c = &jc->codes[remap[i] == UINT32_MAX ? 0 : remap[i]];

		/* the treap's nodes: the codes live at the end (others' nodes are stale) */
		if (remap[i] == UINT32_MAX || i + 1 >= jc->lv.cap || c->kind == KIND_MAP ||
		    !c->size || c->t1 != FOREVER)
			continue;
		x = jc->lv.v[i + 1];
		x.left = x.left ? remap[x.left - 1] + 1 : 0;
		x.right = x.right ? remap[x.right - 1] + 1 : 0;
		v[remap[i] + 1] = x;
	}
	jc->lv.root = jc->lv.root ? remap[jc->lv.root - 1] + 1 : 0;
	free(jc->lv.v);
	jc->lv.v = v;
	jc->lv.cap = nkept + 2;
	jc->nmoves = nm;
	jc->ncodes = nkept;
	jc->nlines = lines;
	jc->unwind_len = unwind;
	jc->last_file = 0;
	jc->last_load = last;
	jc->done_codes = jc->ncodes;
	jc->done_moves = jc->nmoves;
	u64map_release(&moved_names);
	u64map_release(&moved_lines);
	u64map_release(&moved_unwind);
	free(names);
	free(remap);
	free(lruns);
	free(uruns);
	jitcode_build_indexes(jc);
}

void jitcode_prune(struct jitcode *jc, uint64_t before)
{
	size_t drop = 0, moves = 0;

	jitcode_thaw(jc);
	jitcode_finish(jc);
	if (jc->stats.timeless)
		before = FOREVER - 1; /* lookups are made at the end */
	if (before > jc->floor)
		jc->floor = before;
	/* compacted when a quarter is of no more use: a watcher's table is copied once in a
	 * while, not at every chunk; until then the index leaves out what ended */
	for (size_t i = 0; i < jc->ncodes; i++)
		drop += (size_t)droppable(&jc->codes[i], jc->floor);
	for (size_t k = 0; k < jc->nmoves; k++)
		moves += jc->moves[k].time <= jc->floor;
	if (drop * 4 > jc->ncodes || moves * 4 > jc->nmoves)
		compact(jc, 0);
	else
		jitcode_build_indexes(jc);
}

void jitcode_drop_replaced_maps(struct jitcode *jc)
{
	size_t dead = 0;

	jc->maps_unchecked = 0;
	jitcode_thaw(jc);
	/* the finish says which lines are written over (and gives what one at the end
	 * would: more records may follow) */
	jitcode_finish(jc);
	for (size_t i = 0; i < jc->ncodes; i++)
		dead += (size_t)map_dead(&jc->codes[i]);
	if (dead * 2 <= jc->ncodes)
		return;
	compact(jc, 1);
	/* room for the next batch, no more (the names were made again, to size) */
	shrink((void **)&jc->codes, &jc->codes_cap,
	       jc->ncodes + (jc->ncodes > MAP_BATCH ? jc->ncodes : MAP_BATCH), sizeof(*jc->codes));
}
