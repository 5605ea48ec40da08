/* unwind_cfi: the CFI of object files and JIT code, as the unwinder's steps use it. */
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
	uint8_t arch;            /* enum unwind_arch, from the ELF machine */
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

const struct unwind_arch_regs unwind_arches[2] = {
	[UNWIND_X86_64] = { UNWIND_X86_NREGS, UNWIND_REG_SP, UNWIND_REG_IP, UNWIND_REG_BP,
			    UNWIND_REG_IP },
	[UNWIND_AARCH64] = { UNWIND_NREGS, UNWIND_A64_SP, UNWIND_A64_PC, UNWIND_A64_FP,
			     UNWIND_A64_LR },
};

struct recent_frame {
	uint64_t key;       /* vaddr + 1; 0: empty */
	uint32_t frame;     /* index in frames */
};
#define RECENT_SIZE 256 /* a power of two */
#define RECENT_AFTER 64

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
	    (eh_mem.e_machine != EM_X86_64 && eh_mem.e_machine != EM_AARCH64) ||
	    elf_getphdrnum(eh->elf, &phnum) < 0) {
		unwind_module_free(m);
		return NULL;
	}
	m->arch = eh_mem.e_machine == EM_AARCH64 ? UNWIND_AARCH64 : UNWIND_X86_64;
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
	return unwind_module_jit_arch(data, size, hdr_size, code_start, UNWIND_X86_64);
}

struct unwind_module *unwind_module_jit_arch(const uint8_t *data, size_t size, size_t hdr_size,
					     uint64_t code_start, unsigned arch)
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

	if (arch > UNWIND_AARCH64 || hdr_size < 20 || hdr_size > size || eh_len < 8 || hdr[0] != 1 || hdr[1] != 0x1b ||
	    hdr[2] != 0x03 || hdr[3] != 0x3b || ld32(hdr + 8, 0) == 0 || !cfi_eh_frame_ok(data, eh_len))
		return NULL;
	hdr_addr = code_start - (uint64_t)(int64_t)(int32_t)ld32(hdr + 12, 0);
	eh_addr = hdr_addr + 4 + (uint64_t)(int64_t)(int32_t)ld32(hdr + 4, 0);
	m = xcalloc(1, sizeof(*m));
	m->arch = (uint8_t)arch;
	for (int i = 0; i < 3; i++)
		m->src[i].fd = -1;
	m->image = xcalloc(1, len);
	eh = (Elf64_Ehdr *)(void *)m->image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	/* libdw takes the CIE's defaults (which registers keep their value) from the
	 * machine's backend: aarch64's says x19..x30 */
	eh->e_machine = arch == UNWIND_AARCH64 ? EM_AARCH64 : EM_X86_64;
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

unsigned unwind_module_arch(const struct unwind_module *m)
{
	return m->arch;
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
static struct cfi_plan *plan_compile(Dwarf_Frame *f, const struct unwind_arch_regs *a)
{
	struct reg_rule rules[UNWIND_NREGS];
	size_t n = 0, nat = 0, nops, k;
	Dwarf_Op *ops, ops_mem[3];
	bool keep = false, signal = false;
	uint64_t cfa_off = 0, off;
	uint8_t cfa_reg = CFA_EXPR;
	unwind_mask same = 0;
	struct cfi_plan *p;

	dwarf_frame_info(f, NULL, NULL, &signal);
	if (dwarf_frame_cfa(f, &ops, &nops) == 0 && nops == 1) {
		if (ops[0].atom == DW_OP_bregx && unwind_reg_ok(a, ops[0].number)) {
			cfa_reg = (uint8_t)ops[0].number;
			cfa_off = ops[0].number2;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 &&
			   unwind_reg_ok(a, ops[0].atom - DW_OP_breg0)) {
			cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
			cfa_off = ops[0].number;
		}
	}
	keep = cfa_reg == CFA_EXPR;
	for (int r = 0; r < a->nregs; r++) {
		struct reg_rule rr = { (uint8_t)r, RULE_EXPR, 0, 0 };

		/* the caller's stack pointer is the CFA whatever the rule (step_cfi); a
		 * rule's failure for it would only leave it invalid before that. An
		 * aarch64 pc apart from the return address column is that column's. */
		if (r == a->sp || !unwind_reg_ok(a, (uint64_t)r))
			continue;
		if (dwarf_frame_register(f, r, ops_mem, &ops, &nops) != 0)
			continue; /* unknown: left invalid */
		if (nops == 0) {
			if (ops != NULL)
				continue; /* undefined */
			same |= RBIT(r);
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

			if (!unwind_reg_ok(a, v))
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
	p->set = RBIT(a->sp);
	p->has_expr = cfa_reg == CFA_EXPR;
	for (size_t i = 0; i < n; i++) {
		p->set |= RBIT(rules[i].regno);
		p->has_expr |= rules[i].kind == RULE_EXPR;
	}
	p->nrules = (uint8_t)n;
	p->nat = (uint8_t)nat;
	p->nsaved = (uint8_t)(nat && rules[nat - 1].regno == a->ra ? nat - 1 : nat);
	p->saved = 0;
	for (size_t i = 0; i < p->nsaved; i++)
		p->saved |= RBIT(rules[i].regno);
	memcpy(p->rules, rules, n * sizeof(rules[0]));
	if (!keep)
		free(f);
	return p;
}

const struct cfi_plan *unwind_frame_at(struct unwind_module *m, uint64_t vaddr)
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
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, plan_compile(f, &unwind_arches[m->arch]));
	u64map_put(&m->cache, vaddr + 1, (uint32_t)m->nframes - 1);
	return m->frames[m->nframes - 1];
}
