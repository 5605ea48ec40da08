/* unwind: a sampled user stack (perf record --call-graph dwarf) into return addresses. */
#include "symbolize/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/cfi_check.h"
#include "symbolize/unwind_internal.h"

/* CFI frame states kept per module, at most (a frame state is a few hundred bytes) */
#define UNWIND_CACHE_MAX (1u << 16)

/* One source of CFI: an ELF file's .eh_frame, or a file's .debug_frame. */
struct cfi_src {
	int fd;
	Elf *elf;
	Dwarf *dw;          /* for .debug_frame */
	Dwarf_CFI *cfi;     /* NULL: none */
	int own_cfi;        /* from dwarf_getcfi_elf: ended with dwarf_cfi_end */
};

struct load_seg {
	uint64_t offset, filesz, vaddr;
};

struct unwind_module {
	struct cfi_src src[3];   /* eh_frame, the file's .debug_frame, the debug file's */
	uint8_t *image;          /* JIT code: the ELF image made around its .eh_frame */
	int has_debug_frame;     /* the file has a .debug_frame section */
	char *debug_file;        /* the separate debug file, or NULL */
	int debug_opened;        /* src[1] and src[2] opened */
	struct load_seg *segs;
	size_t nsegs;
	/* frames looked up so far: vaddr + 1 -> index in frames (0 in frames: no CFI) */
	struct u64map cache;
	struct cfi_plan **frames;
	size_t nframes, frames_cap;
	/* the last lookups, direct-mapped in front of the cache (made on the
	 * RECENT_AFTER-th lookup: JIT code has a module per function, each asked
	 * a few times): a step's lookup is one probe instead of a hash table's */
	struct recent_frame *recent;
	uint32_t lookups;
};

struct recent_frame {
	uint64_t key;       /* vaddr + 1; 0: empty */
	uint32_t frame;     /* index in frames */
};
#define RECENT_SIZE 256 /* a power of two */
#define RECENT_AFTER 64

/*
 * How a step finds the caller's value of a register, compiled once per frame state
 * from libdw's answer (dwarf_frame_register) into what x86-64 code uses: the value
 * the callee has (struct cfi_plan's mask `same`), saved at CFA + off, CFA + off itself, another register. A DWARF
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
 * and the stack pointer (always the CFA on x86-64) has no rule. */
struct cfi_plan {
	Dwarf_Frame *f;       /* libdw's, kept only when a rule is CFA_EXPR or RULE_EXPR */
	uint64_t cfa_off;
	uint8_t cfa_reg;
	bool signal;          /* a signal frame: its pc is not a return address */
	uint32_t same;        /* bit n: register n's rule is "same value" */
	uint32_t set;         /* bit n: a rule sets register n (the stack pointer too) */
	bool has_expr;        /* a rule is an expression (RULE_EXPR, or the CFA's) */
	uint8_t nrules;
	uint8_t nat;          /* rules[0..nat) are RULE_AT_CFA (saved registers: the most) */
	uint8_t nsaved;       /* the first nsaved of them, the return address's after */
	uint32_t saved;       /* bit n: rules[0..nsaved) save register n */
	struct reg_rule rules[]; /* the others, undefined and unknown ones left out; a
				    rule writes only its register, and only the return
				    address's fails a step, so their order is free */
};

static void plan_free(struct cfi_plan *p)
{
	if (p) {
		free(p->f);
		free(p);
	}
}

static void src_close(struct cfi_src *s)
{
	if (s->own_cfi && s->cfi)
		dwarf_cfi_end(s->cfi);
	if (s->dw)
		dwarf_end(s->dw);
	if (s->elf)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static int src_open_elf(struct cfi_src *s, const char *path)
{
	struct stat st;
	const char *why;

	/* never waits on a FIFO; another user's file is read from a private copy: the CFI
	 * is read all through the run, and a mapped file cut short is SIGBUS */
	s->fd = file_open_steady(path, &st, &why);
	if (s->fd < 0) {
		s->fd = -1;
		return -1;
	}
	s->elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	if (!s->elf || elf_kind(s->elf) != ELF_K_ELF) {
		src_close(s);
		return -1;
	}
	return 0;
}

static int has_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0 && sh.sh_type != SHT_NOBITS)
			return 1;
	}
	return 0;
}

/* .debug_frame of an open ELF (dwarf_begin_elf fails without .debug_info: then none). */
static void src_debug_frame(struct cfi_src *s, Elf *elf)
{
	s->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (s->dw)
		s->cfi = dwarf_getcfi(s->dw);
}

struct unwind_module *unwind_module_open(const char *file, const char *debug_file)
{
	struct unwind_module *m = xcalloc(1, sizeof(*m));
	struct cfi_src *eh = &m->src[0];
	GElf_Ehdr eh_mem;
	size_t phnum = 0;

