/* jitcode_saved: the table as bytes (a cache entry), and read back in place. */
#include "symbolize/jit/jitcode_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Layout (host byte order, every array at an 8-aligned offset): struct saved, then the
 * arrays its offsets name. The table's whole state: what it holds, its replay's end (its
 * live codes in address order: the treap is made again from them when records come),
 * its indexes, and what waits for a load.
 */
#define SAVED_MAGIC 0x4a43414348450004ull /* "JCACHE", layout 4 (stats.names_kept) */

struct saved_index {
	uint64_t bounds, first, ids;     /* offsets */
	uint64_t nbounds, leaves, nids;
};

struct saved {
	uint64_t magic;
	uint64_t size;                   /* of the whole */
	struct jitcode_stats stats;
	uint64_t demangle, seq, pending, pend_addr, pend_first, debug_dropped;
	uint64_t unwind_pending, unwind_pend_off, unwind_pend_hdr;
	uint64_t first_load, inexact, last_load;
	uint64_t replayed, last_time, last_seq, floor;
	uint64_t codes, ncodes, lines, nlines, names, names_len, moves, nmoves;
	uint64_t unwind, unwind_len, live_start, live_id, nlive;
	struct saved_index dead, mapped;
};

static size_t place(size_t *at, size_t bytes)
{
	size_t off = align8(*at);

	*at = off + bytes;
	return off;
}

static void save_index(const struct jc_index *x, struct saved_index *sx, size_t *at)
{
	size_t nodes = 2 * x->leaves;

	sx->nbounds = x->nbounds;
	sx->leaves = x->leaves;
	sx->nids = x->nids;
	sx->bounds = place(at, x->nbounds * sizeof(*x->bounds));
	sx->first = place(at, (nodes + 1) * sizeof(*x->first));
	sx->ids = place(at, x->nids * sizeof(*x->ids));
}

static void put(uint8_t *out, uint64_t off, const void *p, size_t bytes)
{
	if (bytes)
		memcpy(out + off, p, bytes);
}

void *jitcode_save(struct jitcode *jc, size_t room, size_t *len)
{
	struct saved h;
	size_t at = sizeof(h);
	uint8_t *out, *all;

	jitcode_finish(jc);
	memset(&h, 0, sizeof(h));
	h.magic = SAVED_MAGIC;
	h.stats = jc->stats;
	h.demangle = (uint64_t)jc->demangle;
	h.seq = jc->seq;
	h.pending = (uint64_t)jc->pending;
	h.pend_addr = jc->pend_addr;
	h.pend_first = jc->pend_first;
	h.debug_dropped = jc->debug_dropped;
	h.unwind_pending = (uint64_t)jc->unwind_pending;
	h.unwind_pend_off = jc->unwind_pend_off;
	h.unwind_pend_hdr = jc->unwind_pend_hdr;
	h.first_load = jc->first_load;
	h.inexact = (uint64_t)jc->inexact;
	h.last_load = jc->last_load;
	h.replayed = (uint64_t)jc->replayed;
	h.last_time = jc->last_time;
	h.last_seq = jc->last_seq;
	h.floor = jc->floor;
	h.ncodes = jc->ncodes;
	h.nlines = jc->nlines;
	h.names_len = jc->names_len;
	h.nmoves = jc->nmoves;
	h.unwind_len = jc->unwind_len;
	h.nlive = jc->nlive;
	h.codes = place(&at, jc->ncodes * sizeof(*jc->codes));
	h.lines = place(&at, jc->nlines * sizeof(*jc->lines));
	h.names = place(&at, jc->names_len);
	h.moves = place(&at, jc->nmoves * sizeof(*jc->moves));
	h.unwind = place(&at, jc->unwind_len);
	h.live_start = place(&at, jc->nlive * sizeof(*jc->live_start));
	h.live_id = place(&at, jc->nlive * sizeof(*jc->live_id));
	save_index(&jc->dead, &h.dead, &at);
	save_index(&jc->mapped, &h.mapped, &at);
	h.size = align8(at);
	room = align8(room);
	all = xcalloc(1, room + h.size);
	out = all + room;
	memcpy(out, &h, sizeof(h));
	put(out, h.codes, jc->codes, jc->ncodes * sizeof(*jc->codes));
	put(out, h.lines, jc->lines, jc->nlines * sizeof(*jc->lines));
	put(out, h.names, jc->names, jc->names_len);
	put(out, h.moves, jc->moves, jc->nmoves * sizeof(*jc->moves));
	put(out, h.unwind, jc->unwind, jc->unwind_len);
	put(out, h.live_start, jc->live_start, jc->nlive * sizeof(*jc->live_start));
	put(out, h.live_id, jc->live_id, jc->nlive * sizeof(*jc->live_id));
	for (int k = 0; k < 2; k++) {
		const struct jc_index *x = k ? &jc->mapped : &jc->dead;
		const struct saved_index *sx = k ? &h.mapped : &h.dead;

		put(out, sx->bounds, x->bounds, x->nbounds * sizeof(*x->bounds));
		put(out, sx->first, x->first, (2 * x->leaves + 1) * sizeof(*x->first));
		put(out, sx->ids, x->ids, x->nids * sizeof(*x->ids));
	}
	*len = room + h.size;
	return all;
}

