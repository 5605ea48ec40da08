/* unwind_internal: what the unwinder (unwind.c) and its memo of walks (unwind_memo.c)
 * share. */
#ifndef PERFCONV_UNWIND_INTERNAL_H
#define PERFCONV_UNWIND_INTERNAL_H

#include "symbolize/unwind.h"

/* What a walk read that its result depends on (see struct unwind_memo). */
#define UNWIND_TRACE_READS 64
struct unwind_trace {
	uint32_t off[UNWIND_TRACE_READS]; /* the stack words read: their offsets in the copy */
	uint64_t val[UNWIND_TRACE_READS]; /* and what they held */
	size_t n;
	int overflow;               /* more were read: not kept */
	uint32_t init;              /* registers that still hold the sample's value */
	uint32_t dep;               /* the sample's registers the walk read */
};

/* unwind_stack(), with what the walk read kept in *tr (NULL: not kept); tr->init is
 * the registers known at the start (regs->valid), tr->n and tr->dep 0. */
size_t unwind_walk(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		   unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		   struct unwind_result *res, struct unwind_trace *tr);

#endif
