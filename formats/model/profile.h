/* profile: the format-neutral model every writer consumes. */
#ifndef PERFCONV_PROFILE_H
#define PERFCONV_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

struct pc_timeline;

/*
 * Strings are interned in `strings` (id 0 is ""). Frames are interned: the same
 * (function, file, line, module, address, kind, ...) is one frame id. Stacks are
 * nodes of a tree of (parent, frame), node 0 the empty root; a sample holds the
 * node of its leaf. Mapping and frame ids are indexes; mapping 0 means "none".
 *
 * All of it is owned by the profile and lives until profile_release().
 */

enum frame_kind {
	FRAME_NATIVE = 0, /* user-space machine code of an ELF object */
	FRAME_KERNEL = 1,
	FRAME_JIT = 2,
	FRAME_INLINED = 3, /* native code inlined into the next (outer) frame */
};

struct pc_mapping {
	uint64_t start, limit, offset; /* limit exclusive; offset: file offset of start */
	uint32_t file;                 /* the path the recording names */
	uint32_t build_id;             /* lower-case hex, "" when unknown */
	uint8_t kind;                  /* FRAME_NATIVE, FRAME_KERNEL or FRAME_JIT */
	/* what its frames carry: set once every frame is made (convert_read), so
	 * they are not part of the identity profile_mapping() interns by */
	uint8_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct pc_frame {
	uint64_t addr;        /* instruction address in the process (for a return
				 address: the address itself, not addr - 1) */
	uint32_t func;        /* name to show: demangled, or module+0xoffset, or [unknown] */
	uint32_t system_name; /* name as in the binary (mangled), "" when unknown */
	uint32_t file;        /* source file, "" when unknown */
	uint32_t line, column;/* 0 when unknown */
	uint32_t module;      /* short name of the object: "libc.so.6", "[kernel.kallsyms]" */
	uint32_t mapping;     /* 0 when none */
	uint8_t kind;         /* enum frame_kind */
	uint8_t symbolized;   /* 0: func is a placeholder (module+0xoffset, [unknown]) */
	uint8_t pad[2];
};

struct pc_node {
	uint32_t parent;      /* node id; the root is its own parent */
	uint32_t frame;
	uint32_t depth;       /* root 0 */
};

#define PC_NO_CPU UINT32_MAX /* the recording does not say */

/* Why a thread was off the CPU, for off-CPU time (the state it left the CPU in). */
enum pc_state {
	PC_STATE_NONE = 0,      /* an on-CPU sample, or not known */
	PC_STATE_PREEMPTED,     /* runnable (R): waiting for a CPU */
	PC_STATE_SLEEPING,      /* S: interruptible sleep (a timer, a lock, a pipe...) */
	PC_STATE_DISK,          /* D: uninterruptible (I/O, some kernel locks) */
	PC_STATE_STOPPED,       /* T, t: stopped or traced */
	PC_STATE_IDLE,          /* I: an idle kernel thread */
	PC_STATE_BLOCKED,       /* left the CPU without being preempted, S or D not known
				   (PERF_RECORD_SWITCH without tracepoints) */
	PC_STATE_OTHER,         /* another state (dead, parked, ...) */
	PC_NSTATES
};

/* Its name in labels and timelines: "preempted", "sleeping", "disk", ... */
const char *pc_state_name(enum pc_state s);

struct pc_sample {
	uint64_t time;        /* the recording's clock, ns (0 when the recording has none);
				 of an aggregate: its first sample's */
	uint64_t period;      /* the event's period (ns for clock events); of an
				 aggregate: the sum */
	uint64_t count;       /* samples this stands for: 1, or more in an aggregate */
	uint32_t stack;       /* leaf node */
	uint32_t pid, tid, cpu;   /* cpu: PC_NO_CPU when unknown */
	uint32_t comm;        /* thread name at the sample's time */
	uint16_t event;
	uint8_t state;        /* enum pc_state: of an off-CPU interval, else NONE */
	uint8_t side;         /* enum pc_side: 0 but in a differential profile */
};

/* Which recording a sample of a differential profile (perfconv diff) came from. */
enum pc_side {
	PC_SIDE_NONE = 0,     /* a profile of one recording */
	PC_SIDE_BASE = 1,     /* the one compared against: writers show it negated or apart */
	PC_SIDE_NEW = 2,
};

/* What an event's period counts: the unit of its weight in every output. */
enum pc_unit {
	PC_UNIT_COUNT = 0,       /* events: page faults, cycles, switches */
	PC_UNIT_NANOSECONDS = 1, /* time: cpu-clock, task-clock */
	PC_UNIT_BYTES = 2,
};

/* The unit's name as pprof writes it: "count", "nanoseconds", "bytes". */
const char *pc_unit_name(enum pc_unit u);

/* What an event made of the scheduler's records counts (convert/offcpu.c). */
enum pc_time {
	PC_TIME_SAMPLED = 0,  /* an event perf sampled */
	PC_TIME_OFFCPU,       /* threads' intervals off the CPU, in nanoseconds */
	PC_TIME_WALL,         /* on-CPU samples' periods plus off-CPU intervals */
};

struct pc_event {
	uint32_t name;
	uint8_t time;         /* enum pc_time */
	uint8_t unit;         /* enum pc_unit: what its periods count */
	int is_clock;         /* a CPU clock event (cpu-clock, task-clock): its periods are
				 nanoseconds the thread was on a CPU (pprof's "cpu") */
	uint32_t type;        /* PERF_TYPE_* */
	uint64_t config;
	uint64_t sample_period; /* period, or frequency when `freq` */
	int freq;
	uint64_t nsamples, total_period;
};

/* What happened to a thread, a process or a CPU at a time, for the writers that draw
 * timelines with markers (firefox): kept only when asked (profile.keep_marks). */
enum pc_mark_kind {
	PC_MARK_FORK = 1,     /* a thread or process began (not one perf found running) */
	PC_MARK_EXIT,         /* a thread ended (the process with its main thread) */
	PC_MARK_EXEC,         /* a process ran a new program: `text` its new name */
	PC_MARK_LOST,         /* perf lost `count` records (LOST) or samples (LOST_SAMPLES)
				 on `cpu` (PC_NO_CPU: not said; then of `pid`/`tid` if said) */
	PC_MARK_INPUT,        /* one of several inputs merged: `text` its label, from `time`
				 to `end` (its first and last samples) */
};

struct pc_mark {
	uint64_t time, end;   /* end: of an INPUT, else time */
	uint64_t count;       /* LOST: how many */
	uint32_t pid, tid, cpu;
	uint32_t text;        /* string id, or 0 */
	uint8_t kind;         /* enum pc_mark_kind */
	uint8_t lost_samples; /* LOST: of LOST_SAMPLES (samples), else of LOST (records) */
};

/* The most marks a profile keeps (a machine's recording of many short processes):
 * past it they are counted in marks_dropped, not kept. */
#define PC_MAX_MARKS (1u << 18)

struct profile {
	struct strtab strings;
	struct pc_mapping *mappings; size_t nmappings, mappings_cap; /* [0] unused */
	struct pc_frame *frames; size_t nframes, frames_cap;
	struct pc_node *nodes; size_t nnodes, nodes_cap;
	struct pc_sample *samples; size_t nsamples, samples_cap;
	struct pc_event *events; size_t nevents, events_cap;

