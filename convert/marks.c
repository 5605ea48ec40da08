/* marks: forks, exits, execs and lost records as the profile's marks (profile.h), for
 * the writers that draw them on their threads' timelines (firefox). */
#include "convert/kinds.h"

#include <string.h>

/* Its state: the profile when it keeps marks, else NULL (nothing to do). */
static void *marks_start(struct conversion *c)
{
	return c->p->keep_marks ? c->p : NULL;
}

static void marks_record(void *state, struct conversion *c, const struct sample_ctx *x)
{
	const struct perf_record *rec = x->rec;
	struct pc_mark m;

	if (!state)
		return;
	memset(&m, 0, sizeof(m));
	m.time = m.end = x->time;
	m.cpu = rec->sid.has_cpu ? rec->sid.cpu : PC_NO_CPU;
	switch (rec->type) {
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* perf's own account of what ran before it began has no time to show */
		if (rec->type == PERF_RECORD_FORK && rec->u.fork.synthesized)
			return;
		m.kind = rec->type == PERF_RECORD_FORK ? PC_MARK_FORK : PC_MARK_EXIT;
		m.pid = rec->u.fork.pid;
		m.tid = rec->u.fork.tid;
		if (rec->u.fork.time)
			m.time = m.end = rec->u.fork.time;
		break;
	case PERF_RECORD_COMM:
		if (!rec->u.comm.exec)
			return;
		m.kind = PC_MARK_EXEC;
		m.pid = rec->u.comm.pid;
		m.tid = rec->u.comm.tid;
		m.text = profile_str(c->p, rec->u.comm.comm);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		m.kind = PC_MARK_LOST;
		m.lost_samples = rec->type == PERF_RECORD_LOST_SAMPLES;
		m.count = rec->u.lost.lost;
		m.pid = rec->sid.has_tid ? rec->sid.pid : UINT32_MAX;
		m.tid = rec->sid.has_tid ? rec->sid.tid : UINT32_MAX;
		break;
	default:
		return;
	}
	if (!rec->sid.has_time && !((rec->type == PERF_RECORD_FORK || rec->type == PERF_RECORD_EXIT) &&
				     rec->u.fork.time))
		return; /* a record of no time (a recording without them) has no place */
	profile_add_mark(c->p, &m);
}

const struct sample_kind marks_kind = {
	.name = "marks",
	.types = { PERF_RECORD_FORK, PERF_RECORD_EXIT, PERF_RECORD_COMM, PERF_RECORD_LOST,
		   PERF_RECORD_LOST_SAMPLES },
	.start = marks_start,
	.record = marks_record,
};
