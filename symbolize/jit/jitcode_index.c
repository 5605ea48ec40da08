/* jitcode_index: jitcode_finish(): loads and moves replayed in time order over a treap of
 * the live codes, and the index of the codes by address and time made from it. */
#include "symbolize/jit/jitcode_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_move(const void *a, const void *b)
{
	const struct jc_move *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Split `t` into the nodes with start < key (*l) and the others (*r). */
static void live_split(struct live *lv, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
	while (t) {
		if (lv->v[t].start < key) {
			*l = t;
			l = &lv->v[t].right;
			t = *l;
		} else {
			*r = t;
			r = &lv->v[t].left;
			t = *r;
		}
	}
	*l = *r = 0;
}

/* Join `l` and `r`, every start in `l` below every start in `r`. */
static uint32_t live_merge(struct live *lv, uint32_t l, uint32_t r)
{
	uint32_t root, *at = &root;

	while (l && r) {
		if (lv->v[l].prio > lv->v[r].prio) {
			*at = l;
			at = &lv->v[l].right;
			l = *at;
		} else {
			*at = r;
			at = &lv->v[r].left;
			r = *at;
		}
	}
	*at = l ? l : r;
	return root;
}

/* Take the node with the greatest start out of `*t`; returns it (0 when empty). */
static uint32_t live_pop_max(struct live *lv, uint32_t *t)
{
	uint32_t n;

	while (*t && lv->v[*t].right)
		t = &lv->v[*t].right;
	n = *t;
	if (n)
		*t = lv->v[n].left;
	return n;
}

/* Put node `n` into `t`, where no start equals its own: a leaf rotated up. */
uint32_t jitcode_live_add(struct live *lv, uint32_t t, uint32_t n)
{
	uint32_t c;

	if (!t)
		return n;
	if (lv->v[n].start < lv->v[t].start) {
		c = lv->v[t].left = jitcode_live_add(lv, lv->v[t].left, n);
		if (lv->v[c].prio > lv->v[t].prio) {
			lv->v[t].left = lv->v[c].right;
			lv->v[c].right = t;
			return c;
		}
	} else {
		c = lv->v[t].right = jitcode_live_add(lv, lv->v[t].right, n);
		if (lv->v[c].prio > lv->v[t].prio) {
			lv->v[t].right = lv->v[c].left;
			lv->v[c].left = t;
			return c;
		}
	}
	return t;
}

/* Every code of `t` ends at `time`. */
static void live_end_all(struct jitcode *jc, const struct live *lv, uint32_t t, uint64_t time)
{
	while (t) {
		jc->codes[t - 1].t1 = time;
		live_end_all(jc, lv, lv->v[t].left, time);
		t = lv->v[t].right;
	}
}

/* Code `ci` goes live at `t`: whatever it overlaps ends at `t`. */
static void live_insert(struct jitcode *jc, struct live *lv, uint32_t ci, uint64_t t)
{
	const struct jc_code *c = &jc->codes[ci];
	uint64_t s = c->start, e = code_end(c);
	uint32_t n = ci + 1, below, rest, inside, above, pred = 0, succ = 0;

	if (c->size == 0)
		return;
	if (n + 1 > lv->cap)
		grow_array((void **)&lv->v, &lv->cap, n + 1, sizeof(*lv->v));
	lv->v[n] = (struct live_node){ s, 0, 0, (uint32_t)hash_u64(n) };
	/* mostly the code overlaps nothing: the codes on either side say so */
	for (uint32_t x = lv->root; x;) {
		if (lv->v[x].start < s) {
			pred = x;
			x = lv->v[x].right;
		} else {
			succ = x;
			x = lv->v[x].left;
		}
	}
	if ((!pred || code_end(&jc->codes[pred - 1]) <= s) && (!succ || lv->v[succ].start >= e)) {
		lv->root = jitcode_live_add(lv, lv->root, n);
		return;
	}
	live_split(lv, lv->root, s, &below, &rest);
	live_split(lv, rest, e, &inside, &above);
	live_end_all(jc, lv, inside, t);
	/* of the codes starting below s only the last can reach past s: they are disjoint.
	 * Between two perf map lines the later wins only where they overlap: the earlier
	 * keeps the bytes before the later's start (as perf names them) */
	if (pred && code_end(&jc->codes[pred - 1]) > s) {
		if (jc->codes[pred - 1].kind == KIND_MAP && c->kind == KIND_MAP) {
			jc->codes[pred - 1].size = s - jc->codes[pred - 1].start;
		} else {
			jc->codes[pred - 1].t1 = t;
			live_pop_max(lv, &below);
		}
	}
	lv->root = live_merge(lv, live_merge(lv, below, n), above);
}

/* The move of the code at old_addr: it ends, a copy starts at new_addr. */
static void live_move(struct jitcode *jc, struct live *lv, const struct jc_move *ev,
		      uint64_t t)
{
	uint32_t below, above, last, oi, ni;
	struct jc_code *o;

	/* the code starting at old_addr, else the one holding it: the last one starting
	 * at or below it, when it reaches past it */
	if (ev->old_addr == UINT64_MAX) {
		below = lv->root;
		above = 0;
	} else {
		live_split(lv, lv->root, ev->old_addr + 1, &below, &above);
	}
	last = live_pop_max(lv, &below);
	if (!last || code_end(&jc->codes[last - 1]) <= ev->old_addr) {
		if (last) {
			lv->v[last].left = lv->v[last].right = 0;
			below = live_merge(lv, below, last);
		}
		lv->root = live_merge(lv, below, above);
		jc->stats.moves_unmatched++;
		return;
	}
	lv->root = live_merge(lv, below, above);
	oi = last - 1;
	jc->codes[oi].t1 = t;
	ni = jitcode_new_code(jc, ev->new_addr, 0, t, ev->seq, KIND_COPY);
	o = &jc->codes[oi];
	jc->codes[ni].size = clamp_size(ev->new_addr, ev->size ? ev->size : o->size);
	jc->codes[ni].lines_size = o->lines_size;
	jc->codes[ni].name = o->name;
	jc->codes[ni].raw = o->raw;
	jc->codes[ni].file = o->file;
	jc->codes[ni].lines_first = o->lines_first;
	jc->codes[ni].nlines = o->nlines;
	live_insert(jc, lv, ni, t);
}

/*
 * Index the codes in `order` (sorted by t0, then seq) that were live for some time.
 * The pieces are the leaves of a segment tree (node 1 the root, piece k at node
 * leaves + k): a code is listed at the O(log n) nodes whose pieces it covers whole, so
 * the index stays O(n log n) however the codes overlap (one list per piece was
 * quadratic where many loads overlap). Codes listed at one node overlap in address, so
 * they are disjoint in time, and stay in time order.
 */
static void build_index(struct jitcode *jc, struct jc_index *x, const uint32_t *order,
			size_t n)
{
	struct sort_pair *ends = xmalloc((4 * n + 1) * sizeof(*ends)); /* + scratch */
	uint32_t *piece = xmalloc((2 * n + 1) * sizeof(*piece)); /* [2i] first, [2i+1] end */
	size_t *count, *fill = NULL;
	size_t i, k, leaves, nodes, total;

	/* every start and end, sorted: the distinct values are the bounds, and each
	 * code learns the pieces it spans on the way */
	for (i = 0; i < n; i++) {
		const struct jc_code *c = &jc->codes[order[i]];

		ends[2 * i] = (struct sort_pair){ c->start, 2 * i };
		ends[2 * i + 1] = (struct sort_pair){ code_end(c), 2 * i + 1 };
	}
	sort_pairs(ends, ends + 2 * n, 2 * n);
	x->bounds = xmalloc((2 * n + 1) * sizeof(*x->bounds));
	for (i = 0, k = 0; i < 2 * n; i++) {
		if (k == 0 || x->bounds[k - 1] != ends[i].key)
			x->bounds[k++] = ends[i].key;
		piece[ends[i].val] = (uint32_t)(k - 1);
	}
	free(ends);
	x->nbounds = k;
	for (leaves = 1; leaves < k; leaves *= 2)
		;
	x->leaves = leaves;
	nodes = 2 * leaves;
	/* how many codes each node lists, then where each node's list begins */
	count = xcalloc(nodes + 1, sizeof(*count));
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			size_t l = leaves + piece[2 * i], r = leaves + piece[2 * i + 1];

			for (; l < r; l /= 2, r /= 2) {
				if (l & 1) {
					if (pass)
						x->ids[fill[l]++] = order[i];
					else
						count[l]++;
					l++;
				}
				if (r & 1) {
					r--;
					if (pass)
						x->ids[fill[r]++] = order[i];
					else
						count[r]++;
				}
			}
		}
		if (pass)
			break;
		x->first = xmalloc((nodes + 1) * sizeof(*x->first));
		for (k = 0, total = 0; k < nodes; k++) {
			x->first[k] = total;
			total += count[k];
		}
		x->first[nodes] = total;
		x->nids = total;
		x->ids = xmalloc((total + 1) * sizeof(*x->ids));
		fill = count;
		for (k = 0; k <= nodes; k++)
			fill[k] = x->first[k];
	}
	free(count);
	free(piece);
}

