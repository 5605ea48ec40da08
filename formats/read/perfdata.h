/* perfdata: a streaming reader of perf.data, file and pipe mode.
 *
 * Spec: tools/perf/Documentation/perf.data-file-format.txt in the Linux tree; record
 * layouts in include/uapi/linux/perf_event.h. See docs/FORMATS.md for the traps.
 *
 * Reads every variant perf writes: file mode (PERFILE2) and pipe mode, both byte
 * orders, data.size == 0 (perf killed), zstd-compressed records (COMPRESSED and
 * COMPRESSED2), and the directory `perf record --threads` writes (perf.data/data plus
 * data.N). Records come out converted to host byte order.
 */
#ifndef PERFCONV_PERFDATA_H
#define PERFCONV_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "common/perf_abi.h"

/* One event (perf_event_attr) of the recording, with its name and sample ids. */
struct perf_event_desc {
	uint32_t type;          /* PERF_TYPE_* */
	uint64_t config;
	uint64_t sample_period; /* period, or frequency when `freq` */
	uint64_t sample_type;   /* PERF_SAMPLE_* bits */
	uint64_t read_format;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	uint64_t sample_regs_intr;
	uint64_t branch_sample_type;
	uint32_t clockid;
	unsigned freq : 1, sample_id_all : 1, use_clockid : 1, exclude_kernel : 1,
		exclude_user : 1, context_switch : 1;
	char *name;             /* "cpu-clock", "cycles:u", ...; never NULL once the
				   header is read (synthesized from type/config when the
				   recording names none) */
	uint64_t *ids;          /* sample ids that select this event */
	size_t nids;
};

/* A file that the recording names with its build id (feature BUILD_ID, or
 * HEADER_BUILD_ID records in pipe mode). */
struct perf_build_id {
	int32_t pid;            /* -1 for the kernel and modules */
	uint16_t misc;          /* cpumode of the file */
	uint8_t id[PERF_BUILD_ID_MAX];
	uint8_t id_size;
	char *filename;
};

/* What the header and its features say. Strings are NULL when absent. */
struct perf_header_info {
	int pipe_mode;
	int swapped;            /* the file was written in the other byte order */
	int directory;          /* `perf record --threads` directory */
	int compressed;         /* feature COMPRESSED: perf record -z */
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	char *cmdline;          /* argv joined with spaces */
	uint32_t nr_cpus_online, nr_cpus_avail;
	int has_clockid;
	uint64_t clockid_res_ns;
	int has_clock_data;     /* feature CLOCK_DATA */
	uint32_t clock_data_clockid;
	uint64_t clock_data_wall_ns;  /* wall clock at ... */
	uint64_t clock_data_clock_ns; /* ... this reading of the recording's clock */
	int has_sample_time;
	uint64_t first_sample_time, last_sample_time;
	struct perf_build_id *build_ids;
	size_t nbuild_ids;
	uint64_t data_offset, data_size; /* file mode: the data section */
};

/* Identity fields of a sample, and of a non-sample record's sample_id_all trailer. */
struct perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id, stream_id;
	uint32_t cpu;
	unsigned has_tid : 1, has_time : 1, has_id : 1, has_cpu : 1;
};

/* One entry of a sample's branch stack (PERF_SAMPLE_BRANCH_STACK): a taken branch,
 * `from` the branch instruction itself, `to` its target; `flags` as the kernel packs
 * them (mispred, predicted, in_tx, abort, cycles, type, ...). */
struct perf_branch_entry {
	uint64_t from, to, flags;
};

struct perf_sample {
	uint64_t ip;
	uint64_t addr;
	uint64_t period;        /* the attr's period when the sample carries none */
	uint64_t weight;        /* WEIGHT or WEIGHT_STRUCT var1 */
	uint64_t data_src, transaction, phys_addr, cgroup;
	const uint64_t *callchain; /* borrowed; host byte order; includes context markers */
	uint64_t nr_callchain;
	const void *raw;        /* borrowed, RAW bytes as written */
	uint32_t raw_size;
	/* BRANCH_STACK: nr_branches entries, newest first, host byte order, borrowed;
	 * for a --call-graph lbr event (branch_sample_type CALL_STACK) each is a call of
	 * the user stack, innermost first. hw_idx (the hardware's top-of-stack index,
	 * perf's --stitch-lbr reads it) when the event's branch_sample_type has HW_INDEX,
	 * else has_branch_hw_idx is 0. A COUNTERS array after the entries is skipped. */
	const struct perf_branch_entry *branches;
	uint64_t nr_branches;
	uint64_t branch_hw_idx;
	int has_branch_stack, has_branch_hw_idx;
	/* REGS_USER: abi (0: none, then no values), one value per bit of the event's
	 * sample_regs_user in bit order, host byte order, borrowed */
	uint64_t regs_user_abi;
	const uint64_t *regs_user;
	uint32_t nregs_user;
	/* STACK_USER: the copy from the user stack pointer up, borrowed; `dyn` of its
	 * `size` bytes are valid (perf's dyn_size, capped at size) */
	const uint8_t *stack_user;
	uint64_t stack_user_size, stack_user_dyn;
	int has_period, has_callchain, has_addr, has_weight, has_stack_user;
};

