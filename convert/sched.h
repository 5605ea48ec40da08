/* sched: the scheduler's sched:sched_switch tracepoint, as a recording holds it. */
#ifndef PERFCONV_SCHED_H
#define PERFCONV_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "formats/perfdata.h"
#include "formats/profile.h"

/* Where sched_switch's fields are in a sample's raw data. */
struct sched_switch_fmt {
	uint64_t id;              /* the tracepoint's id: its events' attr config */
	size_t prev_pid, prev_state, next_pid; /* byte offsets */
	size_t prev_state_size;
	size_t min_size;          /* raw bytes the fields need */
};

/* One switch: the thread that left the CPU, how, and the one that came in. */
struct sched_switch {
	uint32_t prev_tid, next_tid;
	enum pc_state state;      /* PREEMPTED when it was runnable */
};

/* Does the recording sample sched:sched_switch? 1 and *f filled, else 0. */
int sched_switch_format(const struct perf_reader *r, struct sched_switch_fmt *f);

/* A sample of that event decoded: 1, or 0 when its raw data is too short. */
int sched_switch_decode(const struct sched_switch_fmt *f, const struct perf_sample *s,
			struct sched_switch *out);

/* The kernel's prev_state (TASK_REPORT bits; above them: preempted) as a state. */
enum pc_state sched_state_of(uint64_t prev_state);

#endif
