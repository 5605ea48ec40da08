/* dwarfinfo: source lines and inlined frames from DWARF, through libdw.
 *
 * DWARF 5 (dwarfstd.org): an address's scopes, innermost first, hold one
 * DW_TAG_inlined_subroutine per level of inlining, each with DW_AT_call_file and
 * DW_AT_call_line naming where it was inlined; the line table gives the line of the
 * innermost one. The same walk eu-addr2line -i does.
 *
 * A function without a linkage name is named by symbolize/dwarfinfo_names.c.
 */
#include "symbolize/dwarfinfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/altlink.h"
#include "symbolize/debugcopy.h"
#include "symbolize/dwarfinfo_internal.h"
#include "symbolize/locate.h"

struct dwarf_info *dwarf_info_open(const char *path, const char *debug_file,
				   const struct cache_ctx *cache)
{
	struct dwarf_info *d = xcalloc(1, sizeof(*d));
	Dwarf_Addr bias;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	void **userdata;
	struct stat st;
	const char *why, *from;
	int fd;

	d->alt.fd = -1;
	d->callbacks.find_elf = dwfl_build_id_find_elf;
	d->callbacks.find_debuginfo = debugcopy_find_debuginfo;
	d->callbacks.section_address = dwfl_offline_section_address;
	d->callbacks.debuginfo_path = &d->debuginfo_path;
	d->hint.debug_file = debug_file;
	d->hint.cache = cache;
	d->hint.alt_fd = -1;
	/* opened here, not by libdwfl, which would wait on a FIFO and map a file another
	 * user can cut short (a private copy of such a file is read instead) */
	fd = file_open_steady(path, &st, &why);
	dwfl = fd >= 0 ? dwfl_begin(&d->callbacks) : NULL;
	if (!dwfl) {
		if (fd >= 0)
			close(fd);
		free(d);
		return NULL;
	}
	/* the descriptor is libdwfl's once the module is made */
	mod = dwfl_report_offline(dwfl, path_base(path), path, fd);
	if (!mod)
		close(fd);
	dwfl_report_end(dwfl, NULL, NULL);
	/* the find_debuginfo callback reads the hint from the module's userdata */
	if (mod && dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = &d->hint;
	if (!mod || !dwfl_module_getelf(mod, &bias) || !(d->dw = dwfl_module_getdwarf(mod, &bias))) {
		if (d->hint.alt_fd >= 0)
			close(d->hint.alt_fd);
		free(d->hint.found);
		dwfl_end(dwfl);
		free(d);
		return NULL;
	}
	/* the supplement of a dwz'd file, found here: libdw's own search opens its path
	 * blocking */
	from = dwarf_getelf(d->dw) == dwfl_module_getelf(mod, &bias) ? path
	       : d->hint.found                                        ? d->hint.found
									: path;
	if (altlink_attach(d->dw, from, d->hint.alt_fd, &d->alt, &d->problem) != 0 &&
	    from != path) {
		char *p = xasprintf("%s: %s", from, d->problem);

		free(d->problem);
		d->problem = p;
	}
	/* the search is over: the strings were the caller's for this call only */
	free(d->hint.found);
	memset(&d->hint, 0, sizeof(d->hint));
	u64map_init(&d->cu_ids);
	u64map_init(&d->qnames);
	strtab_init(&d->names);
	d->dwfl = dwfl;
	d->mod = mod;
	dwfl_module_getelf(mod, &d->elf_bias);
	d->dw = dwfl_module_getdwarf(mod, &d->dw_bias);
	return d;
}

const char *dwarf_info_problem(const struct dwarf_info *d)
{
	return d ? d->problem : NULL;
}

/* The section called `name` of `e`, uncompressed, or NULL. */
static Elf_Data *section_data(Elf *e, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		sn = elf_strptr(e, shstrndx, sh.sh_name);
		if (sn && strcmp(sn, name) == 0)
			return (sh.sh_flags & SHF_COMPRESSED) ? NULL : elf_getdata(scn, NULL);
	}
	return NULL;
}

