/* jitdump: a streaming reader of the jit-PID.dump files that JIT runtimes write for perf.
 *
 * Spec: tools/perf/Documentation/jitdump-specification.txt in the Linux tree; perf's
 * reader is tools/perf/util/jitdump.c. See docs/FORMATS.md for the traps real dumps set.
 *
 * Reads version 1 in both byte orders; every record type (CODE_LOAD, MOVE, DEBUG_INFO,
 * CLOSE, UNWINDING_INFO), unknown ids skipped by their size; ARCH_TIMESTAMP dumps with
 * times converted through the recording's TIME_CONV parameters; a truncated last record
 * (the runtime was killed while writing) ends the stream with a warning, keeping every
 * record before it, and, cut inside its code bytes, the CODE_LOAD itself. DEBUG_INFO entries are validated one by one and the walk
 * resynchronizes after a damaged one (Node.js 20 writes freed memory into file names).
 * Records come out in host byte order.
 */
#ifndef PERFCONV_JITDUMP_H
#define PERFCONV_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

enum {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

#define JITDUMP_FLAG_ARCH_TIMESTAMP 1ULL

/*
 * perf's TSC-to-perf-time parameters: PERF_RECORD_TIME_CONV in the recording
 * (perf_record.u.time_conv from formats/read/perfdata.h; perf's struct perf_tsc_conversion). `cap_user_time_short`, `time_cycles` and
 * `time_mask` are 0 in recordings made before Linux 5.9.
 */
struct jitdump_time_conv {
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	uint64_t time_cycles;
	uint64_t time_mask;
	int cap_user_time_short;
};

/* perf's tsc_to_perf_time(): an architecture timestamp to the recording's clock. */
uint64_t jitdump_tsc_to_perf_time(uint64_t cyc, const struct jitdump_time_conv *tc);

struct jitdump_header {
	uint32_t version;      /* 1 */
	uint32_t total_size;   /* of the header, >= 40 */
	uint32_t elf_mach;     /* EM_X86_64 (62), ... */
	uint32_t pid;          /* of the process that wrote the dump */
	uint64_t timestamp;    /* when the dump was opened (producers disagree on the clock) */
	uint64_t flags;
	int swapped;           /* written in the other byte order */
	int arch_timestamp;    /* flag bit 0: record times are TSC values */
	int times_converted;   /* record times are on perf's clock: not ARCH_TIMESTAMP, or
				  ARCH_TIMESTAMP converted through the TIME_CONV given */
};

/*
 * One DEBUG_INFO entry. Entries are returned only where one was found at a plausible
 * place: its address within reach of the function (from 4096 bytes before code_addr to
 * 0x40 bytes past its end, when the CODE_LOAD that follows gives the size) and a line
 * below 2^24. The address is as the producer wrote it: V8 and LLVM add 0x40 to it,
 * BEAM does not (the caller decides; see symbolize/jit/jitcode.h).
 */
struct jitdump_debug_entry {
	uint64_t addr;
	uint32_t line;         /* 0: no line */
	uint32_t discrim;      /* V8 writes the column here */
	const char *file;      /* borrowed, NUL-terminated; "\xff" already resolved to the
				  previous entry's file; "" when none */
	uint8_t file_valid;    /* file is non-empty printable UTF-8 text */
	uint8_t same_file;     /* the entry said "\xff" */
};

struct jitdump_load {
	uint32_t pid, tid;
	uint64_t vma;          /* 0 from LLVM MCJIT: use code_addr */
	uint64_t code_addr, code_size, code_index;
	const char *name;      /* borrowed, NUL-terminated */
	const uint8_t *code;   /* borrowed: the code bytes, NULL when the record is short */
};

struct jitdump_move {
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

struct jitdump_debug {
	uint64_t code_addr;
	uint64_t nr_entry;     /* as written */
	const struct jitdump_debug_entry *entries; /* borrowed */
	size_t nentries;       /* entries returned (<= nr_entry) */
	size_t nrejected;      /* places where an entry was expected but failed validation;
				  each is followed by a resynchronization */
	size_t nbad_files;     /* entries returned whose file is not valid text */
};

struct jitdump_unwind {
	uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
	const uint8_t *data;   /* borrowed */
	uint64_t data_size;    /* bytes present after the fixed fields */
};

struct jitdump_record {
	uint32_t id;           /* JITDUMP_CODE_* */
	uint32_t size;         /* total_size */
	uint64_t timestamp;    /* on perf's clock when header.times_converted */
	uint64_t raw_timestamp; /* as written */
	uint64_t offset;       /* file offset of the record */
	union {
		struct jitdump_load load;
		struct jitdump_move move;
		struct jitdump_debug debug;
		struct jitdump_unwind unwind;
	} u;
};

struct jitdump_stats {
	uint64_t records;           /* returned */
	uint64_t loads, moves, debug_infos, unwinding_infos, closes;
	uint64_t unknown;           /* records of unknown ids, skipped by their size */
	uint64_t skipped_bad;       /* records too short for their type, skipped */
	uint64_t debug_entries;     /* entries returned */
	uint64_t debug_rejected;    /* entry places rejected (see jitdump_debug) */
	uint64_t debug_bad_files;   /* entries with a file name that is not text */
	uint64_t truncated_bytes;   /* bytes of a truncated last record */
	uint64_t cut_loads;         /* a CODE_LOAD cut inside its code bytes, returned
				       (see jitdump_reader_next): 0 or 1 */
	uint64_t pending_bytes;     /* of a live dump: the bytes of its last record, not
				       all written yet (or a DEBUG_INFO whose load is not) */
};

struct jitdump_reader;

/* The runtime may still be writing the dump (its process had not exited): a last record
 * cut short is the part not written yet, and a DEBUG_INFO whose CODE_LOAD is not there
 * yet waits for it; the stream ends before either without a word, and
 * jitdump_reader_resume() says where to go on. */
#define JITDUMP_LIVE 1u

/* How a dump is read. */
struct jitdump_open {
	const struct jitdump_time_conv *tc; /* for ARCH_TIMESTAMP times, or NULL */
	uint64_t from;        /* 0: from the first record; else where an earlier read of the
				 same dump stopped (jitdump_reader_resume) */
	unsigned flags;       /* JITDUMP_LIVE */
	uint64_t stop_after;  /* nonzero, with times on perf's clock: the stream ends before
				 the first record of a later time (what a recording that ends
				 then needs is read; jitdump_reader_resume goes on there) */
};

/*
 * Open a dump. `tc` (may be NULL) converts ARCH_TIMESTAMP times; without it such a
 * dump's times come out raw and header.times_converted is 0, and the caller must not
 * compare them with sample times. Returns NULL after one error line through `d`
 * (cannot open, not a jitdump, header cut short, version other than 1).
 */
struct jitdump_reader *jitdump_reader_open(const char *path, const struct jitdump_time_conv *tc,
					   struct diag *d);
/* The same over bytes in memory, which must outlive the reader; `name` is for messages. */
struct jitdump_reader *jitdump_reader_open_mem(const void *buf, size_t len, const char *name,
					       const struct jitdump_time_conv *tc,
					       struct diag *d);
/* The same with the options of `o` (may be NULL). */
struct jitdump_reader *jitdump_reader_open_mem_at(const void *buf, size_t len, const char *name,
						  const struct jitdump_open *o, struct diag *d);
/*
 * A dump from the regular file open as `fd` (the caller's: it outlives the reader and is
 * not closed by it), read up to the size it has now; `name` is for messages. An error
 * also when o->from is not within the file.
 */
struct jitdump_reader *jitdump_reader_open_fd(int fd, const char *name,
					      const struct jitdump_open *o, struct diag *d);
/* The file offset a later read of the same dump goes on at: past the last record
 * returned, or at a live dump's record not written whole yet. */
uint64_t jitdump_reader_resume(const struct jitdump_reader *r);
/* Go on at `from` (a resume offset of an earlier read of the same dump) instead of the
 * first record: 0, or -1 after an error line when it is not within the file. */
int jitdump_reader_go_on(struct jitdump_reader *r, uint64_t from);

/*
 * The next record: 1 and *rec filled, 0 at the end. Pointers in *rec are borrowed
 * until the next call. Records of unknown ids are skipped (one warning per dump); a
 * record too short for its type is warned about and skipped;
 * a record that runs past the end of the file, or a size below the 16-byte prefix
 * (the rest cannot be found), ends the stream with a warning naming the offset.
 * Except, read whole (not JITDUMP_LIVE), a last CODE_LOAD cut inside its code bytes:
 * its fixed part and name are returned (code NULL; stats.cut_loads) with a warning,
 * and the stream ends; jitdump_reader_resume() is the record's offset (a caller that
 * goes on there reads it again: keep no table made with it to go on from). A live
 * dump's cut record ends the stream without a word, to be read whole later.
 * Never returns -1 once open: all damage after the header is skippable.
 */
int jitdump_reader_next(struct jitdump_reader *r, struct jitdump_record *rec);

const struct jitdump_header *jitdump_reader_header(const struct jitdump_reader *r);
/* The most code loads and DEBUG_INFO entries the dump's bytes still to read could
 * hold, for sizing tables before reading. */
void jitdump_reader_bounds(const struct jitdump_reader *r, uint64_t *loads, uint64_t *entries);
const struct jitdump_stats *jitdump_reader_stats(const struct jitdump_reader *r);

/* NULL-safe. */
void jitdump_reader_close(struct jitdump_reader *r);

/* A dump at a glance: its header and when it loaded its first code. */
struct jitdump_glance {
	struct jitdump_header hdr;
	int has_load;             /* a CODE_LOAD within its first 64 records */
	uint64_t first_load_time; /* its time (converted as the reader converts it) */
};
/*
 * Glance at the dump open as `fd` (or, with fd -1, the `len` bytes at `buf`), without a
 * word through any diag: 0 and *g filled, or -1 with why it is not a dump written into
 * `why` (cut at why_size).
 */
int jitdump_glance(int fd, const void *buf, size_t len, const struct jitdump_time_conv *tc,
		   struct jitdump_glance *g, char *why, size_t why_size);

#endif
