/* dwarfinfo: source lines and inlined frames from DWARF, through libdw. */
#ifndef PERFCONV_DWARFINFO_H
#define PERFCONV_DWARFINFO_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/locate.h"

struct dwarf_frame {
	const char *name;  /* linkage name when DWARF has one, else DW_AT_name after its
			    * declaration's scope ("std::generate_n<...>",
			    * "main::<lambda()>::operator()"); NULL if none */
	const char *file;  /* source file, NULL when unknown */
	uint32_t line, column;
};

struct dwarf_info;

/*
 * Open the DWARF of the ELF file at `path`, offline. The debug info comes from the
 * file itself, else from `debug_file` (the separate debug file already found for its
 * symbol table, or NULL), else, when the user sets DEBUGINFOD_URLS, from libdw's own
 * search including its debuginfod client. The strings must outlive the call only.
 * Returns NULL when there is no DWARF anywhere.
 *
 * `cache`: where decompressed copies of separate debug files are kept
 * (DIR/debug/BUILDID.debug), or NULL for no cache. System debug files (Debian's -dbg
 * and -dbgsym packages) have zlib-compressed sections that libdw inflates whole on
 * every open; the copy is made once per build id and then mmapped, after its
 * checksum and build id are checked (a damaged copy is told to `cache`, removed and
 * made again). `cache` must outlive the call only.
 */
struct dwarf_info *dwarf_info_open(const char *path, const char *debug_file,
				   const struct cache_ctx *cache);
/* What the user should be told of the files read (a dwz supplement not used, and why:
 * symbolize/altlink.h), or NULL. Valid until dwarf_info_free(). */
const char *dwarf_info_problem(const struct dwarf_info *d);

/*
 * The frames at link-time virtual address `vaddr`, innermost first: each inlined
 * callee with its own file and line, then the function that holds them, whose line
 * is the one executing (or, for an outer frame, the call). Returns how many were
 * written (at most `cap`), 0 when DWARF says nothing about the address. The
 * strings stay valid until dwarf_info_free().
 */
size_t dwarf_info_frames(struct dwarf_info *d, uint64_t vaddr, struct dwarf_frame *out,
			 size_t cap);

/* Read what every lookup needs first (libdw's table of the units' address ranges),
 * ahead of the first dwarf_info_frames(). NULL-safe. */
void dwarf_info_prepare(struct dwarf_info *d);

/* NULL-safe. */
void dwarf_info_free(struct dwarf_info *d);

#endif