/*
 * File format (DWARF 5 section 6.1.2, .debug_aranges): sets of
 *	unit_length (4, or 0xffffffff and 8), u16 version (2), debug_info_offset (4 or
 *	8), u8 address_size, u8 segment_selector_size (0), padding to a multiple of
 *	twice the address size from the set's start, then (address, length) pairs
 *	ending with (0, 0).
 * Without the section, the units' own ranges. Returns 0, or -1 when neither is
 * there or the section is not understood (libdw's reading is used then, which gives
 * the same answers).
 */
static int read_aranges(struct dwarf_info *d)
{
	Elf *e = d->dw ? dwarf_getelf(d->dw) : NULL;
	Elf_Data *data = section_data(e, ".debug_aranges");
	const uint8_t *p, *end;
	struct sort_pair *v = NULL, *tmp;
	struct cu_arange *ar = NULL;
	size_t n = 0, cap = 0, nar = 0, ar_cap = 0;
	int sw;

	if (d->dw && (!data || !data->d_buf || !data->d_size)) {
		/* none (Go writes none; libdw before 0.191 then finds no unit for any
		 * address, where binutils reads the units' own ranges): each unit's
		 * DW_AT_low_pc/high_pc or DW_AT_ranges */
		Dwarf_Off off = 0, next;
		size_t hsize;

		while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;

			if (dwarf_offdie(d->dw, off + hsize, &cu))
				while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0)
					if (hi > lo) {
						struct cu_arange r = { lo, hi, off };

						VEC_PUSH(ar, nar, ar_cap, r);
					}
			off = next;
		}
		if (!nar)
			return -1;
		goto sort;
	}
	if (!data || !data->d_buf || !data->d_size)
		return -1;
	sw = elf_getident(e, NULL)[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
						 ELFDATA2LSB : ELFDATA2MSB);
	p = data->d_buf;
	end = p + data->d_size;
	while (end - p >= 4) {
		const uint8_t *set = p, *next;
		uint64_t len = ld32(p, sw), cu;
		size_t offsz = 4, tuple, hdr;
		unsigned asz;

		p += 4;
		if (len == 0xffffffffu) {
			if (end - p < 8)
				goto bad;
			len = ld64(p, sw);
			p += 8;
			offsz = 8;
		} else if (len >= 0xfffffff0u) {
			goto bad;
		}
		if (len > (uint64_t)(end - p) || len < 2 + offsz + 2)
			goto bad;
		next = p + len;
		if (ld16(p, sw) != 2)
			goto bad;
		cu = offsz == 8 ? ld64(p + 2, sw) : ld32(p + 2, sw);
		asz = p[2 + offsz];
		if ((asz != 4 && asz != 8) || p[3 + offsz] != 0)
			goto bad;
		p += 4 + offsz;
		tuple = 2 * asz;
		hdr = (size_t)(p - set);
		p += (tuple - hdr % tuple) % tuple;
		while (next - p >= (ptrdiff_t)tuple) {
			uint64_t a = asz == 8 ? ld64(p, sw) : ld32(p, sw);
			uint64_t l = asz == 8 ? ld64(p + 8, sw) : ld32(p + 4, sw);
			struct cu_arange r = { a, a + l, cu };

			p += tuple;
			if (!a && !l)
				break;
			if (l && r.hi > r.lo)
				VEC_PUSH(ar, nar, ar_cap, r);
		}
		p = next;
	}
sort:
	/* sorted by lo through (lo, index) pairs */
	for (size_t i = 0; i < nar; i++) {
		struct sort_pair sp = { ar[i].lo, i };

		VEC_PUSH(v, n, cap, sp);
	}
	tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
	sort_pairs(v, tmp, n);
	d->ar = xmalloc((nar ? nar : 1) * sizeof(*d->ar));
	for (size_t i = 0; i < n; i++)
		d->ar[i] = ar[v[i].val];
	d->nar = nar;
	free(tmp);
	free(v);
	free(ar);
	return 0;
bad:
	free(ar);
	return -1;
}

