/* simpleperf: simpleperf's feature sections FILE, FILE2 and META_INFO read into tables. */
#include "formats/read/simpleperf.h"

#include "common/bytes.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 65536

/* A bounded cursor over a section's bytes. */
struct spc {
	const uint8_t *p;
	size_t len, pos;
	int sw, bad;
};

static uint32_t c32(struct spc *c)
{
	if (c->len - c->pos < 4) {
		c->bad = 1;
		return 0;
	}
	c->pos += 4;
	return ld32(c->p + c->pos - 4, c->sw);
}

static uint64_t c64(struct spc *c)
{
	if (c->len - c->pos < 8) {
		c->bad = 1;
		return 0;
	}
	c->pos += 8;
	return ld64(c->p + c->pos - 8, c->sw);
}

static char *cstr(struct spc *c)
{
	const uint8_t *e;
	char *s;

	if (c->bad || c->pos >= c->len ||
	    !(e = memchr(c->p + c->pos, 0, c->len - c->pos))) {
		c->bad = 1;
		return NULL;
	}
	s = strndup((const char *)c->p + c->pos, (size_t)(e - c->p) - c->pos);
	c->pos = (size_t)(e - c->p) + 1;
	if (!s)
		c->bad = 1;
	return s;
}

static struct sp_file *new_file(struct sp_info *si)
{
	struct sp_file *n = realloc(si->files, (si->nfiles + 1) * sizeof(*n));

	if (!n)
		return NULL;
	si->files = n;
	memset(&n[si->nfiles], 0, sizeof(*n));
	return &n[si->nfiles++];
}

static int add_symbol(struct sp_file *f, size_t *cap, uint64_t vaddr, uint32_t len, char *name)
{
	if (!name)
		return -1;
	if (f->nsyms == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct sp_symbol *n = realloc(f->syms, nc * sizeof(*n));

		if (!n) {
			free(name);
			return -1;
		}
		f->syms = n;
		*cap = nc;
	}
	f->syms[f->nsyms].vaddr = vaddr;
	f->syms[f->nsyms].len = len;
	f->syms[f->nsyms++].name = name;
	return 0;
}

/*
 * File format of one FILE (v1) entry, after its u32 size:
 *	char path[]; u32 type; u64 min_vaddr; u32 symbol_count;
 *	{ u64 vaddr; u32 len; char name[]; } symbols[symbol_count];
 *	DEX: u32 n; u64 dex_file_offsets[n];
 *	ELF and kernel module, when bytes are left: u64 file_offset_of_min_vaddr
 *	(a module's memory offset).
 */
static int read_v1(struct sp_file *f, struct spc *c)
{
	uint32_t n, i;
	size_t cap = 0;

	f->path = cstr(c);
	f->type = c32(c);
	f->min_vaddr = c64(c);
	n = c32(c);
	if (c->bad || n > c->len / 13)
		return -1;
	for (i = 0; i < n; i++) {
		uint64_t va = c64(c);
		uint32_t len = c32(c);

		if (c->bad || add_symbol(f, &cap, va, len, cstr(c)) < 0)
			return -1;
	}
	if (f->type == SP_DSO_DEX) {
		n = c32(c);
		if (c->bad || n > (c->len - c->pos) / 8)
			return -1;
		c->pos += (size_t)n * 8;
	} else if ((f->type == SP_DSO_ELF || f->type == SP_DSO_KERNEL_MODULE) &&
		   c->len - c->pos >= 8) {
		f->offset_of_min_vaddr = c64(c);
		f->has_offset = 1;
	}
	return c->bad ? -1 : 0;
}

/* ---- FILE2: protobuf (proto3) without a library: varints and length-delimited fields ---- */

