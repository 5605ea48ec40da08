/* dwarfinfo: source lines and inlined frames from DWARF, through libdw. */
#ifndef PERFCONV_DWARFINFO_H
#define PERFCONV_DWARFINFO_H

#include <stddef.h>
#include <stdint.h>

struct dwarf_frame {
	const char *name;  /* linkage name when DWARF has one, else DW_AT_name; NULL if none */
	const char *file;  /* source file, NULL when unknown */
	uint32_t line, column;
};

struct dwarf_info;

/*
 * Open the DWARF of the ELF file at `path`, offline. The debug info comes from the
 * file itself, its separate debug file (build id under /usr/lib/debug/.build-id, or
 * .gnu_debuglink) or, when the user sets DEBUGINFOD_URLS, libdw's debuginfod client.
 * Returns NULL when there is no DWARF anywhere.
 */
struct dwarf_info *dwarf_info_open(const char *path);

/*
 * The frames at link-time virtual address `vaddr`, innermost first: each inlined
 * callee with its own file and line, then the function that holds them, whose line
 * is the one executing (or, for an outer frame, the call). Returns how many were
 * written (at most `cap`), 0 when DWARF says nothing about the address. The
 * strings stay valid until dwarf_info_free().
 */
size_t dwarf_info_frames(struct dwarf_info *d, uint64_t vaddr, struct dwarf_frame *out,
			 size_t cap);

/* NULL-safe. */
void dwarf_info_free(struct dwarf_info *d);

#endif