	elf_version(EV_CURRENT);
	for (int i = 0; i < 3; i++)
		m->src[i].fd = -1;
	if (src_open_elf(eh, file) < 0 || !gelf_getehdr(eh->elf, &eh_mem) ||
	    eh_mem.e_machine != EM_X86_64 || elf_getphdrnum(eh->elf, &phnum) < 0) {
		unwind_module_free(m);
		return NULL;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(eh->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			struct load_seg sg = { ph.p_offset, ph.p_filesz, ph.p_vaddr };
			size_t cap = m->nsegs;

			VEC_PUSH(m->segs, m->nsegs, cap, sg);
		}
	}
	eh->cfi = dwarf_getcfi_elf(eh->elf);
	eh->own_cfi = 1;
	/* .debug_frame only on the first pc .eh_frame does not cover: libdw decompresses
	 * every debug section of a file it opens, which costs more than all the rest */
	m->has_debug_frame = has_section(eh->elf, ".debug_frame");
	m->debug_file = debug_file ? xstrdup(debug_file) : NULL;
	u64map_init(&m->cache);
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, (struct cfi_plan *)NULL);
	return m;
}

struct unwind_module *unwind_module_jit(const uint8_t *data, size_t size, size_t hdr_size,
					uint64_t code_start)
{
	/* .eh_frame_hdr: version 1, the encodings gcc and V8 write (eh_frame_ptr pcrel
	 * sdata4, count udata4, table datarel sdata4), then a table of (initial location,
	 * FDE) pairs relative to the header's address */
	static const char shstrtab[] = "\0.eh_frame\0.shstrtab";
	const uint8_t *hdr = data + size - hdr_size;
	size_t eh_len = size - hdr_size, eh_pad = (eh_len + 7) & ~(size_t)7;
	size_t str_off = 64 + eh_pad, sh_off = (str_off + sizeof(shstrtab) + 7) & ~(size_t)7;
	size_t len = sh_off + 3 * 64;
	uint64_t hdr_addr, eh_addr;
	struct unwind_module *m;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	if (hdr_size < 20 || hdr_size > size || eh_len < 8 || hdr[0] != 1 || hdr[1] != 0x1b ||
	    hdr[2] != 0x03 || hdr[3] != 0x3b || ld32(hdr + 8, 0) == 0 || !cfi_eh_frame_ok(data, eh_len))
		return NULL;
	hdr_addr = code_start - (uint64_t)(int64_t)(int32_t)ld32(hdr + 12, 0);
	eh_addr = hdr_addr + 4 + (uint64_t)(int64_t)(int32_t)ld32(hdr + 4, 0);
	m = xcalloc(1, sizeof(*m));
	for (int i = 0; i < 3; i++)
		m->src[i].fd = -1;
	m->image = xcalloc(1, len);
	eh = (Elf64_Ehdr *)(void *)m->image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(m->image + 64, data, eh_len);
	memcpy(m->image + str_off, shstrtab, sizeof(shstrtab));
	sh = (Elf64_Shdr *)(void *)(m->image + sh_off);
	sh[1].sh_name = 1;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = SHF_ALLOC;
	sh[1].sh_addr = eh_addr;
	sh[1].sh_offset = 64;
	sh[1].sh_size = eh_len;
	sh[1].sh_addralign = 8;
	sh[2].sh_name = 11;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = str_off;
	sh[2].sh_size = sizeof(shstrtab);
	sh[2].sh_addralign = 1;
	elf_version(EV_CURRENT);
	m->src[0].elf = elf_memory((char *)m->image, len);
	if (m->src[0].elf)
		m->src[0].cfi = dwarf_getcfi_elf(m->src[0].elf);
	m->src[0].own_cfi = 1;
	m->debug_opened = 1;
	u64map_init(&m->cache);
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, (struct cfi_plan *)NULL);
	if (!m->src[0].cfi) {
		unwind_module_free(m);
		return NULL;
	}
	return m;
}

void unwind_module_free(struct unwind_module *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nframes; i++)
		plan_free(m->frames[i]);
	free(m->frames);
	free(m->recent);
	if (m->nframes)
		u64map_release(&m->cache);
	/* the debug_frame Dwarf handles use the ELF of their source: end them first */
	src_close(&m->src[2]);
	if (m->src[1].dw)
		dwarf_end(m->src[1].dw);
	m->src[1].dw = NULL;
	src_close(&m->src[0]);
	free(m->segs);
	free(m->debug_file);
	free(m->image);
	free(m);
}

