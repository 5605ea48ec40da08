/* mapindex: a perf map's lines kept by address, each name read again only when an
 * address hits its line. */
#ifndef PERFCONV_MAPINDEX_H
#define PERFCONV_MAPINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "formats/read/perfmap.h"

/* One line of the map: the range it names, where it is, its order in the file. */
struct map_line {
	uint64_t start, end;
	uint64_t offset;     /* of the line in the file */
	uint32_t seq;        /* line order (among the lines with a range) */
};

struct map_index;

/*
 * The lines of perf map `path` (empty ones left out), sorted by start; the file stays
 * open for the names. NULL after an error line through `d` when it cannot be read.
 * Free with map_index_free().
 */
struct map_index *map_index_load(const char *path, struct diag *d);
struct cache_ctx;
/*
 * map_index_load() through perfconv's cache (`cache` NULL or without a folder: none).
 * An entry holds the sorted lines of map `path` (device, inode) read up to the end of
 * its whole lines; it holds while the map is at least that long and its 256 bytes
 * before that point are those read then (a map written again is read whole). A map
 * that grew is read on from there and the entry made anew. *from (may be NULL) gets
 * the offset the file was read from (0: read whole).
 */
struct map_index *map_index_load_cached(const char *path, const struct cache_ctx *cache,
					struct diag *d, uint64_t *from);
/*
 * The line that names `addr`: of those that cover it the latest in the file, as in perf.
 * 1 with *line filled and *e read from the file again (its name borrowed until the next
 * call on `m`), 0 when no line covers `addr`.
 */
int map_index_lookup(struct map_index *m, uint64_t addr, struct map_line *line,
		     struct perfmap_entry *e);
/* The lines it keeps: a line over all of the last one from the same start took that
 * one's place (what any lookup gives is the same). For measurements. */
size_t map_index_lines(const struct map_index *m);
/* NULL-safe. */
void map_index_free(struct map_index *m);

#endif