/* `n` items of `size` bytes at `off` lie within `len` bytes, 8-aligned. */
static int within(uint64_t off, uint64_t n, uint64_t size, uint64_t len)
{
	return off % 8 == 0 && off <= len && n <= (len - off) / (size ? size : 1);
}

/* An index read in place: its sizes hold together and each id names a code. */
static int load_index(struct jc_index *x, const struct saved_index *sx, const uint8_t *b,
		      uint64_t len, uint64_t ncodes)
{
	uint64_t nodes;

	if (sx->leaves == 0 || sx->leaves > (1ull << 40) || (sx->leaves & (sx->leaves - 1)) ||
	    sx->nbounds > sx->leaves + 1 || !within(sx->bounds, sx->nbounds, 8, len) ||
	    !within(sx->ids, sx->nids, 4, len))
		return -1;
	nodes = 2 * sx->leaves;
	if (!within(sx->first, nodes + 1, sizeof(*x->first), len))
		return -1;
	x->bounds = (uint64_t *)(uintptr_t)(b + sx->bounds);
	x->first = (size_t *)(uintptr_t)(b + sx->first);
	x->ids = (uint32_t *)(uintptr_t)(b + sx->ids);
	x->nbounds = sx->nbounds;
	x->leaves = sx->leaves;
	x->nids = sx->nids;
	for (size_t k = 1; k < x->nbounds; k++)
		if (x->bounds[k] <= x->bounds[k - 1])
			return -1;
	if (x->first[0] != 0 || x->first[nodes] != x->nids)
		return -1;
	for (size_t k = 0; k < nodes; k++)
		if (x->first[k] > x->first[k + 1])
			return -1;
	for (size_t k = 0; k < x->nids; k++)
		if (x->ids[k] >= ncodes)
			return -1;
	return 0;
}

struct jitcode *jitcode_load(struct mapped_file *mf, size_t at)
{
	const uint8_t *b = (const uint8_t *)mf->map + at;
	uint64_t len = mf->len > at ? mf->len - at : 0;
	struct jitcode *jc;
	struct saved h;

	if (!mf->map || at % 8 || len < sizeof(h))
		return NULL;
	memcpy(&h, b, sizeof(h));
	if (h.magic != SAVED_MAGIC || h.size != len || h.names_len == 0 ||
	    h.names_len > UINT32_MAX || h.ncodes > UINT32_MAX - 2 || h.nlines > UINT32_MAX ||
	    h.nlive > h.ncodes || h.last_load > h.ncodes || h.pend_first > h.nlines ||
	    h.unwind_pend_off > h.unwind_len ||
	    !within(h.codes, h.ncodes, sizeof(struct jc_code), len) ||
	    !within(h.lines, h.nlines, sizeof(struct jc_line), len) ||
	    !within(h.names, h.names_len, 1, len) ||
	    !within(h.moves, h.nmoves, sizeof(struct jc_move), len) ||
	    !within(h.unwind, h.unwind_len, 1, len) ||
	    !within(h.live_start, h.nlive, 8, len) || !within(h.live_id, h.nlive, 4, len))
		return NULL;
	jc = xcalloc(1, sizeof(*jc));
	jc->frozen = 1;
	jc->finished = 1;
	jc->stats = h.stats;
	jc->demangle = (int)h.demangle;
	jc->seq = (uint32_t)h.seq;
	jc->pending = (int)h.pending;
	jc->pend_addr = h.pend_addr;
	jc->pend_first = (size_t)h.pend_first;
	jc->debug_dropped = h.debug_dropped;
	jc->unwind_pending = (int)h.unwind_pending;
	jc->unwind_pend_off = h.unwind_pend_off;
	jc->unwind_pend_hdr = (uint32_t)h.unwind_pend_hdr;
	jc->first_load = h.first_load;
	jc->inexact = (int)h.inexact;
	jc->last_load = (uint32_t)h.last_load;
	jc->replayed = (int)h.replayed;
	jc->last_time = h.last_time;
	jc->last_seq = (uint32_t)h.last_seq;
	jc->floor = h.floor;
	jc->codes = (struct jc_code *)(uintptr_t)(b + h.codes);
	jc->ncodes = jc->codes_cap = (size_t)h.ncodes;
	jc->lines = (struct jc_line *)(uintptr_t)(b + h.lines);
	jc->nlines = jc->lines_cap = (size_t)h.nlines;
	jc->names = (char *)(uintptr_t)(b + h.names);
	jc->names_len = jc->names_cap = (size_t)h.names_len;
	jc->moves = (struct jc_move *)(uintptr_t)(b + h.moves);
	jc->nmoves = jc->moves_cap = (size_t)h.nmoves;
	jc->unwind = (uint8_t *)(uintptr_t)(b + h.unwind);
	jc->unwind_len = jc->unwind_cap = (size_t)h.unwind_len;
	jc->live_start = (uint64_t *)(uintptr_t)(b + h.live_start);
	jc->live_id = (uint32_t *)(uintptr_t)(b + h.live_id);
	jc->nlive = (size_t)h.nlive;
	jc->done_codes = jc->ncodes;
	jc->done_moves = jc->nmoves;
	u64map_init(&jc->files);
	jc->mf = *mf;
	memset(mf, 0, sizeof(*mf)); /* the table's now */
	/* what it holds holds together: a lookup never leaves the arrays */
	if (jc->names[0] || jc->names[jc->names_len - 1] ||
	    load_index(&jc->dead, &h.dead, b, len, jc->ncodes) != 0 ||
	    load_index(&jc->mapped, &h.mapped, b, len, jc->ncodes) != 0)
		goto bad;
	for (size_t i = 0; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->name >= jc->names_len || c->raw >= jc->names_len || c->file >= jc->names_len ||
		    c->lines_first > jc->nlines || c->nlines > jc->nlines - c->lines_first ||
		    c->unwind_off > jc->unwind_len || c->unwind_len > jc->unwind_len - c->unwind_off ||
		    c->unwind_hdr > c->unwind_len || c->kind > KIND_COPY)
			goto bad;
	}
	for (size_t i = 0; i < jc->nlines; i++)
		if (jc->lines[i].file >= jc->names_len &&
		    !(jc->lines[i].file == FILE_INVALID && jc->pending && i >= jc->pend_first))
			goto bad;
	for (size_t i = 0; i < jc->nlive; i++)
		if (jc->live_id[i] >= jc->ncodes || jc->live_start[i] != jc->codes[jc->live_id[i]].start ||
		    (i && jc->live_start[i] < jc->live_start[i - 1]))
			goto bad;
	return jc;
