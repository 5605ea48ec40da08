/* session: one recording opened for reading, with the state every pass shares.
 *
 * A conversion and `perfconv info` both go through it: session_open (the reader, the
 * symbolizer, the replay and the JIT processes; the header's facts into the
 * profile), session_pass1 (process state; kernel symbols and the first samples'
 * objects load on the symbolizer's thread meanwhile; then the replay is finished and
 * the JIT files loaded), session_pass2 (each record of interest with its context,
 * built once: the process and thread it ran in and what they were then).
 */
#ifndef PERFCONV_SESSION_H
#define PERFCONV_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "convert/dispatch.h"
#include "convert/readahead.h"
#include "convert/recording.h"
#include "convert/replay.h"
#include "formats/read/perfdata.h"
#include "formats/model/profile.h"
#include "symbolize/jit/jitprocs.h"
#include "symbolize/symbolizer.h"

/*
 * The options of one conversion (convert_read, convert/pipeline.h) and of the session
 * it opens; `perfconv info` opens one with its own. The strings and arrays are the
 * caller's and must outlive the session.
 */
struct session_options {
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
	struct sym_options sym;   /* input_dir NULL: the folder beside the input */
	/* nothing is symbolized: no kernel symbols, no JIT files; raw addresses only,
	 * module+0xoffset for every frame */
	int no_symbols;
	/* a conversion sets these two itself (convert_read): */
	int readahead;            /* symbolize the first samples' addresses during pass 1 */
	int load_jit;             /* read the JIT dumps and maps after pass 1 */
	int quiet;                /* no closing summary; JIT loading says nothing but warnings */
	const char *const *jit_dirs; /* --jit-dir: searched for jit-PID.dump, perf-PID.map */
	size_t njit_dirs;
	/* A watcher's JIT dumps, kept from one chunk to the next (symbolize/jit/jitstore.h), or
	 * NULL: each conversion then reads its dumps whole. */
	struct jit_store *jit_store;
	/* filters (empty: all), as perf report takes them */
	uint32_t *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	/* the conversion's, after the passes: */
	int show_art_frames;      /* a simpleperf recording's ART frames kept (convert/artframes.h) */
	/* kernel frames left unnamed said as a warning, with why, even when quiet (the
	 * watcher, which prints no summary a chunk) */
	int warn_kernel_unnamed;
};

/* The time-dependent lookups of one process: the last answer and the times it holds for. */
struct session_memo {
	int valid;
	uint32_t pid;
	const struct replay_proc *proc;
	uint64_t epoch;
	struct replay_span span;
};

/* Read-only for the passes once session_open() returned 0. */
struct session {
	struct session_options o;
	struct profile *p;            /* the caller's: strings, header facts, events */
	struct diag *d;
	struct perf_reader *r;
	struct symbolizer *sym;
	struct replay *rp;
	struct jit_procs *jits;
	struct readahead *ra;         /* pass 1 only; NULL without o.readahead */
	struct recording_facts facts;
	struct dispatch ds;           /* pass 1's findings: times, TIME_CONV */
	char *input_dir;              /* owned when the options named none */
	struct session_memo user_memo, kernel_memo; /* consecutive records share them */
	const char *fused_why;        /* why session_fused() returned 1 */
	int fused_switches;           /* session_fused_start: an event asked for switches */
	void **later;                 /* freed once the symbolizer's thread has stopped */
	size_t nlater, later_cap;
};

/*
 * The context of one record of pass 2, built once for every handler: who it ran in
 * and what that was at its time. For a sample it is the sampled thread; for a
 * non-sample record the thread of its sample_id_all trailer; a record without one
 * (FINISHED_ROUND) has comm 0, no process and no JIT table.
 */
