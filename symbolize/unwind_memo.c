/* unwind_memo: walks made once, given again to samples whose walk would read the same
 * (see unwind.h). */
#include "symbolize/unwind_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define MEMO_SIZE 128 /* entries, a power of two: more found few more walks and touched
			* pages (a fault is 2 us here): 1,024 entries were 400 faults */
#define MEMO_PCS 48    /* walks longer than this are not kept */

struct memo_entry {
	uint64_t ctx, epoch;          /* 0: empty */
	uint64_t ip, sp, size;
	uint32_t valid, dep;          /* the sample's registers known, and read */
	uint64_t depval[UNWIND_NREGS];
	uint32_t nreads, npcs;
	uint32_t off[UNWIND_TRACE_READS];
	uint64_t val[UNWIND_TRACE_READS];
	uint64_t pcs[MEMO_PCS];
	struct unwind_result res;
	uint32_t aux;
};

struct unwind_memo {
	struct memo_entry *e;         /* MEMO_SIZE, made on first use */
	struct unwind_trace tr;
	struct unwind_memo_stats st;
};

struct unwind_memo *unwind_memo_new(void)
{
	return xcalloc(1, sizeof(struct unwind_memo));
}

void unwind_memo_free(struct unwind_memo *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

const struct unwind_memo_stats *unwind_memo_stats(const struct unwind_memo *m)
{
	return &m->st;
}

static struct memo_entry *memo_slot(struct unwind_memo *m, uint64_t ctx, uint64_t epoch,
				    const struct unwind_regs *regs, size_t size)
{
	uint64_t h = ctx * 0x9e3779b97f4a7c15ULL ^ epoch * 0xc2b2ae3d27d4eb4fULL ^
		     regs->r[UNWIND_REG_IP] ^ regs->r[UNWIND_REG_SP] * 0x165667b19e3779f9ULL ^ size;

	h = (h ^ (h >> 29)) * 0xff51afd7ed558ccdULL;
	if (!m->e)
		m->e = xcalloc(MEMO_SIZE, sizeof(*m->e));
	return &m->e[(h >> 40) & (MEMO_SIZE - 1)];
}

/* The entry is a walk from these registers over this stack: every register it read
 * and every stack word it read the same. */
static int memo_holds(const struct memo_entry *e, uint64_t ctx, uint64_t epoch,
		      const struct unwind_regs *regs, const uint8_t *stack, size_t size, size_t cap)
{
	uint32_t dep;

	if (e->ctx != ctx || e->epoch != epoch || e->ip != regs->r[UNWIND_REG_IP] ||
	    e->sp != regs->r[UNWIND_REG_SP] || e->size != size || e->valid != regs->valid ||
	    e->npcs >= cap)
		return 0;
	for (dep = e->dep; dep; dep &= dep - 1) {
		int r = __builtin_ctz(dep);

		if (regs->r[r] != e->depval[r])
			return 0;
	}
	for (uint32_t i = 0; i < e->nreads; i++) {
		uint64_t v;

		memcpy(&v, stack + e->off[i], 8);
		if (v != e->val[i])
			return 0;
	}
	return 1;
}

size_t unwind_stack_memo(struct unwind_memo *m, uint64_t ctx, uint64_t epoch,
			 const struct unwind_regs *regs, const uint8_t *stack, size_t size,
			 unwind_find_fn find, void *fctx, uint64_t *pcs, size_t cap,
			 struct unwind_result *res, uint32_t *aux)
{
	struct memo_entry *e;
	struct unwind_trace *tr = &m->tr;
	size_t n;

	if (!ctx || !(regs->valid & (1u << UNWIND_REG_IP)) || !(regs->valid & (1u << UNWIND_REG_SP)))
		return unwind_walk(regs, stack, size, find, fctx, pcs, cap, res, NULL);
	e = memo_slot(m, ctx, epoch, regs, size);
	if (memo_holds(e, ctx, epoch, regs, stack, size, cap)) {
		memcpy(pcs, e->pcs, e->npcs * sizeof(*pcs));
		*res = e->res;
		*aux = e->aux;
		m->st.hits++;
		return res->n;
	}
	tr->n = 0;
	tr->overflow = 0;
	tr->init = regs->valid & ((1u << UNWIND_NREGS) - 1);
	tr->dep = 0;
	n = unwind_walk(regs, stack, size, find, fctx, pcs, cap, res, tr);
	m->st.walks++;
	/* kept unless the walk was cut short by `cap` (another call's may be larger) */
	if (tr->overflow || n > MEMO_PCS || n >= cap || res->stop == UNWIND_LIMIT)
		return n;
	e->ctx = ctx;
	e->epoch = epoch;
	e->ip = regs->r[UNWIND_REG_IP];
	e->sp = regs->r[UNWIND_REG_SP];
	e->size = size;
	e->valid = regs->valid;
	e->dep = tr->dep;
	for (uint32_t dep = tr->dep; dep; dep &= dep - 1)
		e->depval[__builtin_ctz(dep)] = regs->r[__builtin_ctz(dep)];
	e->nreads = (uint32_t)tr->n;
	memcpy(e->off, tr->off, tr->n * sizeof(*e->off));
	memcpy(e->val, tr->val, tr->n * sizeof(*e->val));
	e->npcs = (uint32_t)n;
	memcpy(e->pcs, pcs, n * sizeof(*pcs));
	e->res = *res;
	e->aux = *aux;
	return n;
}
