/* sched: the scheduler's sched:sched_switch tracepoint, read by the recording's format. */
#include "convert/sched.h"

#include <string.h>

#include "formats/read/simpleperf.h"

int sched_switch_format(const struct perf_reader *r, const char *input,
			struct sched_switch_fmt *f, struct diag *d)
{
	const struct perf_event_desc *e = NULL;
	const struct tracefmt_event *te;
	const struct sp_info *sp;
	const char *v;
	const void *data;
	size_t len;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < perf_reader_nevents(r) && !e; i++) {
		const struct perf_event_desc *x = perf_reader_event(r, i);

		if (x->type == PERF_TYPE_TRACEPOINT && x->name &&
		    strcmp(x->name, "sched:sched_switch") == 0)
			e = x;
	}
	if (!e)
		return 0;
	data = perf_reader_tracing_data(r, &len);
	if (!data && (sp = perf_reader_simpleperf(r)) &&
	    (v = sp_info_meta(sp, "trace_offcpu")) && strcmp(v, "true") == 0) {
		f->id = e->config;
		return 2;
	}
	f->t = data ? tracefmt_parse(data, len, input, d) : NULL;
	te = f->t ? tracefmt_find(f->t, e->config) : NULL;
	if (te && strcmp(te->system, "sched") == 0 && strcmp(te->name, "sched_switch") == 0) {
		f->id = e->config;
		f->prev_pid = tracefmt_field(te, "prev_pid");
		f->prev_state = tracefmt_field(te, "prev_state");
		f->next_pid = tracefmt_field(te, "next_pid");
		if (f->prev_pid && f->prev_state && f->next_pid)
			return 1;
	}
	diag_warn(d, input, DIAG_NO_OFFSET, "sched:sched_switch samples without %s: counted "
		  "as events, not as off-CPU time", !data ? "the recording's tracing data "
		  "(HEADER_TRACING_DATA)" : "its fields prev_pid, prev_state and next_pid in "
		  "the recording's tracing data");
	sched_switch_release(f);
	return 0;
}

void sched_switch_release(struct sched_switch_fmt *f)
{
	tracefmt_free(f->t);
	memset(f, 0, sizeof(*f));
}

static enum pc_state state_of_letter(char c)
{
	switch (c) {
	case 'S': return PC_STATE_SLEEPING;
	case 'D': return PC_STATE_DISK;
	case 'T':
	case 't': return PC_STATE_STOPPED;
	case 'I': return PC_STATE_IDLE;
	case 'R': return PC_STATE_PREEMPTED;
	default: return PC_STATE_OTHER;
	}
}

enum pc_state sched_state_of(const struct tracefmt_field *ps, uint64_t st)
{
	uint64_t table = 0;

	if (!ps || !ps->nlabels || !ps->labels_are_flags) {
		/* TASK_REPORT: S 0x1, D 0x2, T 0x4, t 0x8, X 0x10, Z 0x20, P 0x40, I 0x80;
		 * none, or TASK_REPORT_MAX (0x100) and above: preempted */
		static const char letters[] = "SDTtXZPI";

		if (st == 0 || st >= 0x100)
			return PC_STATE_PREEMPTED;
		for (int b = 0; b < 8; b++)
			if (st & (1u << b))
				return state_of_letter(letters[b]);
		return PC_STATE_OTHER;
	}
	for (size_t i = 0; i < ps->nlabels; i++)
		table |= ps->labels[i].value;
	if (!(st & table) || (st & ~table) > table)
		return PC_STATE_PREEMPTED;
	for (int b = 0; b < 64; b++) {
		uint64_t bit = 1ULL << b;

		if (!(st & bit & table))
			continue;
		for (size_t i = 0; i < ps->nlabels; i++)
			if (ps->labels[i].value == bit && ps->labels[i].label)
				return state_of_letter(ps->labels[i].label[0]);
		return PC_STATE_OTHER;
	}
	return PC_STATE_OTHER;
}

int sched_switch_decode(const struct sched_switch_fmt *f, const struct perf_sample *s,
			struct sched_switch *out)
{
	int64_t prev, next, state;

	if (!s->raw || !tracefmt_read_int(f->t, f->prev_pid, s->raw, s->raw_size, &prev) ||
	    !tracefmt_read_int(f->t, f->next_pid, s->raw, s->raw_size, &next) ||
	    !tracefmt_read_int(f->t, f->prev_state, s->raw, s->raw_size, &state))
		return 0;
	out->prev_tid = (uint32_t)prev;
	out->next_tid = (uint32_t)next;
	out->state = sched_state_of(f->prev_state, (uint64_t)state);
	return 1;
}
