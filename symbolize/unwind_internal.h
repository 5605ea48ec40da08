/* unwind_internal: what the unwinder (unwind.c) and its memo of walks (unwind_memo.c)
 * share. */
#ifndef PERFCONV_UNWIND_INTERNAL_H
#define PERFCONV_UNWIND_INTERNAL_H

#include "symbolize/unwind.h"

/* What a walk read that its result depends on (see struct unwind_memo). */
#define UNWIND_TRACE_READS 64
#define UNWIND_TRACE_STEPS 64

/* One step of a traced walk, frame k to k + 1 (for the walks from frame k on). */
struct unwind_trace_step {
	uint64_t sp;                /* frame k's stack pointer */
	uint32_t used;              /* frame k's registers the step read */
	uint32_t carried;           /* and those frame k + 1 has from it */
	uint16_t first_read;        /* its reads: off[first_read..] */
	uint8_t flags;              /* TRACE_* */
};
#define TRACE_FIRST 1               /* frame k's pc is exact (not a return address) */
#define TRACE_SAME_SP 2             /* the step before kept the stack pointer */
#define TRACE_UNSURE 4              /* a read failed (the copy's end mattered), or a
				       signal frame was counted */

struct unwind_memo;

struct unwind_trace {
	uint32_t off[UNWIND_TRACE_READS]; /* the stack words read: their offsets in the copy */
	uint64_t val[UNWIND_TRACE_READS]; /* and what they held */
	size_t n;
	int overflow;               /* more were read: not kept */
	uint32_t init;              /* registers that still hold the sample's value */
	uint32_t dep;               /* the sample's registers the walk read */
	/* the steps, for walks from a frame on; nsteps past UNWIND_TRACE_STEPS: not kept */
	struct unwind_trace_step step[UNWIND_TRACE_STEPS];
	size_t nsteps;
	uint32_t used;              /* the step being made's */
	int unsure;
	/* walks from a frame on looked up at each frame (NULL: not) */
	struct unwind_memo *memo;
	uint64_t ctx, epoch;
	int from_memo;              /* the walk ended with one: not kept again */
	uint32_t aux;               /* that walk's */
};

/* The walk from frame k on (its pc, stack pointer and flags), if one made before
 * holds for this copy: its pcs written at pcs[k..] (room for `cap` in all), its
 * reads added to *tr's, and the count of pcs; 0 if none. */
size_t unwind_memo_rest(struct unwind_memo *m, struct unwind_trace *tr, uint64_t pc,
			uint64_t sp, unsigned flags, const uint8_t *stack, uint64_t sp0, size_t size,
			uint64_t *pcs, size_t k, size_t cap, uint32_t *aux);

/* unwind_stack(), with what the walk read kept in *tr (NULL: not kept); tr->init is
 * the registers known at the start (regs->valid), tr->n and tr->dep 0. */
size_t unwind_walk(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		   unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		   struct unwind_result *res, struct unwind_trace *tr);

#endif
