/* dwarfinfo_names: names of functions DWARF gives no linkage name, and of their scopes and types, as GCC spells them.
 *
 * A function without a linkage name (a template instantiated with a lambda's type, a
 * lambda's operator() inlined, a static function GCC gives none) is named by its
 * DW_AT_name with its scope before it, as KDAB's perfparser names it: the names of
 * the namespaces, classes and functions its declaration is nested in (DWARF 5,
 * section 2.13: DW_AT_abstract_origin and DW_AT_specification lead from an instance
 * to it). A function-local scope is the function with its parameters, as GCC writes
 * it in the template arguments around it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "symbolize/dwarfinfo_internal.h"

/* Scopes followed at most, and links from an instance to its declaration. */
#define MAX_SCOPES 32
#define MAX_ORIGINS 8

/*
 * The declaration `die` is an instance of: through DW_AT_abstract_origin (an inlined
 * call, a concrete out-of-line copy) and DW_AT_specification (a definition outside its
 * class or namespace), whose parents are the function's scope.
 */
static void decl_of(Dwarf_Die *die)
{
	for (int i = 0; i < MAX_ORIGINS; i++) {
		Dwarf_Attribute attr;
		Dwarf_Die next;

		if (!dwarf_attr(die, DW_AT_abstract_origin, &attr) &&
		    !dwarf_attr(die, DW_AT_specification, &attr))
			return;
		if (!dwarf_formref_die(&attr, &next))
			return;
		*die = next;
	}
}

/* The node of `die` in its unit's index (made now if it is not yet), -1 when it is in
 * none: another file's DIE (dwz's, a .dwo's), or a type unit's, whose offsets are in
 * .debug_types in DWARF 4 and would be taken for .debug_info's in the maps keyed by
 * offset. */
