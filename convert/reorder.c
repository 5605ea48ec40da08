/* reorder: records held until every record earlier in time has been read, then delivered. */
#include "convert/reorder.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* A held record, with copies of the bytes it borrowed from the reader; but a sample's
 * stack copy inflated from compressed data is copied only if the reader is about to
 * write over it before the sample is delivered. The reader writes its buffer from the
 * start again a block at a time and says which range each block may write over, so a
 * stack is copied only if it is still held about a buffer's length (a megabyte) of
 * records later (bench/work/dwarf.data, -z --call-graph dwarf: copying every stack was
 * 5% of the CPU time; copying all those held when the reader went back to its buffer's
 * start, 4,368 of 11,818, was 4%; a larger buffer, copying fewer, was slower: 2 to 4
 * MB more to fault in and out of the caches). */
struct held {
	struct perf_record rec;
	uint64_t time;
	void *data;
	size_t bytes, cap;
	int block;            /* its copy's block in q->blocks, or -1 */
};

/* Copied stacks side by side: they are delivered in about the order they are copied,
 * so a block is free again once its last one is, and is kept for the next copies. */
struct stack_block {
	uint8_t *p;
	size_t cap, used;
	size_t live;          /* held samples whose stack is in it */
};

/* A copy's buffer, kept for the next record once its own is delivered (a malloc and a
 * free a sample were 2% of the instructions). */
struct spare {
	void *p;
	size_t cap;
};

/* A held stack that points into the reader's buffer (p NULL: copied since). */
struct borrow {
	const uint8_t *p;
	size_t len, seq;      /* seq: the record's sequence number */
};

struct reorder {
	struct reorder_ops ops;
	/* a ring: the records of sequence numbers [head, n) are held, in file order, the
	 * one of number i at v[i & (cap - 1)] (cap a power of two) */
	struct held *v;
	size_t head, n, cap;
	size_t bytes;         /* their copies' */
	struct spare *spares;
	size_t nspares, spares_cap;
	struct borrow *bv;    /* in file order */
	size_t bv_head, bv_n, bv_cap;
	struct stack_block *blocks;
	size_t nblocks, blocks_cap, last_block;
	/* perf's rounds */
	uint64_t round_max;   /* the largest time read */
	uint64_t horizon;     /* round_max at the last round's end */
	int rounds;
};

#define SPARES_MAX 1024

/* a block's size in steps of 1 MB (its pages made as they are written): one grown is
 * one moved, a TLB flush of the other core while the symbolizer's thread lives */
#define BLOCK_STEP ((size_t)1 << 20)

struct reorder *reorder_new(const struct reorder_ops *ops)
{
	struct reorder *q = xcalloc(1, sizeof(*q));

	q->ops = *ops;
	return q;
}

static void free_large(struct reorder *q, void *p)
{
	if (!p)
		return;
	if (q->ops.free_large)
		q->ops.free_large(q->ops.arg, p);
	else
		free(p);
}

static void *buffer(struct reorder *q, size_t need, size_t *cap)
{
	while (q->nspares) {
		struct spare sp = q->spares[--q->nspares];

		if (sp.cap >= need) {
			*cap = sp.cap;
			return sp.p;
		}
		free(sp.p);
	}
	/* a power of two: a stack copy's size varies by sample */
	for (*cap = 256; *cap < need; *cap *= 2)
		;
	return xmalloc(*cap);
}

static void unbuffer(struct reorder *q, void *p, size_t cap)
{
	struct spare sp = { p, cap };

	if (!p)
		return;
	if (q->nspares >= SPARES_MAX) {
		free(p);
		return;
	}
	VEC_PUSH(q->spares, q->nspares, q->spares_cap, sp);
}

static void *take(uint8_t **at, const void *src, size_t len)
{
	void *dst = *at;

	if (len)
		memcpy(dst, src, len);
	*at += align8(len);
	return dst;
}

