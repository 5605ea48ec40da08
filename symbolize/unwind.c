/* unwind: a sampled user stack (perf record --call-graph dwarf) into return addresses. */
#include "symbolize/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

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
	Dwarf_Frame **frames;
	size_t nframes, frames_cap;
};

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
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return -1;
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
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, (Dwarf_Frame *)NULL);
	return m;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Register numbers a CFI program of JIT code may name, at most (x86-64 has 67). */
#define CFI_REG_MAX 127

/* A ULEB128 or SLEB128 at *p, no further than `end`; 0 when it runs past it. */
static int leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return 0;
}

/* The size of a pointer in DW_EH_PE encoding `enc`: 0 for a LEB128, -1 when unknown. */
static int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x01: case 0x09: return 0;
	default: return -1;
	}
}

/* Skip an encoded pointer; 0 when it runs past `end` or the encoding is unknown. */
static int skip_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc)
{
	int n = enc_size(enc);
	uint64_t v;

	if (n < 0)
		return 0;
	if (n == 0)
		return leb(p, end, &v);
	if ((size_t)(end - *p) < (size_t)n)
		return 0;
	*p += n;
	return 1;
}

/*
 * A CIE's or FDE's call frame instructions, checked before libdw runs them: every
 * opcode known, every operand inside the record, every register number small. libdw
 * sizes its register table by the largest register a program names, so one crafted
 * number asks it for gigabytes (found by fuzzing the JIT path).
 */
static int cfa_program_ok(const uint8_t *p, const uint8_t *end, uint8_t fde_enc)
{
	uint64_t a, b;

	while (p < end) {
		uint8_t op = *p++;

		switch (op >> 6) {
		case 1: /* advance_loc */
			continue;
		case 2: /* offset: register in the low bits */
			if (!leb(&p, end, &a))
				return 0;
			continue;
		case 3: /* restore */
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			if (!skip_ptr(&p, end, fde_enc))
				return 0;
			break;
		case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4: {
			size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;

			if ((size_t)(end - p) < n)
				return 0;
			p += n;
			break;
		}
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			if (!leb(&p, end, &a))
				return 0;
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX)
				return 0;
			break;
		case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX || !leb(&p, end, &b))
				return 0;
			break;
		case DW_CFA_register:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX || !leb(&p, end, &b) ||
			    b > CFI_REG_MAX)
				return 0;
			break;
		case DW_CFA_def_cfa_expression:
			if (!leb(&p, end, &b) || b > (uint64_t)(end - p))
				return 0;
			p += b;
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX || !leb(&p, end, &b) ||
			    b > (uint64_t)(end - p))
				return 0;
			p += b;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

/* A CIE as its FDEs need it. */
struct cie_info {
	uint64_t off;
	uint8_t fde_enc;
	int z;
};

/*
 * File format (.eh_frame, LSB 64-bit, as runtimes write it): records of u32 length
 * (0 ends), u32 id (0: a CIE; else the distance back to its CIE), then a CIE's
 * version, augmentation string, code and data alignment, return address register
 * and augmentation data ('z': its length first; 'R' the FDEs' pointer encoding),
 * or an FDE's initial location and range (in that encoding) and augmentation data;
 * then call frame instructions to the record's end. 1 when every record is well
 * formed and cfa_program_ok.
 */
