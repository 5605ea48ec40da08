/* conversion: a command's conversion, from its inputs to a profile ready to write. */
#include "convert/conversion.h"

#include <stdlib.h>
#include <string.h>

#include "convert/merge.h"
#include "formats/write/pprof.h"

/* Frames and stack nodes past which a conversion's session is freed before writing
 * (one program's recordings make tens of thousands; a machine's, millions). */
#define CONVERT_FREE_BEFORE_WRITING 500000

void conversion_init(struct conversion *cv)
{
	memset(cv, 0, sizeof(*cv));
	cv->wo.event = -1;
	cv->co.input = "perf.data";
	cv->co.sym.demangle = 1;
	cv->co.sym.inline_frames = 1;
	cv->pprof_for = -1;
}

void conversion_release(struct conversion *cv)
{
	convert_exit(&cv->later);
	meta_options_release(&cv->meta);
	free(cv->inputs);
	free(cv->co.pids);
	free(cv->co.tids);
	for (size_t i = 0; i < cv->co.ncomms; i++)
		free(cv->co.comms[i]);
	free(cv->co.comms);
}

/* Does `name` name event `e`? "cpu-clock" names "cpu-clock:pppH" too. */
static int event_matches(const struct profile *p, const struct pc_event *e, const char *name)
{
	const char *full = profile_text(p, e->name);
	size_t len = strlen(name);

	return strcmp(full, name) == 0 || (strncmp(full, name, len) == 0 && full[len] == ':');
}

/*
 * The event a writer shows: the one --event names, or for a format that shows one
 * event (folded, speedscope, chrome) of a recording with several events the first
 * that has samples (summing page faults with CPU samples would mean nothing).
 */
int choose_event(const struct profile *p, const struct output_format *of,
		 const char *name, struct write_options *wo, int quiet, struct diag *d)
{
	size_t with_samples = 0, any = 0;

	if (name) {
		for (size_t i = 0; i < p->nevents; i++)
			if (event_matches(p, &p->events[i], name)) {
				wo->event = (int)i;
				return 0;
			}
		diag_error(d, NULL, DIAG_NO_OFFSET, "no event '%s' in the recording; it has:", name);
		for (size_t i = 0; i < p->nevents; i++)
			diag_note(d, "  %s", profile_text(p, p->events[i].name));
		return -1;
	}
	/* the events perf sampled count: off-CPU and wall time are asked for with --time */
	for (size_t i = 0; i < p->nevents; i++) {
		any += p->events[i].nsamples > 0;
		with_samples += p->events[i].nsamples > 0 && p->events[i].time == PC_TIME_SAMPLED;
	}
	if (any < 2 || !of->one_event)
		return 0;
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].nsamples && p->events[i].time == PC_TIME_SAMPLED) {
			wo->event = (int)i;
			if (!quiet && with_samples > 1)
				diag_note(d, "%zu events recorded; counting %s (choose with --event%s)",
					  with_samples, profile_text(p, p->events[i].name),
					  any > with_samples ? ", or --time oncpu|offcpu|wall" : "");
			return 0;
		}
	return 0;
}

/* --time: the event of that time, made from the recording's scheduler switches or
 * (oncpu) its CPU clock. 0, or -1 after saying what the recording lacks. */
int choose_time(const struct profile *p, const char *kind, struct write_options *wo,
		struct diag *d)
{
	enum pc_time want = strcmp(kind, "wall") == 0 ? PC_TIME_WALL
			    : strcmp(kind, "offcpu") == 0 ? PC_TIME_OFFCPU : PC_TIME_SAMPLED;

	for (size_t i = 0; i < p->nevents; i++) {
		const struct pc_event *e = &p->events[i];

		if (e->time == want && (want != PC_TIME_SAMPLED || e->is_clock)) {
			wo->event = (int)i;
			return 0;
		}
	}
	if (want == PC_TIME_SAMPLED)
		diag_error(d, NULL, DIAG_NO_OFFSET, "--time oncpu: the recording has no CPU clock "
			   "event (cpu-clock, task-clock) to count time on the CPU with");
	else
		diag_error(d, NULL, DIAG_NO_OFFSET, "--time %s: the recording has no scheduler "
			   "switches; record with -e sched:sched_switch -g (and -e cpu-clock for "
			   "wall time), or with --switch-events", kind);
	return -1;
}

