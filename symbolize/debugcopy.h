/* debugcopy: separate debug files with their compressed sections inflated, kept in
 * perfconv's cache (DIR/debug/BUILDID.debug) and given to libdw in their place. */
#ifndef PERFCONV_DEBUGCOPY_H
#define PERFCONV_DEBUGCOPY_H

#include <elfutils/libdwfl.h>

#include "symbolize/locate.h"

/* What debugcopy_find_debuginfo gets through the module's userdata. */
struct find_hint {
	const char *debug_file; /* the separate debug file already found, or NULL */
	const struct cache_ctx *cache; /* decompressed copies (DIR/debug/BUILDID.debug), or NULL */
};

/*
 * The copy of the debug file `src` (of build id `bid`) made as the cache entry `dst`,
 * its compressed sections inflated: a descriptor to read it from now, or -1 (nothing
 * left behind; a file it cannot lay out gets no copy, nor one its filesystem has no
 * room for: said through `cache`). The entry takes its name once sealed, on
 * cache->later's thread (`cache` or its `later` NULL: before this returns).
 */
int debugcopy_make(const char *src, const char *dst, const uint8_t *bid, size_t bidlen,
		   const struct cache_ctx *cache);

/*
 * A Dwfl_Callbacks find_debuginfo: libdw's own search (build-id directories,
 * .gnu_debuglink, debuginfod), or the hint's debug file, with the cache's copy in
 * front of it. A debug file with compressed sections found, its copy is made (its
 * trailer and name written later, on cache->later's thread) and given instead. The
 * module's userdata points at a struct find_hint (or is NULL).
 */
int debugcopy_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     GElf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
