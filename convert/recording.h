/* recording: what a recording's header says, for the passes and for the profile. */
#ifndef PERFCONV_RECORDING_H
#define PERFCONV_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "formats/read/perfdata.h"
#include "formats/model/profile.h"

struct recording_facts {
	const uint8_t *kernel_bid;  /* the recorded kernel's build id (the reader's), or NULL */
	size_t kernel_bid_size;
	int has_time;               /* some event's samples carry times (PERF_SAMPLE_TIME) */
	int records_kernel;         /* some event did not exclude the kernel */
};

/*
 * Copy what the recording says about itself into `p` (host, kernel release, perf
 * version, command line, wall clock; one pc_event per event, a clock event's unit
 * "nanoseconds") and fill `f`. `p->has_time` is set from it.
 */
void recording_read(const struct perf_reader *r, struct profile *p, struct recording_facts *f);

/* The header's build id for `path` (HEADER_BUILD_ID), or NULL. */
const struct perf_build_id *recording_build_id(const struct perf_header_info *h,
					       const char *path);

/* Are the sampling events' times CLOCK_MONOTONIC, the clock jitdumps use (-k 1)? */
int recording_clock_monotonic(const struct perf_reader *r);

/* Was the recording made on this machine (so that /tmp/perf-PID.map is its own)? */
int recording_made_here(const struct perf_reader *r);

/* The folder beside input `input` ("." for "-"; a --threads directory's parent): where
 * its binaries and dumps may be. Malloc'ed, the caller frees it. */
char *recording_input_dir(const char *input);

/*
 * The time a record is ordered by: its sample_id time, or, in a recording without
 * times, its position in the file (which gives file-order semantics).
 */
static inline uint64_t recording_time(const struct recording_facts *f,
				      const struct perf_record *rec)
{
	if (!f->has_time)
		return rec->index;
	return rec->sid.has_time ? rec->sid.time : 0;
}

#endif
