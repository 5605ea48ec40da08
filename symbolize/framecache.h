/* framecache: what an object's DWARF said of each address it was asked, kept for later
 * conversions.
 *
 * Reading an object's DWARF costs every run the same: its files opened and mapped,
 * libdw's tables of units and lines built, pages of a 30 MB debug file touched. A
 * conversion of another recording of the same program asks for mostly the same
 * addresses, and a second conversion of one recording (to another format) for the
 * very same. The entry (DIR/frames/KEY, KEY from the two paths) holds, for each
 * address a run asked for, exactly what dwarf_info_frames() gave, and whether the
 * files have DWARF at all; it is used only while both files are as they were (size,
 * modification time, inode, device), and its checksum is checked as the other
 * entries' are. Lookups it cannot answer go to libdw and are added.
 */
#ifndef PERFCONV_FRAMECACHE_H
#define PERFCONV_FRAMECACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/dwarfinfo.h"
#include "symbolize/locate.h"

struct frame_cache;

/*
 * The entry for the DWARF of `file` with its separate debug file `debug_file` (NULL
 * when none) as they are now: what earlier runs learnt, and room for what this one
 * learns. NULL when there is no cache, when a file cannot be identified (not a regular
 * file), or when the DWARF may come from elsewhere (DEBUGINFOD_URLS is set). A damaged
 * entry is told to `cache` (which must outlive the frame cache) and removed.
 */
struct frame_cache *frame_cache_open(const struct cache_ctx *cache, const char *file,
				     const char *debug_file);

/* What the entry knows of the files' DWARF. */
enum frame_cache_dwarf {
	FRAME_CACHE_UNKNOWN, /* no run has opened it yet */
	FRAME_CACHE_NONE,    /* there is none: every lookup gives nothing */
	FRAME_CACHE_SOME,
};
enum frame_cache_dwarf frame_cache_dwarf(const struct frame_cache *fc);
/* Whether dwarf_info_open() found DWARF in the files (told once it was tried). */
void frame_cache_set_dwarf(struct frame_cache *fc, int has);

/*
 * What dwarf_info_frames() gave for `vaddr` in an earlier lookup, this run's or an
 * earlier run's: how many frames it gave (0: none), at most `cap` of them written to
 * `out`; -1 when the entry does not know. The strings stay valid until
 * frame_cache_free().
 */
long frame_cache_get(const struct frame_cache *fc, uint64_t vaddr, struct dwarf_frame *out,
		     size_t cap);
/* Remember what dwarf_info_frames() gave for `vaddr` (strings copied). */
void frame_cache_put(struct frame_cache *fc, uint64_t vaddr, const struct dwarf_frame *df,
		     size_t n);

/* Write the entry, what was read and what was learnt, when this run learnt something.
 * NULL-safe; what it learns later is written by a later call. */
void frame_cache_save(struct frame_cache *fc);
/* NULL-safe. Writes nothing. */
void frame_cache_free(struct frame_cache *fc);

#endif