	/* what the recording says about itself, string ids (0 when absent) */
	uint32_t hostname, osrelease, perf_version, arch, cmdline, cpudesc;
	uint32_t nr_cpus;
	int has_time;            /* samples carry times */
	int has_wall_clock;      /* wall = time - clock_ns + wall_ns */
	uint64_t wall_ns, clock_ns;
	uint64_t first_time, last_time;
	int first_time_set;
	/*
	 * When the recording began, ns since the epoch, 0 when unknown: from CLOCK_DATA
	 * (has_wall_clock), else the file's modification time less what the recording
	 * spans (set by the conversion after its first pass).
	 */
	uint64_t start_wall_ns;

	/*
	 * Set before samples are added, for writers that show totals only (folded,
	 * pprof): samples with the same stack, pid, tid, cpu, thread name and event
	 * are then kept as one, their counts and periods summed, so memory follows the
	 * distinct stacks rather than the number of samples. Times are lost.
	 */
	int aggregate;
	/* With aggregate: only samples within the same aggregate_ns of the recording's
	 * clock (time / aggregate_ns) are one, so that the profile can still be cut in
	 * time at those steps (an upload split for a backend's limits); 0: any time. */
	uint64_t aggregate_ns;
	/*
	 * Set before samples are added, for writers that show no addresses (folded, svg,
	 * speedscope, chrome, samples): the same code of the same file is then one frame
	 * in every process, carrying the address and mapping of the first process that
	 * ran it, so frames and stack nodes follow the distinct code rather than the
	 * processes (a machine's recording runs the same binaries in thousands of them).
	 */
	int frames_by_object;
	/*
	 * With aggregate, for writers that show no pid or tid (folded and svg without
	 * --with-pid/--with-tid): samples of every thread are one aggregate, which keeps
	 * the pid and tid of its first sample, so that aggregates follow the distinct
	 * stacks rather than the threads (a machine's thousands of short processes).
	 */
	int aggregate_threads;
	/*
	 * Every sample in time order by thread, for the writers that draw timelines
	 * (speedscope, chrome), kept in bounded memory (formats/model/timeline.h); NULL when
	 * not asked for (profile_keep_timeline). The samples above are then aggregated.
	 */
	struct pc_timeline *timeline;

