/* dwarfinfo: source lines and inlined frames from DWARF, through libdw.
 *
 * DWARF 5 (dwarfstd.org): an address's scopes, innermost first, hold one
 * DW_TAG_inlined_subroutine per level of inlining, each with DW_AT_call_file and
 * DW_AT_call_line naming where it was inlined; the line table gives the line of the
 * innermost one. The same walk eu-addr2line -i does.
 */
#include "symbolize/dwarfinfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/inflate.h"
#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/locate.h"

/* A function or an inlined call of a CU, with the nearest enclosing one. */
struct die_node {
	Dwarf_Die die;
	int32_t parent;          /* index of the enclosing function or inlined call, -1 none */
	uint32_t depth;          /* in the DIE tree */
	int tag;                 /* DW_TAG_subprogram or DW_TAG_inlined_subroutine */
};

/* An address range of a DIE, in the CU's addresses (module address - bias). */
struct die_range {
	Dwarf_Addr lo, hi;
	uint32_t node;           /* its die_node */
};

/*
 * Per compilation unit: where its functions and inlined calls are, so that an address
 * outside every inlined call needs only the line table, and one inside gets its chain
 * of calls from the nodes' parents (no dwarf_getscopes walk of the unit).
 */
struct cu_index {
	struct die_node *nodes;          /* in DIE order */
	struct die_range *inl, *subs;    /* sorted by lo */
	Dwarf_Addr *inl_maxhi, *subs_maxhi; /* max hi of [0..i] */
	size_t nnodes, ninl, nsubs;
};

/* A unit's address range from .debug_aranges (DWARF addresses, hi exclusive). */
struct cu_arange {
	Dwarf_Addr lo, hi;
	Dwarf_Off cu;         /* offset of the unit's header in .debug_info */
};

/* What the find_debuginfo callback gets through the module's userdata. */
struct find_hint {
	const char *debug_file; /* the separate debug file already found, or NULL */
	const struct cache_ctx *cache; /* decompressed copies (DIR/debug/BUILDID.debug), or NULL */
};

struct dwarf_info {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr elf_bias;  /* module address = link-time vaddr + elf_bias */
	Dwarf *dw;
	Dwarf_Addr dw_bias;   /* module address = DWARF address + dw_bias */
	/* .debug_aranges read here (libdw's reading sorts it with qsort, and was the
	 * largest single cost of symbolizing libc); own_ar -1 when it could not be,
	 * and libdw's lookups are used */
	int own_ar;
	struct cu_arange *ar;
	size_t nar;
	struct u64map cu_ids; /* CU DIE offset + 1 -> cus index */
	struct cu_index *cus;
	size_t ncus, cus_cap;
	/* libdw keeps pointers to these: one set per handle, no state shared */
	Dwfl_Callbacks callbacks;
	char *debuginfo_path; /* always NULL: libdw's default search path */
	struct find_hint hint;
};


static int has_compressed_debug(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	int found = 0;

	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		found = gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
	}
	elf_end(e);
	return found;
}

/*
 * File format of a decompressed copy in the cache: the debug file with its compressed
 * sections inflated (libelf wrote it), but for the location lists of variables
 * (.debug_loclists, .debug_loc), which no frame, line or unwinding rule reads: they
 * are left empty (version 2; libc's are 1.4 MB of its 10 MB). Then this trailer,
 * which ELF readers never look at. It says what the copy was made from and holds a
 * checksum of the bytes before it, so that a copy cut short, altered or replaced is
 * not used.
 */
#define DCACHE_MAGIC "PCDEBUG1"
#define DCACHE_VERSION 2

struct dcache_trailer {
	uint8_t build_id[64];
	uint32_t build_id_size, version;
	struct file_id src;     /* the debug file it was inflated from, as it was */
	uint64_t body_size;     /* the ELF file before the trailer */
	uint64_t checksum;      /* cache_entry_sum() of the body */
	char magic[8];          /* last: found from the end */
};

/* The checksum of the first `len` bytes of `fd`, 0 and *sum, or -1. */
static int sum_of(int fd, size_t len, uint64_t *sum)
{
	void *m;

	if (len == 0)
		return -1;
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	*sum = cache_entry_sum(m, len, len);
	munmap(m, len);
	return 0;
}

/* Whether ELF file `e` has the build id `bid` (its NT_GNU_BUILD_ID note). */
static int has_build_id(Elf *e, const uint8_t *bid, size_t bidlen)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) == 0)
				return nh.n_descsz == bidlen &&
				       memcmp((const char *)d->d_buf + doff, bid, bidlen) == 0;
	}
	return 0;
}

