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
#include "symbolize/symbolizer.h"
#include "convert/summary.h"
#include "formats/model/profile.h"

struct convert_options {
	const char *input;        /* path, a --threads directory, or "-" */
	/* The input's bytes, read by the caller (a watched chunk, read whole from the one
	 * descriptor it was checked on): read from here, never opened by name; `input`
	 * then only names it (messages, the folder of its JIT files). NULL: open input. */
	const void *input_mem;
	size_t input_len;
	int64_t input_mtime_ns;   /* with input_mem: the file's modification time */
	/* JIT files beside the input or in /tmp used only when owned by jit_owner_uid or
	 * root (struct jit_search's check_owner: a watcher's untrusted folder) */
	int jit_check_owner;
	unsigned jit_owner_uid;
	struct sym_options sym;
	int no_symbols;           /* raw addresses only: module+0xoffset for every frame */
	int show_art_frames;      /* a simpleperf recording's ART frames kept (convert/artframes.h) */
	uint32_t *pids, *tids;    /* filters (empty: all) */
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	int quiet;                /* no closing summary */
	const char *const *jit_dirs; /* --jit-dir: searched for jit-PID.dump, perf-PID.map */
	size_t njit_dirs;
	/* A watcher's JIT dumps, kept from one chunk to the next (symbolize/jit/jitstore.h), or
	 * NULL: each conversion then reads its dumps whole. */
	struct jit_store *jit_store;
	/* kernel frames left unnamed said as a warning, with why, even when quiet (the
	 * watcher, which prints no summary a chunk) */
	int warn_kernel_unnamed;
};

/* What a conversion left to free (its session, the symbolizer's tables, libdw's
 * trees): zeroed to begin with. */
struct leftovers;
struct convert_later {
	struct leftovers *l;
};

/*
 * Read the recording into `p` (initialized by the caller). Returns 0, or -1 after
 * reporting the error through `d` (bad input). With `later`, what is left to free is
 * kept there (and freed by the next convert_read with it, or convert_done); without,
 * freed before returning.
 */
int convert_read(const struct convert_options *o, struct profile *p, struct convert_stats *st,
		 struct diag *d, struct convert_later *later);
/* What `later` holds freed now. */
void convert_done(struct convert_later *later);
/* The process is about to exit: what `later` holds is left to the exit (freed in a
 * sanitizer's build, where leak checkers look). */
void convert_exit(struct convert_later *later);

#endif