	/* "[off-CPU: sleeping]", ... (string ids, 0 until profile_name_states()): the
	 * frame timelines show at the leaf of an off-CPU interval's stack */
	uint32_t state_name[PC_NSTATES];

	/* with keep_marks (set before records are read): the marks, in the order added */
	int keep_marks;
	struct pc_mark *marks; size_t nmarks, marks_cap;
	uint64_t marks_dropped;

	/* each thread's last name, for writers that name a thread once (pid, tid ->
	 * string id; see profile_thread_name) */
	struct u64map thread_names;

	/* interning state */
	struct id_index frame_index;
	struct id_index sample_index;
	struct id_index node_index; /* by (parent, frame); 4 bytes a slot, not a u64map's 12:
				       a machine's recording makes tens of millions of nodes */
	struct u64map mapping_index;
};

void profile_init(struct profile *p);
/* Before samples are added: aggregate them, and keep each of them in p->timeline. */
void profile_keep_timeline(struct profile *p);

/* The unit of event `event`'s periods; PC_UNIT_COUNT for no such event. */
static inline enum pc_unit profile_event_unit(const struct profile *p, int event)
{
	return event >= 0 && (size_t)event < p->nevents ? (enum pc_unit)p->events[event].unit
							 : PC_UNIT_COUNT;
}
void profile_release(struct profile *p);

static inline uint32_t profile_str(struct profile *p, const char *s)
{
	return strtab_intern(&p->strings, s);
}
static inline const char *profile_text(const struct profile *p, uint32_t id)
{
	return strtab_str(&p->strings, id);
}

/* Intern a frame (all fields are compared; padding is zeroed here). */
uint32_t profile_frame(struct profile *p, const struct pc_frame *f);
/* Rebuild the frame interning index after frames were changed in place. */
void profile_reindex_frames(struct profile *p);
/*
 * Replace frames in every stack: frame f < `covered` with count[f] > 0 becomes the
 * frames pool[first[f] .. first[f] + count[f]) (innermost first), others stay. The
 * nodes are rebuilt (their ids change) and the samples follow (those of the timeline
 * too); aggregated samples that become twins are merged.
 */
void profile_expand_frames(struct profile *p, const uint32_t *first, const uint32_t *count,
			   const uint32_t *pool, size_t covered);
/*
 * Rewrite every stack whole: fn gets a node's frames (leaf first, n of them) and
 * writes the frames it becomes over them (leaf first), returning how many (<= n). As
 * profile_expand_frames, the nodes are rebuilt and the samples follow. For changes a
 * frame's neighbours decide (convert/artframes.c); each node costs its depth.
 */
void profile_rewrite_stacks(struct profile *p,
			    size_t (*fn)(void *arg, uint32_t *frames, size_t n), void *arg);
/* Intern the node for `frame` under `parent` (0 = root). */
uint32_t profile_node(struct profile *p, uint32_t parent, uint32_t frame);
/* Intern a mapping by all its fields. */
uint32_t profile_mapping(struct profile *p, const struct pc_mapping *m);
uint32_t profile_add_event(struct profile *p, const struct pc_event *e);
/* Add a sample (`count` 0 is taken as 1), or with `aggregate` fold it into its twin. */
void profile_add_sample(struct profile *p, const struct pc_sample *s);

/*
 * A thread's name as writers that name it once show it: the last name it had (set by
 * the conversion), or 0 when not set (then its samples' names are all there is).
 */
void profile_set_thread_name(struct profile *p, uint32_t pid, uint32_t tid, uint32_t name);
uint32_t profile_thread_name(const struct profile *p, uint32_t pid, uint32_t tid);

/* Keep mark `m` when the profile keeps marks (and has room for it). */
void profile_add_mark(struct profile *p, const struct pc_mark *m);

/* Intern the names of the off-CPU states (state_name), for whoever adds samples
 * with a state. */
void profile_name_states(struct profile *p);

/* Sort samples by time, keeping file order among equal times. */
void profile_sort_samples(struct profile *p);

/*
 * The frames of a stack, leaf first, into `out` (at most `cap`); returns the depth.
 * Writers use it to walk a sample's stack.
 */
size_t profile_stack(const struct profile *p, uint32_t node, uint32_t *out, size_t cap);
/* The whole stack of `node`, leaf first, into `*buf` (grown as needed); its depth. */
size_t profile_stack_all(const struct profile *p, uint32_t node, uint32_t **buf, size_t *cap);

#endif
