/* sched: the scheduler's sched:sched_switch tracepoint, as a recording holds it. */
#include "convert/sched.h"

#include <string.h>

/* Its fields as Linux has laid them out since 4.x, after the 8 bytes of common
 * fields: char prev_comm[16]; pid_t prev_pid; int prev_prio; long prev_state;
 * char next_comm[16]; pid_t next_pid; int next_prio. */
int sched_switch_format(const struct perf_reader *r, struct sched_switch_fmt *f)
{
	for (size_t i = 0; i < perf_reader_nevents(r); i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);

		if (e->type != PERF_TYPE_TRACEPOINT || !e->name ||
		    strcmp(e->name, "sched:sched_switch") != 0)
			continue;
		memset(f, 0, sizeof(*f));
		f->id = e->config;
		f->prev_pid = 24;
		f->prev_state = 32;
		f->prev_state_size = 8;
		f->next_pid = 56;
		f->min_size = 64;
		return 1;
	}
	return 0;
}

static uint64_t field(const uint8_t *raw, size_t off, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, raw + off, size < sizeof(v) ? size : sizeof(v));
	return v;
}

enum pc_state sched_state_of(uint64_t st)
{
	/* TASK_REPORT: S 0x1, D 0x2, T 0x4, t 0x8, X 0x10, Z 0x20, P 0x40, I 0x80;
	 * 0 (running) or TASK_REPORT_MAX (0x100) and above: preempted */
	if (st == 0 || st >= 0x100)
		return PC_STATE_PREEMPTED;
	if (st & 0x1)
		return PC_STATE_SLEEPING;
	if (st & 0x2)
		return PC_STATE_DISK;
	if (st & 0xc)
		return PC_STATE_STOPPED;
	if (st & 0x80)
		return PC_STATE_IDLE;
	return PC_STATE_OTHER;
}

int sched_switch_decode(const struct sched_switch_fmt *f, const struct perf_sample *s,
			struct sched_switch *out)
{
	const uint8_t *raw = s->raw;

	if (!raw || s->raw_size < f->min_size)
		return 0;
	out->prev_tid = (uint32_t)field(raw, f->prev_pid, 4);
	out->next_tid = (uint32_t)field(raw, f->next_pid, 4);
	out->state = sched_state_of(field(raw, f->prev_state, f->prev_state_size));
	return 1;
}