int convert_one(struct conversion *cv, const struct output_format *of, struct profile *p,
		struct profile_meta *m, struct diag *d)
{
	struct convert_stats st;

	output_shape_profile(of, p);
	p->aggregate_threads = (of->flags & OF_NO_THREADS) && !cv->wo.with_pid && !cv->wo.with_tid;
	/* Datadog's Timeline: each sample's time kept (as libdatadog keeps timed samples
	 * apart); an upload to Pyroscope keeps its seconds, to be cut in time if over its
	 * limits (upload/uploadparts.h) */
	if ((cv->pprof_for == PPROF_FOR_DATADOG && (of->flags & OF_SHAPED)) ||
	    (of->flags & OF_SAMPLE_TIMES))
		p->aggregate_ns = 1;
	else if (cv->pprof_for == PPROF_FOR_PYROSCOPE && cv->upload)
		p->aggregate_ns = 1000000000ULL;
	if (!cv->weight_set)
		cv->wo.weight_period = of->weight_period;
	if (cv->ninputs < 2 && convert_read(&cv->co, p, &st, d, &cv->later) != 0)
		return -1;
	/* A profile this large is a whole-machine recording's: its session (every
	 * process's tables, the resolver's caches: 600 MB of a 1 GB recording's) is let
	 * go of before the writer allocates beside it, not left to the exit, whose 1 ms
	 * of saved freeing counts only for small ones. */
	if (p->nframes + p->nnodes > CONVERT_FREE_BEFORE_WRITING)
		convert_done(&cv->later);
	/* several inputs: each converted alone, then added under a frame naming it */
	for (size_t i = 0; cv->ninputs > 1 && i < cv->ninputs; i++) {
		struct profile one;
		char *label;
		int bad;

		profile_init(&one);
		one.aggregate = p->aggregate;
		one.aggregate_ns = p->aggregate_ns;
		one.frames_by_object = p->frames_by_object;
		one.aggregate_threads = p->aggregate_threads;
		one.keep_marks = p->keep_marks;
		cv->co.input = cv->inputs[i];
		if (!cv->co.quiet)
			diag_note(d, "%s:", cv->inputs[i]);
		bad = convert_read(&cv->co, &one, &st, d, &cv->later) != 0;
		label = merge_label(&one, cv->inputs[i]);
		if (!bad)
			merge_profile(p, &one, label);
		free(label);
		profile_release(&one);
		if (bad)
			return -1;
	}
	if (cv->ninputs > 1 && !p->aggregate)
		profile_sort_samples(p);
	cv->wo.event = -1;
	if (cv->time) {
		if (choose_time(p, cv->time, &cv->wo, d) != 0)
			return -1;
		if (!cv->weight_set)
			cv->wo.weight_period = 1;
	} else if (choose_event(p, of, cv->event, &cv->wo, cv->co.quiet, d) != 0) {
		return -1;
	}
	memset(m, 0, sizeof(*m));
	cv->wo.pprof_for = cv->pprof_for > 0 ? cv->pprof_for : 0;
	if (cv->pprof_for > 0 || cv->meta.start_time_set || cv->meta.service || cv->meta.nlabels ||
	    (of->flags & OF_OWN_META)) {
		profile_meta_make(&cv->meta, p, cv->co.input, cv->co.quiet || cv->pprof_for <= 0, m, d);
		if (cv->pprof_for > 0 || cv->meta.start_time_set || (of->flags & OF_OWN_META))
			cv->wo.time_nanos = m->start_ns;
		/* a sample's wall-clock time: its time after the first sample's, from the
		 * profile's start */
		cv->wo.wall_offset = p->has_time && p->first_time_set ?
				    m->start_ns - (int64_t)p->first_time : 0;
		cv->wo.timestamps = cv->pprof_for == PPROF_FOR_DATADOG && p->has_time &&
				   p->first_time_set;
		/* a plain pprof file gets the labels asked for; a shaped one also the
		 * recording's host and kernel; an upload sends them as the backend's
		 * labels or tags instead (Parca would rename a sample label that is
		 * also a series label to exported_KEY) */
		cv->wo.labels = cv->upload && !(of->flags & OF_OWN_META) ? NULL : m->labels;
		cv->wo.nlabels = !cv->wo.labels ? 0 : cv->pprof_for > 0 ? m->nlabels : m->nuser;
	}
	return 0;
}

