/* elfsyms: the function symbols of one ELF object, as perf chooses them. */
#ifndef PERFCONV_ELFSYMS_H
#define PERFCONV_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/locate.h"

/*
 * One loaded object: its function symbols (from .symtab, else .dynsym; from a
 * separate debug file when that is where .symtab lives), sorted by address, with
 * perf's rules for aliases (the same choice `perf report` makes) and for symbols of
 * size 0 (they end where the next one starts). Names have their symbol version
 * suffix (`@@GLIBC_2.34`, `@GLIBC_2.2.5`) removed.
 */
struct elf_sym {
	uint64_t start;   /* link-time virtual address */
	uint64_t end;     /* exclusive */
	const char *name; /* owned by the table */
};

enum elf_obj_status {
	ELF_OBJ_OK = 0,
	ELF_OBJ_MISSING,   /* no file found */
	ELF_OBJ_BAD_ELF,   /* not a readable ELF file */
	ELF_OBJ_MISMATCH,  /* found, but its build id differs from the recording's */
	ELF_OBJ_STRIPPED,  /* no function symbols anywhere */
	ELF_OBJ_CHANGED,   /* the file or its debug file changed while it was read (cut
			      short or written again: another user's): no symbols taken */
};

struct elf_obj;

/*
 * Load the object for `path`. `build_id` (may be NULL/0 when the recording has
 * none) is checked against the file's NT_GNU_BUILD_ID note. `sysroot` is a --symfs
 * directory or NULL. Symbols are taken from the file itself, or when it has no
 * .symtab from its separate debug file: /usr/lib/debug/.build-id/xx/yyyy.debug, then
 * the .gnu_debuglink name in the file's directory, its .debug/ and
 * /usr/lib/debug/DIR. Never returns NULL: a failed load gives an object with a
 * status other than ELF_OBJ_OK and no symbols.
 */
struct elf_obj *elf_obj_load(const char *path, const uint8_t *build_id, size_t build_id_size,
			     const char *sysroot);

/*
 * elf_obj_load() through a cache of loaded tables in CACHE_DIR/symbols/ (`cache` NULL,
 * or its dir NULL: none): a table is kept when its symbols come from a .symtab in the
 * file itself or in the debug file at its build-id path, and used while both files
 * are unchanged (path, size, modification time, inode, device), the build id asked
 * for is the same and its checksum holds; a damaged entry is told to `cache` and made
 * again.
 */
struct elf_obj *elf_obj_load_cached(const char *path, const uint8_t *build_id,
				    size_t build_id_size, const char *sysroot,
				    const struct cache_ctx *cache);

enum elf_obj_status elf_obj_status(const struct elf_obj *o);
const char *elf_obj_status_str(enum elf_obj_status s);
/* The path actually opened (NULL when none). */
const char *elf_obj_file(const struct elf_obj *o);
/* The file's own build id; returns its size (0 when it has none). */
size_t elf_obj_build_id(const struct elf_obj *o, const uint8_t **id);

/*
 * Translate a file offset (ip - map_start + map_pgoff) to the link-time virtual
 * address, through the PT_LOAD program headers. Returns 0 on success, -1 when the
 * offset lies in no loadable segment.
 */
int elf_obj_offset_to_vaddr(const struct elf_obj *o, uint64_t offset, uint64_t *vaddr);

/* The symbol containing `vaddr`, or NULL. O(log n). */
const struct elf_sym *elf_obj_lookup(const struct elf_obj *o, uint64_t vaddr);

size_t elf_obj_nsyms(const struct elf_obj *o);

/* Added by elfsyms (additions only): */

/* The i-th symbol in address order (0 <= i < elf_obj_nsyms), or NULL. */
const struct elf_sym *elf_obj_sym(const struct elf_obj *o, size_t i);
/*
 * The name of `s` exactly as in the symbol table, version suffix included
 * ("__libc_start_main@@GLIBC_2.34"): the name perf 6.1 prints. Owned by the table.
 */
const char *elf_obj_raw_name(const struct elf_obj *o, const struct elf_sym *s);
/* 1 when the symbols came from a .symtab (the file's or its debug file's), 0 when
 * only from .dynsym (exported functions only) or when there are none. */
int elf_obj_has_symtab(const struct elf_obj *o);
/* 1 when that .symtab was the MiniDebugInfo's (.gnu_debugdata: Fedora's and RHEL's
 * stripped binaries keep their functions' symbols there, xz-compressed). */
int elf_obj_minidebug(const struct elf_obj *o);
/* 0 when file offsets cannot be translated: only a separate debug file was found,
 * whose program headers carry no file bytes. */
int elf_obj_has_segments(const struct elf_obj *o);
/* The file the symbols were read from (a separate debug file or the object), or NULL. */
const char *elf_obj_symbol_file(const struct elf_obj *o);

/* NULL-safe. */
void elf_obj_free(struct elf_obj *o);

/* Remove a trailing symbol version ("@@GLIBC_2.34" or "@GLIBC_2.2.5") in place. */
void elf_strip_version(char *name);

#endif