static struct held *held_at(const struct reorder *q, size_t seq)
{
	return &q->v[seq & (q->cap - 1)];
}

/* Room for one more held record: the ring doubled when full, its records moved to
 * where their numbers fall in the larger one. */
static void ring_room(struct reorder *q)
{
	struct held *old = q->v;
	size_t ocap = q->cap;

	if (q->n - q->head < q->cap)
		return;
	q->cap = ocap ? 2 * ocap : 64;
	q->v = xmalloc(q->cap * sizeof(*q->v));
	for (size_t i = q->head; i < q->n; i++)
		q->v[i & (q->cap - 1)] = old[i & (ocap - 1)];
	free(old);
}

/* The bytes a sample's copies take (its stack's unless borrowed). */
static size_t sample_bytes(const struct perf_sample *x, int borrowed)
{
	return align8(x->nr_callchain * 8) + align8(x->raw_size) +
	       align8((size_t)x->nregs_user * 8) + (size_t)x->nr_branches * sizeof(*x->branches) +
	       (borrowed ? 0 : align8((size_t)x->stack_user_dyn));
}

static void copy_sample(struct perf_sample *y, const struct perf_sample *x, uint8_t *at,
			int borrowed)
{
	/* the stack's bytes past dyn are not valid, and not read */
	y->callchain = x->callchain ? take(&at, x->callchain, x->nr_callchain * 8) : NULL;
	y->regs_user = x->regs_user ? take(&at, x->regs_user, (size_t)x->nregs_user * 8) : NULL;
	y->raw = x->raw ? take(&at, x->raw, x->raw_size) : NULL;
	y->branches = x->branches ? take(&at, x->branches,
					 (size_t)x->nr_branches * sizeof(*x->branches))
				  : NULL;
	if (!borrowed)
		y->stack_user = x->stack_user ? take(&at, x->stack_user, (size_t)x->stack_user_dyn)
					      : NULL;
}

void reorder_hold(struct reorder *q, const struct perf_record *rec, uint64_t time,
		  int stack_borrowed)
{
	struct held *hp;
	const struct perf_sample *x = &rec->u.sample;
	const char **str = NULL;
	size_t need = 0;
	uint8_t *at;
	int borrowed = 0;

	/* made where it is kept (a record is about 300 bytes), not copied in */
	ring_room(q);
	hp = held_at(q, q->n);
	hp->block = -1;
	hp->rec = *rec;
	hp->rec.raw = NULL;
	hp->time = time;
	if (rec->type == PERF_RECORD_SAMPLE) {
		borrowed = stack_borrowed && x->stack_user && x->stack_user_dyn;
		need = sample_bytes(x, borrowed);
	} else if ((str = perf_record_string(&hp->rec)) != NULL) {
		if (*str)
			need = strlen(*str) + 1;
		else
			str = NULL;
	}
	hp->cap = 0;
	hp->data = at = need ? buffer(q, need, &hp->cap) : NULL;
	hp->bytes = need;
	if (rec->type == PERF_RECORD_SAMPLE)
		copy_sample(&hp->rec.u.sample, x, at, borrowed);
	else if (str)
		*str = take(&at, *str, need);
	if (borrowed) {
		struct borrow bw = { x->stack_user, (size_t)x->stack_user_dyn, q->n };

		hp->bytes += align8((size_t)x->stack_user_dyn);
		VEC_PUSH(q->bv, q->bv_n, q->bv_cap, bw);
	}
	q->bytes += hp->bytes;
	q->n++;
}

