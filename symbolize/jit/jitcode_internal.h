/* jitcode_internal: what the parts of the JIT code table (jitcode*.c) share: its layout
 * and the helpers more than one part calls.
 *
 * The parts: jitcode.c, the table and the records added to it (loads, moves, map lines,
 * their source lines and unwinding tables); jitcode_index.c, jitcode_finish(): the replay
 * of loads and moves over the treap of live codes, and the time index made from it;
 * jitcode_lookup.c, the code at an address at a time; jitcode_prune.c, what no lookup
 * can meet dropped, and the table compacted; jitcode_saved.c, the table as bytes (a cache
 * entry), read in place. The helpers keep the names they had as one file's statics.
 */
#ifndef PERFCONV_JITCODE_INTERNAL_H
#define PERFCONV_JITCODE_INTERNAL_H

#include "symbolize/jit/jitcode.h"

#include <stddef.h>
#include <stdint.h>

#include "common/demangle.h"
#include "common/mapfile.h"
#include "common/util.h"

#define FOREVER UINT64_MAX
#define FILE_INVALID UINT32_MAX
#define DAMAGED_PREFIX 16        /* bytes of a Node.js 20 file name taken by the allocator */
#define REL_LIMIT ((int64_t)1 << 31) /* an entry further from its code is none of it */
/* what a process can map (x86-64's 47-bit user space): code claimed past it is cut */
#define USER_LIMIT ((uint64_t)1 << 47)
/* map lines added before those written over are looked for: at least this many, and at
 * least as many as the table held before them (see jitcode_drop_replaced_maps()) */
#define MAP_BATCH 16384

enum { KIND_LOAD = 0, KIND_MAP, KIND_COPY };

struct jc_line {
	int32_t rel;             /* entry address - code_addr, as the producer wrote it */
	uint32_t line;
	uint32_t file;           /* offset in names, 0 none, FILE_INVALID before a load claims it */
};

struct jc_code {
	uint64_t start, size;
	uint64_t t0, t1;         /* live in [t0, t1) */
	uint64_t lines_size;     /* the size of the load the lines were written for */
	uint32_t seq;
	uint32_t name, raw;      /* offsets in the table's names */
	uint32_t file;           /* offset in names: the function's own file, 0 none */
	uint32_t lines_first, nlines;
	uint64_t unwind_off;     /* UNWINDING_INFO: its bytes at unwind[unwind_off ..] */
	uint32_t unwind_len, unwind_hdr; /* bytes in all (0: none), of them .eh_frame_hdr */
	uint8_t kind;            /* KIND_*: a copy is made by the replay of a move */
	uint8_t replayed;        /* put live by the replay at t0: a load, or a copy whose
				    move was pruned */
	uint8_t prologue;        /* a BEAM -CodeInfoPrologue, named as its function */
};

struct jc_move {
	uint64_t time;
	uint32_t seq;
	uint64_t old_addr, new_addr, size;
};

/* Pieces of the address space, each with the codes that covered it over time. */
struct jc_index {
	uint64_t *bounds;        /* piece k is [bounds[k], bounds[k + 1]) */
	size_t nbounds;
	size_t leaves;           /* piece k is node leaves + k of the segment tree */
	size_t *first;           /* codes listed at node v: ids[first[v] .. first[v + 1]) */
	uint32_t *ids;
	size_t nids;
};

/*
 * The codes live at the end of what the replay has seen, disjoint, as a treap keyed by
 * start: a code's node is its index + 1 (0 is none), its priority a hash of that. A
 * sorted array moved its tail on every insertion, which was quadratic where a runtime
 * loads modules below earlier ones.
 */
struct live {
	struct live_node {
		uint64_t start;  /* the code's, here for locality */
		uint32_t left, right, prio;
	} *v;
	size_t cap;
	uint32_t root;
};

