/* sched: the scheduler's sched:sched_switch tracepoint, read by the recording's format. */
#ifndef PERFCONV_SCHED_H
#define PERFCONV_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "formats/read/perfdata.h"
#include "formats/model/profile.h"
#include "formats/read/tracefmt.h"

/* Where sched_switch's fields are, from the recording's HEADER_TRACING_DATA. */
struct sched_switch_fmt {
	struct tracefmt *t;       /* owned */
	uint64_t id;              /* the tracepoint's id: its events' attr config */
	const struct tracefmt_field *prev_pid, *prev_state, *next_pid;
};

/* One switch: the thread that left the CPU, how, and the one that came in. */
struct sched_switch {
	uint32_t prev_tid, next_tid;
	enum pc_state state;      /* PREEMPTED when it was runnable */
};

/*
 * Does the recording sample sched:sched_switch, with the format its tracing data
 * gives? 1 and *f filled (release it with sched_switch_release), else 0; a
 * recording that samples it without a usable format is warned about through `d`.
 * 2 (f->id the event's config, no fields) for a recording of simpleperf's
 * --trace-offcpu, which has no tracing data: each sample of the tracepoint is its own
 * thread's switch-out, and the thread's next sample or switch-in ends it (simpleperf's
 * report_lib_interface.cpp, ProcessSampleRecord).
 */
int sched_switch_format(const struct perf_reader *r, const char *input,
			struct sched_switch_fmt *f, struct diag *d);
void sched_switch_release(struct sched_switch_fmt *f);

/* A sample of that event decoded: 1, or 0 when its raw data does not hold the fields. */
int sched_switch_decode(const struct sched_switch_fmt *f, const struct perf_sample *s,
			struct sched_switch *out);

/*
 * The state a thread left the CPU in, from prev_state: preempted when no bit of the
 * print fmt's table is set (its "R") or a bit above them is (TASK_REPORT_MAX, perf's
 * "R+"); else the lowest bit's letter (S sleeping, D disk, T/t stopped, I idle). With
 * no table, the bits Linux has used since 4.14.
 */
enum pc_state sched_state_of(const struct tracefmt_field *prev_state, uint64_t value);

#endif
