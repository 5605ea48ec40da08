/* pprof: gzipped profile.proto, for go tool pprof, Datadog, Parca, Pyroscope, Grafana. */
#ifndef PERFCONV_PPROF_H
#define PERFCONV_PPROF_H

#include "formats/writer.h"

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
 * same bytes for the same profile. Returns 0, or -1 with errno set on a write error.
 */
int pprof_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
