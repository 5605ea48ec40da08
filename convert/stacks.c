/* stacks: a sample's raw stack into a node of the profile's stack tree. */
#include "convert/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "convert/callchain.h"

/*
 * A sample's raw stack already turned into a node: the same addresses in the same
 * process with the same mappings (replay_epoch) give the same frames, so a repeated
 * stack costs one hash lookup instead of one per frame.
 */
struct chain {
	uint64_t hash, user_epoch, kernel_epoch;
	uint64_t first;               /* in words */
	uint32_t n, node;
	uint32_t flags;               /* bit 0: kernel context first; bit 1: a callchain */
};

/* Threads whose last walk is kept (walk_node): a power of two. */
#define LAST_WALKS 16

/* Raw stacks kept for the chain cache at most, in words (2 MB): on a whole-machine
 * recording it is full early and kept to the end, and a smaller one is also faster
 * there (fewer cache misses); one program's distinct stacks fit in it. */
#define CHAIN_WORDS_MAX (1u << 18)
#define CHAIN_WORDS_FIRST (128u << 10)

struct stack_builder {
	struct profile *p;
	const struct replay *rp;
	struct resolver *res;
	const struct jit_procs *jits;
	struct chain *chains;
	size_t nchains, chains_cap;
	struct id_index chain_index;
	uint64_t *words;
	size_t nwords, words_cap;
	struct unwinding *uw;
	struct lbr *lbr;
	uint64_t unwound[UNWINDING_MAX_WORDS]; /* the raw stack of an unwound sample */
	uint64_t *joined;        /* a user-only callchain with the kernel ip before it */
	size_t joined_cap;
	uint64_t kernel_leaf_added;
	uint64_t at_kernel_limit; /* callchains of STACKS_KERNEL_LIMIT addresses */
	uint32_t *frames;        /* walk_node's, root last */
	size_t frames_cap;
	/* the addresses walk_node saw, leaf first, and its last walk in a thread (a slot
	 * per tid's hash), root first: its addresses (with their ret and kernel bits) and
	 * the node after each */
	struct pos {
		uint64_t addr;
		uint32_t bits;   /* kernel << 1 | ret */
		uint32_t nframes;
	} *pos;
	size_t pos_cap;
	struct last_walk {
		struct pos *pos;
		uint32_t *node;
		size_t n, cap;
		uint64_t user_epoch, kernel_epoch;
		uint32_t tid;
		int valid;
	} last[LAST_WALKS];
};

struct stack_builder *stacks_new(struct profile *p, const struct replay *rp, struct resolver *res,
				 const struct jit_procs *jits, struct unwinding *uw, struct lbr *lbr)
{
	struct stack_builder *b = xcalloc(1, sizeof(*b));

	b->uw = uw;
	b->lbr = lbr;
	b->p = p;
	b->rp = rp;
	b->res = res;
	b->jits = jits;
	return b;
}

void stacks_forget_raw(struct stack_builder *b)
{
	free(b->chains);
	b->chains = NULL;
	b->nchains = b->chains_cap = 0;
	id_index_release(&b->chain_index);
	free(b->words);
	b->words = NULL;
	b->nwords = b->words_cap = 0;
}

void stacks_free(struct stack_builder *b)
{
	if (!b)
		return;
	stacks_forget_raw(b);
	free(b->frames);
	free(b->joined);
	free(b->pos);
	for (size_t i = 0; i < LAST_WALKS; i++) {
		free(b->last[i].pos);
		free(b->last[i].node);
	}
	free(b);
}

/*
 * The leaf node of raw stack words[0..nw): every address resolved, every frame interned.
 * Stacks that miss the chain cache mostly share their root side with their thread's
 * one before (a recursion's depth or a leaf differs): where the thread's last walk
 * was in the same epochs, its nodes stand for the addresses the two share from the
 * root, and only the rest is resolved and interned, leaf first as a whole walk would
 * (so that frames and nodes are made in the same order). An address's frames depend on the address, its ret and
 * kernel bits and the epochs only; JIT code's on the time too, and it is never kept.
 */
