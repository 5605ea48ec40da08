/* altlink: a dwz'd debug file's supplement (.gnu_debugaltlink), found and opened by
 * perfconv for libdw, never by libdw itself.
 *
 * Format (GNU, as dwz writes it and elfutils' dwelf_dwarf_gnu_debugaltlink reads it):
 * .gnu_debugaltlink holds the supplement's path, NUL-terminated, then its build id;
 * DW_FORM_GNU_ref_alt and DW_FORM_GNU_strp_alt are offsets into its .debug_info and
 * .debug_str.
 */
#include "symbolize/altlink.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/locate.h"

/*
 * The supplement `fd` (taken: closed on failure) as `alt`, when it is an ELF file with
 * DWARF and the build id `bid`: 0, else -1 and *why.
 */
static int try_fd(int fd, const void *bid, size_t bidlen, struct alt_file *alt, const char **why)
{
	const void *id;
	ssize_t n;

	alt->fd = fd;
	alt->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!alt->elf || elf_kind(alt->elf) != ELF_K_ELF) {
		*why = "not an ELF file";
		goto no;
	}
	n = dwelf_elf_gnu_build_id(alt->elf, &id);
	if (n <= 0 || (size_t)n != bidlen || memcmp(id, bid, bidlen) != 0) {
		*why = "its build id is not the one the debug file names";
		goto no;
	}
	alt->dw = dwarf_begin_elf(alt->elf, DWARF_C_READ, NULL);
	if (!alt->dw) {
		*why = "no DWARF in it";
		goto no;
	}
	return 0;
no:
	if (alt->elf)
		elf_end(alt->elf);
	close(fd);
	alt->elf = NULL;
	alt->fd = -1;
	return -1;
}

/* The supplement at `path`: 0, else -1 and *why (NULL when there is no such file). */
static int try_path(const char *path, const void *bid, size_t bidlen, struct alt_file *alt,
		    const char **why)
{
	struct stat st;
	int fd = file_open_steady(path, &st, why);

	if (fd == -1 && (errno == ENOENT || errno == ENOTDIR))
		*why = NULL;
	if (fd < 0)
		return -1;
	return try_fd(fd, bid, bidlen, alt, why);
}

/*
 * The stand-in: an ELF file in memory whose .debug_info is one byte, which libdw
 * takes as DWARF (dwarf_begin_elf needs a debug section) and in which every DIE and
 * string offset is out of range. Host byte order, 64-bit.
 */
static int stand_in(struct alt_file *alt)
{
	static const char names[] = "\0.debug_info\0.shstrtab";
	const size_t info_off = sizeof(Elf64_Ehdr), names_off = info_off + 1;
	const size_t sh_off = align8(names_off + sizeof(names));
	const size_t size = sh_off + 3 * sizeof(Elf64_Shdr);
	Elf64_Ehdr eh;
	Elf64_Shdr sh[3];
	static const uint16_t one = 1;

	memset(&eh, 0, sizeof(eh));
	memset(sh, 0, sizeof(sh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 2;
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = info_off,
			      .sh_size = 1, .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 13, .sh_type = SHT_STRTAB, .sh_offset = names_off,
			      .sh_size = sizeof(names), .sh_addralign = 1 };
	alt->image = xcalloc(1, size);
	memcpy(alt->image, &eh, sizeof(eh));
	memcpy(alt->image + names_off, names, sizeof(names));
	memcpy(alt->image + sh_off, sh, sizeof(sh));
	alt->elf = elf_memory(alt->image, size);
	alt->dw = alt->elf ? dwarf_begin_elf(alt->elf, DWARF_C_READ, NULL) : NULL;
	return alt->dw ? 0 : -1;
}

int altlink_attach(Dwarf *dw, const char *dw_path, int given, struct alt_file *alt, char **why)
{
	const char *name, *no = NULL;
	const void *bid;
	ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &name, &bid) : -1;
	char *p;
	int found;

	memset(alt, 0, sizeof(*alt));
	alt->fd = -1;
	*why = NULL;
	if (n <= 0) {
		if (given >= 0)
			close(given);
		return 0;
	}
	/* debuginfod's, by the build id */
	found = given >= 0 && try_fd(given, bid, (size_t)n, alt, &no) == 0;
	if (!found) {
		p = locate_debug_build_id_path(NULL, bid, (size_t)n);
		found = p && try_path(p, bid, (size_t)n, alt, &no) == 0;
		free(p);
	}
	if (!found && name[0]) {
		if (name[0] == '/') {
			p = xstrdup(name);
		} else {
			const char *slash = strrchr(dw_path, '/');

			p = slash ? xasprintf("%.*s/%s", (int)(slash - dw_path), dw_path, name)
				  : xstrdup(name);
		}
		found = try_path(p, bid, (size_t)n, alt, &no) == 0;
		if (!found)
			*why = xasprintf("its dwz supplement %s (.gnu_debugaltlink): %s: not used, the "
					 "inlined functions and types it holds are left unnamed",
					 p, no ? no : "no such file");
		free(p);
	}
	if (found) {
		dwarf_setalt(dw, alt->dw);
		return 0;
	}
	if (!*why)
		*why = xstrdup("its dwz supplement (.gnu_debugaltlink) names no file: the inlined "
			       "functions and types it holds are left unnamed");
	if (stand_in(alt) == 0)
		dwarf_setalt(dw, alt->dw);
	return 1;
}

void altlink_release(struct alt_file *alt)
{
	if (!alt)
		return;
	if (alt->dw)
		dwarf_end(alt->dw);
	if (alt->elf)
		elf_end(alt->elf);
	if (alt->fd >= 0)
		close(alt->fd);
	free(alt->image);
	memset(alt, 0, sizeof(*alt));
	alt->fd = -1;
}
