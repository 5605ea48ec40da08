/* firefox: the Firefox Profiler's processed profile format, one track per thread. */
#ifndef PERFCONV_FIREFOX_H
#define PERFCONV_FIREFOX_H

#include "formats/write/writer.h"

/* The processed format's version written (meta.preprocessedProfileVersion): the
 * profiler upgrades older versions as it loads them, never newer ones. */
#define FIREFOX_PROFILE_VERSION 70

/*
 * A processed profile (JSON) of version FIREFOX_PROFILE_VERSION. One thread per
 * recorded thread (pid and tid; its name the thread's last, its process's name that
 * of the thread whose tid is the pid), and with several events one per thread and
 * event, named "NAME (EVENT)". Each thread's samples in time order, their times in
 * milliseconds from the first sample written (meta.startTime: its wall-clock time
 * when the recording says it), weighted as o->weight_period says: the period
 * ("tracing-ms" for time events, "bytes" for bytes, else "samples"), or 1 per sample.
 * threadCPUDelta (ns) is an on-CPU sample's period for clock events and 0 for an
 * off-CPU interval. Shared tables: a frame per (address, inline depth), a function
 * per (name, file, module, kind) as formats/model/profview.h groups them, named exactly as
 * the profile names them, a resource per module, a library per mapped file with its
 * build id (breakpadId, codeId), a native symbol per (library, outer function).
 * Categories: Other, Idle (off-CPU intervals, a subcategory per state), User, Kernel,
 * and one per JIT runtime (the name of the process the code ran in). Markers: each
 * off-CPU interval ("Off-CPU", its state), and the profile's marks (profile.h, kept
 * when the row asks: OF_MARKS): a thread's start (fork), exec and exit on its track
 * (its registerTime and unregisterTime, its process's startup and shutdown from its
 * main thread's), lost records on the tracks of the threads sampled on their CPU,
 * and each merged input's span on every track.
 */
int firefox_write(const struct profile *p, const struct write_options *o, FILE *out);

#endif
