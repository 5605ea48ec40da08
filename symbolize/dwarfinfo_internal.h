/* dwarfinfo_internal: the DWARF index shared by dwarfinfo.c (lines, inlined calls) and dwarfinfo_names.c (names). */
#ifndef PERFCONV_DWARFINFO_INTERNAL_H
#define PERFCONV_DWARFINFO_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdint.h>

#include "common/util.h"
#include "symbolize/altlink.h"
#include "symbolize/debugcopy.h"

/* A function, an inlined call or a scope (namespace, class, struct, union) of a CU. */
struct die_node {
	Dwarf_Die die;
	int32_t parent;          /* index of the enclosing function or inlined call, -1 none */
	uint32_t depth;          /* in the DIE tree */
	int tag;                 /* DW_TAG_subprogram, DW_TAG_inlined_subroutine, or a scope's */
	int32_t scope;           /* index of the enclosing namespace, class, struct, union or
				  * function (a local class's), -1 none: the name's scope */
};

/* An address range of a DIE, in the CU's addresses (module address - bias). */
struct die_range {
	Dwarf_Addr lo, hi;
	uint32_t node;           /* its die_node */
};

/*
 * Per compilation unit: where its functions and inlined calls are, so that an address
 * outside every inlined call needs only the line table, and one inside gets its chain
 * of calls from the nodes' parents (no dwarf_getscopes walk of the unit).
 */
struct cu_index {
	struct die_node *nodes;          /* in DIE order: by ascending offset */
	struct die_range *inl, *subs;    /* sorted by lo */
	Dwarf_Addr *inl_maxhi, *subs_maxhi; /* max hi of [0..i] */
	size_t nnodes, ninl, nsubs;
};

/* A unit's address range from .debug_aranges (DWARF addresses, hi exclusive). */
struct cu_arange {
	Dwarf_Addr lo, hi;
	Dwarf_Off cu;         /* offset of the unit's header in .debug_info */
};

struct dwarf_info {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr elf_bias;  /* module address = link-time vaddr + elf_bias */
	Dwarf *dw;
	Dwarf_Addr dw_bias;   /* module address = DWARF address + dw_bias */
	/* .debug_aranges read here (libdw's reading sorts it with qsort, and was the
	 * largest single cost of symbolizing libc); own_ar -1 when it could not be,
	 * and libdw's lookups are used */
	int own_ar;
	struct cu_arange *ar;
	size_t nar;
	struct u64map cu_ids; /* CU DIE offset + 1 -> cus index */
	struct cu_index **cus; /* each allocated alone: a name's scope in another unit
				* indexes that unit while the caller holds its own */
	size_t ncus, cus_cap;
	/* qualified names of functions without a linkage name, and of their scopes,
	 * made once per declaration: its DIE offset + 1 -> names id */
	struct u64map qnames;
	struct strtab names;
	/* libdw keeps pointers to these: one set per handle, no state shared */
	Dwfl_Callbacks callbacks;
	char *debuginfo_path; /* always NULL: libdw's default search path */
	struct find_hint hint;
	struct alt_file alt;  /* the dwz supplement set (symbolize/altlink.h) */
	char *problem;        /* what to say of the files read, or NULL */
};

/* The index of unit `cu` (a DW_TAG_compile_unit or partial unit DIE), made on first
 * use and kept until dwarf_info_free. */
const struct cu_index *dwarfinfo_cu_index(struct dwarf_info *d, Dwarf_Die *cu);

/*
 * A function's name: its linkage name where DWARF has one (mangled: the caller
 * demangles it), else DW_AT_name with the scope of its declaration before it, a
 * function-local scope spelt with its parameters as GCC spells it. Owned by `d` (or
 * libdw), valid until dwarf_info_free; NULL when the DIE has no name.
 */
const char *dwarfinfo_die_name(struct dwarf_info *d, Dwarf_Die *die);

#endif