/*
 * Is `fd`, the cached copy for build id `bid`, whole and as it was written, and made
 * from `src` (NULL: from any file)? An entry without a trailer is an older perfconv's
 * when it is the debug file of that build id and ends where its section headers end
 * (libelf writes them last); else it was cut short or replaced.
 */
static enum cache_verdict check_copy(const char *file, int fd, const uint8_t *bid, size_t bidlen,
				     const struct file_id *src, const char **why)
{
	struct dcache_trailer t;
	struct stat st;
	uint64_t sum;

	*why = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return CACHE_DAMAGED;
	}
	if ((size_t)st.st_size < sizeof(t) ||
	    pread(fd, &t, sizeof(t), st.st_size - (off_t)sizeof(t)) != (ssize_t)sizeof(t) ||
	    memcmp(t.magic, DCACHE_MAGIC, 8) != 0) {
		Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		GElf_Ehdr eh;
		int whole = e && gelf_getehdr(e, &eh) &&
			    eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize == (uint64_t)st.st_size &&
			    has_build_id(e, bid, bidlen);

		elf_end(e);
		if (whole)
			return CACHE_STALE;
		*why = "truncated, or not a decompressed debug file";
		return CACHE_DAMAGED;
	}
	if (t.version != DCACHE_VERSION)
		return CACHE_STALE;
	/* another debug file's copy (of the same build id): this search does not find
	 * that file (another --symfs), and the output must not depend on what an
	 * earlier run with other options left in the cache */
	if (src && memcmp(&t.src, src, sizeof(*src)) != 0)
		return CACHE_STALE;
	if (t.body_size != (uint64_t)st.st_size - sizeof(t))
		*why = "its size differs from its trailer's";
	else if (t.build_id_size != bidlen || memcmp(t.build_id, bid, bidlen) != 0)
		*why = "made for another build id";
	else if (!cache_entry_stamped(file, &st)) {
		if (sum_of(fd, (size_t)t.body_size, &sum) != 0 || sum != t.checksum)
			*why = "checksum differs: altered since it was written";
		else
			cache_entry_stamp(file, &st);
	}
	return *why ? CACHE_DAMAGED : CACHE_GOOD;
}

/*
 * Inflate compressed section `scn` of `e` (opened ELF_C_RDWR) in place: zlib streams
 * (ELFCOMPRESS_ZLIB, all that gcc and Debian write) through libdeflate, in a buffer
 * made here and kept in *keep until the file is written (the caller frees it), and
 * anything else through libelf. The file libelf then writes is byte for byte the one
 * elf_compress(scn, 0, 0) makes, in 0.4 to 0.6 of its time. 0, or -1.
 */
static int inflate_section(Elf *e, Elf_Scn *scn, void **keep)
{
	size_t hdr = gelf_getclass(e) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	GElf_Chdr ch;
	GElf_Shdr sh;
	Elf_Data *d;
	void *out;

	*keep = NULL;
	if (!gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
		return elf_compress(scn, 0, 0) < 0 ? -1 : 0;
	if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size < hdr || ch.ch_size > SIZE_MAX / 2)
		return -1;
	out = xmalloc_written(ch.ch_size ? (size_t)ch.ch_size : 1);
	if (inflate_zlib((const uint8_t *)d->d_buf + hdr, d->d_size - hdr, out,
			 (size_t)ch.ch_size) < 0) {
		free(out);
		return -1;
	}
	d->d_buf = out;
	d->d_size = (size_t)ch.ch_size;
	d->d_type = ELF_T_BYTE;
	d->d_align = ch.ch_addralign;
	elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh.sh_size = ch.ch_size;
	sh.sh_addralign = ch.ch_addralign;
	if (!gelf_update_shdr(scn, &sh)) {
		free(out);
		return -1;
	}
	elf_flagshdr(scn, ELF_C_SET, ELF_F_DIRTY);
	*keep = out;
	return 0;
}

/* Section `scn` (a compressed one) left without bytes: SHT_NOBITS, which libdw
 * takes for absent. 0, or -1. */
static int empty_section(Elf_Scn *scn)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
		return -1;
	d->d_buf = NULL;
	d->d_size = 0;
	d->d_type = ELF_T_BYTE;
	elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
	sh.sh_type = SHT_NOBITS;
	sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh.sh_size = 0;
	if (!gelf_update_shdr(scn, &sh))
		return -1;
	elf_flagshdr(scn, ELF_C_SET, ELF_F_DIRTY);
	return 0;
}

/* Write `src` with its compressed sections inflated to `dst`, and the trailer (as an
 * atomic_file, so that a reader never sees half a file). 0 on success. */
