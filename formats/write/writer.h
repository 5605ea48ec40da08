/* writer: what every output format's writer is given. */
#ifndef PERFCONV_WRITER_H
#define PERFCONV_WRITER_H

#include <stdio.h>

#include "formats/model/profile.h"

/* A label every sample of a file carries (--service, --label, the recording's host). */
struct write_label {
	const char *key, *value;
};

/* What a pprof writer wrote (write_options.stats): the backends' limits are on these. */
struct write_stats {
	uint64_t bytes;      /* the Profile message, before gzip */
	uint64_t samples;    /* pprof Samples */
};

struct write_options {
	int weight_period;   /* count the event's period instead of samples */
	int with_pid;        /* folded: "comm-PID" as the first frame */
	int with_tid;        /* folded: "comm-PID/TID" as the first frame */
	int annotate;        /* folded: _[k] kernel, _[j] JIT, _[i] inlined suffixes */
	int event;           /* only samples of this event index; -1 for all */
	int srcline;         /* folded, samples: frames as "name (file:line)" where known */
	int cpu_label;       /* pprof: a `cpu` label on every sample that has one */
	const char *title;   /* svg: the graph's title; NULL for the default */
	int inverted;        /* svg: an icicle graph, the root at the top */
	unsigned width;      /* svg: image width in pixels; 0 for the default */
	double minwidth;     /* svg: frames narrower than this (pixels) are not drawn;
				0 for the default, 0.1 */
	int pprof_for;       /* pprof: the backend the file is shaped for (enum pprof_for
				in formats/write/pprof.h); 0: today's file */
	int64_t time_nanos;  /* pprof: the profile's start, ns since the epoch, written
				when nonzero (else CLOCK_DATA's, as without it) */
	int64_t duration_nanos; /* pprof: what the profile spans from time_nanos, written
				when nonzero (else its first sample to its last) */
	const struct write_label *labels; /* pprof: on every sample, in this order */
	size_t nlabels;
	/* pprof: one span of the profile's time, when to_time is nonzero: only samples whose
	 * time (the recording's clock) is in [from_time, to_time) */
	uint64_t from_time, to_time;
	/* pprof: each sample's wall-clock time (its time plus wall_offset, ns since the
	 * epoch) as the numeric label end_timestamp_ns, Datadog's Timeline; samples at
	 * different times are then not merged */
	int timestamps;
	int64_t wall_offset;
	/* pprof: no thread labels (thread id, thread_name): the samples of one process's
	 * threads merged, for a backend's limit on samples */
	int merge_threads;
	struct write_stats *stats; /* pprof: filled when not NULL */
	/* A differential profile (perfconv diff: samples of PC_SIDE_BASE and PC_SIDE_NEW):
	 * NULL for any other. */
	const struct write_diff *diff;
};

/* How a differential profile is shown. */
struct write_diff {
	const char *base_name, *new_name; /* the two inputs, as given */
	/* what a base sample's count ([0]) and period ([1]) are multiplied by: NEW's total
	 * over BASE's (each side as a share of its total, scaled to NEW's), or 1 */
	double scale[2];
	unsigned top;        /* top: functions listed (0: all) */
};

/* A base sample's weight scaled as `d` says (a new one's as it is). */
static inline double diff_weight(const struct write_options *o, const struct pc_sample *s)
{
	double w = (double)(o->weight_period ? s->period : s->count);

	return s->side == PC_SIDE_BASE ? w * o->diff->scale[o->weight_period ? 1 : 0] : w;
}

/* A sample's weight as the options count it: the event's period, or samples. */
static inline uint64_t sample_weight(const struct write_options *o, const struct pc_sample *s)
{
	return o->weight_period ? s->period : s->count;
}

/* A writer streams the profile to `out`; returns 0, or -1 with errno set on a write error. */
typedef int (*profile_writer)(const struct profile *p, const struct write_options *o, FILE *out);

#endif