static int eh_frame_ok(const uint8_t *data, size_t size)
{
	struct cie_info *cies = NULL;
	size_t ncies = 0, cap = 0, off = 0;
	int ok = 0;

	while (off + 4 <= size) {
		uint32_t len = rd32(data + off), id;
		const uint8_t *p, *end;

		if (len == 0)
			break;
		if (len == 0xffffffffu || len < 4 || len > size - off - 4)
			goto out;
		p = data + off + 8;
		end = data + off + 4 + len;
		id = rd32(data + off + 4);
		if (id == 0) {
			struct cie_info c = { off, 0, 0 };
			const char *aug;
			uint64_t v, auglen = 0;
			uint8_t version;
			const uint8_t *ad;

			if (p >= end)
				goto out;
			version = *p++;
			aug = (const char *)p;
			while (p < end && *p)
				p++;
			if (p >= end || (version != 1 && version != 3))
				goto out;
			p++;
			if (!leb(&p, end, &v) || !leb(&p, end, &v))
				goto out;
			if (version == 1) {
				if (p >= end || *p++ > CFI_REG_MAX)
					goto out;
			} else if (!leb(&p, end, &v) || v > CFI_REG_MAX) {
				goto out;
			}
			c.z = aug[0] == 'z';
			if (c.z && (!leb(&p, end, &auglen) || auglen > (uint64_t)(end - p)))
				goto out;
			ad = p;
			for (const char *a = aug + c.z; c.z && *a; a++) {
				if (*a == 'R' || *a == 'L') {
					if (ad >= p + auglen)
						goto out;
					if (*a == 'R')
						c.fde_enc = *ad;
					ad++;
				} else if (*a == 'P') {
					uint8_t enc;

					if (ad >= p + auglen)
						goto out;
					enc = *ad++;
					if (!skip_ptr(&ad, p + auglen, enc))
						goto out;
				} else if (*a != 'S') {
					goto out;
				}
			}
			if (!c.z && aug[0])
				goto out;
			p += auglen;
			if (enc_size(c.fde_enc) < 0 || !cfa_program_ok(p, end, c.fde_enc))
				goto out;
			VEC_PUSH(cies, ncies, cap, c);
		} else {
			const struct cie_info *c = NULL;
			uint64_t cie_off = off + 4 >= id ? off + 4 - id : UINT64_MAX, auglen;

			for (size_t i = 0; i < ncies; i++)
				if (cies[i].off == cie_off)
					c = &cies[i];
			if (!c || !skip_ptr(&p, end, c->fde_enc) || !skip_ptr(&p, end, c->fde_enc & 0x0f))
				goto out;
			if (c->z && (!leb(&p, end, &auglen) || auglen > (uint64_t)(end - p)))
				goto out;
			if (c->z)
				p += auglen;
			if (!cfa_program_ok(p, end, c->fde_enc))
				goto out;
		}
		off += 4 + (size_t)len;
	}
	ok = 1;
out:
	free(cies);
	return ok;
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
	    hdr[2] != 0x03 || hdr[3] != 0x3b || rd32(hdr + 8) == 0 || !eh_frame_ok(data, eh_len))
		return NULL;
	hdr_addr = code_start - (uint64_t)(int64_t)(int32_t)rd32(hdr + 12);
	eh_addr = hdr_addr + 4 + (uint64_t)(int64_t)(int32_t)rd32(hdr + 4);
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
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, (Dwarf_Frame *)NULL);
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
		free(m->frames[i]);
	free(m->frames);
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