static int write_decompressed(const char *src, const char *dst, const uint8_t *bid,
			      size_t bidlen)
{
	struct atomic_file out;
	struct dcache_trailer t;
	int in, ok = 0;
	struct stat st;
	off_t off = 0;
	Elf *e = NULL;
	void **bufs = NULL;
	size_t nbufs = 0, bufs_cap = 0, shstrndx;

	in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return -1;
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode) || bidlen > sizeof(t.build_id) ||
	    atomic_file_open(&out, dst, 0644, 0) != 0) {
		close(in);
		return -1;
	}
	while (off < st.st_size)
		if (sendfile(out.fd, in, &off, (size_t)(st.st_size - off)) <= 0)
			goto out;
	e = elf_begin(out.fd, ELF_C_RDWR, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		const char *name;
		void *keep;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_loclists") || !strcmp(name, ".debug_loc"))) {
			if (empty_section(scn) < 0)
				goto out;
			continue;
		}
		if (inflate_section(e, scn, &keep) < 0)
			goto out;
		if (keep)
			VEC_PUSH(bufs, nbufs, bufs_cap, keep);
	}
	ok = elf_update(e, ELF_C_WRITE) >= 0;
	elf_end(e);
	e = NULL;
	memset(&t, 0, sizeof(t));
	memcpy(t.build_id, bid, bidlen);
	t.build_id_size = (uint32_t)bidlen;
	t.version = DCACHE_VERSION;
	(void)file_id_of(src, &t.src);
	memcpy(t.magic, DCACHE_MAGIC, 8);
	ok = ok && fstat(out.fd, &st) == 0 && sum_of(out.fd, (size_t)st.st_size, &t.checksum) == 0;
	t.body_size = (uint64_t)st.st_size;
	ok = ok && pwrite(out.fd, &t, sizeof(t), st.st_size) == (ssize_t)sizeof(t);
out:
	elf_end(e);
	for (size_t i = 0; i < nbufs; i++)
		free(bufs[i]);
	free(bufs);
	close(in);
	if (ok && atomic_file_commit(&out) == 0)
		return 0;
	atomic_file_abort(&out);
	return -1;
}

/*
 * libdw's own search (build-id directories, .gnu_debuglink, debuginfod) with a
 * cache of decompressed copies in front of it.
 */
static int cached_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				 GElf_Addr base, const char *file_name, const char *debuglink_file,
				 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	char *cached = NULL, hex[2 * 64 + 1] = "";
	int fd;
	struct file_id src;

	const struct find_hint *fh = userdata ? *userdata : NULL;
	const char *hint = fh ? fh->debug_file : NULL;
	const struct cache_ctx *cache = fh ? fh->cache : NULL;
	/* a copy is used when made from the debug file this search finds; with no
	 * debug file found, only when debuginfod may give one (any copy of the build id) */
	int have_src = hint && file_id_of(hint, &src) == 0;

	if (len > 0 && len <= 64 && (have_src || (!hint && locate_uses_debuginfod()))) {
		hex_bytes(hex, bits, (size_t)len);
		cached = cache_entry_path(cache ? cache->dir : NULL, CACHE_DEBUG, hex, 0);
	}
	/* non-blocking: a FIFO put there would wait forever for a writer */
	fd = cached ? open(cached, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	if (fd >= 0) {
		const char *why;
		enum cache_verdict v = check_copy(cached, fd, bits, (size_t)len, have_src ? &src : NULL, &why);

		if (v == CACHE_GOOD) {
			*debuginfo_file_name = cached;
			return fd;
		}
		close(fd);
		if (v == CACHE_DAMAGED)
			cache_damaged(cache, cached, why);
	}
	if (hint) {
		/* the separate debug file the symbol table came from (found at the
		 * places of locate's table): no search needed */
		fd = open(hint, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0)
			*debuginfo_file_name = xstrdup(hint);
	} else if (locate_uses_debuginfod()) {
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc, debuginfo_file_name);
	} else {
		/*
		 * The symbol table's search (build id and .gnu_debuglink directories)
		 * found no debug file: libdw's would find none either, but would load
		 * its debuginfod client (and libcurl) to ask no server.
		 */
		fd = -1;
	}
	if (fd >= 0 && cached && *debuginfo_file_name && has_compressed_debug(fd)) {
		free(cached); /* the same name, its directory made */
		cached = cache_entry_path(cache->dir, CACHE_DEBUG, hex, 1);
		if (cached && write_decompressed(*debuginfo_file_name, cached, bits, (size_t)len) == 0) {
			int cfd = open(cached, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

			if (cfd >= 0) {
				close(fd);
				free(*debuginfo_file_name);
				*debuginfo_file_name = cached;
				return cfd;
			}
		}
	}
	free(cached);
	return fd;
}