static int cmp_code_time(const void *a, const void *b, void *ctx)
{
	const struct jitcode *jc = ctx;
	const struct jc_code *x = &jc->codes[*(const uint32_t *)a];
	const struct jc_code *y = &jc->codes[*(const uint32_t *)b];

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The codes of `order` (n) in the order of (t0, seq); returns n. */
static size_t sort_by_time(const struct jitcode *jc, uint32_t *order, size_t n)
{
	size_t i;

	/* runtimes write in time order, mostly: sort only when they did not */
	for (i = 1; i < n; i++)
		if (cmp_code_time(&order[i - 1], &order[i], (void *)jc) > 0)
			break;
	if (n > 1 && i < n)
		qsort_r(order, n, sizeof(*order), cmp_code_time, (void *)jc);
	return n;
}

/* moves[from ..] in the order of (time, seq). */
static void sort_moves(struct jitcode *jc, size_t from)
{
	size_t k;

	for (k = from + 1; k < jc->nmoves; k++)
		if (cmp_move(&jc->moves[k - 1], &jc->moves[k]) > 0)
			break;
	if (k < jc->nmoves)
		qsort(jc->moves + from, jc->nmoves - from, sizeof(*jc->moves), cmp_move);
}

/* Does event (t, seq) come after the last one the replay saw? */
static int after_replayed(const struct jitcode *jc, uint64_t t, uint32_t seq)
{
	return t > jc->last_time || (t == jc->last_time && seq > jc->last_seq);
}

/*
 * The replay, over the live codes of jc->lv: the codes of `order` (n, sorted) and
 * moves[k ..] (sorted) in time order (a code ends where the next one over any of its
 * bytes is loaded, or where it moves; a move makes a copy that goes live).
 */
static void replay(struct jitcode *jc, const uint32_t *order, size_t n, size_t k)
{
	size_t i = 0;

	while (i < n || k < jc->nmoves) {
		const struct jc_code *c = i < n ? &jc->codes[order[i]] : NULL;
		const struct jc_move *m = k < jc->nmoves ? &jc->moves[k] : NULL;

		if (c && (!m || c->t0 < m->time || (c->t0 == m->time && c->seq < m->seq))) {
			jc->last_time = c->t0;
			jc->last_seq = c->seq;
			live_insert(jc, &jc->lv, order[i], c->t0);
			i++;
		} else {
			jc->last_time = m->time;
			jc->last_seq = m->seq;
			live_move(jc, &jc->lv, m, m->time);
			k++;
		}
	}
}

/* The codes a replay puts live at their t0, from codes[from ..]. Malloc'ed; *n set. */
static uint32_t *replayed_from(const struct jitcode *jc, size_t from, size_t *n)
{
	uint32_t *order = xmalloc((jc->ncodes - from + 1) * sizeof(*order));

	*n = 0;
	for (size_t i = from; i < jc->ncodes; i++)
		if (jc->codes[i].replayed && jc->codes[i].kind != KIND_MAP && jc->codes[i].size)
			order[(*n)++] = (uint32_t)i;
	sort_by_time(jc, order, *n);
	return order;
}

/* The replay made again from the start: the copies the last one made go. */
static void replay_all(struct jitcode *jc)
{
	uint32_t *order;
	size_t n, w = 0;

	for (size_t i = 0; i < jc->ncodes; i++) {
		if (jc->codes[i].kind == KIND_COPY && !jc->codes[i].replayed)
			continue;
		if (jc->last_load == i + 1)
			jc->last_load = (uint32_t)w + 1;
		jc->codes[w] = jc->codes[i];
		jc->codes[w++].t1 = FOREVER;
	}
	jc->ncodes = w;
	jc->lv.root = 0;
	jc->last_time = 0;
	jc->last_seq = 0;
	order = replayed_from(jc, 0, &n);
	sort_moves(jc, 0);
	replay(jc, order, n, 0);
	free(order);
}

/* Whether the records added since the last replay all come after it: the replay can go
 * on from where it stopped. */
static int replay_goes_on(const struct jitcode *jc)
{
	if (!jc->replayed)
		return 0;
	for (size_t i = jc->done_codes; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->replayed && c->kind != KIND_MAP && c->size && !after_replayed(jc, c->t0, c->seq))
			return 0;
	}
	for (size_t k = jc->done_moves; k < jc->nmoves; k++)
		if (!after_replayed(jc, jc->moves[k].time, jc->moves[k].seq))
			return 0;
	return 1;
}

