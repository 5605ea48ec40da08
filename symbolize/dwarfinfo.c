/* dwarfinfo: source lines and inlined frames from DWARF, through libdw.
 *
 * DWARF 5 (dwarfstd.org): an address's scopes, innermost first, hold one
 * DW_TAG_inlined_subroutine per level of inlining, each with DW_AT_call_file and
 * DW_AT_call_line naming where it was inlined; the line table gives the line of the
 * innermost one. The same walk eu-addr2line -i does.
 */
#include "dwarfinfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

struct dwarf_info {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr elf_bias;  /* module address = link-time vaddr + elf_bias */
};

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct dwarf_info *dwarf_info_open(const char *path)
{
	struct dwarf_info *d;
	Dwarf_Addr bias;
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	Dwfl_Module *mod;

	if (!dwfl)
		return NULL;
	mod = dwfl_report_offline(dwfl, path_base(path), path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod || !dwfl_module_getelf(mod, &bias) || !dwfl_module_getdwarf(mod, &bias)) {
		dwfl_end(dwfl);
		return NULL;
	}
	d = xcalloc(1, sizeof(*d));
	d->dwfl = dwfl;
	d->mod = mod;
	dwfl_module_getelf(mod, &d->elf_bias);
	return d;
}

void dwarf_info_free(struct dwarf_info *d)
{
	if (!d)
		return;
	dwfl_end(d->dwfl);
	free(d);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		name = dwarf_formstring(&attr);
		if (name)
			return name;
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		return dwarf_formstring(&attr);
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

size_t dwarf_info_frames(struct dwarf_info *d, uint64_t vaddr, struct dwarf_frame *out,
			 size_t cap)
{
	Dwarf_Addr addr = vaddr + d->elf_bias, bias;
	Dwarf_Die *cu, *scopes = NULL;
	Dwfl_Line *line;
	const char *file = NULL;
	int lineno = 0, col = 0, nscopes;
	size_t n = 0;

	cu = dwfl_module_addrdie(d->mod, addr, &bias);
	if (!cu)
		return 0;
	line = dwfl_module_getsrc(d->mod, addr);
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL);
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
				out[n].name = die_name(&inner);
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
		out[n].name = die_name(s);
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