/* A block with `need` bytes free after its stacks: the last one used if it has them. */
static int free_block(struct reorder *q, size_t need)
{
	struct stack_block nb = { NULL, 0, 0, 0 };
	size_t i;

	if (q->nblocks && q->blocks[q->last_block].cap - q->blocks[q->last_block].used >= need)
		return (int)q->last_block;
	for (i = 0; i < q->nblocks; i++)
		if (!q->blocks[i].live && q->blocks[i].cap >= need)
			break;
	if (i == q->nblocks) {
		for (i = 0; i < q->nblocks && q->blocks[i].live; i++)
			;
		if (i == q->nblocks)
			VEC_PUSH(q->blocks, q->nblocks, q->blocks_cap, nb);
		q->blocks[i].cap = (need + BLOCK_STEP - 1) / BLOCK_STEP * BLOCK_STEP;
		q->blocks[i].p = xrealloc(q->blocks[i].p, q->blocks[i].cap);
	}
	q->blocks[i].used = 0;
	q->last_block = i;
	return (int)i;
}

static int overlaps(const struct borrow *bw, const void *lo, const void *hi)
{
	return bw->p && bw->p < (const uint8_t *)hi && bw->p + bw->len > (const uint8_t *)lo;
}

/* The borrowed stacks in [lo, hi) copied: q->bv lists them, a few tens, where the held
 * records with the rest are a few hundred bytes each. */
void reorder_unborrow(void *arg, const void *lo, const void *hi)
{
	struct reorder *q = arg;
	size_t need = 0;
	struct stack_block *blk;
	int b;

	for (size_t j = q->bv_head; j < q->bv_n; j++)
		if (overlaps(&q->bv[j], lo, hi))
			need += align8(q->bv[j].len);
	if (!need)
		return;
	b = free_block(q, need);
	blk = &q->blocks[b];
	for (size_t j = q->bv_head; j < q->bv_n; j++) {
		struct borrow *bw = &q->bv[j];
		struct held *h;

		if (!overlaps(bw, lo, hi))
			continue;
		h = held_at(q, bw->seq);
		memcpy(blk->p + blk->used, bw->p, bw->len);
		h->rec.u.sample.stack_user = blk->p + blk->used;
		blk->used += align8(bw->len);
		h->block = b;
		blk->live++;
		bw->p = NULL;
	}
}

void reorder_seen(struct reorder *q, uint64_t time)
{
	if (time > q->round_max)
		q->round_max = time;
}

int reorder_round_end(struct reorder *q, uint64_t *horizon)
{
	/* what came before the last round's end is all there is up to its largest time */
	int ready = q->rounds++ > 0;

	*horizon = ready ? q->horizon : 0;
	q->horizon = q->round_max;
	return ready;
}

void reorder_flush(struct reorder *q, uint64_t horizon)
{
	while (q->head < q->n && held_at(q, q->head)->time <= horizon) {
		struct held *h = held_at(q, q->head++);

		q->ops.deliver(q->ops.arg, &h->rec);
		unbuffer(q, h->data, h->cap);
		if (h->block >= 0 && --q->blocks[h->block].live == 0)
			q->blocks[h->block].used = 0;
		q->bytes -= h->bytes;
	}
	while (q->bv_head < q->bv_n && q->bv[q->bv_head].seq < q->head)
		q->bv_head++;
	if (q->bv_head > 64 && q->bv_head * 2 > q->bv_n) {
		memmove(q->bv, q->bv + q->bv_head, (q->bv_n - q->bv_head) * sizeof(*q->bv));
		q->bv_n -= q->bv_head;
		q->bv_head = 0;
	}
}

size_t reorder_held(const struct reorder *q)
{
	return q->n - q->head;
}

size_t reorder_bytes(const struct reorder *q)
{
	return q->bytes;
}

void reorder_free(struct reorder *q)
{
	if (!q)
		return;
	for (size_t i = q->head; i < q->n; i++)
		free(held_at(q, i)->data);
	for (size_t i = 0; i < q->nblocks; i++)
		free_large(q, q->blocks[i].p);
	free(q->blocks);
	for (size_t i = 0; i < q->nspares; i++)
		free(q->spares[i].p);
	free(q->spares);
	free(q->bv);
	free_large(q, q->v);
	free(q);
}