int unwind_module_has_cfi(const struct unwind_module *m)
{
	return m && (m->src[0].cfi || m->has_debug_frame || m->debug_file);
}

int unwind_module_vaddr(const struct unwind_module *m, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct load_seg *s = &m->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = s->vaddr + (offset - s->offset);
			return 1;
		}
	}
	return 0;
}

/* ops[0..n) is DW_OP_call_frame_cfa, then DW_OP_plus_uconst N or nothing: *off = N
 * (0), and the index of the op after them. 0 when the ops are not of that form. */
static size_t cfa_plus(const Dwarf_Op *ops, size_t n, uint64_t *off)
{
	if (n == 0 || ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	*off = 0;
	if (n >= 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = ops[1].number;
		return 2;
	}
	return 1;
}

/*
 * The plan of frame state `f` (taken over). Each form compiled is one whose result
 * eval() would give the same: the ops libdw answers for DW_CFA_def_cfa (DW_OP_bregx),
 * DW_CFA_offset (call_frame_cfa, plus_uconst), DW_CFA_val_offset (the same and
 * stack_value), DW_CFA_register (DW_OP_regx), same value and undefined.
 */
static struct cfi_plan *plan_compile(Dwarf_Frame *f)
{
	struct reg_rule rules[UNWIND_NREGS];
	size_t n = 0, nat = 0, nops, k;
	Dwarf_Op *ops, ops_mem[3];
	bool keep = false, signal = false;
	uint64_t cfa_off = 0, off;
	uint8_t cfa_reg = CFA_EXPR;
	uint32_t same = 0;
	struct cfi_plan *p;

	dwarf_frame_info(f, NULL, NULL, &signal);
	if (dwarf_frame_cfa(f, &ops, &nops) == 0 && nops == 1) {
		if (ops[0].atom == DW_OP_bregx && ops[0].number < UNWIND_NREGS) {
			cfa_reg = (uint8_t)ops[0].number;
			cfa_off = ops[0].number2;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom < DW_OP_breg0 + UNWIND_NREGS) {
			cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
			cfa_off = ops[0].number;
		}
	}
	keep = cfa_reg == CFA_EXPR;
	for (int r = 0; r < UNWIND_NREGS; r++) {
		struct reg_rule rr = { (uint8_t)r, RULE_EXPR, 0, 0 };

		/* the caller's stack pointer is the CFA whatever the rule (step_cfi); a
		 * rule's failure for it would only leave it invalid before that */
		if (r == UNWIND_REG_SP)
			continue;
		if (dwarf_frame_register(f, r, ops_mem, &ops, &nops) != 0)
			continue; /* unknown: left invalid */
		if (nops == 0) {
			if (ops != NULL)
				continue; /* undefined */
			same |= 1u << r;
			continue;
		} else if ((k = cfa_plus(ops, nops, &off)) == nops) {
			rr.kind = RULE_AT_CFA;
			rr.off = off;
		} else if (k && k + 1 == nops && ops[k].atom == DW_OP_stack_value) {
			rr.kind = RULE_CFA_PLUS;
			rr.off = off;
		} else if (nops == 1 && (ops[0].atom == DW_OP_regx ||
					 (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
			uint64_t v = ops[0].atom == DW_OP_regx ? ops[0].number
							       : (uint64_t)(ops[0].atom - DW_OP_reg0);

			if (v >= UNWIND_NREGS)
				continue; /* a register not tracked: left invalid, as eval's EV_REG */
			rr.kind = RULE_REG;
			rr.reg = (uint8_t)v;
		} else {
			keep = true;
		}
		if (rr.kind == RULE_AT_CFA) {
			/* the return address's last of them (r counts up to it) */
			memmove(rules + nat + 1, rules + nat, (n - nat) * sizeof(rules[0]));
			rules[nat++] = rr;
			n++;
		} else {
			rules[n++] = rr;
		}
	}
	p = xmalloc(sizeof(*p) + n * sizeof(p->rules[0]));
	p->f = keep ? f : NULL;
	p->cfa_off = cfa_off;
	p->cfa_reg = cfa_reg;
	p->signal = signal;
	p->same = same;
	p->set = 1u << UNWIND_REG_SP;
	p->has_expr = cfa_reg == CFA_EXPR;
	for (size_t i = 0; i < n; i++) {
		p->set |= 1u << rules[i].regno;
		p->has_expr |= rules[i].kind == RULE_EXPR;
	}
	p->nrules = (uint8_t)n;
	p->nat = (uint8_t)nat;
	p->nsaved = (uint8_t)(nat && rules[nat - 1].regno == UNWIND_REG_IP ? nat - 1 : nat);
	p->saved = 0;
	for (size_t i = 0; i < p->nsaved; i++)
		p->saved |= 1u << rules[i].regno;
	memcpy(p->rules, rules, n * sizeof(rules[0]));
	if (!keep)
		free(f);
	return p;
}

/* The CFI frame state at `vaddr`, looked up and compiled once per address; NULL when
 * none. */
static const struct cfi_plan *frame_at(struct unwind_module *m, uint64_t vaddr)
{
	struct recent_frame *rf = NULL;
	uint32_t *v;
	Dwarf_Frame *f = NULL;

	if (m->recent) {
		rf = &m->recent[((vaddr + 1) * 0x9e3779b97f4a7c15ULL) >> 56 & (RECENT_SIZE - 1)];
		if (rf->key == vaddr + 1)
			return m->frames[rf->frame];
	} else if (++m->lookups >= RECENT_AFTER) {
		m->recent = xcalloc(RECENT_SIZE, sizeof(*m->recent));
	}
	v = u64map_get(&m->cache, vaddr + 1);
	if (v) {
		if (rf) {
			rf->key = vaddr + 1;
			rf->frame = *v;
		}
		return m->frames[*v];
	}
	for (int i = 0; i < 3 && !f; i++) {
		if (i == 1 && !m->debug_opened) {
			m->debug_opened = 1;
			if (m->has_debug_frame)
				src_debug_frame(&m->src[1], m->src[0].elf);
			/* most separate debug files have no .debug_frame (Debian's libc6-dbg):
			 * libdw would inflate all their sections to say so */
			if (m->debug_file && src_open_elf(&m->src[2], m->debug_file) == 0 &&
			    has_section(m->src[2].elf, ".debug_frame"))
				src_debug_frame(&m->src[2], m->src[2].elf);
		}
		if (m->src[i].cfi && dwarf_cfi_addrframe(m->src[i].cfi, vaddr, &f) != 0)
			f = NULL;
	}
	if (!f) {
		u64map_put(&m->cache, vaddr + 1, 0);
		return NULL;
	}
	if (m->nframes >= UNWIND_CACHE_MAX) {
		/* hostile or huge inputs: start the cache again rather than grow without end */
		for (size_t i = 1; i < m->nframes; i++)
			plan_free(m->frames[i]);
		m->nframes = 1;
		u64map_release(&m->cache);
		u64map_init(&m->cache);
		if (m->recent)
			memset(m->recent, 0, RECENT_SIZE * sizeof(*m->recent));
	}
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, plan_compile(f));
	u64map_put(&m->cache, vaddr + 1, (uint32_t)m->nframes - 1);
	return m->frames[m->nframes - 1];
}

/* The stack copy and what went wrong reading it. */
struct mem {
	const uint8_t *stack;
	uint64_t sp, size;
	uint64_t ends;        /* offsets below it start 8 bytes in the copy: size - 7, or 0 */
	int short_read;
	struct unwind_trace *tr;     /* NULL: reads not traced */
};

static void mem_init(struct mem *mm, const uint8_t *stack, uint64_t sp, uint64_t size)
{
	mm->stack = stack;
	mm->sp = sp;
	mm->size = size;
	mm->ends = size >= 8 ? size - 7 : 0;
	mm->short_read = 0;
	mm->tr = NULL;
}

/* The walk reads register r of the frame: a dependence on the sample's when the
 * frame's r is still that. */
static inline void uses(struct mem *mm, int r)
{
	if (mm->tr) {
		mm->tr->dep |= mm->tr->init & (1u << r);
		mm->tr->used |= 1u << r;
	}
}

/* An expression may read any register. */
static inline void uses_all(struct mem *mm)
{
	if (mm->tr) {
		mm->tr->dep |= mm->tr->init;
		mm->tr->used = ~0u;
	}
}

static inline __attribute__((always_inline)) int mem_read(struct mem *mm, uint64_t addr,
						     uint64_t *val)
{
	if (addr < mm->sp || addr - mm->sp >= mm->ends) {
		mm->short_read = 1;
		if (mm->tr)
			mm->tr->unsure = 1;
		return -1;
	}
	memcpy(val, mm->stack + (addr - mm->sp), 8);
	if (mm->tr) {
		struct unwind_trace *t = mm->tr;

		if (t->n < UNWIND_TRACE_READS) {
			t->off[t->n] = (uint32_t)(addr - mm->sp);
			t->val[t->n++] = *val;
		} else {
			t->overflow = 1;
		}
	}
	return 0;
}

/* Evaluation of a CFI expression's result. */
enum { EV_ERR = -1, EV_ADDR = 0, EV_VALUE = 1, EV_REG = 2 };

#define EV_STACK 16

/*
 * Evaluates ops[0..n) with `regs` as the frame's registers and `cfa` pushed first
 * when `push_cfa`. Returns EV_ADDR (*out is where the value is), EV_VALUE (*out is
 * the value: DW_OP_stack_value), EV_REG (*out the register number, DW_OP_regN), or
 * EV_ERR with *bad_reg set when a register was missing (-1 otherwise).
 */
static int eval(const Dwarf_Op *ops, size_t n, const struct unwind_regs *regs, struct mem *mm,
		int push_cfa, uint64_t cfa, uint64_t *out, int *bad_reg)
{
	uint64_t st[EV_STACK];
	size_t sp = 0;
	uint64_t a, b;

	*bad_reg = -1;
	if (push_cfa)
		st[sp++] = cfa;
#define PUSH(x) do { if (sp >= EV_STACK) return EV_ERR; st[sp++] = (x); } while (0)
#define POP(x) do { if (sp == 0) return EV_ERR; (x) = st[--sp]; } while (0)
	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		int reg;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
			continue;
		}
		if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			reg = op == DW_OP_bregx ? (int)ops[i].number : op - DW_OP_breg0;
			if (reg < 0 || reg >= UNWIND_NREGS || !(regs->valid & (1u << reg))) {
				*bad_reg = reg;
				return EV_ERR;
			}
			PUSH(regs->r[reg] + (uint64_t)(op == DW_OP_bregx ? (int64_t)ops[i].number2
							       : (int64_t)ops[i].number));
			continue;
		}
		if ((op >= DW_OP_reg0 && op <= DW_OP_reg31) || op == DW_OP_regx) {
			if (i + 1 != n)
				return EV_ERR;
			*out = op == DW_OP_regx ? ops[i].number : (uint64_t)(op - DW_OP_reg0);
			return EV_REG;
		}
		switch (op) {
		case DW_OP_call_frame_cfa: PUSH(cfa); break;
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
		case DW_OP_constu: PUSH(ops[i].number); break;
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
		case DW_OP_consts: PUSH((uint64_t)(int64_t)ops[i].number); break;
		case DW_OP_plus_uconst: POP(a); PUSH(a + ops[i].number); break;
		case DW_OP_dup: POP(a); PUSH(a); PUSH(a); break;
		case DW_OP_drop: POP(a); break;
		case DW_OP_swap: POP(a); POP(b); PUSH(a); PUSH(b); break;
		case DW_OP_deref:
			POP(a);
			if (mem_read(mm, a, &b) < 0)
				return EV_ERR;
			PUSH(b);
			break;
		case DW_OP_plus: POP(a); POP(b); PUSH(b + a); break;
		case DW_OP_minus: POP(a); POP(b); PUSH(b - a); break;
		case DW_OP_mul: POP(a); POP(b); PUSH(b * a); break;
		case DW_OP_and: POP(a); POP(b); PUSH(b & a); break;
		case DW_OP_or: POP(a); POP(b); PUSH(b | a); break;
		case DW_OP_xor: POP(a); POP(b); PUSH(b ^ a); break;
		case DW_OP_shl: POP(a); POP(b); PUSH(a < 64 ? b << a : 0); break;
		case DW_OP_shr: POP(a); POP(b); PUSH(a < 64 ? b >> a : 0); break;
		case DW_OP_ge: POP(a); POP(b); PUSH((int64_t)b >= (int64_t)a); break;
		case DW_OP_gt: POP(a); POP(b); PUSH((int64_t)b > (int64_t)a); break;
		case DW_OP_le: POP(a); POP(b); PUSH((int64_t)b <= (int64_t)a); break;
		case DW_OP_lt: POP(a); POP(b); PUSH((int64_t)b < (int64_t)a); break;
		case DW_OP_eq: POP(a); POP(b); PUSH(b == a); break;
		case DW_OP_ne: POP(a); POP(b); PUSH(b != a); break;
		case DW_OP_stack_value:
			if (i + 1 != n)
				return EV_ERR;
			POP(*out);
			return EV_VALUE;
		case DW_OP_nop: break;
		default:
			return EV_ERR;
		}
	}
	POP(*out);
	return EV_ADDR;