/* The CFI frame state at `vaddr`, looked up once per address; NULL when none. */
static Dwarf_Frame *frame_at(struct unwind_module *m, uint64_t vaddr)
{
	uint32_t *v = u64map_get(&m->cache, vaddr + 1);
	Dwarf_Frame *f = NULL;

	if (v)
		return m->frames[*v];
	for (int i = 0; i < 3 && !f; i++) {
		if (i == 1 && !m->debug_opened) {
			m->debug_opened = 1;
			if (m->has_debug_frame)
				src_debug_frame(&m->src[1], m->src[0].elf);
			if (m->debug_file && src_open_elf(&m->src[2], m->debug_file) == 0)
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
			free(m->frames[i]);
		m->nframes = 1;
		u64map_release(&m->cache);
		u64map_init(&m->cache);
	}
	VEC_PUSH(m->frames, m->nframes, m->frames_cap, f);
	u64map_put(&m->cache, vaddr + 1, (uint32_t)m->nframes - 1);
	return f;
}

/* The stack copy and what went wrong reading it. */
struct mem {
	const uint8_t *stack;
	uint64_t sp, size;
	int short_read;
};

static int mem_read(struct mem *mm, uint64_t addr, uint64_t *val)
{
	if (addr < mm->sp || addr - mm->sp > mm->size || mm->size - (addr - mm->sp) < 8) {
		mm->short_read = 1;
		return -1;
	}
	memcpy(val, mm->stack + (addr - mm->sp), 8);
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

/* One step with CFI frame `f`: the caller's registers into *next. */
static enum step step_cfi(Dwarf_Frame *f, const struct unwind_regs *cur, struct unwind_regs *next,
			  struct mem *mm, struct unwind_result *res)
{
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	uint64_t cfa, v;
	int bad;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0) {
		res->stop = UNWIND_BAD;
		return STEP_FAIL;
	}
	if (eval(ops, nops, cur, mm, 0, 0, &cfa, &bad) != EV_ADDR) {
		res->stop = bad >= 0 ? UNWIND_NO_REG : mm->short_read ? UNWIND_STACK_SHORT : UNWIND_BAD;
		res->reg = bad;
		return STEP_FAIL;
	}
	memset(next, 0, sizeof(*next));
	for (int r = 0; r < UNWIND_NREGS; r++) {
		int k;

		if (dwarf_frame_register(f, r, ops_mem, &ops, &nops) != 0)
			continue; /* unknown: left invalid */
		if (nops == 0) {
			if (ops == NULL && (cur->valid & (1u << r))) { /* same value */
				next->r[r] = cur->r[r];
				next->valid |= 1u << r;
			}
			continue; /* undefined */
		}
		k = eval(ops, nops, cur, mm, 0, cfa, &v, &bad);
		if (k == EV_ADDR) {
			uint64_t x;

			if (mem_read(mm, v, &x) < 0) {
				if (r == UNWIND_REG_IP) {
					res->stop = UNWIND_STACK_SHORT;
					return STEP_FAIL;
				}
				mm->short_read = 0;
				continue;
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
			res->stop = bad >= 0 ? UNWIND_NO_REG : mm->short_read ? UNWIND_STACK_SHORT
									 : UNWIND_BAD;
			res->reg = bad;
			return STEP_FAIL;
		} else {
			mm->short_read = 0;
		}
	}
	/* x86-64: the caller's stack pointer is the CFA */
	next->r[UNWIND_REG_SP] = cfa;
	next->valid |= 1u << UNWIND_REG_SP;
	if (!(next->valid & (1u << UNWIND_REG_IP)) || next->r[UNWIND_REG_IP] == 0)
		return STEP_END;
	return STEP_OK;
}

/* One step through the frame pointer: rbp points at the saved rbp, the return address
 * above it. Only when both lie in the copy, above the stack pointer. */
static enum step step_fp(const struct unwind_regs *cur, struct unwind_regs *next, struct mem *mm)
{
	uint64_t bp = cur->r[UNWIND_REG_BP], saved, ra;

	if (!(cur->valid & (1u << UNWIND_REG_BP)) || bp < cur->r[UNWIND_REG_SP] || (bp & 7) ||
	    mem_read(mm, bp, &saved) < 0 || mem_read(mm, bp + 8, &ra) < 0) {
		/* a frame just past the copy's end (within 1 MiB) is a stack the copy was
		 * too small for, not the end of the frame pointers */
		mm->short_read = (cur->valid & (1u << UNWIND_REG_BP)) && !(bp & 7) &&
				 bp + 16 > mm->sp + mm->size && bp < mm->sp + mm->size + (1u << 20);
		return STEP_FAIL;
	}
	*next = *cur;
	next->r[UNWIND_REG_BP] = saved;
	next->r[UNWIND_REG_SP] = bp + 16;
	next->r[UNWIND_REG_IP] = ra;
	return ra ? STEP_OK : STEP_END;
}

int unwind_regs_from_perf(struct unwind_regs *out, uint64_t mask, const uint64_t *vals,
			  size_t nvals)
{
	/* perf_regs (x86-64) number -> DWARF number, -1 for none */
	static const int8_t to_dwarf[24] = {
		0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1,
		8, 9, 10, 11, 12, 13, 14, 15,
	};
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	for (int bit = 0; bit < 64; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		if (k >= nvals)
			break;
		if (bit < 24 && to_dwarf[bit] >= 0) {
			out->r[to_dwarf[bit]] = vals[k];
			out->valid |= 1u << to_dwarf[bit];
		}
		k++;
	}
	return (out->valid & (1u << UNWIND_REG_SP)) && (out->valid & (1u << UNWIND_REG_IP)) ? 0 : -1;
}

size_t unwind_stack(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		    unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		    struct unwind_result *res)
{
	struct unwind_regs cur = *regs, next;
	struct mem mm = { stack, regs->r[UNWIND_REG_SP], size, 0 };
	int first = 1, same_sp = 0;

	memset(res, 0, sizeof(*res));
	res->stack_end = mm.sp + size;
	res->reg = -1;
	if (!(cur.valid & (1u << UNWIND_REG_IP)) || !(cur.valid & (1u << UNWIND_REG_SP))) {
		res->stop = UNWIND_NO_REG;
		res->reg = (cur.valid & (1u << UNWIND_REG_IP)) ? UNWIND_REG_SP : UNWIND_REG_IP;
		return 0;
	}
	for (;;) {
		uint64_t pc = cur.r[UNWIND_REG_IP];
		struct unwind_where w = { NULL, 0, NULL };
		Dwarf_Frame *f = NULL;
		enum step st;
		bool signal = false;

		if (res->n >= cap || res->n >= UNWIND_MAX_FRAMES) {
			res->stop = UNWIND_LIMIT;
			break;
		}
		if (first && res->n && res->nsignal < UNWIND_MAX_SIGNALS)
			res->signal[res->nsignal++] = (uint32_t)res->n;
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
				dwarf_frame_info(f, NULL, NULL, &signal);
		}
		mm.short_read = 0;
		if (f) {
			st = step_cfi(f, &cur, &next, &mm, res);
			if (st == STEP_FAIL)
				break;
		} else {
			st = step_fp(&cur, &next, &mm);
			if (st == STEP_FAIL) {
				res->stop = mm.short_read ? UNWIND_STACK_SHORT
					  : w.name ? UNWIND_NO_CFI : UNWIND_NO_MAP;
				res->module = w.name;
				break;
			}
		}
		if (st == STEP_END) {
			res->stop = UNWIND_END;
			break;
		}
		/* the stack pointer moves up; it may stay where CFI gives CFA=rsp+0 with
		 * the return address in a register (an epilogue that popped it, as in
		 * libgcc_s's _Unwind_RaiseException), once and to another pc */
		if (next.r[UNWIND_REG_SP] < cur.r[UNWIND_REG_SP] ||
		    (next.r[UNWIND_REG_SP] == cur.r[UNWIND_REG_SP] &&
		     (!f || same_sp || next.r[UNWIND_REG_IP] == pc))) {
			res->stop = UNWIND_BAD;
			break;
		}
		same_sp = next.r[UNWIND_REG_SP] == cur.r[UNWIND_REG_SP];
		cur = next;
		/* a signal frame's pc is its restorer's, where no call was: exact, as is
		 * the next one, where the signal interrupted its frame */
		if (signal && res->n > 1 && res->nsignal < UNWIND_MAX_SIGNALS &&
		    (!res->nsignal || res->signal[res->nsignal - 1] != res->n - 1))
			res->signal[res->nsignal++] = (uint32_t)res->n - 1;
		first = signal;
	}
	return res->n;
}

