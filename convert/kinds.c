/* kinds: the table of the kinds of record pass 2 of a conversion takes. */
#include "convert/kinds.h"

#include <string.h>

const struct sample_kind *const sample_kinds[] = {
	&oncpu_kind,
	&offcpu_kind,
	&marks_kind,
	NULL,
};

void conversion_filtered(struct conversion *c, const struct sample_ctx *x)
{
	uint32_t *v = u64map_get(&c->filtered_index, (uint64_t)x->pid + 1);

	c->st->samples_filtered++;
	if (!v) {
		struct conversion_proc cp = { x->pid, x->comm, 0 };

		VEC_PUSH(c->filtered, c->nfiltered, c->filtered_cap, cp);
		u64map_put(&c->filtered_index, (uint64_t)x->pid + 1, (uint32_t)c->nfiltered);
		v = u64map_get(&c->filtered_index, (uint64_t)x->pid + 1);
	}
	c->filtered[*v - 1].samples++;
	if (x->pid == x->tid)
		c->filtered[*v - 1].comm = x->comm; /* a process by its main thread's name */
}

uint32_t conversion_stack(struct conversion *c, const struct sample_ctx *x)
{
	if (c->stack_of != x->rec->index + 1) {
		c->stack_node = stacks_sample_node(c->stacks, x);
		c->stack_of = x->rec->index + 1;
	}
	return c->stack_node;
}