static int32_t node_of(struct dwarf_info *d, Dwarf_Die *die, const struct cu_index **xp)
{
	Dwarf_Die cumem;
	const struct cu_index *x;
	Dwarf_Off off = dwarf_dieoffset(die);
	size_t lo = 0, hi;

	if (!die->cu || dwarf_cu_getdwarf(die->cu) != d->dw ||
	    !dwarf_diecu(die, &cumem, NULL, NULL) ||
	    (dwarf_tag(&cumem) != DW_TAG_compile_unit && dwarf_tag(&cumem) != DW_TAG_partial_unit))
		return -1;
	x = dwarfinfo_cu_index(d, &cumem);
	hi = x->nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Off o = dwarf_dieoffset((Dwarf_Die *)&x->nodes[mid].die);

		if (o == off) {
			*xp = x;
			return (int32_t)mid;
		}
		if (o < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static const char *qualified(struct dwarf_info *d, const struct cu_index *x, int32_t i,
			     int level);
static const char *signature(struct dwarf_info *d, const struct cu_index *x, int32_t i,
			     int level);

static int type_name(struct dwarf_info *d, Dwarf_Die *t, struct strbuf *b, int level);

/*
 * Class template instance `t`, whose qualified name is `name`, without its trailing
 * template arguments that are their parameters' defaults (DW_AT_default_value), as
 * GCC spells a type in a template's or a function's name: std::vector<int> where the
 * class itself is named vector<int, std::allocator<int> >. Into `b`; -1 (`b` as it
 * was) when it has none such, or an argument before them is not a type spelt here.
 */
static int without_defaults(struct dwarf_info *d, Dwarf_Die *t, const char *name,
			    struct strbuf *b, int level)
{
	const char *dn = dwarf_diename(t), *lt = dn ? strchr(dn, '<') : NULL;
	size_t at = b->len, nlen = strlen(name), keep;
	Dwarf_Die c, ty;
	Dwarf_Attribute attr;
	bool flag = false;
	int first = 1;

	if (!lt || nlen < strlen(dn) || dwarf_child(t, &c) != 0)
		return -1;
	keep = nlen - strlen(dn) + (size_t)(lt - dn) + 1;
	strbuf_add(b, name, keep);
	do {
		int tag = dwarf_tag(&c);

		if (tag != DW_TAG_template_type_parameter && tag != DW_TAG_template_value_parameter)
			continue;
		if (dwarf_attr(&c, DW_AT_default_value, &attr) && dwarf_formflag(&attr, &flag) == 0 &&
		    flag)
			break;
		if (!first)
			strbuf_addstr(b, ", ");
		if (tag != DW_TAG_template_type_parameter || !dwarf_attr(&c, DW_AT_type, &attr) ||
		    !dwarf_formref_die(&attr, &ty) || type_name(d, &ty, b, level + 1) != 0)
			break;
		first = 0;
	} while (dwarf_siblingof(&c, &c) == 0);
	if (!flag) {
		strbuf_setlen(b, at);
		return -1;
	}
	strbuf_addstr(b, b->s[b->len - 1] == '>' ? " >" : ">");
	return 0;
}

/*
 * The name of type `t` as GCC writes a type in DW_AT_name (const int&, long unsigned
 * int), into `b`; -1 for a type it does not spell here.
 */
static int type_name(struct dwarf_info *d, Dwarf_Die *t, struct strbuf *b, int level)
{
	Dwarf_Attribute attr;
	Dwarf_Die inner;
	const struct cu_index *x;
	const char *name;
	int tag = dwarf_tag(t), itag;
	int32_t j;

	if (level > MAX_SCOPES)
		return -1;
	switch (tag) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		j = node_of(d, t, &x);
		name = j >= 0 ? qualified(d, x, j, level + 1) : dwarf_diename(t);
		if (!name)
			return -1;
		if (tag != DW_TAG_base_type && tag != DW_TAG_typedef &&
		    without_defaults(d, t, name, b, level) == 0)
			return 0;
		strbuf_addstr(b, name);
		return 0;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		break;
	default:
		return -1;
	}
	if (!dwarf_attr(t, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &inner)) {
		if (tag != DW_TAG_pointer_type && tag != DW_TAG_const_type)
			return -1;
		strbuf_addstr(b, tag == DW_TAG_pointer_type ? "void*" : "const void");
		return 0;
	}
	itag = dwarf_tag(&inner);
	if ((tag == DW_TAG_const_type || tag == DW_TAG_volatile_type) &&
	    itag != DW_TAG_pointer_type && itag != DW_TAG_reference_type &&
	    itag != DW_TAG_rvalue_reference_type)
		strbuf_addstr(b, tag == DW_TAG_const_type ? "const " : "volatile ");
	if (type_name(d, &inner, b, level + 1) != 0)
		return -1;
	switch (tag) {
	case DW_TAG_pointer_type:
		strbuf_addstr(b, "*");
		break;
	case DW_TAG_reference_type:
		strbuf_addstr(b, "&");
		break;
	case DW_TAG_rvalue_reference_type:
		strbuf_addstr(b, "&&");
		break;
	default:
		if (itag == DW_TAG_pointer_type || itag == DW_TAG_reference_type ||
		    itag == DW_TAG_rvalue_reference_type)
			strbuf_addstr(b, tag == DW_TAG_const_type ? " const" : " volatile");
	}
	return 0;
}

/*
 * An unnamed class, struct or union, as GCC writes it in DW_AT_name: a lambda's
 * closure type (an operator(), or a constructor called "<lambda>") as
 * "<lambda(int, int)>", the parameters its operator() takes, else "<unnamed struct>".
 */
static void unnamed_class(struct dwarf_info *d, Dwarf_Die *die, int level, struct strbuf *b)
{
	Dwarf_Die child, op, param;
	int lambda = 0, have_op = 0, first = 1;
	size_t lambda_at;

	if (dwarf_child(die, &child) == 0)
		do {
			const char *n = dwarf_tag(&child) == DW_TAG_subprogram ?
						dwarf_diename(&child) : NULL;

			if (n && strcmp(n, "<lambda>") == 0)
				lambda = 1;
			if (n && !have_op && strcmp(n, "operator()") == 0) {
				op = child;
				have_op = 1;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	if (!lambda && !have_op) {
		strbuf_addstr(b, dwarf_tag(die) == DW_TAG_union_type ? "<unnamed union>"
				 : dwarf_tag(die) == DW_TAG_class_type ? "<unnamed class>"
									: "<unnamed struct>");
		return;
	}
	strbuf_addstr(b, "<lambda");
	lambda_at = b->len;
	if (!have_op) {
		strbuf_addstr(b, ">");
		return;
	}
	strbuf_addstr(b, "(");
	if (dwarf_child(&op, &param) == 0)
		do {
			Dwarf_Attribute attr;
			Dwarf_Die t;

			if (dwarf_tag(&param) != DW_TAG_formal_parameter ||
			    dwarf_hasattr(&param, DW_AT_artificial))
				continue;
			if (!first)
				strbuf_addstr(b, ", ");
			if (!dwarf_attr(&param, DW_AT_type, &attr) ||
			    !dwarf_formref_die(&attr, &t) || type_name(d, &t, b, level + 1) != 0) {
				/* a type not spelt here: the lambda without its parameters */
				strbuf_setlen(b, lambda_at);
				strbuf_addstr(b, ">");
				return;
			}
			first = 0;
		} while (dwarf_siblingof(&param, &param) == 0);
	strbuf_addstr(b, ")>");
}

/* Whether `this` of type `t` points to a const object: a const member function's. */
static int const_this(Dwarf_Die *t)
{
	Dwarf_Attribute attr;
	Dwarf_Die in = *t;

	for (int i = 0; i < 3; i++) {
		int tag = dwarf_tag(&in);

		if (i > 0 && tag == DW_TAG_const_type)
			return 1;
		if ((i == 0 && tag != DW_TAG_const_type && tag != DW_TAG_pointer_type) ||
		    !dwarf_attr(&in, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &in))
			return 0;
		if (i == 0 && tag == DW_TAG_pointer_type)
			i++;
	}
	return 0;
}

/*
 * Function `i` of `x` as the scope of what is declared in it, as GCC spells one in
 * DW_AT_name and in template arguments: its qualified name and its parameters' types
 * (main(int, char**)::<lambda()>, Widget::work(long unsigned int) const::<lambda()>);
 * a lambda's operator() as its closure type (main(int, char**)::<lambda()>::<lambda()>),
 * so that a lambda's operator() and the templates instantiated with its type name
 * one closure alike. The name alone when a parameter's type is not spelt here.
 * Made once per DIE (remembered by its offset + 1 with the top bit set).
 */
static const char *signature(struct dwarf_info *d, const struct cu_index *x, int32_t i,
			     int level)
{
	Dwarf_Die decl = x->nodes[i].die, p;
	uint64_t key = (dwarf_dieoffset(&decl) + 1) | (1ULL << 63);
	uint32_t *v = u64map_get(&d->qnames, key);
	const char *name;
	struct strbuf b = STRBUF_INIT;
	int first = 1, is_const = 0, ok = 1;
	uint32_t id;
	size_t n;

	if (v)
		return *v ? strtab_str(&d->names, *v - 1) : NULL;
	name = qualified(d, x, i, level);
	if (!name) {
		u64map_put(&d->qnames, key, 0);
		return NULL;
	}
	n = strlen(name);
	if (n > 14 && strcmp(name + n - 14, ")>::operator()") == 0 && strstr(name, "::<lambda")) {
		/* a lambda's body is spelt as its closure type */
		strbuf_addstr(&b, name);
		strbuf_setlen(&b, n - 12);
		id = strtab_intern(&d->names, b.s);
		u64map_put(&d->qnames, key, id + 1);
		strbuf_release(&b);
		return strtab_str(&d->names, id);
	}
	decl_of(&decl);
	strbuf_addstr(&b, name);
	strbuf_addstr(&b, "(");
	if (dwarf_child(&decl, &p) == 0)
		do {
			Dwarf_Attribute attr;
			Dwarf_Die t;
			int tag = dwarf_tag(&p), have;

			if (tag != DW_TAG_formal_parameter && tag != DW_TAG_unspecified_parameters)
				continue;
			have = dwarf_attr(&p, DW_AT_type, &attr) && dwarf_formref_die(&attr, &t);
			if (tag == DW_TAG_formal_parameter && dwarf_hasattr(&p, DW_AT_artificial)) {
				is_const = have && const_this(&t);
				continue;
			}
			if (!first)
				strbuf_addstr(&b, ", ");
			first = 0;
			if (tag == DW_TAG_unspecified_parameters)
				strbuf_addstr(&b, "...");
			else if (!have || type_name(d, &t, &b, level + 1) != 0)
				ok = 0;
		} while (ok && dwarf_siblingof(&p, &p) == 0);
	strbuf_addstr(&b, is_const ? ") const" : ")");
	id = strtab_intern(&d->names, ok ? b.s : name);
	u64map_put(&d->qnames, key, id + 1);
	strbuf_release(&b);
	return strtab_str(&d->names, id);
}

/*
 * The qualified name of node `i` of `x` as DWARF spells it: the names of its
 * scopes, outermost first, and its own, "::" between. An instance is named by its
 * declaration. NULL when it has no name. Made once per DIE (interned, remembered by
 * its offset).
 */
static const char *qualified(struct dwarf_info *d, const struct cu_index *x, int32_t i,
			     int level)
{
	Dwarf_Die die = x->nodes[i].die, decl = die;
	uint64_t key = dwarf_dieoffset(&die) + 1;
	uint32_t *v = u64map_get(&d->qnames, key);
	struct strbuf b = STRBUF_INIT;
	const char *name = NULL, *scope = NULL;
	int tag = x->nodes[i].tag;
	uint32_t id;

	if (v)
		return *v ? strtab_str(&d->names, *v - 1) : NULL;
	if (level > MAX_SCOPES)
		return dwarf_diename(&die);
	decl_of(&decl);
	if (dwarf_dieoffset(&decl) != dwarf_dieoffset(&die)) {
		const struct cu_index *xd;
		int32_t j = node_of(d, &decl, &xd);

		name = j >= 0 ? qualified(d, xd, j, level + 1) : dwarf_diename(&decl);
		u64map_put(&d->qnames, key, name ? strtab_intern(&d->names, name) + 1 : 0);
		return name;
	}
	if (x->nodes[i].scope >= 0)
		scope = x->nodes[x->nodes[i].scope].tag == DW_TAG_subprogram
				? signature(d, x, x->nodes[i].scope, level + 1)
				: qualified(d, x, x->nodes[i].scope, level + 1);
	if (scope) {
		strbuf_addstr(&b, scope);
		strbuf_addstr(&b, "::");
	}
	name = dwarf_diename(&die);
	if (name)
		strbuf_addstr(&b, name);
	else if (tag == DW_TAG_namespace)
		strbuf_addstr(&b, "(anonymous namespace)");
	else if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
		unnamed_class(d, &die, level, &b);
	if (name || (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)) {
		id = strtab_intern(&d->names, b.s);
		name = strtab_str(&d->names, id);
		u64map_put(&d->qnames, key, id + 1);
	} else {
		u64map_put(&d->qnames, key, 0);
	}
	strbuf_release(&b);
	return name;
}

/* The demangler gives a linkage name its scope. */
const char *dwarfinfo_die_name(struct dwarf_info *d, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die decl = *die;
	const struct cu_index *x;
	const char *name;
	int32_t j;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		name = dwarf_formstring(&attr);
		if (name)
			return name;
	}
	decl_of(&decl);
	j = node_of(d, &decl, &x);
	if (j >= 0 && (name = qualified(d, x, j, 0)) != NULL)
		return name;
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		return dwarf_formstring(&attr);
	return NULL;
}
