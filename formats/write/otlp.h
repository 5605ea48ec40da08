/* otlp: OpenTelemetry profiles (OTLP, opentelemetry-proto v1.10/v1.11, profiles
 * v1development, Alpha): one ExportProfilesServiceRequest, what OTLP/HTTP posts to
 * /v1development/profiles, as protobuf (formats/proto/otlp_*.proto). */
#ifndef PERFCONV_OTLP_H
#define PERFCONV_OTLP_H

#include "formats/write/writer.h"

/*
 * The whole profile as one request: one resource (host.name, os.type, os.version,
 * host.arch of the recording; service.name and each --label from o->labels), one scope
 * (perfconv and its version), and for each event shown two profiles, one sample type
 * each: its samples counted (`samples`/count for a CPU clock, with period_type
 * cpu/nanoseconds and its period; NAME_samples/count else) and its periods summed
 * (`cpu`/nanoseconds, or NAME in the event's unit; `off_cpu`, `wall` for the scheduler's
 * time). One dictionary for all: strings, mappings (the build id as
 * process.executable.build_id.gnu), locations (a run of inlined frames as the lines of
 * one location, innermost first; profile.frame.type native or kernel), functions,
 * stacks (leaf first) and attributes. A sample is a stack and its attributes
 * (process.pid, thread.id, thread.name, process.executable.name, cpu.logical_number
 * with o->cpu_label, thread.state for off-CPU time) with the time of each of its samples
 * (timestamps_unix_nano: the recording's time plus o->wall_offset), and in the periods'
 * profile each one's period; a recording without times gives one value instead. The
 * same bytes for the same profile. 0, or -1 with errno set.
 */
int otlp_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
