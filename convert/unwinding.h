/* unwinding: the user part of --call-graph dwarf samples, unwound (symbolize/unwind.h). */
#ifndef PERFCONV_UNWINDING_H
#define PERFCONV_UNWINDING_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "convert/replay.h"
#include "convert/session.h"
#include "formats/read/perfdata.h"
#include "formats/model/profile.h"
#include "symbolize/jit/jitprocs.h"
#include "symbolize/symbolizer.h"
#include "symbolize/unwind.h"

/* Room for a rebuilt raw stack: a kernel part, a user marker and the unwound frames. */
#define UNWINDING_MAX_WORDS (2 * UNWIND_MAX_FRAMES + 8)

/* What the unwinding saw, for the summary. */
struct unwinding_stats {
	uint64_t samples;             /* samples unwound */
	uint64_t stopped[UNWIND_NSTOPS]; /* by why they stopped (UNWIND_END: complete) */
	uint64_t short_size_max;      /* the largest stack copy among those too small */
	uint64_t altstack;            /* past the copy's top after a signal frame: a handler
					 on a sigaltstack, the interrupted stack elsewhere */
	uint64_t past_top;            /* UNWIND_STACK_SHORT where the copy held the whole
					 stack (dyn_size < size): not counted in stopped[] */
	/* UNWIND_NO_CFI: the module (a dso, or UINT32_MAX for JIT / anonymous code) that
	 * stopped the most samples, and how many */
	uint32_t no_cfi_dso;
	uint64_t no_cfi_top;
	uint32_t no_reg;              /* UNWIND_NO_REG: the DWARF register of the last one */
	uint64_t nocfi;               /* samples with a frame stepped without CFI (its frame
					 pointer, or an aarch64 leaf's x30) */
	uint64_t sp_zero;             /* samples whose recorded stack pointer is 0: not
					 unwound, not in stopped[] */
	int other_arch;               /* samples with registers of an architecture not handled */
	uint64_t jit_cfi_codes;       /* JIT functions stepped through with their UNWINDING_INFO */
	uint64_t jit_cfi_bad;         /* JIT functions whose UNWINDING_INFO is not valid CFI */
	uint64_t jit_cfi_bad_samples; /* samples whose walk met one of them */
};

struct unwinding;

/* The objects must outlive it; `strings` are the replay's; `jits` (loaded) gives the
 * CFI of JIT code from its dump's UNWINDING_INFO. NULL when the recording's samples
 * carry no user registers and stack (nothing to unwind). */
struct unwinding *unwinding_new(const struct perf_reader *r, const struct replay *rp,
				const struct strtab *strings, struct symbolizer *sym,
				const struct jit_procs *jits, struct diag *d);
/* NULL-safe. */
void unwinding_free(struct unwinding *u);

/*
 * A sample's raw stack with its user part unwound: when it has user registers and a
 * stack copy and its callchain holds no user addresses, writes into words[0..cap)
 * the callchain's kernel part (as recorded), PERF_CONTEXT_USER and the unwound pcs
 * (leaf first; PERF_CONTEXT_USER again before a frame a signal interrupted, whose
 * address is exact as a leaf's), and returns the word count. Returns 0 for a sample
 * to take as it is.
 */
size_t unwinding_sample(struct unwinding *u, const struct sample_ctx *c, uint64_t *words,
			size_t cap);

const struct unwinding_stats *unwinding_stats(const struct unwinding *u);

/* The summary's lines: samples whose unwinding stopped early, and why. */
void unwinding_report(const struct unwinding *u, struct diag *d);

#endif
