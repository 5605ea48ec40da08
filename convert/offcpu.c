/* offcpu: off-CPU and wall-clock time from the scheduler's records.
 *
 * A thread's off-CPU interval runs from its switch-out to its next switch-in. The
 * switch-out is a sched:sched_switch sample taken in its context (its callchain is
 * the blocking stack, prev_state the state it left in) or a PERF_RECORD_SWITCH OUT
 * (--switch-events: preempted or not, no stack); the switch-in a sched_switch whose
 * next_pid is the thread, on any CPU, or a PERF_RECORD_SWITCH IN. Records are not in
 * time order across CPUs: they are ordered here between FINISHED_ROUND markers, as
 * perf orders them, so memory follows the threads and one round of records, not the
 * switches. Intervals cut by the recording's start or end, or spanning lost events,
 * are counted, not invented. Wall time is each thread's on-CPU samples (a CPU clock
 * event's periods) plus its off-CPU intervals; in simpleperf's first --trace-offcpu
 * form, each sample's time to its thread's next one (timed_sample).
 */
#include "convert/kinds.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "convert/sched.h"

/* An out and an in of one switch seen twice (the tracepoint and the SWITCH record)
 * are this close; two outs further apart mean a switch-in was not seen. */
#define SAME_SWITCH_NS 100000

enum { EV_OUT, EV_IN, EV_ONCPU, EV_LOST };

struct sw_ev {
	uint64_t time, seq;
	uint64_t period;     /* EV_ONCPU: the sample's period */
	uint32_t pid, tid, comm, stack, cpu;
	uint16_t event;      /* EV_ONCPU: its event */
	uint8_t type, state; /* EV_OUT: enum pc_state */
	uint8_t has_stack, wanted;
	uint8_t running;     /* EV_IN: a sample of the thread, no switch-in seen */
};

struct th {
	uint32_t pid, tid;
	int seen;            /* any event */
	int began_off;       /* its first event was a switch-in: off the CPU at the start */
	int wanted;          /* one of its switch-outs passed the filters */
	int out;             /* switched out, not in again yet */
	struct sw_ev at;     /* the switch-out */
	uint32_t last_stack; /* its latest on-CPU sample's stack, for outs without one */
	int has_last;
	struct sw_ev prev;   /* sp_timed: its latest sample (EV_OUT or EV_ONCPU), unweighed */
	int has_prev;
};

struct offcpu {
	int on;                       /* the recording has switches: tracepoint or records */
	int has_tp;                   /* the recording samples sched:sched_switch */
	int sp;                       /* simpleperf's --trace-offcpu: a sample of sp_id is
					 its thread's switch-out, its next sample the in */
	uint64_t sp_id;
	int sp_timed;                 /* sp, its first form: every sample weighed in file
					 order by the time to its thread's next sample */
	const struct sched_switch_fmt *fmt;
	struct sched_switch_fmt fmt_store;
	int off_event, wall_event;    /* profile events, -1 until the first switch */
	struct sw_ev *heap;
	size_t nheap, heap_cap;
	uint64_t seq;
	uint64_t round_max, prev_round_max;
	uint64_t flushed;             /* records up to this time were applied */
	uint64_t late_max;            /* how far behind it the latest late record was */
	int have_round;
	int ordered_whole;            /* no round markers to trust: order all at the end */
	uint64_t last_lost;           /* time of the latest lost-events record, 0 none */
	struct th *threads;
	size_t nthreads, threads_cap;
	struct u64map thread_index;
	/* what the summary says */
	uint64_t intervals, off_ns, cut_start, cut_end, lost_dropped, missed_in, late;
	uint64_t wall_samples;
	uint64_t by_state[PC_NSTATES];
	int warned_freq;
};