struct dwarf_info *dwarf_info_open(const char *path, const char *debug_file,
				   const struct cache_ctx *cache)
{
	struct dwarf_info *d = xcalloc(1, sizeof(*d));
	Dwarf_Addr bias;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	void **userdata;

	d->callbacks.find_elf = dwfl_build_id_find_elf;
	d->callbacks.find_debuginfo = cached_find_debuginfo;
	d->callbacks.section_address = dwfl_offline_section_address;
	d->callbacks.debuginfo_path = &d->debuginfo_path;
	d->hint.debug_file = debug_file;
	d->hint.cache = cache;
	dwfl = dwfl_begin(&d->callbacks);
	if (!dwfl) {
		free(d);
		return NULL;
	}
	mod = dwfl_report_offline(dwfl, path_base(path), path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	/* the find_debuginfo callback reads the hint from the module's userdata */
	if (mod && dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = &d->hint;
	if (!mod || !dwfl_module_getelf(mod, &bias) || !dwfl_module_getdwarf(mod, &bias)) {
		dwfl_end(dwfl);
		free(d);
		return NULL;
	}
	/* the search is over: the strings were the caller's for this call only */
	d->hint.debug_file = NULL;
	d->hint.cache = NULL;
	u64map_init(&d->cu_ids);
	d->dwfl = dwfl;
	d->mod = mod;
	dwfl_module_getelf(mod, &d->elf_bias);
	d->dw = dwfl_module_getdwarf(mod, &d->dw_bias);
	return d;
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
		free(d->cus[i].nodes);
		free(d->cus[i].inl);
		free(d->cus[i].subs);
		free(d->cus[i].inl_maxhi);
		free(d->cus[i].subs_maxhi);
	}
	free(d->cus);
	free(d->ar);
	u64map_release(&d->cu_ids);
	dwfl_end(d->dwfl);
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

/* Every subprogram and inlined call below `die`, depth first; `parent` is the node of
 * the nearest enclosing one. */
static void collect(Dwarf_Die *die, struct cu_index *x, struct collect_caps *caps,
		    int32_t parent, uint32_t depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		int32_t inner = parent;

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			struct die_node nd = { child, parent, depth + 1, tag };

			inner = (int32_t)x->nnodes;
			VEC_PUSH(x->nodes, x->nnodes, caps->nodes, nd);
			if (tag == DW_TAG_inlined_subroutine)
				add_ranges(&child, (uint32_t)inner, &x->inl, &x->ninl, &caps->inl);
			else
				add_ranges(&child, (uint32_t)inner, &x->subs, &x->nsubs, &caps->subs);
		}
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
		    tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			collect(&child, x, caps, inner, depth + 1);
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

static const struct cu_index *cu_index_for(struct dwarf_info *d, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;
	uint32_t *v = u64map_get(&d->cu_ids, key);
	struct cu_index x;
	struct collect_caps caps = { 0, 0, 0 };

	if (v)
		return &d->cus[*v];
	memset(&x, 0, sizeof(x));
	collect(cu, &x, &caps, -1, 0);
	if (x.ninl > 1)
		qsort(x.inl, x.ninl, sizeof(*x.inl), range_cmp);
	if (x.nsubs > 1)
		qsort(x.subs, x.nsubs, sizeof(*x.subs), range_cmp);
	x.inl_maxhi = prefix_max(x.inl, x.ninl);
	x.subs_maxhi = prefix_max(x.subs, x.nsubs);
	VEC_PUSH(d->cus, d->ncus, d->cus_cap, x);
	u64map_put(&d->cu_ids, key, (uint32_t)d->ncus - 1);
	return &d->cus[d->ncus - 1];
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

/*
 * The frames of `pc` inside an inlined call, from the index: the deepest function or
 * inlined call holding it, then each enclosing one up to the function, each frame out
 * at the line of the call inlined into it. What dwarf_getscopes would give where the
 * DIE tree nests as it should; 0 (the caller walks the scopes then) where an enclosing
 * DIE does not hold `pc`.
 */
static size_t inline_chain(const struct cu_index *x, Dwarf_Die *cu, Dwarf_Addr pc,
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
		out[n].name = die_name(&die);
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
	x = cu_index_for(d, cu);
	pc = addr - bias;
	if (!holding(x->inl, x->inl_maxhi, x->ninl, pc)) {
		/* in no inlined call: one frame, its function and the line table's line */
		const struct die_range *sub = holding(x->subs, x->subs_maxhi, x->nsubs, pc);
		Dwarf_Die die;

		if (!sub && !file)
			return 0;
		if (sub)
			die = x->nodes[sub->node].die;
		out[0].name = sub ? die_name(&die) : NULL;
		out[0].file = file;
		out[0].line = lineno > 0 ? (uint32_t)lineno : 0;
		out[0].column = col > 0 ? (uint32_t)col : 0;
		return cap ? 1 : 0;
	}
	n = inline_chain(x, cu, pc, file, lineno, col, out, cap);
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
