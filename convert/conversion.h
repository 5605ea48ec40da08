/* conversion: one conversion as a command asks for it, from its inputs to a profile
 * ready for its writer: the inputs read (several merged), the event chosen, and for a
 * pprof shaped for a backend or given labels, its facts. What cli/ fills from a command
 * line and upload/ runs per input or chunk; it knows nothing of argv. */
#ifndef PERFCONV_CONVERSION_H
#define PERFCONV_CONVERSION_H

#include <stddef.h>

#include "common/diag.h"
#include "convert/labels.h"
#include "convert/output.h"
#include "convert/pipeline.h"
#include "formats/model/profile.h"

struct conversion {
	struct session_options co;
	struct write_options wo;
	struct meta_options meta;
	const char *event;        /* --event: NULL for the format's choice */
	const char *time;         /* --time: oncpu, offcpu or wall */
	const char **inputs;      /* in order: several are merged (perfconv only) */
	size_t ninputs, inputs_cap;
	int weight_set;
	int pprof_for;            /* -1: no --for */
	int upload;               /* the labels go to the backend's own, not on samples */
	struct convert_later later; /* the last conversion's leftovers, left to the exit */
};

/* Defaults: perf.data, demangled and inlined frames, no event chosen. */
void conversion_init(struct conversion *cv);
/* What it owns freed; the last conversion's leftovers left to the exit. */
void conversion_release(struct conversion *cv);
/*
 * Convert cv->co.input (or each of cv->inputs, merged) into `p` (initialized by the
 * caller) for format `of`: the event chosen, and for a pprof shaped for a backend or
 * given a time or labels, its facts in `m` and cv->wo set to write them (pointing into
 * `m`). 0, or -1 after saying why (the input could not be read or holds no such
 * event or time).
 */
int convert_one(struct conversion *cv, const struct output_format *of, struct profile *p,
		struct profile_meta *m, struct diag *d);

/*
 * The event shown (wo->event): the one `name` names, else for a format of one event
 * (of->one_event) the first sampled one with samples, said when there were several.
 * 0, or -1 after saying that no event has that name.
 */
int choose_event(const struct profile *p, const struct output_format *of,
		 const char *name, struct write_options *wo, int quiet, struct diag *d);
/* --time KIND (oncpu, offcpu, wall): its event into wo->event. 0, or -1 after saying
 * what the recording lacks. */
int choose_time(const struct profile *p, const char *kind, struct write_options *wo,
		struct diag *d);

#endif