static int ev_before(const struct sw_ev *a, const struct sw_ev *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static void heap_push(struct offcpu *o, const struct sw_ev *e)
{
	size_t i;

	VEC_PUSH(o->heap, o->nheap, o->heap_cap, *e);
	for (i = o->nheap - 1; i > 0;) {
		size_t up = (i - 1) / 2;
		struct sw_ev t;

		if (!ev_before(&o->heap[i], &o->heap[up]))
			break;
		t = o->heap[i];
		o->heap[i] = o->heap[up];
		o->heap[up] = t;
		i = up;
	}
}

static struct sw_ev heap_pop(struct offcpu *o)
{
	struct sw_ev top = o->heap[0];
	size_t i = 0;

	o->heap[0] = o->heap[--o->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct sw_ev t;

		if (l < o->nheap && ev_before(&o->heap[l], &o->heap[m]))
			m = l;
		if (r < o->nheap && ev_before(&o->heap[r], &o->heap[m]))
			m = r;
		if (m == i)
			break;
		t = o->heap[i];
		o->heap[i] = o->heap[m];
		o->heap[m] = t;
		i = m;
	}
	return top;
}

static struct th *thread_of(struct offcpu *o, uint32_t pid, uint32_t tid)
{
	uint32_t *v = u64map_get(&o->thread_index, (uint64_t)tid + 1);
	struct th t;

	if (v)
		return &o->threads[*v - 1];
	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tid = tid;
	VEC_PUSH(o->threads, o->nthreads, o->threads_cap, t);
	u64map_put(&o->thread_index, (uint64_t)tid + 1, (uint32_t)o->nthreads);
	return &o->threads[o->nthreads - 1];
}

static int add_event(struct profile *p, const char *name, enum pc_time time)
{
	struct pc_event e;

	memset(&e, 0, sizeof(e));
	e.name = profile_str(p, name);
	e.time = (uint8_t)time;
	e.unit = PC_UNIT_NANOSECONDS;
	e.sample_period = 1;
	return (int)profile_add_event(p, &e);
}

/* The events off-CPU and wall time are counted in, made with the first switch. */
static void make_events(struct offcpu *o, struct conversion *c)
{
	if (o->off_event >= 0)
		return;
	o->off_event = add_event(c->p, "off-cpu", PC_TIME_OFFCPU);
	o->wall_event = add_event(c->p, "wall", PC_TIME_WALL);
}

static void add(struct conversion *c, int event, const struct sw_ev *at, uint64_t time,
		uint64_t ns, uint8_t state, uint32_t stack)
{
	struct pc_sample ps;

	memset(&ps, 0, sizeof(ps));
	ps.comm = at->comm;
	ps.stack = stack;
	ps.time = c->s->facts.has_time ? time : 0;
	ps.pid = at->pid;
	ps.tid = at->tid;
	ps.cpu = at->cpu;
	ps.event = (uint16_t)event;
	ps.state = state;
	ps.count = 1;
	ps.period = ns;
	profile_add_sample(c->p, &ps);
}

/* One event, in time order. */
static void apply(struct offcpu *o, struct conversion *c, const struct sw_ev *e)
{
	struct th *t;

	if (e->type == EV_LOST) {
		o->last_lost = e->time;
		return;
	}
	t = thread_of(o, e->pid, e->tid);
	if (e->pid && !t->pid)
		t->pid = e->pid;
	switch (e->type) {
	case EV_ONCPU:
		t->seen = 1;
		t->last_stack = e->stack;
		t->has_last = 1;
		if (o->wall_event >= 0 && e->wanted) {
			add(c, o->wall_event, e, e->time, e->period, PC_STATE_NONE, e->stack);
			o->wall_samples++;
		}
		break;
	case EV_OUT:
		if (t->out) {
			if (e->time - t->at.time < SAME_SWITCH_NS) {
				/* the same switch again: keep the first time, the better facts */
				if (!t->at.has_stack && e->has_stack) {
					t->at.stack = e->stack;
					t->at.has_stack = 1;
				}
				if (t->at.state == PC_STATE_BLOCKED || t->at.state == PC_STATE_NONE)
					t->at.state = e->state;
				break;
			}
			o->missed_in++;
		}
		t->seen = 1;
		t->out = 1;
		t->at = *e;
		t->wanted |= e->wanted;
		if (!e->has_stack && t->has_last) {
			t->at.stack = t->last_stack;
			t->at.has_stack = 1;
		}
		break;
	case EV_IN:
		if (!t->out) {
			/* a second sight of a switch-in, or the thread was off the CPU when
			 * the recording began (counted if it is one of the recording's) */
			t->began_off |= !t->seen && !e->running;
			t->seen = 1;
			break;
		}
		t->out = 0;
		if (o->last_lost > t->at.time) {
			o->lost_dropped++;
			break;
		}
		if (!t->at.wanted)
			break;
		{
			uint64_t ns = e->time - t->at.time;

			add(c, o->off_event, &t->at, t->at.time, ns, t->at.state, t->at.stack);
			add(c, o->wall_event, &t->at, t->at.time, ns, t->at.state, t->at.stack);
			o->intervals++;
			o->off_ns += ns;
			o->by_state[t->at.state < PC_NSTATES ? t->at.state : PC_STATE_OTHER] += ns;
		}
		break;
	default:
		break;
	}
}

static void flush_until(struct offcpu *o, struct conversion *c, uint64_t limit)
{
	while (o->nheap && o->heap[0].time <= limit) {
		struct sw_ev e = heap_pop(o);

		if (e.time > o->flushed)
			o->flushed = e.time;
		apply(o, c, &e);
	}
}

static void queue(struct offcpu *o, struct sw_ev *e)
{
	e->seq = o->seq++;
	if (o->have_round && e->time < o->flushed && !o->ordered_whole) {
		o->late++; /* behind what was flushed already: applied late */
		if (o->flushed - e->time > o->late_max)
			o->late_max = o->flushed - e->time;
	}
	if (e->time > o->round_max)
		o->round_max = e->time;
	heap_push(o, e);
}

static void *offcpu_start(struct conversion *c)
{
	struct offcpu *o = xcalloc(1, sizeof(*o));
	const struct perf_reader *r = c->s->r;

	o->off_event = o->wall_event = -1;
	u64map_init(&o->thread_index);
	/* a --threads directory is read file by file: its rounds say nothing across them */
	o->ordered_whole = perf_reader_header(r)->directory;
	switch (sched_switch_format(r, c->opt->input, &o->fmt_store, c->s->d)) {
	case 1:
		o->fmt = &o->fmt_store;
		o->has_tp = 1;
		break;
	case 2:
		o->sp_id = o->fmt_store.id;
		o->sp = o->has_tp = 1;
		/* cpu-cycles beside the tracepoint, no CPU clock: simpleperf's first form */
		for (size_t i = 0; i < perf_reader_nevents(r); i++) {
			const struct perf_event_desc *ev = perf_reader_event(r, i);

			o->sp_timed |= ev->type != PERF_TYPE_TRACEPOINT &&
				       !(ev->type == PERF_TYPE_SOFTWARE &&
					 (ev->config == PERF_COUNT_SW_CPU_CLOCK ||
					  ev->config == PERF_COUNT_SW_TASK_CLOCK));
		}
		break;
	default:
		break;
	}
	o->on = o->has_tp || c->s->ds.switch_records;
	if (o->on) {
		make_events(o, c);
		profile_name_states(c->p);
	}
	return o;
}

static int is_cpu_clock(const struct sample_ctx *x)
{
	return x->ev && x->ev->type == PERF_TYPE_SOFTWARE &&
	       (x->ev->config == PERF_COUNT_SW_CPU_CLOCK || x->ev->config == PERF_COUNT_SW_TASK_CLOCK);
}

/*
 * A sample of simpleperf's first --trace-offcpu form (sp_timed): its report weighs
 * every sample by the time to its thread's next sample, taken in the file's order, 1
 * ns when that one is not later, and the thread's last sample by nothing
 * (cmd_report.cpp, TimestampSampleTreeBuilder). A sched:sched_switch sample's time is
 * off-CPU, another's on-CPU; both are wall time (its report's "Time in ns").
 */
static void timed_sample(struct offcpu *o, struct conversion *c, const struct sample_ctx *x,
			 struct sw_ev *e)
{
	struct th *t = thread_of(o, e->pid, e->tid);

	if (t->has_prev && t->prev.wanted) {
		const struct sw_ev *pv = &t->prev;
		uint64_t ns = e->time > pv->time ? e->time - pv->time : 1;

		add(c, o->wall_event, pv, pv->time, ns, pv->state, pv->stack);
		if (pv->type == EV_OUT) {
			add(c, o->off_event, pv, pv->time, ns, pv->state, pv->stack);
			o->intervals++;
			o->off_ns += ns;
			o->by_state[pv->state < PC_NSTATES ? pv->state : PC_STATE_OTHER] += ns;
		} else {
			o->wall_samples++;
		}
	}
	e->type = x->ev->type == PERF_TYPE_TRACEPOINT && x->ev->config == o->sp_id ? EV_OUT
										 : EV_ONCPU;
	e->state = PC_STATE_NONE;
	e->stack = conversion_stack(c, x);
	e->has_stack = 1;
	e->wanted = (uint8_t)session_wanted(c->s, e->pid, e->tid, e->comm);
	t->prev = *e;
	t->has_prev = t->seen = 1;
}

static void offcpu_record(void *state, struct conversion *c, const struct sample_ctx *x)
{
	struct offcpu *o = state;
	const struct perf_record *rec = x->rec;
	struct sw_ev e;

	if (!o->on)
		return;
	memset(&e, 0, sizeof(e));
	e.time = x->time;
	e.pid = x->pid;
	e.tid = x->tid;
	e.comm = x->comm;
	e.cpu = rec->sid.has_cpu ? rec->sid.cpu : PC_NO_CPU;
	switch (rec->type) {
	case PERF_RECORD_FINISHED_ROUND:
		if (o->ordered_whole)
			return;
		/* perf's rule: what the round before this one held is complete now */
		if (o->have_round)
			flush_until(o, c, o->prev_round_max);
		o->prev_round_max = o->round_max;
		o->have_round = 1;
		return;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (!rec->sid.has_time)
			return;
		e.type = EV_LOST;
		queue(o, &e);
		return;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!rec->sid.has_tid || !rec->sid.has_time)
			return;
		if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT) {
			e.type = EV_OUT;
			e.state = rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? PC_STATE_PREEMPTED
										 : PC_STATE_BLOCKED;
			e.wanted = (uint8_t)session_wanted(c->s, e.pid, e.tid, e.comm);
		} else {
			e.type = EV_IN;
		}
		queue(o, &e);
		return;
	case PERF_RECORD_SAMPLE:
		break;
	default:
		return;
	}
	if (o->fmt && x->ev && x->ev->type == PERF_TYPE_TRACEPOINT &&
	    x->ev->config == o->fmt->id) {
		struct sched_switch sw;

		if (!sched_switch_decode(o->fmt, &rec->u.sample, &sw))
			return;
		if (x->ev->freq && !o->warned_freq) {
			o->warned_freq = 1;
			diag_warn(c->s->d, c->opt->input, DIAG_NO_OFFSET, "sched:sched_switch was "
				  "sampled by frequency (perf record -F applies to it too): its "
				  "switches are a sample, not all of them; record without -F, or "
				  "with -c 1 for the tracepoint");
		}
		e.type = EV_OUT;
		e.tid = sw.prev_tid;
		e.state = sw.state;
		e.stack = conversion_stack(c, x);
		e.has_stack = 1;
		e.wanted = (uint8_t)session_wanted(c->s, e.pid, e.tid, e.comm);
		queue(o, &e);
		memset(&e, 0, sizeof(e));
		e.type = EV_IN;
		e.time = x->time;
		e.tid = sw.next_tid;
		queue(o, &e);
		return;
	}
	if (o->sp_timed) {
		if (x->ev && rec->sid.has_tid && rec->sid.has_time)
			timed_sample(o, c, x, &e);
		return;
	}
	if (o->sp) {
		/* the thread runs: whatever switch-out of it came before is over */
		e.type = EV_IN;
		e.running = 1;
		queue(o, &e);
		e.running = 0;
		if (x->ev && x->ev->type == PERF_TYPE_TRACEPOINT && x->ev->config == o->sp_id) {
			e.type = EV_OUT;
			e.state = PC_STATE_NONE; /* prev_state needs the tracing data */
			e.stack = conversion_stack(c, x);
			e.has_stack = 1;
			e.wanted = (uint8_t)session_wanted(c->s, e.pid, e.tid, e.comm);
			queue(o, &e);
			return;
		}
	}
	if (!is_cpu_clock(x))
		return;
	e.type = EV_ONCPU;
	e.stack = conversion_stack(c, x);
	e.period = rec->u.sample.has_period ? rec->u.sample.period
		   : (x->ev && !x->ev->freq ? x->ev->sample_period : 1);
	e.event = (uint16_t)(rec->event >= 0 ? rec->event : 0);
	e.wanted = (uint8_t)session_wanted(c->s, e.pid, e.tid, e.comm);
	queue(o, &e);
}