static int pb_varint(struct spc *c, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (c->pos < c->len && shift < 64) {
		uint8_t b = c->p[c->pos++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	c->bad = 1;
	return -1;
}

/* The next field: its number, wire type, value (varint, fixed) or bytes [*at, +*n). */
static int pb_field(struct spc *c, uint32_t *num, unsigned *wt, uint64_t *v, size_t *at)
{
	uint64_t key;

	if (pb_varint(c, &key) < 0)
		return -1;
	*num = (uint32_t)(key >> 3);
	*wt = key & 7;
	switch (*wt) {
	case 0:
		return pb_varint(c, v);
	case 1:
		if (c->len - c->pos < 8)
			break;
		*v = ld64(c->p + c->pos, 0);
		c->pos += 8;
		return 0;
	case 5:
		if (c->len - c->pos < 4)
			break;
		*v = ld32(c->p + c->pos, 0);
		c->pos += 4;
		return 0;
	case 2:
		if (pb_varint(c, v) < 0 || *v > c->len - c->pos)
			break;
		*at = c->pos;
		c->pos += (size_t)*v;
		return 0;
	default:
		break;
	}
	c->bad = 1;
	return -1;
}

/* message Symbol { uint64 vaddr = 1; uint32 len = 2; string name = 3; } */
static int read_v2_symbol(struct sp_file *f, size_t *cap, const uint8_t *p, size_t len)
{
	struct spc c = { p, len, 0, 0, 0 };
	uint64_t vaddr = 0, l = 0, v;
	size_t at, nlen = 0, nat = 0;
	uint32_t num;
	unsigned wt;

	while (c.pos < c.len) {
		if (pb_field(&c, &num, &wt, &v, &at) < 0)
			return -1;
		if (num == 1 && wt == 0)
			vaddr = v;
		else if (num == 2 && wt == 0)
			l = v;
		else if (num == 3 && wt == 2 && v < NAME_MAX_LEN) {
			nat = at;
			nlen = (size_t)v;
		}
	}
	return add_symbol(f, cap, vaddr, (uint32_t)l, strndup((const char *)p + nat, nlen));
}

/* message FileFeature { string path = 1; uint32 type = 2; uint64 min_vaddr = 3;
 * repeated Symbol symbol = 4; DexFile dex_file = 5; ElfFile elf_file = 6 { uint64
 * file_offset_of_min_vaddr = 1; } KernelModule kernel_module = 7 { uint64
 * memory_offset_of_min_vaddr = 1; } } */
static int read_v2(struct sp_file *f, const uint8_t *p, size_t len)
{
	struct spc c = { p, len, 0, 0, 0 };
	uint64_t v;
	size_t at, cap = 0;
	uint32_t num;
	unsigned wt;

	while (c.pos < c.len) {
		if (pb_field(&c, &num, &wt, &v, &at) < 0)
			return -1;
		if (num == 1 && wt == 2 && !f->path) {
			if (!(f->path = strndup((const char *)p + at, (size_t)v)))
				return -1;
		} else if (num == 2 && wt == 0) {
			f->type = (uint32_t)v;
		} else if (num == 3 && wt == 0) {
			f->min_vaddr = v;
		} else if (num == 4 && wt == 2) {
			if (read_v2_symbol(f, &cap, p + at, (size_t)v) < 0)
				return -1;
		} else if ((num == 6 || num == 7) && wt == 2) {
			struct spc s = { p + at, (size_t)v, 0, 0, 0 };
			uint32_t n2;
			unsigned w2;
			uint64_t v2;
			size_t a2;

			f->has_offset = 1; /* proto3: a field left out is 0 */
			while (s.pos < s.len) {
				if (pb_field(&s, &n2, &w2, &v2, &a2) < 0)
					return -1;
				if (n2 == 1 && w2 == 0)
					f->offset_of_min_vaddr = v2;
			}
		}
	}
	return f->path ? 0 : -1;
}

int sp_read_files(struct sp_info *si, const uint8_t *p, size_t len, int swapped, int v2)
{
	struct spc c = { p, len, 0, swapped, 0 };

	while (len - c.pos >= 4) {
		uint32_t n = c32(&c);
		struct sp_file *f;
		struct spc e = { p + c.pos, n, 0, swapped, 0 };
		int ret;

		if (n > len - c.pos || !(f = new_file(si)))
			return -1;
		ret = v2 ? read_v2(f, p + c.pos, n) : read_v1(f, &e);
		c.pos += n;
		if (ret < 0 || !f->path) {
			/* a damaged entry is dropped, those before it kept */
			free(f->path);
			for (size_t i = 0; i < f->nsyms; i++)
				free((char *)f->syms[i].name);
			free(f->syms);
			si->nfiles--;
			return -1;
		}
	}
	return 0;
}

int sp_read_meta(struct sp_info *si, const uint8_t *p, size_t len)
{
	struct spc c = { p, len, 0, 0, 0 };

	while (c.pos < len) {
		char *k = cstr(&c), *v = cstr(&c);
		struct sp_meta *n;

		if (!k || !v || !(n = realloc(si->meta, (si->nmeta + 1) * sizeof(*n)))) {
			free(k);
			free(v);
			return -1;
		}
		si->meta = n;
		n[si->nmeta].key = k;
		n[si->nmeta++].value = v;
	}
	return 0;
}

int sp_read_kallsyms(struct sp_info *si, const char *text, size_t len)
{
	struct sp_file *f;
	size_t cap = 0, pos = 0;

	for (size_t i = 0; i < si->nfiles; i++)
		if (si->files[i].type == SP_DSO_KERNEL && si->files[i].nsyms)
			return 0;
	if (!(f = new_file(si)) || !(f->path = strdup("[kernel.kallsyms]"))) {
		if (f)
			si->nfiles--;
		return -1;
	}
	f->type = SP_DSO_KERNEL;
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos), *p, *name;
		size_t n = nl ? (size_t)(nl - line) : len - pos, k;
		uint64_t addr = 0;
		int digits = 0;

		pos += n + 1;
		for (p = line; p < line + n && digits < 17; p++, digits++) {
			int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ?
				*p - 'a' + 10 : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;

			if (v < 0)
				break;
			addr = addr << 4 | (uint64_t)v;
		}
		/* "ADDR T NAME": one type letter between single spaces */
		if (!digits || digits > 16 || line + n - p < 4 || p[0] != ' ' || p[2] != ' ' ||
		    !strchr("TtWw", p[1]) || !p[1] || !addr)
			continue;
		name = p + 3;
		for (k = 0; name + k < line + n && name[k] != '\t' && name[k] != ' '; k++)
			;
		if (!k || k > NAME_MAX_LEN)
			continue;
		if (add_symbol(f, &cap, addr, 0, strndup(name, k)) < 0)
			return -1;
	}
	if (!f->nsyms) {
		free(f->syms);
		free(f->path);
		si->nfiles--;
		return 0;
	}
	return 1;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct sp_file *)a)->path, ((const struct sp_file *)b)->path);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sp_symbol *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