#undef PUSH
#undef POP
}

/* Outcome of one step. */
enum step { STEP_OK, STEP_END, STEP_FAIL };

/*
 * The registers a step restored from the stack are read when a later step uses them
 * (a CFA, a copy, an expression), not at once: most are callee-saved registers that
 * no later rule reads (a step of libc's msort restored six of them and the return
 * address, and only the return address was used), and a walk the memo keeps then
 * holds only the words that its result depends on. A word not in the copy leaves the
 * register invalid when it is used, as reading it at once did.
 */
struct lazy {
	uint32_t mask;                /* bit r: r is the stack word at at[r], unread */
	uint64_t at[UNWIND_NREGS];
};

static inline void need(struct unwind_regs *cur, struct lazy *lz, int r, struct mem *mm)
{
	uint64_t x;

	if (!(lz->mask & (1u << r)))
		return;
	lz->mask &= ~(1u << r);
	if (mem_read(mm, lz->at[r], &x) < 0) {
		mm->short_read = 0;
		cur->valid &= ~(1u << r);
	} else {
		cur->r[r] = x;
	}
}

/* Before an expression, which may read any register. */
static void need_all(struct unwind_regs *cur, struct lazy *lz, struct mem *mm)
{
	while (lz->mask)
		need(cur, lz, __builtin_ctz(lz->mask), mm);
}

