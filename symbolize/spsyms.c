/* spsyms: a simpleperf recording's own symbol tables, by path and address. */
#include "symbolize/spsyms.h"

#include "common/demangle.h"

#include <stdlib.h>
#include <string.h>

struct sp_syms {
	const struct sp_info *si;
	const struct sp_file *kernel;
	int demangle;
	char ***shown;          /* per file, per symbol: the name to show, made on first use */
	struct demangle_budget budget;
};

struct sp_syms *sp_syms_new(const struct sp_info *si, int demangle)
{
	struct sp_syms *s;

	if (!si || !si->nfiles || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->shown = calloc(si->nfiles, sizeof(*s->shown));
	if (!s->shown) {
		free(s);
		return NULL;
	}
	s->si = si;
	s->kernel = sp_info_kernel(si);
	s->demangle = demangle;
	return s;
}

void sp_syms_free(struct sp_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->si->nfiles; i++) {
		if (!s->shown[i])
			continue;
		for (size_t j = 0; j < s->si->files[i].nsyms; j++)
			free(s->shown[i][j]);
		free(s->shown[i]);
	}
	free(s->shown);
	free(s);
}

/* The name of symbol `sym` of file `f` to show (demangled once, kept). */
static int frame_of(struct sp_syms *s, const struct sp_file *f, const struct sp_symbol *sym,
		    struct sym_frame *out)
{
	size_t fi = (size_t)(f - s->si->files), si = (size_t)(sym - f->syms);
	const char *name = sym->name;

	if (s->demangle && !s->shown[fi])
		s->shown[fi] = calloc(f->nsyms, sizeof(char *));
	if (s->demangle && s->shown[fi]) {
		if (!s->shown[fi][si])
			s->shown[fi][si] = demangle_name(sym->name, &s->budget);
		if (s->shown[fi][si])
			name = s->shown[fi][si];
	}
	memset(out, 0, sizeof(*out));
	out->name = name;
	out->system_name = sym->name;
	return 1;
}

int sp_syms_native(struct sp_syms *s, const char *path, uint64_t offset, int ret,
		   struct sym_frame *out, int *covered)
{
	const struct sp_file *f;
	const struct sp_symbol *sym;
	uint64_t va;

	*covered = 0;
	if (!s || !(f = sp_info_file(s->si, path)) || !f->nsyms)
		return 0;
	if (f->type == SP_DSO_KERNEL || f->type == SP_DSO_KERNEL_MODULE)
		return 0; /* by address: sp_syms_kernel */
	*covered = 1;
	/* an interpreted frame's address is the dex pc ART reported, not a return
	 * address: looked up as it is, as simpleperf does */
	if (f->type == SP_DSO_DEX)
		ret = 0;
	va = sp_file_vaddr(f, ret && offset ? offset - 1 : offset);
	sym = sp_file_symbol(f, va);
	return sym ? frame_of(s, f, sym, out) : 0;
}

int sp_syms_kernel(struct sp_syms *s, uint64_t addr, struct sym_frame *out)
{
	const struct sp_symbol *sym;

	if (!s || !s->kernel || !(sym = sp_file_symbol(s->kernel, addr)))
		return 0;
	return frame_of(s, s->kernel, sym, out);
}

int sp_syms_module(struct sp_syms *s, const char *path, uint64_t offset, struct sym_frame *out)
{
	const struct sp_file *f;
	const struct sp_symbol *sym;
	uint64_t va;

	if (!s || !path || !(f = sp_info_file(s->si, path)) || f->type != SP_DSO_KERNEL_MODULE ||
	    !f->nsyms)
		return 0;
	va = offset - (f->has_offset ? f->offset_of_min_vaddr : 0) + f->min_vaddr;
	sym = sp_file_symbol(f, va);
	return sym ? frame_of(s, f, sym, out) : 0;
}

int sp_syms_has_kernel(const struct sp_syms *s)
{
	return s && s->kernel;
}

int sp_syms_covers(const struct sp_syms *s, const char *path)
{
	const struct sp_file *f = s ? sp_info_file(s->si, path) : NULL;

	return f && f->nsyms && f->type != SP_DSO_KERNEL && f->type != SP_DSO_KERNEL_MODULE;
}