struct perf_mmap_rec {          /* MMAP and MMAP2 */
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min, prot, flags;
	uint64_t ino, ino_generation;
	uint8_t build_id[PERF_BUILD_ID_MAX]; /* MMAP2 with misc bit 14 */
	uint8_t build_id_size;
	int has_build_id;
	int executable;         /* not PERF_RECORD_MISC_MMAP_DATA (misc bit 13) */
	const char *filename;   /* borrowed */
};

struct perf_comm_rec {
	uint32_t pid, tid;
	int exec;               /* misc bit 13: the process called exec */
	const char *comm;       /* borrowed */
};

struct perf_fork_rec {          /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
	int synthesized;        /* FORK, misc bit 13 (perf's PERF_RECORD_MISC_FORK_EXEC): perf
				   wrote it from /proc for a process already running when it
				   began, so whether it ran another program since is not known */
};

struct perf_namespaces_rec {
	uint32_t pid, tid;
	uint64_t pid_ns_dev, pid_ns_ino; /* the task's pid namespace; 0, 0 when not told */
};

struct perf_lost_rec {
	uint64_t id, lost;      /* LOST: id and count; LOST_SAMPLES: lost only */
};

struct perf_ksymbol_rec {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;         /* bit 0: unregister */
	const char *name;       /* borrowed */
};

/* TIME_CONV: perf's TSC-to-perf-time parameters (for jitdumps with ARCH_TIMESTAMP). */
struct perf_time_conv_rec {
	uint64_t time_shift, time_mult, time_zero;
	uint64_t time_cycles, time_mask; /* 0 in the 32-byte form before Linux 5.9 */
	uint8_t cap_user_time_zero, cap_user_time_short;
};

struct perf_record {
	uint32_t type;          /* PERF_RECORD_* */
	uint16_t misc;
	uint16_t size;
	uint64_t offset;        /* file offset of the record (for a record inside a
				   COMPRESSED one: the offset of that COMPRESSED record) */
	const char *file;       /* which file of a --threads directory it came from */
	uint64_t index;         /* its position among the records of the recording
				   (1 the first), the same in every pass whatever is skipped */
	int event;              /* index of its event, -1 when unknown */
	int cpumode;            /* misc & 7 */
	struct perf_sample_id sid; /* sample identity, or the sample_id_all trailer */
	union {
		struct perf_sample sample;
		struct perf_mmap_rec mmap;
		struct perf_comm_rec comm;
		struct perf_fork_rec fork;
		struct perf_namespaces_rec namespaces;
		struct perf_lost_rec lost;
		struct perf_ksymbol_rec ksymbol;
		struct perf_time_conv_rec time_conv; /* TIME_CONV of 32 bytes or more */
	} u;
	const void *raw;        /* borrowed: the record's bytes as in the file */
};

/* The member of rec->u that borrows a string from the reader (MMAP's and MMAP2's
 * filename, COMM's comm, KSYMBOL's name), NULL for a type that borrows none: a caller
 * that keeps the record past the next read copies it there. */
const char **perf_record_string(struct perf_record *rec);

/* What the reader skipped or could not read, for the closing summary. */
struct perf_reader_stats {
	uint64_t records;          /* records returned */
	uint64_t samples;
	uint64_t skipped_unknown;  /* unknown record types, skipped by size */
	uint64_t skipped_bad;      /* damaged records skipped */
	uint64_t resync_bytes;     /* bytes passed over to the next plausible record header */
	uint64_t first_unknown;    /* offset of the first unknown record (+ 1; 0 none) */
	uint64_t lost_events;      /* sum of LOST */
	uint64_t lost_samples;     /* sum of LOST_SAMPLES */
	uint64_t truncated_bytes;  /* bytes after the cut of a truncated data section */
	uint64_t compressed_records;
	uint64_t aux_records;      /* AUX, AUXTRACE_INFO and AUXTRACE: hardware trace
				      (ETM, Intel PT), not decoded */
	uint64_t aux_bytes;        /* the trace bytes AUXTRACE records carry */
};