bad:
	*mf = jc->mf; /* the caller's again, to say what is wrong and close */
	memset(&jc->mf, 0, sizeof(jc->mf));
	jitcode_free(jc);
	return NULL;
}

/* Copy a table read in place into arrays of its own, before records are added: the
 * treap made again from its live codes, the file names' index from its codes and
 * entries; the indexes are made again by the next finish. */
void jitcode_thaw(struct jitcode *jc)
{
	void *p;

	if (!jc->frozen)
		return;
#define OWN(field, n, size)                                   \
	do {                                                  \
		p = xmalloc(((n) + 1) * (size));              \
		if (n)                                        \
			memcpy(p, jc->field, (n) * (size));   \
		memcpy(&jc->field, &p, sizeof(p));            \
	} while (0)
	OWN(codes, jc->ncodes, sizeof(*jc->codes));
	OWN(lines, jc->nlines, sizeof(*jc->lines));
	OWN(names, jc->names_len, 1);
	OWN(moves, jc->nmoves, sizeof(*jc->moves));
	OWN(unwind, jc->unwind_len, 1);
	OWN(live_start, jc->nlive, sizeof(*jc->live_start));
	OWN(live_id, jc->nlive, sizeof(*jc->live_id));
#undef OWN
	memset(&jc->dead, 0, sizeof(jc->dead));
	memset(&jc->mapped, 0, sizeof(jc->mapped));
	jc->codes_cap = jc->ncodes + 1;
	jc->lines_cap = jc->nlines + 1;
	jc->names_cap = jc->names_len + 1;
	jc->moves_cap = jc->nmoves + 1;
	jc->unwind_cap = jc->unwind_len + 1;
	mapped_file_close(&jc->mf);
	jc->frozen = 0;
	/* the files again, each once */
	for (size_t i = 0; i < jc->ncodes; i++)
		if (jc->codes[i].file)
			u64map_put(&jc->files, hash_bytes(text(jc, jc->codes[i].file),
							  strlen(text(jc, jc->codes[i].file))) | 1,
				   jc->codes[i].file);
	for (size_t i = 0; i < jc->nlines; i++)
		if (jc->lines[i].file && jc->lines[i].file != FILE_INVALID)
			u64map_put(&jc->files, hash_bytes(text(jc, jc->lines[i].file),
							  strlen(text(jc, jc->lines[i].file))) | 1,
				   jc->lines[i].file);
	/* the replay's live codes, as the treap it was */
	jc->lv.root = 0;
	for (size_t i = 0; i < jc->nlive; i++) {
		uint32_t n = jc->live_id[i] + 1;

		if (n + 1 > jc->lv.cap)
			grow_array((void **)&jc->lv.v, &jc->lv.cap, jc->ncodes + 2, sizeof(*jc->lv.v));
		jc->lv.v[n] = (struct live_node){ jc->codes[n - 1].start, 0, 0, (uint32_t)hash_u64(n) };
		jc->lv.root = jitcode_live_add(&jc->lv, jc->lv.root, n);
	}
}
