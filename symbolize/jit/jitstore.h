/* jitstore: the JIT dumps a long-lived session has read, kept from one conversion to the
 * next, so that each reads only what its dumps gained since.
 *
 * A watcher converts chunk after chunk of one service (perf record --switch-output);
 * the service's runtime appends to its jit-PID.dump all the while. The store keeps, for
 * each dump read, its code table (symbolize/jit/jitcode.h, pruned to what later lookups can
 * meet) and where the read stopped; the next conversion takes the table, reads on from
 * there and gives it back. A dump is the same dump when its file (device and inode) and
 * its header are, it has not shrunk below what was read, and it is read with the same
 * clock conversion and options; anything else is read afresh.
 */
#ifndef PERFCONV_JITSTORE_H
#define PERFCONV_JITSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/read/jitdump.h"
#include "symbolize/jit/jitcode.h"

/* What a dump was read as. */
struct jit_store_key {
	uint64_t dev, ino;            /* the file's */
	struct jitdump_header hdr;    /* its header as read */
	struct jitdump_time_conv tc;  /* the recording's TIME_CONV (zero without) */
	int timeless;                 /* the table was made timeless */
	int demangle;
	int perf_map;                 /* a perf map's table (hdr, tc zero), not a dump's */
};

struct jit_store;

struct jit_store *jit_store_new(void);
/* NULL-safe: frees every table it holds. */
void jit_store_free(struct jit_store *s);

/*
 * A new conversion begins: the tables of dumps no conversion took since the last
 * jit_store_begin() (their processes gone, or their dumps replaced) are freed.
 */
void jit_store_begin(struct jit_store *s);

/*
 * The table of the dump `k` names, taken out of the store, and in *resume where its
 * read stopped: NULL when the store has none for it, or none that can go on (the file
 * has fewer than *resume bytes now, or the table was pruned past `from_time`, the
 * earliest time it is to answer for: it is then freed). Give it back with
 * jit_store_put() once read on. *check (`check` may be NULL) is what was put with it.
 */
struct jitcode *jit_store_take(struct jit_store *s, const struct jit_store_key *k,
			       uint64_t file_size, uint64_t from_time, uint64_t *resume,
			       uint64_t *check);

/*
 * Keep `jc` (now the store's; the caller may use it until the next jit_store_begin())
 * as the table of dump `k` read up to `resume` (pruned or not: jitcode_exact_from says
 * from when it answers), with `check`, the caller's word on the bytes read (a perf
 * map's digest: perfmap_reader_digest), given back by jit_store_take().
 */
void jit_store_put(struct jit_store *s, const struct jit_store_key *k, struct jitcode *jc,
		   uint64_t resume, uint64_t check);

/* How many tables it holds, and their bytes (jitcode_bytes), for measurements. */
size_t jit_store_count(const struct jit_store *s);
size_t jit_store_bytes(const struct jit_store *s);

#endif