/*
 * The unit holding module address `addr` and the DWARF bias, through our aranges
 * or libdw's. NULL when no unit says it holds the address.
 */
static Dwarf_Die *unit_at(struct dwarf_info *d, Dwarf_Addr addr, Dwarf_Die *mem,
			  Dwarf_Addr *bias)
{
	Dwarf_Addr pc = addr - d->dw_bias;
	size_t lo = 0, hi;
	uint64_t next;
	size_t hsize;

	if (!d->own_ar)
		d->own_ar = read_aranges(d) == 0 ? 1 : -1;
	if (d->own_ar < 0)
		return dwfl_module_addrdie(d->mod, addr, bias);
	*bias = d->dw_bias;
	hi = d->nar;
	lo = COUNT_LE(d->ar, hi, lo, pc);
	if (!lo || pc >= d->ar[lo - 1].hi)
		return NULL;
	if (dwarf_next_unit(d->dw, d->ar[lo - 1].cu, &next, &hsize, NULL, NULL, NULL, NULL, NULL,
			    NULL) != 0)
		return NULL;
	return dwarf_offdie(d->dw, d->ar[lo - 1].cu + hsize, mem);
}

void dwarf_info_prepare(struct dwarf_info *d)
{
	Dwarf_Addr bias;

	Dwarf_Die mem;

	/* any address: the first lookup reads the ranges of every unit */
	if (d)
		(void)unit_at(d, d->elf_bias, &mem, &bias);
}

void dwarf_info_free(struct dwarf_info *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ncus; i++) {
		free(d->cus[i]->nodes);
		free(d->cus[i]->inl);
		free(d->cus[i]->subs);
		free(d->cus[i]->inl_maxhi);
		free(d->cus[i]->subs_maxhi);
		free(d->cus[i]);
	}
	free(d->cus);
	free(d->ar);
	u64map_release(&d->cu_ids);
	u64map_release(&d->qnames);
	strtab_release(&d->names);
	dwfl_end(d->dwfl);
	/* after the Dwarf that refers to it */
	altlink_release(&d->alt);
	free(d->problem);
	free(d);
}

static void add_ranges(Dwarf_Die *die, uint32_t node, struct die_range **v, size_t *n,
		       size_t *cap)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		struct die_range r = { lo, hi, node };

		if (hi > lo)
			VEC_PUSH(*v, *n, *cap, r);
	}
}

struct collect_caps {
	size_t nodes, inl, subs;
};

static int is_scope_tag(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* Every subprogram, inlined call and scope below `die`, depth first; `parent` is the
 * node of the nearest enclosing function or inlined call, `scope` of the nearest
 * scope or function. */
static void collect(Dwarf_Die *die, struct cu_index *x, struct collect_caps *caps,
		    int32_t parent, int32_t scope, uint32_t depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		int32_t inner = parent, inner_scope = scope;

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram ||
		    is_scope_tag(tag)) {
			struct die_node nd = { child, parent, depth + 1, tag, scope };
			int32_t id = (int32_t)x->nnodes;

			VEC_PUSH(x->nodes, x->nnodes, caps->nodes, nd);
			if (tag != DW_TAG_inlined_subroutine)
				inner_scope = id;
			if (tag == DW_TAG_inlined_subroutine)
				add_ranges(&child, (uint32_t)id, &x->inl, &x->ninl, &caps->inl);
			else if (tag == DW_TAG_subprogram)
				add_ranges(&child, (uint32_t)id, &x->subs, &x->nsubs, &caps->subs);
			if (!is_scope_tag(tag))
				inner = id;
		}
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_lexical_block || is_scope_tag(tag))
			collect(&child, x, caps, inner, inner_scope, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int range_cmp(const void *a, const void *b)
{
	const struct die_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi); /* outer first */
}

static Dwarf_Addr *prefix_max(const struct die_range *v, size_t n)
{
	Dwarf_Addr *m = xmalloc((n ? n : 1) * sizeof(*m)), hi = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].hi > hi)
			hi = v[i].hi;
		m[i] = hi;
	}
	return m;
}

