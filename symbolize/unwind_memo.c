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
	unwind_mask valid, dep;       /* the sample's registers known, and read */
	uint8_t arch;
	uint64_t depval[UNWIND_NREGS];
	uint32_t nreads, npcs;
	uint32_t off[UNWIND_TRACE_READS];
	uint64_t val[UNWIND_TRACE_READS];
	uint64_t pcs[MEMO_PCS];
	struct unwind_result res;
	uint32_t aux;
};

/*
 * Walks from a frame on. A deep stack (a recursion) seldom repeats whole, but its
 * outer frames do: a walk that ends at the thread's start is kept (its pcs, the words
 * it read, where each step's reads begin) in a ring of words, and each of its frames
 * whose rest reads no register but the pc and the stack pointer (the registers
 * restored on the way are read only when used) is a way into it, found by the pc,
 * the stack pointer and the step's flags. A walk meeting such a frame with the same
 * words where the rest read them takes the rest as it is.
 */
#define REST_SIZE 1024                 /* ways in, a power of two */
#define RING_WORDS ((size_t)32 << 10)  /* 256 KB of kept walks */

struct rest_entry {
	uint64_t ctx, epoch, pc, sp;      /* ctx 0: empty */
	uint64_t at;                      /* the walk's place in the ring (struct kept) */
	uint32_t k;                       /* the frame the rest begins with */
	uint32_t flags;
};

/* A walk in the ring: this head, then its nreads reads' addresses and values, for each
 * of its n frames the index of its step's first read, and its pcs (struct kept_view). */
struct kept {
	uint32_t n, nreads;
	uint64_t aux;
};

struct kept_view {
	uint64_t *addr, *val, *pcs;
	uint16_t *first;
};

static size_t kept_words(size_t n, size_t nreads)
{
	return sizeof(struct kept) / 8 + 2 * nreads + align8(2 * n) / 8 + n;
}

static struct kept_view kept_parts(uint64_t *p, size_t n, size_t nreads)
{
	struct kept_view v;

	v.addr = p + sizeof(struct kept) / 8;
	v.val = v.addr + nreads;
	v.first = (uint16_t *)(void *)(v.val + nreads);
	v.pcs = v.val + nreads + align8(2 * n) / 8;
	return v;
}

/* The hash of a memo's key: a process epoch, a pc, a stack pointer, and one more. */
static uint64_t key_hash(uint64_t ctx, uint64_t epoch, uint64_t pc, uint64_t sp, uint64_t more)
{
	uint64_t h = ctx * 0x9e3779b97f4a7c15ULL ^ epoch * 0xc2b2ae3d27d4eb4fULL ^ pc ^
		     sp * 0x165667b19e3779f9ULL ^ more;

	return (h ^ (h >> 29)) * 0xff51afd7ed558ccdULL;
}

struct unwind_memo {
	struct memo_entry *e;         /* MEMO_SIZE, made on first use */
	struct unwind_trace tr;
	struct unwind_memo_stats st;
	struct rest_entry *rest;      /* REST_SIZE, made on first use */
	uint64_t *ring;               /* RING_WORDS */
	uint64_t head;                /* words written to the ring, ever */
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
	free(m->rest);
	free(m->ring);
	free(m);
}

const struct unwind_memo_stats *unwind_memo_stats(const struct unwind_memo *m)
{
	return &m->st;
}

static struct memo_entry *memo_slot(struct unwind_memo *m, uint64_t ctx, uint64_t epoch,
				    const struct unwind_regs *regs, size_t size)
{
	uint64_t h = key_hash(ctx, epoch, regs->r[unwind_reg_ip(regs->arch)],
			      regs->r[unwind_reg_sp(regs->arch)], size);

	if (!m->e)
		m->e = xcalloc(MEMO_SIZE, sizeof(*m->e));
	return &m->e[(h >> 40) & (MEMO_SIZE - 1)];
}

/* The entry is a walk from these registers over this stack: every register it read
 * and every stack word it read the same. */