/* Why an expression failed, as a stop reason: a register missing, a read past the
 * copy, or else the CFI itself. */
static void eval_failed(struct unwind_result *res, const struct mem *mm, int bad)
{
	res->stop = bad >= 0 ? UNWIND_NO_REG : mm->short_read ? UNWIND_STACK_SHORT : UNWIND_BAD;
	res->reg = bad;
}

/* Register `r` of the caller by libdw's rule in `f` (an expression): into *next, or
 * left invalid. -1 when the return address cannot be had (res->stop says why). */
static int reg_by_expr(Dwarf_Frame *f, int r, const struct unwind_regs *cur,
		       struct unwind_regs *next, uint64_t cfa, struct mem *mm,
		       struct unwind_result *res)
{
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	uint64_t v, x;
	int k, bad;

	if (dwarf_frame_register(f, r, ops_mem, &ops, &nops) != 0 || nops == 0)
		return 0; /* (compiled as such: not reached) */
	uses_all(mm); /* (cur's registers all read by the caller first) */
	k = eval(ops, nops, cur, mm, 0, cfa, &v, &bad);
	if (k == EV_ADDR) {
		if (mem_read(mm, v, &x) < 0) {
			if (r == UNWIND_REG_IP) {
				res->stop = UNWIND_STACK_SHORT;
				return -1;
			}
			mm->short_read = 0;
			return 0;
		}
		next->r[r] = x;
		next->valid |= 1u << r;
	} else if (k == EV_VALUE) {
		next->r[r] = v;
		next->valid |= 1u << r;
	} else if (k == EV_REG) {
		if (v < UNWIND_NREGS && (cur->valid & (1u << v))) {
			next->r[r] = cur->r[v];
			next->valid |= 1u << r;
		}
	} else if (r == UNWIND_REG_IP) {
		eval_failed(res, mm, bad);
		return -1;
	} else {
		mm->short_read = 0;
	}
	return 0;
}

