/* pipeline: perf.data in, profile model out; the order of the passes.
 *
 * convert/session.h opens the recording and runs pass 1 (process state; kernel
 * symbols and the first samples' objects load on the symbolizer's thread meanwhile;
 * the replay finished, the JIT files loaded) -> pass 2 hands each record to the
 * kind that takes it (convert/kinds.h; a sample's stack through stacks_sample_node,
 * resolve: addresses into frames) -> fixups (user frames expanded, kernel frames
 * named, mapping flags) -> samples sorted by time -> summary_report.
 */
#ifndef PERFCONV_PIPELINE_H
#define PERFCONV_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "convert/session.h"
#include "symbolize/symbolizer.h"
#include "convert/summary.h"
#include "formats/model/profile.h"

/* What a conversion left to free (its session, the symbolizer's tables, libdw's
 * trees): zeroed to begin with. */
struct leftovers;
struct convert_later {
	struct leftovers *l;
};

/*
 * Read the recording `o->input` into `p` (initialized by the caller), with the session's
 * readahead and load_jit whatever `o` says. Returns 0, or -1 after
 * reporting the error through `d` (bad input). With `later`, what is left to free is
 * kept there (and freed by the next convert_read with it, or convert_done); without,
 * freed before returning.
 */
int convert_read(const struct session_options *o, struct profile *p, struct convert_stats *st,
		 struct diag *d, struct convert_later *later);
/* What `later` holds freed now. */
void convert_done(struct convert_later *later);
/* The process is about to exit: what `later` holds is left to the exit (freed in a
 * sanitizer's build, where leak checkers look). */
void convert_exit(struct convert_later *later);

#endif