void sp_info_finish(struct sp_info *si)
{
	for (size_t i = 0; i < si->nfiles; i++)
		if (si->files[i].nsyms)
			qsort(si->files[i].syms, si->files[i].nsyms, sizeof(struct sp_symbol),
			      cmp_sym);
	if (si->nfiles)
		qsort(si->files, si->nfiles, sizeof(*si->files), cmp_file);
}

const struct sp_file *sp_info_file(const struct sp_info *si, const char *path)
{
	struct sp_file key = { .path = (char *)path };

	if (!si || !si->nfiles || !path)
		return NULL;
	return bsearch(&key, si->files, si->nfiles, sizeof(key), cmp_file);
}

const struct sp_file *sp_info_kernel(const struct sp_info *si)
{
	for (size_t i = 0; si && i < si->nfiles; i++)
		if (si->files[i].type == SP_DSO_KERNEL && si->files[i].nsyms)
			return &si->files[i];
	return NULL;
}

const struct sp_symbol *sp_file_symbol(const struct sp_file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->nsyms;

	/* the last symbol starting at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* a symbol of length 0 reaches to the next one, as simpleperf reads it */
	if (f->syms[lo - 1].len ? vaddr - f->syms[lo - 1].vaddr >= f->syms[lo - 1].len :
	    lo < f->nsyms && vaddr >= f->syms[lo].vaddr)
		return NULL;
	return &f->syms[lo - 1];
}

uint64_t sp_file_vaddr(const struct sp_file *f, uint64_t offset)
{
	if (f->type == SP_DSO_ELF)
		return offset - (f->has_offset ? f->offset_of_min_vaddr : 0) + f->min_vaddr;
	return offset;
}

const char *sp_info_meta(const struct sp_info *si, const char *key)
{
	for (size_t i = 0; si && i < si->nmeta; i++)
		if (!strcmp(si->meta[i].key, key))
			return si->meta[i].value;
	return NULL;
}

void sp_info_release(struct sp_info *si)
{
	for (size_t i = 0; i < si->nfiles; i++) {
		for (size_t j = 0; j < si->files[i].nsyms; j++)
			free((char *)si->files[i].syms[j].name);
		free(si->files[i].syms);
		free(si->files[i].path);
	}
	free(si->files);
	for (size_t i = 0; i < si->nmeta; i++) {
		free(si->meta[i].key);
		free(si->meta[i].value);
	}
	free(si->meta);
	memset(si, 0, sizeof(*si));
}