const struct cu_index *dwarfinfo_cu_index(struct dwarf_info *d, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;
	uint32_t *v = u64map_get(&d->cu_ids, key);
	struct cu_index *x;
	struct collect_caps caps = { 0, 0, 0 };

	if (v)
		return d->cus[*v];
	x = xcalloc(1, sizeof(*x));
	collect(cu, x, &caps, -1, -1, 0);
	if (x->ninl > 1)
		qsort(x->inl, x->ninl, sizeof(*x->inl), range_cmp);
	if (x->nsubs > 1)
		qsort(x->subs, x->nsubs, sizeof(*x->subs), range_cmp);
	x->inl_maxhi = prefix_max(x->inl, x->ninl);
	x->subs_maxhi = prefix_max(x->subs, x->nsubs);
	VEC_PUSH(d->cus, d->ncus, d->cus_cap, x);
	u64map_put(&d->cu_ids, key, (uint32_t)d->ncus - 1);
	return x;
}

/* How many of the ranges `v` (sorted by lo) start at or below `pc`. */
static size_t starting_by(const struct die_range *v, size_t n, Dwarf_Addr pc)
{
	size_t lo = 0, hi = n;

	lo = COUNT_LE(v, hi, lo, pc);
	return lo;
}

/*
 * The deepest function or inlined call holding `pc` among the ranges `v` (the first
 * in DIE order among equally deep ones), or -1; `*best_depth` is raised to its depth.
 */
static int32_t deepest(const struct cu_index *x, const struct die_range *v,
		       const Dwarf_Addr *maxhi, size_t n, Dwarf_Addr pc, uint32_t *best_depth)
{
	int32_t best = -1;

	for (size_t i = starting_by(v, n, pc); i-- > 0 && maxhi[i] > pc;) {
		const struct die_node *nd = &x->nodes[v[i].node];

		if (pc >= v[i].hi)
			continue;
		if (nd->depth > *best_depth ||
		    (nd->depth == *best_depth && best >= 0 && v[i].node < (uint32_t)best)) {
			*best_depth = nd->depth;
			best = (int32_t)v[i].node;
		}
	}
	return best;
}

/* The innermost range holding `pc` (the last by start among those that hold it), or NULL. */
static const struct die_range *holding(const struct die_range *v, const Dwarf_Addr *maxhi,
				       size_t n, Dwarf_Addr pc)
{
	for (size_t i = starting_by(v, n, pc); i-- > 0 && maxhi[i] > pc;)
		if (pc < v[i].hi)
			return &v[i];
	return NULL;
}

static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) != 0)
		return NULL;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t udata(Dwarf_Die *die, int at)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_attr(die, at, &attr) || dwarf_formudata(&attr, &v) != 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/*
 * The frames of `pc` inside an inlined call, from the index: the deepest function or
 * inlined call holding it, then each enclosing one up to the function, each frame out
 * at the line of the call inlined into it. What dwarf_getscopes would give where the
 * DIE tree nests as it should; 0 (the caller walks the scopes then) where an enclosing
 * DIE does not hold `pc`.
 */
static size_t inline_chain(struct dwarf_info *d, const struct cu_index *x, Dwarf_Die *cu, Dwarf_Addr pc,
			   const char *file, int lineno, int col, struct dwarf_frame *out,
			   size_t cap)
{
	uint32_t depth = 0;
	int32_t in = deepest(x, x->inl, x->inl_maxhi, x->ninl, pc, &depth);
	int32_t sub = deepest(x, x->subs, x->subs_maxhi, x->nsubs, pc, &depth);
	size_t n = 0;

	if (sub >= 0) /* a function nested deeper than every inlined call */
		in = sub;
	for (int32_t i = in; i >= 0 && n < cap; i = x->nodes[i].parent) {
		Dwarf_Die die = x->nodes[i].die;

		if (i != in && dwarf_haspc(&die, pc) <= 0)
			return 0;
		out[n].name = dwarfinfo_die_name(d, &die);
		out[n].file = file;
		out[n].line = lineno > 0 ? (uint32_t)lineno : 0;
		out[n].column = col > 0 ? (uint32_t)col : 0;
		n++;
		if (x->nodes[i].tag == DW_TAG_subprogram)
			break;
		file = call_file(cu, &die);
		lineno = (int)udata(&die, DW_AT_call_line);
		col = (int)udata(&die, DW_AT_call_column);
	}
	return n;
}

