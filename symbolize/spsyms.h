/* spsyms: names from the symbol tables a simpleperf recording carries (its FILE/FILE2
 * features), asked before any file on disk. */
#ifndef PERFCONV_SPSYMS_H
#define PERFCONV_SPSYMS_H

#include <stdint.h>

#include "formats/read/simpleperf.h"
#include "symbolize/symbolizer.h"

struct sp_syms;

/* Over `si` (borrowed: it must outlive the result); NULL when si is NULL or out of
 * memory. `demangle` 0 keeps names as stored. */
struct sp_syms *sp_syms_new(const struct sp_info *si, int demangle);
void sp_syms_free(struct sp_syms *s);

/*
 * File offset `offset` of a mapping of `path` (`ret`: a return address, looked up at
 * offset - 1): 1 and out->name set when the recording's table names it. 0 otherwise,
 * with *covered 1 when the table has symbols for this file (then it is the recording's
 * word: a file found on disk by name is not asked, as it may be another build), 0 when
 * the recording has nothing to say. Names live until sp_syms_free().
 */
int sp_syms_native(struct sp_syms *s, const char *path, uint64_t offset, int ret,
		   struct sym_frame *out, int *covered);
/* Does the recording's table have symbols for the user-space file `path` (then it
 * is not looked for on disk)? */
int sp_syms_covers(const struct sp_syms *s, const char *path);
/* Kernel address `addr` from the recording's kernel table: 1 and *out, or 0. */
int sp_syms_kernel(struct sp_syms *s, uint64_t addr, struct sym_frame *out);
/*
 * Kernel module `path` (as its mapping names it), `offset` bytes into its mapping: 1
 * and *out when the recording's table has a symbol there (simpleperf's
 * KernelModuleDso: vaddr = offset - memory offset of min_vaddr + min_vaddr), else 0.
 */
int sp_syms_module(struct sp_syms *s, const char *path, uint64_t offset, struct sym_frame *out);
/* Does the recording carry the kernel's symbols? */
int sp_syms_has_kernel(const struct sp_syms *s);

#endif
