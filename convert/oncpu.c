/* oncpu: the samples of a sampling event (cpu-clock, cycles, page faults, ...). */
#include "convert/kinds.h"

#include <string.h>

static void oncpu_sample(void *state, struct conversion *c, const struct sample_ctx *x)
{
	const struct perf_sample *s = &x->rec->u.sample;
	struct pc_sample ps;

	(void)state;
	if (!session_wanted(c->s, x->pid, x->tid, x->comm)) {
		conversion_filtered(c, x);
		return;
	}
	memset(&ps, 0, sizeof(ps));
	ps.comm = x->comm;
	ps.stack = conversion_stack(c, x);
	ps.time = c->s->facts.has_time ? x->time : 0;
	ps.pid = x->pid;
	ps.tid = x->tid;
	ps.cpu = x->rec->sid.has_cpu ? x->rec->sid.cpu : PC_NO_CPU;
	ps.event = (uint16_t)(x->rec->event >= 0 ? x->rec->event : 0);
	ps.count = 1;
	ps.period = s->has_period ? s->period : (x->ev && !x->ev->freq ? x->ev->sample_period : 1);
	profile_add_sample(c->p, &ps);
	c->st->samples++;
}

const struct sample_kind oncpu_kind = {
	.name = "sample",
	.types = { PERF_RECORD_SAMPLE },
	.record = oncpu_sample,
};
