/* elfsyms: an ELF object's symbol table once loaded: the symbol perf keeps of those at an
 * address (choose_best_symbol, made when a lookup first needs it), lookups. */
#include "symbolize/elfsyms_internal.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "common/util.h"

struct cmpname {
	const char *s;
	char *owned;
};

/* perf compares aliases by their names demangled without parameters. Past
 * DEMANGLE_KEPT_MAX names of the object kept mangled (o->cmp_kept, counted across
 * lookups), the raw names are compared: a table of many aliases named to defeat the
 * demangler costs that many bounded runs, not one per alias. */
static struct cmpname cmpname_get(const struct elf_obj *o, const char *raw)
{
	struct cmpname c = { raw, NULL };
	struct demangle_budget b;

	if (raw[0] != '_' || raw[1] != 'Z' ||
	    __atomic_load_n(o->cmp_kept, __ATOMIC_RELAXED) >= DEMANGLE_KEPT_MAX)
		return c;
	memset(&b, 0, sizeof(b));
	c.owned = demangle_auto(raw, &b);
	if (c.owned)
		c.s = c.owned;
	else if (demangle_kept(&b))
		__atomic_fetch_add(o->cmp_kept, demangle_kept(&b), __ATOMIC_RELAXED);
	return c;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* 1 when symbol `a` stays, 0 when symbol `b` replaces it: perf's choose_best_symbol,
 * on the sizes the symbols have after the zero-size ones were ended. */
static int keep_first(const struct elf_obj *o, uint32_t a, uint32_t b)
{
	const struct elf_sym *sa = &o->syms[a], *sb = &o->syms[b];
	uint64_t la = sa->end - sa->start, lb = sb->end - sb->start;
	struct cmpname na, nb;
	size_t ua, ub, ka, kb;
	int r;

	if (lb == 0 && la > 0)
		return 1;
	if (la == 0 && lb > 0)
		return 0;
	if ((o->bind[b] == STB_WEAK) != (o->bind[a] == STB_WEAK))
		return o->bind[b] == STB_WEAK;
	if ((o->bind[a] == STB_GLOBAL) != (o->bind[b] == STB_GLOBAL))
		return o->bind[a] == STB_GLOBAL;
	na = cmpname_get(o, o->arena + o->raw[a]);
	nb = cmpname_get(o, o->arena + o->raw[b]);
	ua = leading_underscores(na.s);
	ub = leading_underscores(nb.s);
	ka = strlen(na.s);
	kb = strlen(nb.s);
	if (ua != ub)
		r = ua < ub;
	else if (ka != kb)
		r = ka > kb;
	else /* kernel syscall aliases "SyS_*" lose to the other name */
		r = !(strncmp(na.s, "SyS", 3) == 0 || strncmp(na.s, "compat_SyS", 10) == 0);
	free(na.owned);
	free(nb.owned);
	return r;
}

/*
 * The symbol perf keeps of slot `i`: the first one read, replaced by each later one
 * that choose_best_symbol prefers, as perf reduces them (its .symtab pass then its
 * .dynsym pass make the same order). Chosen once; a later call reads the choice.
 */
static const struct elf_sym *slot_choose(const struct elf_obj *o, size_t i)
{
	uint32_t first = o->slots[i].first, w;
	uint32_t end = i + 1 < o->nslots ? o->slots[i + 1].first : (uint32_t)o->nsyms;

	if (end - first == 1)
		return &o->syms[first];
	w = __atomic_load_n(&o->chosen[i], __ATOMIC_RELAXED);
	if (w)
		return &o->syms[w - 1];
	w = first;
	for (uint32_t j = first + 1; j < end; j++)
		if (!keep_first(o, w, j))
			w = j;
	__atomic_store_n(&o->chosen[i], w + 1, __ATOMIC_RELAXED);
	return &o->syms[w];
}

int elf_obj_has_segments(const struct elf_obj *o)
{
	return o && !o->debug_only && (o->nsegs > 0 || o->is_rel);
}

int elf_obj_minidebug(const struct elf_obj *o)
{
	return o && o->status == ELF_OBJ_OK && o->has_symtab == 2;
}

int elf_obj_has_symtab(const struct elf_obj *o)
{
	return o && o->status == ELF_OBJ_OK && o->has_symtab;
}

enum elf_obj_status elf_obj_status(const struct elf_obj *o)
{
	return o ? o->status : ELF_OBJ_MISSING;
}

const char *elf_obj_status_str(enum elf_obj_status s)
{
	switch (s) {
	case ELF_OBJ_OK:
		return "ok";
	case ELF_OBJ_MISSING:
		return "file not found";
	case ELF_OBJ_BAD_ELF:
		return "not a readable ELF file";
	case ELF_OBJ_MISMATCH:
		return "build id differs from the recording's";
	case ELF_OBJ_STRIPPED:
		return "no symbols";
	case ELF_OBJ_CHANGED:
		return "changed while it was read (cut short or written again): its symbols not used";
	}
	return "unknown status";
}

const char *elf_obj_file(const struct elf_obj *o)
{
	return o ? o->file : NULL;
}

const char *elf_obj_symbol_file(const struct elf_obj *o)
{
	return o ? o->symfile : NULL;
}

size_t elf_obj_build_id(const struct elf_obj *o, const uint8_t **id)
{
	if (id)
		*id = o ? o->build_id : NULL;
	return o ? o->build_id_size : 0;
}

int elf_obj_offset_to_vaddr(const struct elf_obj *o, uint64_t offset, uint64_t *vaddr)
{
	size_t i;

	if (!o)
		return -1;
	if (o->is_rel && o->nsegs == 0) {
		*vaddr = offset;
		return 0;
	}
	for (i = 0; i < o->nsegs; i++) {
		const struct load_seg *s = &o->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return 0;
		}
	}
	for (i = 0; i < o->nsegs; i++) {
		const struct load_seg *s = &o->segs[i];

		if (offset >= s->offset && offset - s->offset < s->memsz) {
			*vaddr = offset - s->offset + s->vaddr;
			return 0;
		}
	}
	return -1;
}