/* One step with CFI frame state `p`: the caller's registers into *next, those saved
 * on the stack (but the return address) left there in *nlz. */
static enum step step_cfi(const struct cfi_plan *p, struct unwind_regs *cur, struct lazy *lz,
			  struct unwind_regs *next, struct lazy *nlz, struct mem *mm,
			  struct unwind_result *res)
{
	uint64_t cfa, x;
	uint32_t valid, carried;
	size_t i;

	if (p->has_expr)
		need_all(cur, lz, mm);
	if (p->cfa_reg != CFA_EXPR) {
		need(cur, lz, p->cfa_reg, mm);
		if (!(cur->valid & (1u << p->cfa_reg))) {
			res->stop = UNWIND_NO_REG;
			res->reg = p->cfa_reg;
			return STEP_FAIL;
		}
		uses(mm, p->cfa_reg);
		cfa = cur->r[p->cfa_reg] + p->cfa_off;
	} else {
		Dwarf_Op *ops;
		size_t nops;
		int bad;

		if (dwarf_frame_cfa(p->f, &ops, &nops) != 0 || nops == 0) {
			res->stop = UNWIND_BAD;
			return STEP_FAIL;
		}
		uses_all(mm);
		if (eval(ops, nops, cur, mm, 0, 0, &cfa, &bad) != EV_ADDR) {
			eval_failed(res, mm, bad);
			return STEP_FAIL;
		}
	}
	/* every register at once, its validity from the plan: a register without a
	 * rule is left invalid (its value a stale one nothing reads) */
	memcpy(next->r, cur->r, sizeof(next->r));
	valid = (cur->valid & p->same) | p->saved;
	nlz->mask = carried = lz->mask & p->same;
	for (; carried; carried &= carried - 1)
		nlz->at[__builtin_ctz(carried)] = lz->at[__builtin_ctz(carried)];
	/* the registers saved in the frame: where, read when used (need()) */
	for (i = 0; i < p->nsaved; i++)
		nlz->at[p->rules[i].regno] = cfa + p->rules[i].off;
	nlz->mask |= p->saved;
	if (i < p->nat) {
		/* the return address, read now */
		if (mem_read(mm, cfa + p->rules[i].off, &x) < 0) {
			res->stop = UNWIND_STACK_SHORT;
			return STEP_FAIL;
		}
		next->r[UNWIND_REG_IP] = x;
		valid |= 1u << UNWIND_REG_IP;
		i++;
	}
	next->valid = valid;
	for (; i < p->nrules; i++) {
		const struct reg_rule *rr = &p->rules[i];
		int r = rr->regno;

		nlz->mask &= ~(1u << r);
		switch (rr->kind) {
		case RULE_CFA_PLUS:
			next->r[r] = cfa + rr->off;
			next->valid |= 1u << r;
			break;
		case RULE_REG:
			if (cur->valid & (1u << rr->reg)) {
				/* the same word, still unread, or the value */
				if (lz->mask & (1u << rr->reg)) {
					nlz->at[r] = lz->at[rr->reg];
					nlz->mask |= 1u << r;
				}
				uses(mm, rr->reg);
				next->r[r] = cur->r[rr->reg];
				next->valid |= 1u << r;
			}
			break;
		default:
			if (reg_by_expr(p->f, r, cur, next, cfa, mm, res) < 0)
				return STEP_FAIL;
		}
	}
	/* x86-64: the caller's stack pointer is the CFA */
	next->r[UNWIND_REG_SP] = cfa;
	next->valid |= 1u << UNWIND_REG_SP;
	nlz->mask &= ~(1u << UNWIND_REG_SP);
	/* what the rules set holds the sample's value no more */
	if (mm->tr)
		mm->tr->init &= p->same & ~p->set;
	if (!(next->valid & (1u << UNWIND_REG_IP)) || next->r[UNWIND_REG_IP] == 0)
		return STEP_END;
	return STEP_OK;
}

