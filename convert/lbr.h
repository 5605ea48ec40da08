/* lbr: the user part of --call-graph lbr samples, from their LBR call stack. */
#ifndef PERFCONV_LBR_H
#define PERFCONV_LBR_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "convert/session.h"
#include "formats/read/perfdata.h"

/* Branch-stack depths counted one by one; deeper ones share the last count. */
#define LBR_DEPTHS 129

/* What the LBR stacks held, for the summary. */
struct lbr_stats {
	uint64_t samples;             /* samples whose user stack came from their LBR */
	uint64_t by_depth[LBR_DEPTHS];/* of those, by their number of entries */
	uint32_t deepest;             /* the most entries a sample had */
	uint64_t no_user;             /* callchain without a user context (a kernel thread's,
					 or cut before it): taken as recorded, as perf does */
	uint64_t bad_entries;         /* entries whose `from` is no address (a context
					 marker's value): left out */
};

/* Does the event record its user stacks in its LBR call stack (perf record
 * --call-graph lbr: BRANCH_STACK sampled, branch_sample_type CALL_STACK)? */
int lbr_event(const struct perf_event_desc *e);

struct lbr;

/* NULL when no event of the recording has an LBR call stack. */
struct lbr *lbr_new(const struct perf_reader *r);
/* NULL-safe. */
void lbr_free(struct lbr *l);

/*
 * The raw stack of a sample of an LBR event, as convert/callchain.h walks it: the
 * callchain's part before its PERF_CONTEXT_USER marker (the kernel's) as recorded,
 * then the user part made from the LBR call stack instead of the callchain's
 * frame-pointer walk (garbage in code without frame pointers): the interrupted user
 * address as the leaf (a sample taken in user space: its ip, which a precise event
 * records at the sampled instruction while the callchain is taken later; taken in
 * the kernel: the callchain's first user address), then each entry's `from`,
 * innermost first. A `from` is the
 * call instruction itself, not a return address, so each is written after a context
 * marker of its own: exact, looked up as it is (not at address - 1).
 *
 * perf (tools/perf/util/machine.c, resolve_lbr_callchain_sample) takes the first
 * entry's `to` as the leaf instead: the start of the function last called, which
 * names the PLT stub (`qsort@plt`) or the function that tail-called the interrupted
 * one, and loses the sampled address within it; the rest is the same.
 *
 * Returns the words (owned by `l`, valid until the next call) and their count in
 * *nw, or NULL for a sample to take as it is (not an LBR event's; no branch stack;
 * taken in the kernel with a callchain without a user context: a kernel thread's).
 * A sample taken in user space whose callchain has no user context (recorded with
 * exclude_callchain_user) gets its ip and the LBR after the callchain.
 */
const uint64_t *lbr_sample(struct lbr *l, const struct sample_ctx *c, size_t *nw);

const struct lbr_stats *lbr_stats(const struct lbr *l);

/* The summary's lines: how deep the LBR stacks were, and those the hardware cut. */
void lbr_report(const struct lbr *l, struct diag *d);

#endif