const struct elf_sym *elf_obj_lookup(const struct elf_obj *o, uint64_t vaddr)
{
	size_t lo = 0, hi;
	uint32_t i;

	if (!o || o->nslots == 0 || vaddr < o->syms[0].start)
		return NULL;
	hi = o->nslots;
	while (hi - lo > 1) { /* last slot starting at or before vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (o->syms[o->slots[mid].first].start <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	for (i = (uint32_t)lo; i != NO_PARENT; i = o->slots[i].parent) {
		const struct sym_slot *sl = &o->slots[i];
		uint64_t start = o->syms[sl->first].start;
		const struct elf_sym *s;

		if (vaddr >= sl->maxend && !(vaddr == start && start == sl->maxend))
			continue; /* none of its symbols covers vaddr */
		s = slot_choose(o, i);
		if (vaddr < s->end || (vaddr == s->start && s->start == s->end))
			return s;
	}
	return NULL;
}

const char *elf_obj_raw_name(const struct elf_obj *o, const struct elf_sym *s)
{
	if (!o || !s || s < o->syms || s >= o->syms + o->nsyms)
		return NULL;
	return o->arena + o->raw[s - o->syms];
}

size_t elf_obj_nsyms(const struct elf_obj *o)
{
	return o ? o->nslots : 0;
}

const struct elf_sym *elf_obj_sym(const struct elf_obj *o, size_t i)
{
	return o && i < o->nslots ? slot_choose(o, i) : NULL;
}

void elf_obj_free(struct elf_obj *o)
{
	if (!o)
		return;
	free(o->file);
	free(o->symfile);
	free(o->segs);
	free(o->syms);
	free(o->chosen);
	free(o->cmp_kept);
	if (o->mf.map) {
		mapped_file_close(&o->mf);
	} else {
		free((void *)o->raw);
		free((void *)o->bind);
		free((void *)o->slots);
		free(o->arena);
	}
	free(o);
}