static void offcpu_finish(void *state, struct conversion *c)
{
	struct offcpu *o = state;

	flush_until(o, c, UINT64_MAX);
	for (size_t i = 0; i < o->nthreads; i++) {
		o->cut_end += (o->threads[i].out && o->threads[i].at.wanted) ||
			      (o->threads[i].has_prev && o->threads[i].prev.type == EV_OUT &&
			       o->threads[i].prev.wanted);
		o->cut_start += o->threads[i].began_off && o->threads[i].wanted;
	}
}

static void offcpu_report(void *state, struct conversion *c, struct diag *d)
{
	const struct offcpu *o = state;
	char states[256];
	size_t n = 0;

	(void)c;
	if (!o->on)
		return;
	states[0] = '\0';
	for (int s = PC_STATE_PREEMPTED; s < PC_NSTATES; s++)
		if (o->by_state[s] && n < sizeof(states))
			n += (size_t)snprintf(states + n, sizeof(states) - n, "%s%s %.3f s",
					      n ? ", " : "", pc_state_name((enum pc_state)s),
					      (double)o->by_state[s] / 1e9);
	diag_note(d, "off-CPU: %" PRIu64 " intervals, %.3f s (%s), from %s", o->intervals,
		  (double)o->off_ns / 1e9, n ? states : o->sp ? "states not recorded" : "none",
		  o->sp ? "sched:sched_switch (simpleperf --trace-offcpu: each to its thread's "
		  "next sample)" : o->has_tp ? "sched:sched_switch" :
		  "PERF_RECORD_SWITCH (--switch-events)");
	if (o->cut_start || o->cut_end)
		diag_note(d, "  not counted: the time before the first switch-in of %" PRIu64
			  " threads (new, or off the CPU when the recording began) and after the "
			  "last switch-out of %" PRIu64 " (off the CPU when it ended)",
			  o->cut_start, o->cut_end);
	if (o->lost_dropped)
		diag_note(d, "  not counted: %" PRIu64 " intervals spanning lost events",
			  o->lost_dropped);
	if (o->missed_in)
		diag_note(d, "  %" PRIu64 " switch-outs without the switch-in before them "
			  "(a per-process recording sees no switch-in from another process's "
			  "thread: record with --switch-events, or system-wide with -a)",
			  o->missed_in);
	if (o->late)
		diag_note(d, "  %" PRIu64 " records came after their round was ordered: applied "
			  "late (by up to %" PRIu64 " us)", o->late, o->late_max / 1000);
}

static void offcpu_free(void *state)
{
	struct offcpu *o = state;

	if (!o)
		return;
	sched_switch_release(&o->fmt_store);
	free(o->heap);
	free(o->threads);
	u64map_release(&o->thread_index);
	free(o);
}

const struct sample_kind offcpu_kind = {
	.name = "off-CPU",
	.types = { PERF_RECORD_SAMPLE, PERF_RECORD_SWITCH, PERF_RECORD_SWITCH_CPU_WIDE,
		   PERF_RECORD_FINISHED_ROUND, PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES },
	.start = offcpu_start,
	.record = offcpu_record,
	.finish = offcpu_finish,
	.report = offcpu_report,
	.free = offcpu_free,
};