/* One step through the frame pointer: rbp points at the saved rbp, the return address
 * above it. Only when both lie in the copy, above the stack pointer. */
static enum step step_fp(struct unwind_regs *cur, struct lazy *lz, struct unwind_regs *next,
			 struct lazy *nlz, struct mem *mm)
{
	uint64_t bp, saved, ra;

	need(cur, lz, UNWIND_REG_BP, mm);
	bp = cur->r[UNWIND_REG_BP];
	uses(mm, UNWIND_REG_BP);
	uses(mm, UNWIND_REG_SP);
	if (!(cur->valid & (1u << UNWIND_REG_BP)) || bp < cur->r[UNWIND_REG_SP] || (bp & 7) ||
	    mem_read(mm, bp, &saved) < 0 || mem_read(mm, bp + 8, &ra) < 0) {
		/* a frame just past the copy's end (within 1 MiB) is a stack the copy was
		 * too small for, not the end of the frame pointers */
		mm->short_read = (cur->valid & (1u << UNWIND_REG_BP)) && !(bp & 7) &&
				 bp + 16 > mm->sp + mm->size && bp < mm->sp + mm->size + (1u << 20);
		return STEP_FAIL;
	}
	*next = *cur;
	*nlz = *lz;
	next->r[UNWIND_REG_BP] = saved;
	next->r[UNWIND_REG_SP] = bp + 16;
	next->r[UNWIND_REG_IP] = ra;
	nlz->mask &= ~(1u << UNWIND_REG_BP | 1u << UNWIND_REG_SP | 1u << UNWIND_REG_IP);
	if (mm->tr)
		mm->tr->init &= ~(1u << UNWIND_REG_BP | 1u << UNWIND_REG_SP | 1u << UNWIND_REG_IP);
	return ra ? STEP_OK : STEP_END;
}

