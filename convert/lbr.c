/* lbr: the user part of --call-graph lbr samples, from their LBR call stack. */
#include "convert/lbr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct lbr {
	struct lbr_stats st;
	uint64_t *words;
	size_t cap;
};

int lbr_event(const struct perf_event_desc *e)
{
	return e && (e->sample_type & PERF_SAMPLE_BRANCH_STACK) &&
	       (e->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
}

struct lbr *lbr_new(const struct perf_reader *r)
{
	for (size_t i = 0; i < perf_reader_nevents(r); i++)
		if (lbr_event(perf_reader_event(r, i)))
			return xcalloc(1, sizeof(struct lbr));
	return NULL;
}

void lbr_free(struct lbr *l)
{
	if (!l)
		return;
	free(l->words);
	free(l);
}

const uint64_t *lbr_sample(struct lbr *l, const struct sample_ctx *c, size_t *nw)
{
	const struct perf_record *rec = c->rec;
	const struct perf_sample *s = &rec->u.sample;
	size_t user = 0, n = 0, need;
	uint64_t leaf = s->ip;
	int has_leaf = rec->cpumode == PERF_RECORD_MISC_USER;

	if (!l || !lbr_event(c->ev) || !s->has_branch_stack)
		return NULL;
	if (s->has_callchain) {
		while (user < s->nr_callchain && s->callchain[user] != PERF_CONTEXT_USER)
			user++;
		if (user == s->nr_callchain && !has_leaf) {
			l->st.no_user++;
			return NULL;
		}
		/* taken in the kernel, the user leaf is the address the kernel stored first
		 * in the user part (the walk of frame pointers after it is left out); taken
		 * in user space, the ip is the leaf: with a precise event (PEBS,
		 * precise_ip 3) it is the sampled instruction, while the callchain is taken
		 * later, at the interrupt, a few instructions on or in another function */
		if (!has_leaf && user + 1 < s->nr_callchain &&
		    s->callchain[user + 1] < PERF_CONTEXT_MAX) {
			leaf = s->callchain[user + 1];
			has_leaf = 1;
		}
	}
	need = user + 2 + 2 * (size_t)s->nr_branches;
	if (need > l->cap)
		grow_array((void **)&l->words, &l->cap, need, sizeof(*l->words));
	if (user)
		memcpy(l->words, s->callchain, user * sizeof(*l->words));
	n = user;
	l->words[n++] = PERF_CONTEXT_USER;
	if (has_leaf)
		l->words[n++] = leaf;
	for (uint64_t i = 0; i < s->nr_branches; i++) {
		uint64_t from = s->branches[i].from;

		if (from >= PERF_CONTEXT_MAX) {
			l->st.bad_entries++;
			continue;
		}
		/* a context of its own: the call instruction is exact, as a leaf is */
		l->words[n++] = PERF_CONTEXT_USER;
		l->words[n++] = from;
	}
	l->st.samples++;
	l->st.by_depth[s->nr_branches < LBR_DEPTHS ? s->nr_branches : LBR_DEPTHS - 1]++;
	if (s->nr_branches > l->st.deepest)
		l->st.deepest = s->nr_branches > UINT32_MAX ? UINT32_MAX : (uint32_t)s->nr_branches;
	*nw = n;
	return l->words;
}

const struct lbr_stats *lbr_stats(const struct lbr *l)
{
	return &l->st;
}

/* The LBR's depths in call-stack mode: 16 (Haswell, Broadwell), 32 (Skylake and
 * later); architectural LBR (Alder Lake, Sapphire Rapids and later): 8 to 64 in steps
 * of 8. */
static int hardware_depth(uint32_t n)
{
	return n % 8 == 0 && n >= 8 && n <= 64;
}

void lbr_report(const struct lbr *l, struct diag *d)
{
	const struct lbr_stats *st;
	uint64_t full;

	if (!l)
		return;
	st = &l->st;
	if (!st->samples)
		return;
	diag_note(d, "%" PRIu64 " user stacks from the LBR call stack (--call-graph lbr), "
		  "the deepest %" PRIu32 " calls", st->samples, st->deepest);
	full = st->deepest < LBR_DEPTHS ? st->by_depth[st->deepest] : 0;
	/* one in a hundred at least: a lone one at a hardware depth may be a true one */
	if (hardware_depth(st->deepest) && full * 100 >= st->samples)
		diag_note(d, "  %" PRIu64 " samples filled the LBR (%" PRIu32 " calls, what the "
			  "hardware keeps): their callers deeper than that are cut; perf script "
			  "--stitch-lbr joins them from earlier samples of the thread, "
			  "--call-graph dwarf has no such limit", full, st->deepest);
	if (st->by_depth[0])
		diag_note(d, "  %" PRIu64 " samples: an empty LBR call stack: their user stack is "
			  "the sampled address alone", st->by_depth[0]);
	if (st->bad_entries)
		diag_note(d, "  %" PRIu64 " LBR entries whose call site is not an address: left out",
			  st->bad_entries);
}
