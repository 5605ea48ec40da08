/* jitcache: a jitdump's code table kept in perfconv's cache (--cache-dir), so that a later
 * conversion with the same dump neither parses nor replays what it read before.
 *
 * An entry is made for a dump as far as it was read (a runtime may still be writing it)
 * and holds the table whole: a conversion whose dump has not changed reads it in place;
 * one whose dump grew reads on from where the entry's read stopped, and keeps the
 * longer table. An entry is for the dump's file (device, inode), header and how it was
 * read (TIME_CONV, timeless, demangled) and for its bytes up to where the read stopped
 * (the 4 KB before that point are checked): a dump rewritten or replaced is read afresh.
 * A perf map's code table (a process no dump names) is kept the same way, its key the
 * map's file with perf_map set and no header.
 */
#ifndef PERFCONV_JITCACHE_H
#define PERFCONV_JITCACHE_H

#include <stdint.h>
#include <sys/stat.h>

#include "symbolize/jit/jitcode.h"
#include "symbolize/jit/jitstore.h"
#include "symbolize/locate.h"

/*
 * The table of the dump `key` names (open as `fd`, status `st`) from `cache`: read up to
 * *resume. NULL when no entry holds (none; made from another dump, another state of it,
 * or another perfconv; damaged, told to the cache's damaged()).
 */
struct jitcode *jitcache_open(const struct cache_ctx *cache, const struct jit_store_key *key,
			      int fd, const struct stat *st, uint64_t *resume);

/* Keep `jc`, the table of dump `key` (open as `fd`) read up to `resume`, in `cache`
 * (written on the cache's thread; the table may be freed at once). */
void jitcache_save(const struct cache_ctx *cache, const struct jit_store_key *key, int fd,
		   struct jitcode *jc, uint64_t resume);

#endif
