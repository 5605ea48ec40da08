/* kinds: what pass 2 of a conversion does with each kind of record it takes.
 *
 * A kind is one file and one entry of sample_kinds[] (convert/kinds.c): the record
 * type it takes, which of those are its own, and its handler with its own state.
 * Today: the samples of a sampling event (convert/oncpu.c), the scheduler's switches
 * (convert/offcpu.c), the marks of timelines (convert/marks.c).
 */
#ifndef PERFCONV_KINDS_H
#define PERFCONV_KINDS_H

#include <stdint.h>

#include "convert/pipeline.h"
#include "convert/session.h"
#include "convert/stacks.h"
#include "convert/summary.h"
#include "formats/model/profile.h"

/* What a kind's handler works with: one conversion's objects. */
struct conversion {
	const struct session_options *opt;
	struct session *s;
	struct profile *p;
	struct convert_stats *st;
	struct stack_builder *stacks; /* a sample's raw stack into a profile node */
	uint64_t stack_of;            /* conversion_stack()'s last record (index + 1) ... */
	uint32_t stack_node;          /* ... and its node */
	/* samples the filters left out, by process (pid + 1 -> index + 1), for saying
	 * what the recording has when nothing matched */
	struct u64map filtered_index;
	struct conversion_proc {
		uint32_t pid, comm;
		uint64_t samples;
	} *filtered;
	size_t nfiltered, filtered_cap;
};

/* The profile node of sample `x`'s stack, made once however many kinds ask. */
uint32_t conversion_stack(struct conversion *c, const struct sample_ctx *x);

/* A sample of `x`'s thread that the filters left out: counted by process. */
void conversion_filtered(struct conversion *c, const struct sample_ctx *x);

#define KIND_MAX_TYPES 8

struct sample_kind {
	const char *name;
	uint32_t types[KIND_MAX_TYPES]; /* the PERF_RECORD_* it takes, 0-terminated */
	/* is this record one of this kind's? NULL: every one of its types */
	int (*takes)(const struct conversion *c, const struct sample_ctx *x);
	/* its state for one conversion (NULL when it needs none), before the first record */
	void *(*start)(struct conversion *c);
	void (*record)(void *state, struct conversion *c, const struct sample_ctx *x);
	/* after the last record (NULL: nothing to do) */
	void (*finish)(void *state, struct conversion *c);
	/* its lines of the closing summary (NULL: none); then its state is freed */
	void (*report)(void *state, struct conversion *c, struct diag *d);
	void (*free)(void *state);
};

/* Every kind, NULL-terminated; a record goes to each kind that takes it, in order. */
extern const struct sample_kind *const sample_kinds[];

/* The kinds, each defined in its own file. */
extern const struct sample_kind oncpu_kind;  /* convert/oncpu.c */
extern const struct sample_kind offcpu_kind; /* convert/offcpu.c */
extern const struct sample_kind marks_kind;  /* convert/marks.c */

#endif
