/* unwind_internal: what the unwinder's walk (unwind.c), its CFI (unwind_cfi.c) and its
 * memo of walks (unwind_memo.c) share. */
#ifndef PERFCONV_UNWIND_INTERNAL_H
#define PERFCONV_UNWIND_INTERNAL_H

#include "symbolize/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>

#define RBIT(r) ((unwind_mask)1 << (r))

/* What the steps need to know of an architecture. */
struct unwind_arch_regs {
	uint8_t nregs;              /* registers 0..nregs) are tracked */
	uint8_t sp, ip, fp;         /* the stack pointer, the pc, the frame pointer */
	uint8_t ra;                 /* CFI's return address column: ip on x86-64, x30 on
				       aarch64 (where the pc is a register apart) */
};
extern const struct unwind_arch_regs unwind_arches[2];

/* 1 when `r` is a register whose value a rule may give or read in `a`. */
static inline int unwind_reg_ok(const struct unwind_arch_regs *a, uint64_t r)
{
	return r < a->nregs && (r != a->ip || a->ip == a->ra);
}

/*
 * How a step finds the caller's value of a register, compiled once per frame state
 * from libdw's answer (dwarf_frame_register) into what compiled code uses: the value
 * the callee has (struct cfi_plan's mask `same`), saved at CFA + off, CFA + off itself,
 * another register. A DWARF
 * expression is left to libdw and eval() at each step (RULE_EXPR).
 */
enum rule_kind { RULE_AT_CFA, RULE_CFA_PLUS, RULE_REG, RULE_EXPR };

struct reg_rule {
	uint8_t regno, kind, reg;
	uint64_t off;
};

/* CFA = r[cfa_reg] + cfa_off, or CFA_EXPR: dwarf_frame_cfa and eval() at each step */
#define CFA_EXPR 0xff

/* A frame state (one row of a CFI table) as the steps use it. A step costs what the
 * rules that move a register cost: the registers keeping the callee's value (most of
 * them: rbx, rbp, r12..r15 until a prologue saves them) are a mask, copied together,
 * and the stack pointer (always the CFA on x86-64 and aarch64) has no rule. */
struct cfi_plan {
	Dwarf_Frame *f;       /* libdw's, kept only when a rule is CFA_EXPR or RULE_EXPR */
	uint64_t cfa_off;
	uint8_t cfa_reg;
	bool signal;          /* a signal frame: its pc is not a return address */
	unwind_mask same;     /* bit n: register n's rule is "same value" */
	unwind_mask set;      /* bit n: a rule sets register n (the stack pointer too) */
	bool has_expr;        /* a rule is an expression (RULE_EXPR, or the CFA's) */
	uint8_t nrules;
	uint8_t nat;          /* rules[0..nat) are RULE_AT_CFA (saved registers: the most) */
	uint8_t nsaved;       /* the first nsaved of them, the return address's after */
	unwind_mask saved;    /* bit n: rules[0..nsaved) save register n */
	struct reg_rule rules[]; /* the others, undefined and unknown ones left out; a
				    rule writes only its register, and only the return
				    address's fails a step, so their order is free */
};


/* The module's architecture (enum unwind_arch). */
unsigned unwind_module_arch(const struct unwind_module *m);
/* The CFI frame state at `vaddr`, looked up and compiled once per address; NULL when
 * none. */
const struct cfi_plan *unwind_frame_at(struct unwind_module *m, uint64_t vaddr);

/* What a walk read that its result depends on (see struct unwind_memo). */
#define UNWIND_TRACE_READS 64
#define UNWIND_TRACE_STEPS 64

/* One step of a traced walk, frame k to k + 1 (for the walks from frame k on). */
struct unwind_trace_step {
	uint64_t sp;                /* frame k's stack pointer */
	unwind_mask used;           /* frame k's registers the step read */
	unwind_mask carried;        /* and those frame k + 1 has from it */
	uint16_t first_read;        /* its reads: off[first_read..] */
	uint8_t flags;              /* TRACE_* */
};
#define TRACE_FIRST 1               /* frame k's pc is exact (not a return address) */
#define TRACE_SAME_SP 2             /* the step before kept the stack pointer */
#define TRACE_UNSURE 4              /* a read failed (the copy's end mattered), or a
				       signal frame was counted */

struct unwind_memo;

struct unwind_trace {
	uint32_t off[UNWIND_TRACE_READS]; /* the stack words read: their offsets in the copy */
	uint64_t val[UNWIND_TRACE_READS]; /* and what they held */
	size_t n;
	int overflow;               /* more were read: not kept */
	unwind_mask init;           /* registers that still hold the sample's value */
	unwind_mask dep;            /* the sample's registers the walk read */
	uint8_t arch;               /* the walk's registers' */
	/* the steps, for walks from a frame on; nsteps past UNWIND_TRACE_STEPS: not kept */
	struct unwind_trace_step step[UNWIND_TRACE_STEPS];
	size_t nsteps;
	unwind_mask used;           /* the step being made's */
	int unsure;
	/* walks from a frame on looked up at each frame (NULL: not) */
	struct unwind_memo *memo;
	uint64_t ctx, epoch;
	int from_memo;              /* the walk ended with one: not kept again */
	uint32_t aux;               /* that walk's */
};

/* The walk from frame k on (its pc, stack pointer and flags), if one made before
 * holds for this copy: its pcs written at pcs[k..] (room for `cap` in all), its
 * reads added to *tr's, and the count of pcs; 0 if none. */
size_t unwind_memo_rest(struct unwind_memo *m, struct unwind_trace *tr, uint64_t pc,
			uint64_t sp, unsigned flags, const uint8_t *stack, uint64_t sp0, size_t size,
			uint64_t *pcs, size_t k, size_t cap, uint32_t *aux);

/* unwind_stack(), with what the walk read kept in *tr (NULL: not kept); tr->init is
 * the registers known at the start (regs->valid), tr->n and tr->dep 0. */
size_t unwind_walk(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		   unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		   struct unwind_result *res, struct unwind_trace *tr);

#endif
