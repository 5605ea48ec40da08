/* dispatch: pass 1, the records that are not samples into process state. */
#ifndef PERFCONV_DISPATCH_H
#define PERFCONV_DISPATCH_H

#include "convert/readahead.h"
#include "convert/recording.h"
#include "convert/replay.h"
#include "formats/read/jitdump.h"
#include "formats/read/perfdata.h"
#include "symbolize/jit/jitprocs.h"

/*
 * Pass 1 reads every record once. MMAP and MMAP2 (executable ones), KSYMBOL, COMM,
 * FORK and EXIT go to the replay; every process named and every jit-PID.dump a process
 * mapped go to the JIT processes; TIME_CONV is kept for jitdumps with TSC times; the
 * first samples go to the read-ahead. Samples are not decoded beyond that.
 */
/* A task as PERF_RECORD_NAMESPACES tells it: its pid namespace. */
struct ns_task {
	uint64_t time, dev, ino;
	uint32_t pid, tid;
};

struct dispatch {
	/* given: */
	struct perf_reader *r;
	const struct recording_facts *facts;
	struct replay *rp;
	struct jit_procs *jits;
	struct readahead *ra;           /* or NULL */
	struct symbolizer *sym;         /* told each mapped file's device and inode; or NULL */
	/* found: */
	struct jitdump_time_conv time_conv;
	int have_time_conv;
	uint64_t first_time, last_time; /* of the records with times (facts->has_time) */
	int have_times;
	int switch_records;             /* PERF_RECORD_SWITCH or SWITCH_CPU_WIDE seen */
	int jit_dumps;                  /* a process mapped a jit-PID.dump */
	/* kept until the end: */
	struct ns_task *tasks;
	size_t ntasks, tasks_cap;
};

/* Read the recording from where the reader is to its end. The reader's result:
 * 0 at a clean end, -1 on an error it reported. */
int dispatch_pass(struct dispatch *d);

/* The same one record at a time (a pass that does more with them), then the end. */
void dispatch_record(struct dispatch *d, const struct perf_record *rec);
void dispatch_end(struct dispatch *d);

#endif