struct jitcode {
	int demangle;
	struct demangle_budget dm; /* the demangler's bounds on this table's names (not saved:
				      a table read back starts a budget afresh) */
	uint64_t kept_said;        /* of stats.names_kept, those jitcode_kept_unsaid() gave */
	/* function and file names, copied (interning 15,000 function names was a third
	 * of reading a dump; a lookup's caller interns the few it meets); each file is
	 * there once (files: hash -> offset) */
	char *names;
	size_t names_len, names_cap;
	struct u64map files;
	uint32_t last_file;      /* of the last DEBUG_INFO entry with a file */
	struct jitcode_stats stats;
	struct jc_code *codes;
	size_t ncodes, codes_cap;
	struct jc_line *lines;
	size_t nlines, lines_cap;
	struct jc_move *moves;
	size_t nmoves, moves_cap;
	uint32_t seq;
	uint8_t *unwind;         /* UNWINDING_INFO bytes of the loads, one after another */
	size_t unwind_len, unwind_cap;
	int unwind_pending;      /* an UNWINDING_INFO waits for its load: the last bytes */
	uint64_t unwind_pend_off;
	uint32_t unwind_pend_hdr;
	int pending;             /* a DEBUG_INFO waits for its load (its entries are the
				    last of lines, from pend_first) */
	uint64_t debug_dropped;  /* DEBUG_INFO records no load claimed */
	uint64_t pend_addr;
	size_t pend_first;
	int finished;
	/*
	 * What jitcode_finish() made: the replay's live codes, kept and added to by the
	 * next finish when the records added since come after those replayed (else the
	 * replay is made again from the start); the codes that ended (after `floor`),
	 * indexed; the perf map lines live at the end, indexed.
	 */
	struct live lv;
	size_t done_codes, done_moves; /* the codes and moves the replay has seen */
	int replayed;                 /* the replay has been made */
	uint64_t last_time;           /* the last event it saw (time, seq) */
	uint32_t last_seq;
	uint64_t floor;               /* codes that ended at or before it are not indexed */
	uint64_t *live_start;         /* the live codes in address order, for lookups (a */
	uint32_t *live_id;            /* binary search, not a walk of the treap's nodes) */
	size_t nlive;
	int lines_counted;            /* stats.lines and lines_outside are up to date */
	struct jc_index dead, mapped;
	uint64_t first_load;     /* the time of the first code load, FOREVER without one */
	int inexact;             /* a record older than the prune came after it */
	uint32_t last_load;      /* the code added last (index + 1), 0 none */
	size_t maps_unchecked;   /* map lines added since jitcode_drop_replaced_maps() last ran */
	/* A table read from bytes jitcode_save() made (a cache entry): its arrays are in
	 * `mf`, read in place, until a record is added (jitcode_thaw() copies them). */
	int frozen;
	struct mapped_file mf;
};

static inline const char *text(const struct jitcode *jc, uint32_t off)
{
	return jc->names + off;
}

static inline uint64_t code_end(const struct jc_code *c)
{
	return c->start + c->size < c->start ? UINT64_MAX : c->start + c->size;
}

/* A code's size, cut at the end of user space (a hostile dump claims 2^63 bytes). */
static inline uint64_t clamp_size(uint64_t start, uint64_t size)
{
	if (start < USER_LIMIT && size > USER_LIMIT - start)
		return USER_LIMIT - start;
	return size;
}

/* jitcode.c */

/* `name` copied into the table's names: its offset (0, "", once names reach 4 GB). */
uint32_t jitcode_add_name(struct jitcode *jc, const char *name);
/* A file name's offset, the same for the same name (0 for ""). */
uint32_t jitcode_file_n(struct jitcode *jc, const char *s, size_t len);
/* A new code of kind `kind` (KIND_*) at `start` (its size cut at the end of user space),
 * live from `t0` to the end: its index (jc->codes may have moved). */
uint32_t jitcode_new_code(struct jitcode *jc, uint64_t start, uint64_t size, uint64_t t0,
		  uint32_t seq, int kind);
/* Frees an index's arrays and zeroes it. */
void jitcode_index_release(struct jc_index *x);

/* jitcode_index.c */

/* Puts node `n` into treap `t`, where no start equals its own: the new root. */
uint32_t jitcode_live_add(struct live *lv, uint32_t t, uint32_t n);
/* The live codes in address order, the codes that ended after jc->floor and the perf map
 * lines live at the end indexed again, from the replay made. */
void jitcode_build_indexes(struct jitcode *jc);

/* jitcode_prune.c */

/* The perf map lines written over by later ones (and the empty ones), of no use to any
 * lookup, dropped, the table finished; compacted (and its arrays given back) when they
 * are half of it. What any lookup gives is unchanged. */
void jitcode_drop_replaced_maps(struct jitcode *jc);

/* jitcode_saved.c */

/* A table read in place (jitcode_load()) copied into arrays of its own, before records
 * are added or it is compacted; nothing when it owns its arrays already. */
void jitcode_thaw(struct jitcode *jc);

#endif