static uint32_t walk_node(struct stack_builder *b, const uint64_t *words, size_t nw, int kernel_ctx,
			  const struct sample_ctx *c)
{
	size_t nf = 0, np = 0, same = 0;
	uint32_t node = 0;
	struct callchain_walk w;
	struct last_walk *l = &b->last[hash_u64(c->tid) & (LAST_WALKS - 1)];
	uint64_t a;
	int ret, kernel, keep = c->jit_table < 0;

	/* every frame, however deep (perf records up to kernel.perf_event_max_stack) */
	callchain_walk_init(&w, words, nw, kernel_ctx);
	while (callchain_walk_next(&w, &a, &ret, &kernel)) {
		if (np == b->pos_cap)
			grow_array((void **)&b->pos, &b->pos_cap, np + 1, sizeof(*b->pos));
		b->pos[np].addr = a;
		b->pos[np++].bits = (uint32_t)kernel << 1 | (uint32_t)ret;
	}
	if (keep && l->valid && l->tid == c->tid && l->user_epoch == c->user_epoch &&
	    l->kernel_epoch == c->kernel_epoch)
		while (same < np && same < l->n && l->pos[same].addr == b->pos[np - 1 - same].addr &&
		       l->pos[same].bits == b->pos[np - 1 - same].bits)
			same++;
	for (size_t i = 0; i + same < np; i++) {
		uint32_t n;
		struct pos *x = &b->pos[i];
		const uint32_t *ids = resolver_frames(b->res, c, x->addr, (int)(x->bits & 1),
						      (int)(x->bits >> 1), &n);

		x->nframes = n;
		if (nf + n > b->frames_cap)
			grow_array((void **)&b->frames, &b->frames_cap, nf + n, sizeof(*b->frames));
		for (uint32_t j = 0; j < n; j++)
			b->frames[nf++] = ids[j];
	}
	if (np > l->cap) {
		grow_array((void **)&l->pos, &l->cap, np, sizeof(*l->pos));
		l->node = xrealloc(l->node, l->cap * sizeof(*l->node));
	}
	node = same ? l->node[same - 1] : 0;
	/* from the root: frames[] holds the addresses' frames leaf first */
	for (size_t k = same, at = nf; k < np; k++) {
		for (uint32_t j = 0; j < b->pos[np - 1 - k].nframes; j++)
			node = profile_node(b->p, node, b->frames[--at]);
		l->pos[k] = b->pos[np - 1 - k];
		l->node[k] = node;
	}
	l->n = np;
	l->tid = c->tid;
	l->user_epoch = c->user_epoch;
	l->kernel_epoch = c->kernel_epoch;
	l->valid = keep;
	return node;
}

static uint64_t chain_hash(const void *items, size_t id)
{
	return ((const struct chain *)items)[id].hash;
}

/* Does a callchain hold kernel addresses (a kernel context marker)? */
static int has_kernel_part(const uint64_t *words, size_t nw)
{
	for (size_t i = 0; i < nw; i++)
		if (words[i] == PERF_CONTEXT_KERNEL)
			return 1;
	return 0;
}

uint64_t stacks_kernel_leaf_added(const struct stack_builder *b)
{
	return b->kernel_leaf_added;
}

uint64_t stacks_at_kernel_limit(const struct stack_builder *b)
{
	return b->at_kernel_limit;
}

/* The addresses of a callchain, its context markers left out. */
static size_t chain_addresses(const uint64_t *words, size_t nw)
{
	size_t n = 0;

	for (size_t i = 0; i < nw; i++)
		n += words[i] < PERF_CONTEXT_MAX;
	return n;
}

