/* unwind: a sampled user stack (perf record --call-graph dwarf) into return addresses.
 *
 * A sample of such a recording carries the user registers (PERF_SAMPLE_REGS_USER) and a
 * copy of the top of the user stack (PERF_SAMPLE_STACK_USER). This steps from frame to
 * frame with the call frame information (.eh_frame, .debug_frame) of the module holding
 * each pc, read through libdw's CFI API (dwarf_cfi_addrframe) and evaluated here: the
 * frame state at an address is asked of libdw once and compiled into the rules x86-64
 * code uses (CFA = register + offset; saved at CFA + offset; same value), DWARF
 * expressions evaluated at each step. Every memory read is served from the stack copy
 * and from nowhere else. A frame without CFI
 * is stepped through its frame pointer when that points into the copy (as perf does),
 * else the walk stops. Every step must move the stack pointer up; at most
 * UNWIND_MAX_FRAMES frames. x86-64 and aarch64 (struct unwind_regs's arch); an aarch64
 * leaf without CFI whose return address is still in the link register (a PLT stub, a
 * hand-written leaf) is stepped through x30 first.
 */
#ifndef PERFCONV_UNWIND_H
#define PERFCONV_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define UNWIND_MAX_FRAMES 512
#define UNWIND_MAX_SIGNALS 8

/* The architectures unwound: a walk's is its registers' (struct unwind_regs), and a
 * module's is its ELF machine; a module of another is a module without CFI. */
enum unwind_arch { UNWIND_X86_64 = 0, UNWIND_AARCH64 = 1 };

/* DWARF register numbers of x86-64 (the System V psABI): 0 rax, 1 rdx, 2 rcx, 3 rbx,
 * 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8..15 r8..r15, 16 the return address (rip). */
#define UNWIND_X86_NREGS 17
#define UNWIND_REG_BP 6
#define UNWIND_REG_SP 7
#define UNWIND_REG_IP 16
/* aarch64 (DWARF for the Arm 64-bit architecture): 0..30 x0..x30 (29 the frame pointer,
 * 30 the link register, CFI's return address column), 31 sp; 32 the pc, kept apart
 * from x30: a leaf's caller is in x30 while its pc is elsewhere. */
#define UNWIND_A64_FP 29
#define UNWIND_A64_LR 30
#define UNWIND_A64_SP 31
#define UNWIND_A64_PC 32
#define UNWIND_NREGS 33          /* the most of any architecture */

typedef uint64_t unwind_mask;    /* bit n: register n */

struct unwind_regs {
	uint64_t r[UNWIND_NREGS];
	unwind_mask valid;       /* bit n: r[n] is known */
	uint8_t arch;            /* enum unwind_arch; 0 (x86-64) for a zeroed struct */
};

/* The stack pointer's and the pc's register numbers of `arch`. */
static inline int unwind_reg_sp(unsigned arch)
{
	return arch == UNWIND_AARCH64 ? UNWIND_A64_SP : UNWIND_REG_SP;
}

static inline int unwind_reg_ip(unsigned arch)
{
	return arch == UNWIND_AARCH64 ? UNWIND_A64_PC : UNWIND_REG_IP;
}

/*
 * The registers of a sample from its REGS_USER dump: `mask` is the event's
 * sample_regs_user, `vals` one value per bit set in it, in bit order (x86-64 perf_regs
 * numbering: AX=0 BX CX DX SI DI BP SP IP=8 ... R8=16 ... R15=23). Returns 0, or -1 when
 * the dump lacks the stack pointer or the instruction pointer.
 */
int unwind_regs_from_perf(struct unwind_regs *out, uint64_t mask, const uint64_t *vals,
			  size_t nvals);

/*
 * Where each register is in the dumps of one `mask` (an event's sample_regs_user),
 * worked out once: unwind_regs_placed() then gives what unwind_regs_from_perf() gives,
 * a load and a store a register instead of a walk of the mask's bits.
 */
struct unwind_regs_layout {
	uint64_t mask;
	unwind_mask valid;       /* the registers it places */
	uint8_t arch;
	uint8_t n;               /* reg[0..n) at vals[at[0..n)] */
	uint8_t reg[UNWIND_NREGS], at[UNWIND_NREGS];
	size_t need;             /* a dump of fewer values is one cut short */
};

/* x86-64's layout of `mask`. */
void unwind_regs_layout_init(struct unwind_regs_layout *l, uint64_t mask);
/* The layout of `mask` in `arch`'s perf_regs numbering: aarch64's is PERF_REG_ARM64_X0
 * ..X28, X29, LR, SP, PC (bits 0..32: DWARF's numbers, the pc in UNWIND_A64_PC). */
void unwind_regs_layout_arch(struct unwind_regs_layout *l, uint64_t mask, unsigned arch);
/* unwind_regs_from_perf(out, l->mask, vals, nvals), the same result and return. */
int unwind_regs_placed(const struct unwind_regs_layout *l, struct unwind_regs *out,
		       const uint64_t *vals, size_t nvals);

/* The CFI of one object file, parsed once and kept. */
struct unwind_module;

