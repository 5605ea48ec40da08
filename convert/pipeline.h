/* pipeline: perf.data in, profile model out: replay, symbolize, build stacks. */
#ifndef PERFCONV_PIPELINE_H
#define PERFCONV_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "symbolize/symbolizer.h"
#include "formats/profile.h"

struct convert_options {
	const char *input;        /* path, a --threads directory, or "-" */
	struct sym_options sym;
	int no_symbols;           /* raw addresses only: module+0xoffset for every frame */
	uint32_t *pids, *tids;    /* filters (empty: all) */
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	int quiet;                /* no closing summary */
	const char *const *jit_dirs; /* --jit-dir: searched for jit-PID.dump, perf-PID.map */
	size_t njit_dirs;
};

/* What a conversion saw, for the closing summary and for tests. */
struct convert_stats {
	uint64_t samples;             /* kept in the profile */
	uint64_t samples_filtered;    /* dropped by --pid/--tid/--comm */
	uint64_t samples_unsymbolized;/* with at least one frame without a symbol */
	uint64_t frames, frames_unsymbolized;
	uint64_t lost_events, lost_samples;
	uint64_t skipped_records;
};

/*
 * Read the recording into `p` (initialized by the caller). Returns 0, or -1 after
 * reporting the error through `d` (bad input).
 */
int convert_read(const struct convert_options *o, struct profile *p, struct convert_stats *st,
		 struct diag *d);

#endif
