/* stacks: a sample's raw stack into a node of the profile's stack tree. */
#ifndef PERFCONV_STACKS_H
#define PERFCONV_STACKS_H

#include <stdint.h>

#include "convert/lbr.h"
#include "convert/resolve.h"
#include "convert/replay.h"
#include "convert/session.h"
#include "convert/unwinding.h"
#include "formats/read/perfdata.h"
#include "formats/model/profile.h"
#include "symbolize/jit/jitprocs.h"

/* Raw stacks longer than this are walked every time, not kept for a lookup (all their
 * frames are kept in the profile, however deep). */
#define STACKS_MAX_FRAMES 1024

struct stack_builder;

/* The objects must outlive the builder; the replay is finished, the JIT files loaded.
 * `uw` (may be NULL) unwinds the user stacks of --call-graph dwarf samples, `lbr`
 * (may be NULL) makes those of --call-graph lbr samples from their LBR. */
struct stack_builder *stacks_new(struct profile *p, const struct replay *rp, struct resolver *res,
				 const struct jit_procs *jits, struct unwinding *uw, struct lbr *lbr);
/* NULL-safe. */
void stacks_free(struct stack_builder *b);

/*
 * The leaf node of sample `c`: its callchain (or its IP alone; or, for a --call-graph
 * dwarf sample, its kernel part and the unwound user stack, convert/unwinding.h; for
 * a --call-graph lbr one, its kernel part and the LBR call stack, convert/lbr.h)
 * walked (convert/callchain.h), each address resolved into its frames, the frames
 * interned as a path from the root. A raw stack met before in the same process with
 * the same mappings (the context's epochs) is one hash lookup; processes with JIT
 * code, whose frames change without a mapping changing, are walked every time.
 */
uint32_t stacks_sample_node(struct stack_builder *b, const struct sample_ctx *c);
/* The samples are done: the raw stacks met (megabytes when a long recording's stacks
 * differ, as --call-graph dwarf ones of deep recursion do) are let go of before the
 * fix-ups that follow grow the profile. Samples may still come after, found anew. */
void stacks_forget_raw(struct stack_builder *b);

/* Samples taken in the kernel whose callchain held user space only (perf record
 * --user-callchains): their ip was put first as their kernel leaf. */
uint64_t stacks_kernel_leaf_added(const struct stack_builder *b);
/* kernel.perf_event_max_stack's default: a callchain of this many addresses was cut */
#define STACKS_KERNEL_LIMIT 127
/* Samples whose recorded callchain holds STACKS_KERNEL_LIMIT addresses. */
uint64_t stacks_at_kernel_limit(const struct stack_builder *b);

#endif