/*
 * The CFI of `file` (its .eh_frame and .debug_frame) and of its separate debug file
 * `debug_file` (NULL: none; its .debug_frame). NULL when `file` cannot be read as
 * ELF; a module without any CFI is returned all the same (it answers "no CFI").
 */
struct unwind_module *unwind_module_open(const char *file, const char *debug_file);
/*
 * The CFI of JIT code starting at `code_start` from a jitdump's UNWINDING_INFO: `data`
 * holds its .eh_frame and then its .eh_frame_hdr (the last `hdr_size` bytes). The
 * header's table places the .eh_frame (its first entry is the code's start). Its
 * addresses are the process's: bias 0. NULL when the header is not the usual form.
 */
struct unwind_module *unwind_module_jit(const uint8_t *data, size_t size, size_t hdr_size,
					uint64_t code_start);
/* The same for JIT code of `arch` (x86-64's above). */
struct unwind_module *unwind_module_jit_arch(const uint8_t *data, size_t size, size_t hdr_size,
					     uint64_t code_start, unsigned arch);
/* NULL-safe. */
void unwind_module_free(struct unwind_module *m);
/* 1 when the module has CFI of some kind. */
int unwind_module_has_cfi(const struct unwind_module *m);
/* The ELF virtual address of file offset `offset` (through its PT_LOAD segments):
 * 1 and *vaddr, or 0 when no segment holds it. */
int unwind_module_vaddr(const struct unwind_module *m, uint64_t offset, uint64_t *vaddr);

/* Where a pc is, as the caller's address space says. */
struct unwind_where {
	struct unwind_module *mod; /* NULL: no file, or a file without CFI */
	uint64_t bias;             /* pc - bias is the module's ELF virtual address */
	const char *name;          /* module name for messages, or NULL (no mapping) */
};

/* Fills *w for `pc` (for a return address: the address before it, the call's last
 * byte); returns 0 when no mapping holds pc. */
typedef int (*unwind_find_fn)(void *ctx, uint64_t pc, struct unwind_where *w);

/* Why a walk ended. */
enum unwind_stop {
	UNWIND_END = 0,       /* the outermost frame: its return address is undefined or 0 */
	UNWIND_STACK_SHORT,   /* a read past the end of the stack copy */
	UNWIND_NO_CFI,        /* a pc in a module without CFI for it, and no usable frame pointer */
	UNWIND_NO_REG,        /* the rule needs a register the sample or the frame lacks */
	UNWIND_NO_MAP,        /* a pc in no mapping */
	UNWIND_BAD,           /* the stack pointer did not move up, or unsupported CFI */
	UNWIND_LIMIT,         /* UNWIND_MAX_FRAMES frames */
	UNWIND_NSTOPS
};

struct unwind_result {
	size_t n;                 /* pcs written: the leaf (regs' ip), then return addresses */
	enum unwind_stop stop;
	const char *module;       /* UNWIND_NO_CFI: the module's name (may be NULL) */
	int reg;                  /* UNWIND_NO_REG: the DWARF register number */
	uint64_t stack_end;       /* sp + the copy's valid size: where the copy ends */
	uint32_t nocfi;           /* frames stepped without CFI: by the frame pointer (x86-64's
				     rbp, aarch64's x29 frame records), or an aarch64 leaf by x30 */
	/* pcs[signal[i]] (i < nsignal, ascending) is a signal frame's (its CFI has the
	 * augmentation 'S': the restorer a handler returns to) or the one after it, where
	 * the signal interrupted its frame: an exact address like the leaf, not a return
	 * address; the first UNWIND_MAX_SIGNALS */
	uint32_t signal[UNWIND_MAX_SIGNALS];
	size_t nsignal;
};

/*
 * Unwind from `regs` over the stack copy stack[0..size), which holds the memory from
 * regs' stack pointer (unwind_reg_sp(regs->arch)) up. Writes at most `cap` pcs. Returns res->n.
 */
size_t unwind_stack(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		    unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		    struct unwind_result *res);

/*
 * Walks made once: a sample of a process (`ctx`, not 0, and `epoch`: the caller's
 * names for what `find` answers from) with the ip, the stack pointer and the copy's
 * size of an earlier one, whose registers the earlier walk read are the same and
 * whose stack words it read hold the same, gives that walk's pcs and result without
 * walking (the result depends on nothing else). A CPU-bound program's samples are
 * mostly such: 65% of a --call-graph dwarf recording's of a C program. *aux is kept
 * with the walk and given back with it (the caller's state `find` left). ctx 0: no
 * memo, unwind_stack().
 */
struct unwind_memo;
struct unwind_memo_stats {
	uint64_t walks, hits;     /* walks made, and given whole */
	uint64_t rest_hits;       /* walks made up to a frame, the rest given */
};
struct unwind_memo *unwind_memo_new(void);
void unwind_memo_free(struct unwind_memo *m);
size_t unwind_stack_memo(struct unwind_memo *m, uint64_t ctx, uint64_t epoch,
			 const struct unwind_regs *regs, const uint8_t *stack, size_t size,
			 unwind_find_fn find, void *fctx, uint64_t *pcs, size_t cap,
			 struct unwind_result *res, uint32_t *aux);
const struct unwind_memo_stats *unwind_memo_stats(const struct unwind_memo *m);

#endif