struct perf_reader;

/*
 * Open a recording. `path` is a perf.data file, a `perf record --threads`
 * directory, or "-" for standard input (a pipe is spooled to an unlinked temporary
 * file so that it can be read twice). Reads the header, attrs and features (for
 * pipe mode: all the header records, scanning the whole stream once).
 * Returns NULL after reporting one error line through `d`.
 */
struct perf_reader *perf_reader_open(const char *path, struct diag *d);

/* The same over bytes in memory (fuzzing, tests). `name` is used in messages.
 * The buffer must outlive the reader. */
struct perf_reader *perf_reader_open_mem(const void *buf, size_t len, const char *name,
					 struct diag *d);

/*
 * The next record: 1 and *rec filled, 0 at the end, -1 on an error already
 * reported through the diag. Pointers inside *rec are borrowed until the next
 * call. Damage that can be skipped is warned about, counted in the stats and
 * skipped; a data section cut short ends the stream with a warning naming the
 * offset and the bytes lost (0, not -1). Records inside COMPRESSED records come out
 * as ordinary records. Header-only records (attrs, features, event types, build
 * ids, FINISHED_INIT, COMPRESSED) are consumed, not returned.
 */
int perf_reader_next(struct perf_reader *r, struct perf_record *rec);

/*
 * Bytes of a record inflated from compressed data (perf_reader_inflated says which)
 * stay where they are past the next call, until the reader writes over them: before
 * it writes over or moves a range of its buffer it calls fn(arg, lo, hi), the range
 * being [lo, hi) (NULL: no call). The buffer is written in turn from its start, a
 * block at a time, so a record is written over only about a buffer's length (a
 * megabyte) of inflated data after it was returned. A caller holding records for
 * later (convert/session.c, a round of samples) keeps pointers to such bytes and
 * copies those in the range when told, instead of copying every record's.
 */
void perf_reader_on_reuse(struct perf_reader *r,
			  void (*fn)(void *arg, const void *lo, const void *hi), void *arg);
int perf_reader_inflated(const struct perf_reader *r, const void *p, size_t n);

/*
 * Records of `type` (e.g. PERF_RECORD_SAMPLE for a pass that wants process state only)
 * are framed and counted but neither decoded nor returned, until set again (0:
 * none). Damage in them is then warned about in the next pass that decodes them.
 */
void perf_reader_skip_type(struct perf_reader *r, uint32_t type);
/*
 * For each sample skipped so, fn(arg, index, sid): its index (as perf_record.index)
 * and its pid, tid and time as decoding it would give them (has_tid, has_time), read
 * from its first fields alone; sid NULL when its bytes cannot say (then decoding it
 * may fail too, or not). NULL: none.
 */
void perf_reader_on_skipped_sample(struct perf_reader *r,
				   void (*fn)(void *arg, uint64_t index,
					      const struct perf_sample_id *sid),
				   void *arg);

/* Start again from the first record (for a second pass). */
void perf_reader_rewind(struct perf_reader *r);

const struct perf_header_info *perf_reader_header(const struct perf_reader *r);
size_t perf_reader_nevents(const struct perf_reader *r);
const struct perf_event_desc *perf_reader_event(const struct perf_reader *r, size_t i);
const struct perf_reader_stats *perf_reader_stats(const struct perf_reader *r);
/* The recording's tracing data (feature HEADER_TRACING_DATA; in pipe mode the bytes
 * after the PERF_RECORD_HEADER_TRACING_DATA record), for formats/read/tracefmt.h: the
 * formats of its tracepoint events. Borrowed until perf_reader_close(); NULL (and
 * *len 0) when the recording has none. */
const void *perf_reader_tracing_data(const struct perf_reader *r, size_t *len);

struct sp_info;
/* What simpleperf's own features (formats/read/simpleperf.h: FILE/FILE2 symbol tables,
 * META_INFO) say, or NULL when the recording has none. Borrowed until
 * perf_reader_close(). */
const struct sp_info *perf_reader_simpleperf(const struct perf_reader *r);

/* NULL-safe. */
void perf_reader_close(struct perf_reader *r);

#endif
