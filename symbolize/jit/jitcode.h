/* jitcode: the JIT code of one process over time, from its jitdump and perf map.
 *
 * Feed it one process's code loads, moves and DEBUG_INFO (jitcode_add_dump does it from a
 * jitdump reader) and perf map lines, call jitcode_finish(), then ask what code was at
 * an address at a sample's time.
 *
 * Attribution: a code load holds from its timestamp until other code is loaded over any
 * part of its range, until it moves, or until the process ends; a sample resolves
 * against the code that was there at its time. That needs sample times on the dump's
 * clock (perf record -k 1, CLOCK_MONOTONIC). When the times cannot be compared, call
 * jitcode_set_timeless(): then the dump's file order decides and the code last loaded
 * over an address wins, whatever the sample's time. Perf map lines have no times: a
 * later line over the same range wins, and they are consulted only where the dump
 * names nothing (a process with both, as BEAM writes, gets the dump's times and lines).
 *
 * Lines: each code load takes the DEBUG_INFO just before it in the dump (the one for the
 * same code_addr; a DEBUG_INFO for other code is dropped). An address maps to the entry
 * with the greatest address at or below it; line 0 means none. Whether the producer
 * added 0x40 to its entry addresses (V8, LLVM) or not (BEAM) is decided once per table
 * in jitcode_finish() (see there). Entries past the function's end are ignored; the last
 * entry before its start (BEAM starts in the prologue) covers the code from its start.
 * A file name that is not valid text, or that is the function name's file with its first
 * 16 bytes overwritten (Node.js 20's freed memory), is replaced by the file named in the
 * function's name (`JS:*fib /path/fib.js:2:19`), or dropped when the name names none.
 * Names and attribution never depend on the debug info.
 */
#ifndef PERFCONV_JITCODE_H
#define PERFCONV_JITCODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "formats/read/jitdump.h"
#include "formats/read/perfmap.h"

#define JITCODE_ELF_HEADER_OFFSET 0x40

struct jitcode_frame {
	const char *name;      /* demangled where it is a mangled C++ or Rust name */
	const char *raw_name;  /* as the runtime wrote it */
	const char *file;      /* source file, NULL when unknown */
	uint32_t line;         /* 0 when unknown (then `file` is the function's file, if known) */
	uint64_t start, size;  /* the code's range */
	uint32_t code;         /* index of the code (a load, a moved copy or a map line): the
				  same code gives the same index until the table changes */
	int from_map;          /* from a perf map: no times, no lines */
};

struct jitcode_stats {
	uint64_t loads, moves, map_entries;
	uint64_t moves_unmatched;   /* MOVE of code that was not there at its time */
	uint64_t debug_infos;       /* DEBUG_INFO records attached to a load */
	uint64_t unwind_infos;      /* UNWINDING_INFO records with a table, kept */
	uint64_t unwind_damaged;    /* UNWINDING_INFO records whose sizes do not fit
				       them (the table past the record, the header
				       past the table, an implausible size): not used */
	uint64_t debug_unmatched;   /* DEBUG_INFO records no load claimed */
	uint64_t lines;             /* entries kept */
	uint64_t lines_outside;     /* entries dropped: past the function's end */
	uint64_t files_replaced;    /* entry files replaced by the function name's file */
	uint64_t files_dropped;     /* invalid entry files with nothing to replace them */
	uint64_t other_pid;         /* dump records of another pid (added all the same) */
	uint64_t votes_offset, votes_plain; /* see jitcode_finish() */
	uint64_t names_kept;        /* names kept mangled by the demangler's bounds
				       (common/demangle.h) */
	uint32_t line_offset;       /* 0x40 or 0, decided by jitcode_finish() */
	int timeless;
};

struct jitcode;

/*
 * A table for one process. Function and source file names are kept by the table;
 * `demangle` 0 keeps mangled names as they are.
 */
struct jitcode *jitcode_new(int demangle);
/* NULL-safe. */
void jitcode_free(struct jitcode *jc);

/* The dump's times cannot be compared with the samples': last load wins (see above). */
void jitcode_set_timeless(struct jitcode *jc);

/* DEBUG_INFO for the code about to be loaded at `code_addr`: the entries are copied. */
void jitcode_add_debug(struct jitcode *jc, uint64_t code_addr,
		       const struct jitdump_debug_entry *entries, size_t n);
/* A code load; it takes the pending DEBUG_INFO when that is for the same code_addr. */
void jitcode_add_load(struct jitcode *jc, uint64_t time, uint64_t code_addr, uint64_t size,
		      const char *name);
/*
 * UNWINDING_INFO for the code about to be loaded: `data` is its .eh_frame followed by
 * its .eh_frame_hdr (the last `eh_frame_hdr_size` bytes), copied. The next load takes it.
 */
void jitcode_add_unwind(struct jitcode *jc, const uint8_t *data, uint64_t size,
			uint64_t eh_frame_hdr_size);
/* The UNWINDING_INFO of code `code` (jitcode_frame.code): 1 with the bytes (valid as
 * long as the table), or 0 when it has none. */
int jitcode_unwind_info(const struct jitcode *jc, uint32_t code, const uint8_t **data,
			size_t *size, size_t *eh_frame_hdr_size);
/* Code moved from old_addr to new_addr at `time` (size 0: the size it had). */
void jitcode_add_move(struct jitcode *jc, uint64_t time, uint64_t old_addr, uint64_t new_addr,
		      uint64_t size);