struct sample_ctx {
	const struct perf_record *rec;
	const struct perf_event_desc *ev; /* its event, NULL when the record names none */
	uint32_t pid, tid;
	uint64_t time;                 /* recording_time(): the clock, or the file position */
	uint32_t comm;                 /* the thread's name then (string id) */
	const struct replay_proc *proc;   /* the process then; NULL when unknown */
	const struct replay_proc *kernel; /* the kernel's mappings; NULL when none recorded */
	uint64_t user_epoch, kernel_epoch; /* replay epochs then (replay_proc_epoch) */
	int jit_table;                 /* the process's JIT table (jit_procs_find), -1 none */
};

/*
 * Open `o->input` (the options' strings must outlive the session), make the
 * symbolizer, replay and JIT processes, and copy what the header says into `p`
 * (initialized by the caller). Returns 0, or -1 after reporting through `d`; the
 * session is then closed.
 */
int session_open(struct session *s, const struct session_options *o, struct profile *p,
		 struct diag *d);

/* Pass 1 (convert/dispatch.h), then the replay finished and, with o.load_jit, the JIT
 * files loaded. 0, or -1 on an error the reader reported. */
int session_pass1(struct session *s);

/* Called for each record of pass 2 with its context. */
typedef void (*session_record_fn)(void *arg, const struct sample_ctx *c);

/*
 * Pass 2: from the first record again, every record whose type `wants` returns 1
 * for goes to `fn` with its context (others are read and passed over). 0 at the
 * end, -1 on an error the reader reported. A process's mappings are freed as soon as
 * no record still to come asks for it (replay_release), as pass 1 told.
 */
int session_pass2(struct session *s, int (*wants)(uint32_t type), session_record_fn fn,
		  void *arg);

/* After pass 2 (or the one pass): the replay's processes freed (replay_forget_processes)
 * and their pages given back; the records' contexts ask for none any more. */
void session_forget_processes(struct session *s);

/*
 * Pass 1 and pass 2 in one (a zstd-compressed recording decoded once): each record of
 * interest is held until the replay can answer for its time as the finished one will
 * (perf's rounds: at the end of one, nothing still to come is earlier than the largest
 * time before the previous one's end), then handed to `fn` in file order, as
 * session_pass2 would. Instead of session_pass1 and session_pass2, on a session just
 * opened. 0 when every record was handled with the answers the two passes give; 1 when
 * that could not be made sure of (a record late for its round, a process or thread a
 * record was told did not exist yet, context switches other than the attrs foretold,
 * JIT code, a reader error): then what `fn` was given is to be thrown away and the
 * recording converted again with two passes on a new session.
 */
int session_fused(struct session *s, int (*wants)(uint32_t type), session_record_fn fn,
		  void *arg);
/* Before the kinds start, for session_fused(): what pass 1 would have found out that
 * they read at their start, foretold from the header (ds.switch_records: an event's
 * attr asks for PERF_RECORD_SWITCH; the one pass checks that it was so). */
void session_fused_start(struct session *s);
/* Can session_fused() be tried (not a --threads directory, whose files' rounds say
 * nothing across them; no --jit-dir, whose files would be found only at the end)? */
int session_fused_possible(const struct session *s);

/* Do the filters (--pid, --tid, --comm) let this thread through? */
int session_wanted(const struct session *s, uint32_t pid, uint32_t tid, uint32_t comm);

/*
 * When the recording began, in ns since the epoch, 0 when unknown: from the header's
 * CLOCK_DATA, else from when perf finished writing the file, less what it recorded.
 */
uint64_t session_start_wall(const struct session *s);

/* Stop the symbolizer's helper thread early (no more prefetching). */
void session_stop_prefetch(struct session *s);
/* Nothing of `s` runs or reports any more: session_close may then be called from
 * another thread. */
void session_quiesce(struct session *s);
/* The cache entries the run made written whole: before the process exits with `s`
 * left unclosed. */
void session_wait_writes(struct session *s);

/* NULL-safe; frees what the session made, not the profile. */
void session_close(struct session *s);

#endif
