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
	/* set by the search: */
	char *found;            /* the debug file given (not its copy), malloc'ed, or NULL */
	int alt_fd;             /* the dwz supplement debuginfod gave (-1 before, and none) */
	const char *problem;    /* why the debug file was not given (static), or NULL */
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
 * A Dwfl_Callbacks find_debuginfo: the hint's debug file, or (DEBUGINFOD_URLS set)
 * debuginfod by the build id, with the cache's copy in front of it. A debug file with
 * compressed sections found, its copy is made (its trailer and name written later, on
 * cache->later's thread) and given instead. The module's userdata points at a struct
 * find_hint (or is NULL).
 *
 * No path is left to libdw to open: it opens blocking (a FIFO put there waits forever)
 * and maps what it opens (a file its owner cuts short is SIGBUS). A file is opened here
 * without waiting, must be regular, and is given as a private copy when another user
 * can write it (common/mapfile.h). libdwfl's request for a dwz supplement is answered
 * with nothing (debuginfod's answer kept in hint->alt_fd): symbolize/altlink.h finds
 * and sets it once the DWARF is open.
 */
int debugcopy_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     GElf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