static int memo_holds(const struct memo_entry *e, uint64_t ctx, uint64_t epoch,
		      const struct unwind_regs *regs, const uint8_t *stack, size_t size, size_t cap)
{
	unwind_mask dep;

	if (e->ctx != ctx || e->epoch != epoch || e->arch != regs->arch ||
	    e->ip != regs->r[unwind_reg_ip(regs->arch)] ||
	    e->sp != regs->r[unwind_reg_sp(regs->arch)] || e->size != size ||
	    e->valid != regs->valid || e->npcs >= cap)
		return 0;
	for (dep = e->dep; dep; dep &= dep - 1) {
		int r = __builtin_ctzll(dep);

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

static struct rest_entry *rest_slot(struct unwind_memo *m, uint64_t ctx, uint64_t epoch,
				    uint64_t pc, uint64_t sp, unsigned flags)
{
	return &m->rest[(key_hash(ctx, epoch, pc, sp, flags) >> 40) & (REST_SIZE - 1)];
}

size_t unwind_memo_rest(struct unwind_memo *m, struct unwind_trace *tr, uint64_t pc,
			uint64_t sp, unsigned flags, const uint8_t *stack, uint64_t sp0, size_t size,
			uint64_t *pcs, size_t k, size_t cap, uint32_t *aux)
{
	const struct rest_entry *e;
	const struct kept *w;
	struct kept_view v;
	uint64_t *words;
	size_t len;
	uint64_t ends = size >= 8 ? size - 7 : 0;

	if (!m->rest)
		return 0;
	e = rest_slot(m, tr->ctx, tr->epoch, pc, sp, flags);
	if (e->ctx != tr->ctx || e->epoch != tr->epoch || e->pc != pc || e->sp != sp ||
	    e->flags != flags || m->head - e->at > RING_WORDS)
		return 0;
	words = m->ring + e->at % RING_WORDS;
	w = (const struct kept *)(void *)words;
	len = w->n - e->k;
	if (k + len >= cap || k + len > UNWIND_MAX_FRAMES)
		return 0;
	v = kept_parts(words, w->n, w->nreads);
	for (uint32_t i = v.first[e->k]; i < w->nreads; i++) {
		uint64_t x;

		if (v.addr[i] < sp0 || v.addr[i] - sp0 >= ends)
			return 0;
		memcpy(&x, stack + (v.addr[i] - sp0), 8);
		if (x != v.val[i])
			return 0;
	}
	memcpy(pcs + k, v.pcs + e->k, len * sizeof(*pcs));
	/* the walk's reads are the rest's too: the whole walk is kept as any other */
	if (tr->n + (w->nreads - v.first[e->k]) <= UNWIND_TRACE_READS) {
		for (uint32_t i = v.first[e->k]; i < w->nreads; i++) {
			tr->off[tr->n] = (uint32_t)(v.addr[i] - sp0);
			tr->val[tr->n++] = v.val[i];
		}
	} else {
		tr->overflow = 1;
	}
	*aux = (uint32_t)w->aux;
	m->st.rest_hits++;
	return k + len;
}

/* A walk that ended at the thread's start, from sp0, kept with a way in at each frame
 * from which on it read no register but the pc and the stack pointer. */
static void keep_rest(struct unwind_memo *m, const struct unwind_trace *tr, uint64_t sp0,
		      const uint64_t *pcs, size_t n, uint32_t aux)
{
	size_t words = kept_words(n, tr->n);
	struct kept_view v;
	uint64_t *p;
	struct kept *w;
	unwind_mask dep = 0;
	int unsure = 0;

	if (words > RING_WORDS / 4)
		return;
	if (!m->rest) {
		m->rest = xcalloc(REST_SIZE, sizeof(*m->rest));
		m->ring = xmalloc(RING_WORDS * sizeof(*m->ring));
	}
	if (m->head % RING_WORDS + words > RING_WORDS)
		m->head += RING_WORDS - m->head % RING_WORDS;
	p = m->ring + m->head % RING_WORDS;
	w = (struct kept *)(void *)p;
	w->n = (uint32_t)n;
	w->nreads = (uint32_t)tr->n;
	w->aux = aux;
	v = kept_parts(p, n, tr->n);
	for (size_t i = 0; i < tr->n; i++) {
		v.addr[i] = sp0 + tr->off[i];
		v.val[i] = tr->val[i];
	}
	for (size_t k = 0; k < n; k++)
		v.first[k] = tr->step[k].first_read;
	memcpy(v.pcs, pcs, n * sizeof(*pcs));
	/* from the outermost frame in: what the rest from frame k reads of frame k's
	 * registers is what its step reads, and what the rest from k + 1 reads of those
	 * k + 1 has from k */
	for (size_t k = n; k-- > 1;) {
		const struct unwind_trace_step *ts = &tr->step[k];
		struct rest_entry *e;

		dep = ts->used | (dep & ts->carried);
		unsure |= ts->flags & TRACE_UNSURE;
		if (unsure || (dep & ~(RBIT(unwind_reg_ip(tr->arch)) | RBIT(unwind_reg_sp(tr->arch)))))
			break;
		e = rest_slot(m, tr->ctx, tr->epoch, pcs[k], ts->sp, ts->flags);
		e->ctx = tr->ctx;
		e->epoch = tr->epoch;
		e->pc = pcs[k];
		e->sp = ts->sp;
		e->flags = ts->flags;
		e->at = m->head;
		e->k = (uint32_t)k;
	}
	m->head += words;
}

size_t unwind_stack_memo(struct unwind_memo *m, uint64_t ctx, uint64_t epoch,
			 const struct unwind_regs *regs, const uint8_t *stack, size_t size,
			 unwind_find_fn find, void *fctx, uint64_t *pcs, size_t cap,
			 struct unwind_result *res, uint32_t *aux)
{
	struct memo_entry *e;
	struct unwind_trace *tr = &m->tr;
	size_t n;

	if (!ctx || regs->arch > UNWIND_AARCH64 || !(regs->valid & RBIT(unwind_reg_ip(regs->arch))) ||
	    !(regs->valid & RBIT(unwind_reg_sp(regs->arch))))
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
	tr->init = regs->valid & (RBIT(UNWIND_NREGS) - 1);
	tr->arch = regs->arch;
	tr->dep = 0;
	tr->nsteps = 0;
	tr->memo = m;
	tr->ctx = ctx;
	tr->epoch = epoch;
	tr->from_memo = 0;
	n = unwind_walk(regs, stack, size, find, fctx, pcs, cap, res, tr);
	m->st.walks++;
	if (tr->from_memo)
		*aux = tr->aux;
	else if (!tr->overflow && res->stop == UNWIND_END && tr->nsteps == n && n >= 2)
		keep_rest(m, tr, regs->r[unwind_reg_sp(regs->arch)], pcs, n, *aux);
	/* kept unless the walk was cut short by `cap` (another call's may be larger) */
	if (tr->overflow || n > MEMO_PCS || n >= cap || res->stop == UNWIND_LIMIT)
		return n;
	e->ctx = ctx;
	e->epoch = epoch;
	e->ip = regs->r[unwind_reg_ip(regs->arch)];
	e->sp = regs->r[unwind_reg_sp(regs->arch)];
	e->size = size;
	e->valid = regs->valid;
	e->arch = regs->arch;
	e->dep = tr->dep;
	for (unwind_mask dep = tr->dep; dep; dep &= dep - 1)
		e->depval[__builtin_ctzll(dep)] = regs->r[__builtin_ctzll(dep)];
	e->nreads = (uint32_t)tr->n;
	memcpy(e->off, tr->off, tr->n * sizeof(*e->off));
	memcpy(e->val, tr->val, tr->n * sizeof(*e->val));
	e->npcs = (uint32_t)n;
	memcpy(e->pcs, pcs, n * sizeof(*pcs));
	e->res = *res;
	e->aux = *aux;
	return n;
}