/* The treap's codes in address order, into live_start and live_id. */
static void flatten_live(struct jitcode *jc)
{
	uint32_t *stack = NULL, x = jc->lv.root;
	size_t depth = 0, cap = 0, n = 0, room = 0;

	free(jc->live_start);
	free(jc->live_id);
	for (size_t i = 0; i < jc->ncodes; i++)
		room += jc->codes[i].kind != KIND_MAP && jc->codes[i].t1 == FOREVER;
	jc->live_start = xmalloc((room + 1) * sizeof(*jc->live_start));
	jc->live_id = xmalloc((room + 1) * sizeof(*jc->live_id));
	while (x || depth) {
		while (x) {
			VEC_PUSH(stack, depth, cap, x);
			x = jc->lv.v[x].left;
		}
		x = stack[--depth];
		if (n < room) {
			jc->live_start[n] = jc->lv.v[x].start;
			jc->live_id[n++] = x - 1;
		}
		x = jc->lv.v[x].right;
	}
	jc->nlive = n;
	free(stack);
}

/* Index the codes that ended after `floor` (those live at the end are the replay's),
 * and the perf map lines live at the end. */
void jitcode_build_indexes(struct jitcode *jc)
{
	uint32_t *order = xmalloc((jc->ncodes + 1) * sizeof(*order));
	struct live maps = { NULL, 0, 0 };
	size_t i, n, nmaps = 0;

	jitcode_index_release(&jc->dead);
	jitcode_index_release(&jc->mapped);
	flatten_live(jc);
	for (i = 0, n = 0; i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->kind == KIND_MAP)
			nmaps++;
		else if (c->size && c->t0 < c->t1 && c->t1 != FOREVER && c->t1 > jc->floor &&
			 !jc->stats.timeless) /* timeless: lookups are made at the end */
			order[n++] = (uint32_t)i;
	}
	n = sort_by_time(jc, order, n);
	build_index(jc, &jc->dead, order, n);
	/* Map lines: file order, only what is live at the end counts. */
	for (i = 0; nmaps && i < jc->ncodes; i++)
		if (jc->codes[i].kind == KIND_MAP) {
			jc->codes[i].t1 = FOREVER;
			live_insert(jc, &maps, (uint32_t)i, jc->codes[i].seq);
		}
	free(maps.v);
	for (i = 0, n = 0; nmaps && i < jc->ncodes; i++) {
		const struct jc_code *c = &jc->codes[i];

		if (c->kind == KIND_MAP && c->size && c->t1 == FOREVER)
			order[n++] = (uint32_t)i;
	}
	build_index(jc, &jc->mapped, order, n);
	free(order);
}

void jitcode_finish(struct jitcode *jc)
{
	if (jc->finished)
		return;
	jc->finished = 1;
	/* a DEBUG_INFO still waiting counts as unmatched, but waits on: more of the dump may
	 * bring its load */
	jc->stats.debug_unmatched = jc->debug_dropped + (uint64_t)jc->pending;
	/*
	 * The entry address offset, for the whole table: each load whose DEBUG_INFO starts
	 * exactly at code_addr + 0x40 votes for 0x40, each whose entries start below it
	 * (impossible with the offset: BEAM's prologue entries, or lines at the very
	 * start) for none.
	 */
	jc->stats.line_offset =
		jc->stats.votes_plain > jc->stats.votes_offset ? 0 : JITCODE_ELF_HEADER_OFFSET;
	if (replay_goes_on(jc)) {
		size_t n, k = jc->done_moves;
		uint32_t *order = replayed_from(jc, jc->done_codes, &n);

		sort_moves(jc, k);
		replay(jc, order, n, k);
		free(order);
	} else {
		replay_all(jc);
	}
	jc->replayed = 1;
	jc->lines_counted = 0;
	jc->done_codes = jc->ncodes;
	jc->done_moves = jc->nmoves;
	jitcode_build_indexes(jc);
}
