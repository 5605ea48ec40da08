/* pprof: gzipped profile.proto, for go tool pprof, Datadog, Parca, Pyroscope, Grafana. */
#ifndef PERFCONV_PPROF_H
#define PERFCONV_PPROF_H

#include "formats/write/writer.h"

/*
 * What a pprof file is shaped for (write_options.pprof_for). docs/BACKENDS.md has
 * each backend's rules and where they were read.
 *
 * NONE: today's file. Every other one also: time_nanos from o->time_nanos; a frame
 * at address 0 without a symbol (perf's 0 callchain entry) a Location with a line
 * naming it, since Pyroscope drops every sample holding a Location with neither;
 * `process_name` on each sample (the name of the process's main thread, as ddprof
 * writes it) and o->labels.
 * DATADOG: ddprof's sample types (`cpu-samples`, `cpu-time`) and `thread id`.
 * PYROSCOPE, PARCA, GO: Go's sample types (`samples`/count, `cpu`/nanoseconds;
 * other events NAME_samples and NAME, every character outside [A-Za-z0-9_] as `_`)
 * and label keys that are Prometheus label names (`thread_id`).
 */
enum pprof_for {
	PPROF_FOR_NONE = 0,
	PPROF_FOR_DATADOG,
	PPROF_FOR_PYROSCOPE,
	PPROF_FOR_PARCA,
	PPROF_FOR_GO,
};

/* The flavour `name` names ("datadog", ...), or -1. */
int pprof_for_by_name(const char *name);
/* Its name ("datadog", ...; "" for NONE). */
const char *pprof_for_name(int pprof_for);

/*
 * The whole profile as one gzipped perftools.profiles.Profile message.
 *
 * Sample types, per event shown (o->event, or every event that has samples when
 * it is -1): a count of samples, then the summed period in the event's unit; a
 * CPU clock event is `cpu-samples`/count and `cpu-time`/nanoseconds. Samples of the
 * same stack and labels are one pprof Sample. Labels: `process_id`, `thread id`,
 * `thread_name` (string values), and `cpu` with o->cpu_label. A run of inlined
 * frames and the frame they are inlined into is one Location, callee first; a frame
 * without a symbol is a Location with an address and no lines. The output is the
 * same bytes for the same profile, gzipped as it is packed: each Sample is written
 * as it is made, and neither the packed message nor a message tree of every Sample
 * is held. Returns 0, or -1 with errno set on a write error.
 */
int pprof_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
