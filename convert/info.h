/* info: what a recording holds, for a bug report (`perfconv info`). */
#ifndef PERFCONV_INFO_H
#define PERFCONV_INFO_H

#include <stddef.h>
#include <stdio.h>

#include "common/diag.h"
#include "symbolize/symbolizer.h"

struct info_options {
	const char *input;           /* as session_options.input */
	struct sym_options sym;      /* where binaries and kernel symbols are looked for */
	const char *const *jit_dirs; /* --jit-dir */
	size_t njit_dirs;
	int json;                    /* JSON instead of text */
	size_t top;                  /* processes and threads listed (the busiest) */
};

/*
 * Describe the recording on `out`: the header (perf version, host, kernel release
 * and build id, command, events with their period or frequency and call-graph mode),
 * then from one pass over the process records and one over the samples (decoded,
 * never symbolized): samples per event, time span, lost events and samples, the
 * busiest processes and threads, every object samples fall in (as the sampled
 * address or anywhere in the call chain) with its build id and the file found for it
 * or the places looked at, the JIT dump or map of each process with samples in
 * anonymous memory (or where it was looked for), and where kernel symbols come from.
 * The text and the JSON hold the same facts. Returns 0, or -1 after reporting bad
 * input through `d`.
 */
int info_run(const struct info_options *o, FILE *out, struct diag *d);

#endif
