/* summary: what a conversion saw, counted, and the closing lines that say so. */
#ifndef PERFCONV_SUMMARY_H
#define PERFCONV_SUMMARY_H

#include <stdint.h>

#include "common/diag.h"
#include "convert/replay.h"
#include "convert/resolve.h"
#include "formats/read/perfdata.h"
#include "formats/model/profile.h"
#include "symbolize/jit/jitprocs.h"
#include "symbolize/symbolizer.h"

/* What a conversion saw, for the closing summary and for tests. */
struct convert_stats {
	uint64_t samples;             /* kept in the profile */
	uint64_t samples_filtered;    /* dropped by --pid/--tid/--comm */
	uint64_t samples_unsymbolized;/* with at least one frame without a symbol */
	uint64_t stacks;              /* distinct stacks of the samples kept */
	uint64_t frames, frames_unsymbolized;
	uint64_t lost_events, lost_samples;
	uint64_t skipped_records;
};

struct summary_input {
	const struct perf_reader *r;
	const struct profile *p;      /* finished: frames named, stacks expanded */
	struct replay *rp;            /* thread names are looked up (and interned) */
	const struct jit_procs *jits; /* where JIT files were looked for */
	const struct resolver *res;
	struct symbolizer *sym;
	int quiet;                    /* count, but print nothing */
	int no_symbols;               /* nothing was symbolized: nothing to count */
};

/*
 * Fill the counters of `st` that the reader and the profile hold (lost and skipped
 * records; samples with a frame without a symbol), and unless `quiet`, say through
 * `d`: samples, stacks and events; what perf lost; damaged records; and where the
 * unsymbolized frames are (per object with the reason, the kernel with the kernel
 * symbols' source, no mapping), each sample counted once per place.
 */
void summary_report(const struct summary_input *in, struct convert_stats *st, struct diag *d);

#endif
