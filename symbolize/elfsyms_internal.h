/* elfsyms_internal: what the parts of an ELF object's symbol table (elfsyms*.c) share:
 * the loaded object's layout.
 *
 * The parts: elfsyms_load.c, an object loaded from its ELF files (the symbols perf
 * keeps, the separate debug file); elfsyms.c, the table once loaded (perf's choice among
 * the symbols of an address, lookups); elfsyms_cache.c, the table kept in the cache and
 * read back in place.
 */
#ifndef PERFCONV_ELFSYMS_INTERNAL_H
#define PERFCONV_ELFSYMS_INTERNAL_H

#include "symbolize/elfsyms.h"

#include <stddef.h>
#include <stdint.h>

#include "common/mapfile.h"

#define BUILD_ID_MAX 64
#define NO_PARENT UINT32_MAX

struct load_seg {
	uint64_t vaddr, offset, filesz, memsz;
};

/*
 * The symbols at one address, or one PLT entry: perf keeps one of them, chosen by
 * choose_best_symbol. The choice compares demangled names, so it is made the first
 * time a lookup needs it, not for every address at load (node's 181,000 symbols,
 * .dynsym repeating most of .symtab, took two thirds of a first run to demangle).
 */
struct sym_slot {
	uint64_t maxend;  /* the largest end of its symbols: what the chosen one may cover */
	uint32_t first;   /* its first symbol; it has those up to the next slot's first */
	uint32_t parent;  /* innermost earlier slot whose symbols may still cover its start */
};

struct elf_obj {
	enum elf_obj_status status;
	char *file;    /* the object opened */
	char *symfile; /* where the symbols came from */
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_size;
	int is_rel;
	int has_symtab;       /* symbols from a .symtab, not only .dynsym: 1, or 2 from the
				 MiniDebugInfo's (.gnu_debugdata) */
	int debug_only;       /* only the separate debug file was found */
	struct load_seg *segs;
	size_t nsegs;
	struct elf_sym *syms; /* every symbol kept, in perf's order: (start, when read) */
	const uint32_t *raw;  /* per symbol: arena offset of the name as in the symbol table */
	const uint8_t *bind;  /* per symbol: STB_* */
	size_t nsyms;
	const struct sym_slot *slots;
	size_t nslots;
	uint32_t *chosen;     /* per slot: the symbol kept + 1, 0 until a lookup chose it */
	unsigned *cmp_kept;   /* names kept mangled by the demangler's bounds while
				 choosing (cmpname_get), counted across lookups */
	char *arena;          /* names; in `mf` when the table came from the cache */
	struct mapped_file mf;
};

#endif