uint32_t stacks_sample_node(struct stack_builder *b, const struct sample_ctx *c)
{
	const struct perf_record *rec = c->rec;
	const struct perf_sample *s = &rec->u.sample;
	int is_chain = s->has_callchain && s->nr_callchain;
	const uint64_t *words = is_chain ? s->callchain : &s->ip;
	size_t nw = is_chain ? (size_t)s->nr_callchain : 1, i, lbr_words = 0;
	int kernel_ctx = rec->cpumode == PERF_RECORD_MISC_KERNEL;
	const uint64_t *lw;
	struct chain ch;

	/* the kernel stops a callchain at kernel.perf_event_max_stack addresses */
	if (is_chain && chain_addresses(words, nw) == STACKS_KERNEL_LIMIT)
		b->at_kernel_limit++;
	lw = b->lbr ? lbr_sample(b->lbr, c, &lbr_words) : NULL;
	if (lw) {
		words = lw;
		nw = lbr_words;
		is_chain = 1;
	} else if (b->uw) {
		size_t k = unwinding_sample(b->uw, c, b->unwound, UNWINDING_MAX_WORDS);

		if (k) {
			words = b->unwound;
			nw = k;
			is_chain = 1;
		}
	}
	if (is_chain && kernel_ctx && !has_kernel_part(words, nw)) {
		/* perf record --user-callchains: the sample was taken in the kernel, its
		 * callchain holds user space only; the ip is its kernel leaf */
		if (nw + 2 > b->joined_cap)
			grow_array((void **)&b->joined, &b->joined_cap, nw + 2, sizeof(*b->joined));
		b->joined[0] = PERF_CONTEXT_KERNEL;
		b->joined[1] = s->ip;
		memcpy(b->joined + 2, words, nw * sizeof(*words));
		words = b->joined;
		nw += 2;
		b->kernel_leaf_added++;
	}
	if (c->jit_table >= 0 || nw > STACKS_MAX_FRAMES)
		return walk_node(b, words, nw, kernel_ctx, c);
	ch.user_epoch = c->user_epoch;
	ch.kernel_epoch = c->kernel_epoch;
	ch.flags = (uint32_t)kernel_ctx | (uint32_t)is_chain << 1;
	ch.hash = hash_bytes(words, nw * sizeof(*words)) ^
		  hash_u64(ch.user_epoch ^ hash_u64(ch.kernel_epoch * 4 + ch.flags));
	id_index_reserve(&b->chain_index, b->nchains, chain_hash, b->chains);
	for (i = ch.hash & (b->chain_index.nslots - 1); b->chain_index.slots[i];
	     i = (i + 1) & (b->chain_index.nslots - 1)) {
		const struct chain *e = &b->chains[b->chain_index.slots[i] - 1];

		if (e->hash == ch.hash && e->n == nw && e->user_epoch == ch.user_epoch &&
		    e->kernel_epoch == ch.kernel_epoch && e->flags == ch.flags &&
		    memcmp(b->words + e->first, words, nw * sizeof(*words)) == 0)
			return e->node;
	}
	ch.node = walk_node(b, words, nw, kernel_ctx, c);
	if (b->nwords + nw > CHAIN_WORDS_MAX)
		return ch.node;
	ch.first = b->nwords;
	ch.n = (uint32_t)nw;
	if (b->nwords + nw > b->words_cap)
		/* 1 MB at first, its pages made as they are written: grown from 4 KB by
		 * doubling it was moved with mremap twice a run, each a TLB flush of the
		 * other core while the symbolizer's thread lives */
		grow_array((void **)&b->words, &b->words_cap,
			   b->nwords + nw > CHAIN_WORDS_FIRST ? b->nwords + nw : CHAIN_WORDS_FIRST,
			   sizeof(*b->words));
	memcpy(b->words + b->nwords, words, nw * sizeof(*words));
	b->nwords += nw;
	VEC_PUSH(b->chains, b->nchains, b->chains_cap, ch);
	b->chain_index.slots[i] = (uint32_t)b->nchains;
	return ch.node;
}