/*
 * A perf map line. The lines written over by later ones (and the empty ones) are dropped
 * every so often as lines come, the table finished then (`code` numbers change): a
 * table of a map that restates its ranges for months holds its live ranges.
 */
void jitcode_add_map_entry(struct jitcode *jc, uint64_t start, uint64_t size, const char *name);

/*
 * Every record of a dump: DEBUG_INFO, UNWINDING_INFO, CODE_LOAD (at code_addr: LLVM
 * writes vma 0) and MOVE, with the reader's times. Records of a pid other than `pid` are counted in the
 * stats and added all the same (producers write thread ids there). The caller decides
 * about the clock: call jitcode_set_timeless() when the dump's times are not converted
 * (jitdump_header.times_converted) or the recording's clock is not CLOCK_MONOTONIC.
 * Returns the number of code loads added.
 */
uint64_t jitcode_add_dump(struct jitcode *jc, struct jitdump_reader *r, uint32_t pid);
/* Every line of a perf map. Returns the number of entries added. */
uint64_t jitcode_add_perfmap(struct jitcode *jc, struct perfmap_reader *r);

/*
 * Build the time index, after the last add. Decides the entry address offset for the
 * whole table: each load whose DEBUG_INFO starts exactly at code_addr + 0x40 votes for
 * 0x40, each whose entries start below code_addr + 0x40 (impossible with the offset:
 * BEAM's prologue entries, or lines at the very start) votes for none; the offset is
 * 0x40 unless `none` has more votes. More records may be added after it (a dump read
 * further): the table then answers nothing until it is finished again, which gives
 * what one finish after all the adds would have given.
 */
void jitcode_finish(struct jitcode *jc);

/*
 * Drop what no lookup at a time >= `before` can meet (codes replaced or moved before
 * it, perf map lines written over, moves before it): the table then holds the code
 * live at `before` and what came after, and is to be finished again. Lookups at times
 * >= `before` give what they gave; the stats count what is kept. A timeless table keeps
 * what is live at the end. A load or move added later with a time before `before` makes
 * the table inexact (jitcode_inexact): the dump is then to be read afresh.
 */
void jitcode_prune(struct jitcode *jc, uint64_t before);
/* A record came after jitcode_prune() with a time before it: 1, else 0. */
int jitcode_inexact(const struct jitcode *jc);
/* The code loads added (jitcode_stats()->loads, without counting the entries). */
uint64_t jitcode_loads(const struct jitcode *jc);
/* The earliest time lookups give what a table of the whole dump gives: the last prune's
 * (0 when never pruned, or timeless: its lookups are made at the end). */
uint64_t jitcode_exact_from(const struct jitcode *jc);
/* The bytes the table's arrays use, for measurements. */
size_t jitcode_bytes(const struct jitcode *jc);

struct mapped_file;
/*
 * The table's whole state as bytes (finished first), for a cache entry: malloc'ed, with
 * `room` zeroed bytes before them (made a multiple of 8), its whole length in *len. Host
 * byte order: for this machine's perfconv of the same layout.
 */
void *jitcode_save(struct jitcode *jc, size_t room, size_t *len);
/*
 * A finished table from the bytes jitcode_save() made, at offset `at` (8-aligned) to
 * the end of `mf`, read in place: the table takes `mf` over (closed with it). More
 * records may be added (the arrays are copied then). NULL, with `mf` left to the
 * caller, when the bytes do not hold together (a damaged entry).
 */
struct jitcode *jitcode_load(struct mapped_file *mf, size_t at);

/*
 * The code at `addr` at `time` (ignored when timeless): 1 and *f filled, 0 when no JIT
 * code was there. Names and the file in *f live as long as the table, until the next
 * record is added to it.
 */
int jitcode_lookup(const struct jitcode *jc, uint64_t time, uint64_t addr,
		   struct jitcode_frame *f);

/* Why jitcode_lookup() found no code at `addr` at `time` (a finished table). */
enum jitcode_absence {
	JITCODE_ABSENT_NONE,         /* no code the table names is there then (never was,
					or it was freed or moved; always so when timeless) */
	JITCODE_ABSENT_BEFORE_FIRST, /* the time is before the table's first code load */
	JITCODE_ABSENT_LOADED_LATER, /* code is loaded there later: the runtime wrote the
					load after the code had begun to run */
};
enum jitcode_absence jitcode_why_absent(const struct jitcode *jc, uint64_t time, uint64_t addr);

const struct jitcode_stats *jitcode_stats(const struct jitcode *jc);
/* Of the names the table kept mangled (stats.names_kept), how many no call before
 * returned: a table held from chunk to chunk says its new ones only. */
uint64_t jitcode_kept_unsaid(struct jitcode *jc);

/* The file named in a V8-style function name (`JS:*fib /path/fib.js:2:19` gives
 * `/path/fib.js`): its length, 0 when the name names no file. */
size_t jitcode_name_file(const char *name, const char **file);

/*
 * The length of a JIT function's name as its function's: BEAM (Erlang/OTP 24+) writes
 * the code before each function's entry (its func_info) as a code of its own named
 * "M:F/A-CodeInfoPrologue"; it is that function's, and named so (the outermost frame
 * of every BEAM process, a return into erts_beamasm:normal_exit/0, lands in one).
 */
size_t jitcode_function_name_len(const char *name);

#endif