size_t unwind_walk(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		   unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		   struct unwind_result *res, struct unwind_trace *tr)
{
	/* a frame's registers and its caller's, the two swapped at each step */
	struct unwind_regs rs[2], *cur = &rs[0], *next = &rs[1], *t;
	struct lazy lzs[2], *lz = &lzs[0], *nlz = &lzs[1], *tl;
	struct mem mm;
	int first = 1, same_sp = 0;

	*cur = *regs;
	lz->mask = 0;
	mem_init(&mm, stack, regs->r[UNWIND_REG_SP], size);
	mm.tr = tr;
	memset(res, 0, sizeof(*res));
	res->stack_end = mm.sp + size;
	res->reg = -1;
	if (!(cur->valid & (1u << UNWIND_REG_IP)) || !(cur->valid & (1u << UNWIND_REG_SP))) {
		res->stop = UNWIND_NO_REG;
		res->reg = (cur->valid & (1u << UNWIND_REG_IP)) ? UNWIND_REG_SP : UNWIND_REG_IP;
		return 0;
	}
	for (;;) {
		uint64_t pc = cur->r[UNWIND_REG_IP];
		struct unwind_where w = { NULL, 0, NULL };
		const struct cfi_plan *f = NULL;
		enum step st;
		bool signal = false;
		unsigned flags = (first ? TRACE_FIRST : 0) | (same_sp ? TRACE_SAME_SP : 0);

		if (tr && tr->memo && res->n) {
			/* the rest as a walk made before from this frame on made it */
			size_t n = unwind_memo_rest(tr->memo, tr, pc, cur->r[UNWIND_REG_SP], flags,
						    stack, mm.sp, size, pcs, res->n, cap, &tr->aux);

			if (n) {
				res->n = n;
				res->stop = UNWIND_END;
				tr->from_memo = 1;
				break;
			}
		}
		if (res->n >= cap || res->n >= UNWIND_MAX_FRAMES) {
			res->stop = UNWIND_LIMIT;
			break;
		}
		if (tr) {
			tr->used = 1u << UNWIND_REG_IP | 1u << UNWIND_REG_SP;
			tr->unsure = 0;
			if (tr->nsteps < UNWIND_TRACE_STEPS) {
				tr->step[tr->nsteps].sp = cur->r[UNWIND_REG_SP];
				tr->step[tr->nsteps].first_read = (uint16_t)tr->n;
				tr->step[tr->nsteps].flags = (uint8_t)flags;
			}
		}
		if (first && res->n && res->nsignal < UNWIND_MAX_SIGNALS) {
			res->signal[res->nsignal++] = (uint32_t)res->n;
			if (tr)
				tr->unsure = 1;
		}
		pcs[res->n++] = pc;
		/* a return address's call is the byte before it: look that up */
		if (!find(ctx, first ? pc : pc - 1, &w)) {
			/* no mapping: a frame pointer is still worth a try (JIT code unknown) */
			w.mod = NULL;
			w.name = NULL;
		}
		if (w.mod) {
			uint64_t at = pc - w.bias - (first ? 0 : 1);

			f = frame_at(w.mod, at);
			if (f)
				signal = f->signal;
		}
		mm.short_read = 0;
		if (f) {
			st = step_cfi(f, cur, lz, next, nlz, &mm, res);
			if (st == STEP_FAIL)
				break;
		} else {
			st = step_fp(cur, lz, next, nlz, &mm);
			if (st == STEP_FAIL) {
				res->stop = mm.short_read ? UNWIND_STACK_SHORT
					  : w.name ? UNWIND_NO_CFI : UNWIND_NO_MAP;
				res->module = w.name;
				break;
			}
		}
		if (tr && tr->nsteps++ < UNWIND_TRACE_STEPS) {
			struct unwind_trace_step *ts = &tr->step[tr->nsteps - 1];

			ts->used = tr->used;
			ts->carried = f ? f->same : ~(1u << UNWIND_REG_BP | 1u << UNWIND_REG_SP |
						     1u << UNWIND_REG_IP);
			if (tr->unsure || signal)
				ts->flags |= TRACE_UNSURE;
		}
		if (st == STEP_END) {
			res->stop = UNWIND_END;
			break;
		}
		/* the stack pointer moves up; it may stay where CFI gives CFA=rsp+0 with
		 * the return address in a register (an epilogue that popped it, as in
		 * libgcc_s's _Unwind_RaiseException), once and to another pc */
		if (next->r[UNWIND_REG_SP] < cur->r[UNWIND_REG_SP] ||
		    (next->r[UNWIND_REG_SP] == cur->r[UNWIND_REG_SP] &&
		     (!f || same_sp || next->r[UNWIND_REG_IP] == pc))) {
			res->stop = UNWIND_BAD;
			break;
		}
		same_sp = next->r[UNWIND_REG_SP] == cur->r[UNWIND_REG_SP];
		t = cur;
		cur = next;
		next = t;
		tl = lz;
		lz = nlz;
		nlz = tl;
		/* a signal frame's pc is its restorer's, where no call was: exact, as is
		 * the next one, where the signal interrupted its frame */
		if (signal && res->n > 1 && res->nsignal < UNWIND_MAX_SIGNALS &&
		    (!res->nsignal || res->signal[res->nsignal - 1] != res->n - 1))
			res->signal[res->nsignal++] = (uint32_t)res->n - 1;
		first = signal;
	}
	return res->n;
}

size_t unwind_stack(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		    unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		    struct unwind_result *res)
{
	return unwind_walk(regs, stack, size, find, ctx, pcs, cap, res, NULL);
}