size_t dwarf_info_frames(struct dwarf_info *d, uint64_t vaddr, struct dwarf_frame *out,
			 size_t cap)
{
	Dwarf_Addr addr = vaddr + d->elf_bias, bias, pc;
	Dwarf_Die *cu, *scopes = NULL, cumem;
	const struct cu_index *x;
	const char *file = NULL;
	int lineno = 0, col = 0, nscopes;
	size_t n = 0;

	cu = unit_at(d, addr, &cumem, &bias);
	if (!cu)
		return 0;
	if (d->own_ar > 0) {
		/* the same search of the unit's line table as dwfl_module_getsrc's */
		Dwarf_Line *line = dwarf_getsrc_die(cu, addr - bias);

		if (line) {
			file = dwarf_linesrc(line, NULL, NULL);
			dwarf_lineno(line, &lineno);
			dwarf_linecol(line, &col);
		}
	} else {
		Dwfl_Line *line = dwfl_module_getsrc(d->mod, addr);

		if (line)
			file = dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL);
	}
	x = dwarfinfo_cu_index(d, cu);
	pc = addr - bias;
	if (!holding(x->inl, x->inl_maxhi, x->ninl, pc)) {
		/* in no inlined call: one frame, its function and the line table's line */
		const struct die_range *sub = holding(x->subs, x->subs_maxhi, x->nsubs, pc);
		Dwarf_Die die;

		if (!sub && !file)
			return 0;
		if (sub)
			die = x->nodes[sub->node].die;
		out[0].name = sub ? dwarfinfo_die_name(d, &die) : NULL;
		out[0].file = file;
		out[0].line = lineno > 0 ? (uint32_t)lineno : 0;
		out[0].column = col > 0 ? (uint32_t)col : 0;
		return cap ? 1 : 0;
	}
	n = inline_chain(d, x, cu, pc, file, lineno, col, out, cap);
	if (n)
		return n;
	nscopes = dwarf_getscopes(cu, addr - bias, &scopes);
	/*
	 * The scopes of a pc inside inlined code continue with the inlined function's
	 * abstract definition; the concrete chain of callers comes from the scopes of
	 * the innermost inlined DIE itself.
	 */
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			Dwarf_Die inner = scopes[i];

			free(scopes);
			scopes = NULL;
			nscopes = tag == DW_TAG_subprogram ? 0 : dwarf_getscopes_die(&inner, &scopes);
			if (nscopes <= 0) {
				out[n].name = dwarfinfo_die_name(d, &inner);
				out[n].file = file;
				out[n].line = lineno > 0 ? (uint32_t)lineno : 0;
				out[n].column = col > 0 ? (uint32_t)col : 0;
				n++;
				nscopes = 0;
			}
			break;
		}
	}
	for (int i = 0; i < nscopes && n < cap; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		out[n].name = dwarfinfo_die_name(d, s);
		out[n].file = file;
		out[n].line = lineno > 0 ? (uint32_t)lineno : 0;
		out[n].column = col > 0 ? (uint32_t)col : 0;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the next frame out is executing the call this one was inlined at */
		file = call_file(cu, s);
		lineno = (int)udata(s, DW_AT_call_line);
		col = (int)udata(s, DW_AT_call_column);
	}
	free(scopes);
	if (n == 0 && file) {
		/* a line but no function scope (assembly, stripped DIEs): the line alone */
		out[0].name = NULL;
		out[0].file = file;
		out[0].line = lineno > 0 ? (uint32_t)lineno : 0;
		out[0].column = col > 0 ? (uint32_t)col : 0;
		n = 1;
	}
	return n;
}
