/* jitcode_lookup: the code at an address at a time, its source line, and why there is
 * none. */
#include "symbolize/jit/jitcode_internal.h"

#include <stdlib.h>
#include <string.h>

/* The code live at the end of the replay over `addr` (its index), or -1. */
static int64_t live_at(const struct jitcode *jc, uint64_t addr)
{
	size_t k = count_keys_le(jc->live_start, jc->nlive, sizeof(uint64_t), 0, addr);
	uint32_t ci;

	if (!k)
		return -1;
	ci = jc->live_id[k - 1];
	return code_end(&jc->codes[ci]) > addr ? (int64_t)ci : -1;
}

static int index_find(const struct jitcode *jc, const struct jc_index *x, uint64_t time,
		      uint64_t addr, uint32_t *out)
{
	size_t lo, v;

	/* the last bound <= addr */
	lo = count_keys_le(x->bounds, x->nbounds, sizeof(uint64_t), 0, addr);
	if (lo == 0 || lo >= x->nbounds)
		return 0;
	/* the piece's node and those above it list every code over the piece; at one
	 * time at most one of them is live */
	for (v = x->leaves + lo - 1; v >= 1; v /= 2) {
		size_t a = x->first[v], b = x->first[v + 1], first = a;

		/* disjoint in time, sorted by t0: the last one with t0 <= time */
		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (jc->codes[x->ids[mid]].t0 <= time)
				a = mid + 1;
			else
				b = mid;
		}
		if (a > first && jc->codes[x->ids[a - 1]].t1 > time) {
			*out = x->ids[a - 1];
			return 1;
		}
	}
	return 0;
}

/* Whether code loaded after `time` covers `addr`: on the path from its piece to the
 * root, a node's codes are sorted by t0, so its last one says. */
static int index_later(const struct jitcode *jc, const struct jc_index *x, uint64_t time,
		       uint64_t addr)
{
	size_t lo = count_keys_le(x->bounds, x->nbounds, sizeof(uint64_t), 0, addr), v;

	if (lo == 0 || lo >= x->nbounds)
		return 0;
	for (v = x->leaves + lo - 1; v >= 1; v /= 2)
		if (x->first[v + 1] > x->first[v] &&
		    jc->codes[x->ids[x->first[v + 1] - 1]].t0 > time)
			return 1;
	return 0;
}


enum jitcode_absence jitcode_why_absent(const struct jitcode *jc, uint64_t time, uint64_t addr)
{
	int64_t live;

	if (!jc->finished || jc->stats.timeless)
		return JITCODE_ABSENT_NONE;
	if (time < jc->first_load)
		return JITCODE_ABSENT_BEFORE_FIRST;
	live = live_at(jc, addr);
	if (live >= 0 && jc->codes[live].t0 > time)
		return JITCODE_ABSENT_LOADED_LATER;
	return index_later(jc, &jc->dead, time, addr) ? JITCODE_ABSENT_LOADED_LATER
						      : JITCODE_ABSENT_NONE;
}

int jitcode_lookup(const struct jitcode *jc, uint64_t time, uint64_t addr,
		   struct jitcode_frame *f)
{
	const struct jc_code *c;
	uint32_t ci;
	int64_t live;

	if (!jc->finished)
		return 0;
	if (jc->stats.timeless)
		time = FOREVER - 1;
	/* the code live at the end of the replay, when it was there then; else the code
	 * that was there then and ended */
	live = live_at(jc, addr);
	if (live >= 0 && jc->codes[live].t0 <= time)
		ci = (uint32_t)live;
	else if (!index_find(jc, &jc->dead, time, addr, &ci) &&
		 !index_find(jc, &jc->mapped, FOREVER - 1, addr, &ci))
		return 0;
	c = &jc->codes[ci];
	memset(f, 0, sizeof(*f));
	f->name = jc->names + c->name;
	f->raw_name = jc->names + c->raw;
	f->start = c->start;
	f->size = c->size;
	f->code = ci;
	f->from_map = c->kind == KIND_MAP;
	f->file = c->file ? text(jc, c->file) : NULL;
	if (c->nlines && c->lines_size) {
		/*
		 * The entry with the greatest address at or below `addr`, in the producer's
		 * addresses: those past the load's end never count, and of those before its
		 * start the last one covers the code from its start (BEAM starts in the
		 * prologue).
		 */
		const struct jc_line *l = jc->lines + c->lines_first;
		uint64_t rel = addr - c->start;
		int64_t at;
		size_t lo = 0, hi = c->nlines;

		if (rel >= c->lines_size)
			rel = c->lines_size - 1;
		at = (int64_t)rel + (int64_t)jc->stats.line_offset;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (l[mid].rel <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && l[lo - 1].line) {
			f->line = l[lo - 1].line;
			if (l[lo - 1].file)
				f->file = text(jc, l[lo - 1].file);
		}
	}
	return 1;
}
