/* debugcopy: separate debug files with their compressed sections inflated, kept in the cache. */
#include "symbolize/debugcopy.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/inflate.h"
#include "common/later.h"
#include "common/mapfile.h"
#include "common/util.h"

/* Whether the ELF file `fd` has a compressed section (SHF_COMPRESSED). */
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
 * sections inflated (laid out by write_inflated; the copies libelf laid out before
 * are read alike), but for the location lists of variables (.debug_loclists,
 * .debug_loc), which no frame, line or unwinding rule reads: they are left empty
 * (version 2; libc's are 1.4 MB of its 10 MB). Then this trailer,
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
			cache_entry_stamp(file, fd, &st);
	}
	return *why ? CACHE_DAMAGED : CACHE_GOOD;
}

/* Sections left empty in a copy: location lists of variables, which nothing here reads. */
static int dropped_section(const char *name)
{
	return name && (!strcmp(name, ".debug_loclists") || !strcmp(name, ".debug_loc"));
}

/* Section header `sh` in file form at `dst`, for an ELF file of class `cls` in this
 * machine's byte order. */
static void put_shdr(void *dst, int cls, const GElf_Shdr *sh)
{
	if (cls == ELFCLASS64) {
		Elf64_Shdr o = { sh->sh_name,   sh->sh_type, sh->sh_flags, sh->sh_addr, sh->sh_offset,
				 sh->sh_size,   sh->sh_link, sh->sh_info,  sh->sh_addralign,
				 sh->sh_entsize };
		memcpy(dst, &o, sizeof(o));
	} else {
		Elf32_Shdr o = { sh->sh_name,
				 sh->sh_type,
				 (Elf32_Word)sh->sh_flags,
				 (Elf32_Addr)sh->sh_addr,
				 (Elf32_Off)sh->sh_offset,
				 (Elf32_Word)sh->sh_size,
				 sh->sh_link,
				 sh->sh_info,
				 (Elf32_Word)sh->sh_addralign,
				 (Elf32_Word)sh->sh_entsize };
		memcpy(dst, &o, sizeof(o));
	}
}

/* A section's alignment in a copy: at most a page (a debug file's are 1 to 64). */
#define MAX_ALIGN 4096
/* How many times its compressed size a section may inflate to in a copy. */
#define MAX_RATIO 256

static uint64_t align_up(uint64_t x, uint64_t align)
{
	return align > 1 ? (x + align - 1) & ~(align - 1) : x;
}

/*
 * The debug file `e` (read from `image`, `size` bytes: ELF_C_READ_MMAP) with its
 * zlib-compressed sections inflated (and the dropped ones empty), laid out here and
 * written into `fd`, an empty file, through a shared mapping: each section inflated
 * straight into its place in the file's pages, all of them allocated first. 0, or -1
 * for a file this does not lay out (another byte order, extended section numbering,
 * another compression, sections outside the file, damaged data) or whose blocks the
 * filesystem does not give (*err: the errno): libdw then reads the debug file itself,
 * as it is, and inflates its sections at each run.
 *
 * Layout: the ELF header, the program headers (copied: a debug file's describe the
 * object it belongs to), the sections in index order each at its alignment, the
 * section headers last. libelf's layout of the same sections is as good; this way
 * spares a copy of the file (libelf reads it whole into memory) and a buffer for
 * every inflated section: 17 MB of new pages for libc, which a first run pays 1 to
 * 15 us each for, depending on the machine.
 */
static int write_inflated(Elf *e, const char *image, size_t size, int fd, int *err)
{
	static const uint16_t one = 1;
	const int host_data = *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
	GElf_Ehdr eh;
	size_t shnum, shstrndx, phsize, shentsize, chdr;
	uint64_t off, phoff, shoff, total, max_total;
	GElf_Shdr *src = NULL, *dst = NULL;
	char *m;
	int cls, ok = 0;

	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_DATA] != host_data || eh.e_shnum == 0 ||
	    eh.e_shstrndx == SHN_XINDEX || elf_getshdrnum(e, &shnum) != 0 ||
	    elf_getshdrstrndx(e, &shstrndx) != 0)
		return -1;
	cls = gelf_getclass(e);
	shentsize = cls == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	chdr = cls == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	phsize = (size_t)eh.e_phnum * eh.e_phentsize;
	if (eh.e_shentsize != shentsize || eh.e_ehsize > size || eh.e_phoff > size ||
	    phsize > size - eh.e_phoff)
		return -1;
	/* no larger than the file with every byte inflated MAX_RATIO times, and every
	 * section's alignment padding */
	max_total = (uint64_t)size * MAX_RATIO + (uint64_t)shnum * MAX_ALIGN;
	phoff = phsize ? align8(eh.e_ehsize) : 0;
	off = phsize ? phoff + phsize : eh.e_ehsize;
	src = xcalloc(shnum, sizeof(*src));
	dst = xcalloc(shnum, sizeof(*dst));
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr *d = &dst[i];

		if (!scn || !gelf_getshdr(scn, &src[i]))
			goto out;
		*d = src[i];
		if (i == 0)
			continue;
		if (d->sh_type != SHT_NOBITS && (d->sh_offset > size || d->sh_size > size - d->sh_offset))
			goto out;
		if (d->sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			/* a section said to inflate MAX_RATIO times or more gets no copy
			 * (DWARF inflates 2 to 5 times; deflate can give 1032 bytes a
			 * byte): libdw reads that file itself, and a damaged size does not
			 * make a file of gigabytes */
			if (!gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB || d->sh_size < chdr ||
			    ch.ch_size / MAX_RATIO > d->sh_size - chdr)
				goto out;
			d->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
			if (dropped_section(elf_strptr(e, shstrndx, d->sh_name))) {
				d->sh_type = SHT_NOBITS;
				d->sh_size = 0;
			} else {
				d->sh_size = ch.ch_size;
				d->sh_addralign = ch.ch_addralign;
			}
		}
		if (d->sh_type == SHT_NOBITS) { /* no bytes: the offset says nothing */
			d->sh_offset = off;
			continue;
		}
		if (d->sh_addralign & (d->sh_addralign - 1) || d->sh_addralign > MAX_ALIGN)
			goto out;
		d->sh_offset = off = align_up(off, d->sh_addralign);
		if (d->sh_size > max_total)
			goto out;
		off += d->sh_size;
	}
	shoff = align8(off);
	total = shoff + (uint64_t)shnum * shentsize;
	if (total > max_total)
		goto out;
	/*
	 * Every block of the file given to it before a byte is written through the
	 * mapping: a page of a shared mapping the filesystem has no room for (a full
	 * cache, a quota) is SIGBUS at the write, where a write() would say ENOSPC.
	 */
	*err = posix_fallocate(fd, 0, (off_t)total);
	if (*err)
		goto out;
	m = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto out;
	/* the file's pages made in one call, not a fault each */
	prefault(m, (size_t)total);
	memcpy(m, image, eh.e_ehsize); /* the source's, but for two offsets */
	if (cls == ELFCLASS64) {
		Elf64_Ehdr h;

		memcpy(&h, m, sizeof(h));
		h.e_phoff = phoff;
		h.e_shoff = shoff;
		memcpy(m, &h, sizeof(h));
	} else {
		Elf32_Ehdr h;

		memcpy(&h, m, sizeof(h));
		h.e_phoff = (Elf32_Off)phoff;
		h.e_shoff = (Elf32_Off)shoff;
		memcpy(m, &h, sizeof(h));
	}
	if (phsize)
		memcpy(m + phoff, image + eh.e_phoff, phsize);
	ok = 1;
	for (size_t i = 1; ok && i < shnum; i++) {
		if (dst[i].sh_type == SHT_NOBITS)
			continue;
		if (src[i].sh_flags & SHF_COMPRESSED)
			ok = inflate_zlib((const uint8_t *)image + src[i].sh_offset + chdr,
					  (size_t)src[i].sh_size - chdr, (uint8_t *)m + dst[i].sh_offset,
					  (size_t)dst[i].sh_size) == 0;
		else
			memcpy(m + dst[i].sh_offset, image + src[i].sh_offset, (size_t)dst[i].sh_size);
	}
	for (size_t i = 0; ok && i < shnum; i++)
		put_shdr(m + shoff + i * shentsize, cls, &dst[i]);
	munmap(m, (size_t)total);
out:
	free(src);
	free(dst);
	return ok ? 0 : -1;
}

/* A copy whose body is written: its trailer made, and its name given, on the worker
 * thread of common/later.h. */
struct seal_job {
	const struct cache_ctx *cache;
	struct atomic_file out;
	char *dst;
	struct dcache_trailer t;
};

static void seal_now(void *arg)
{
	struct seal_job *j = arg;
	struct stat st;
	int ok;

	ok = fstat(j->out.fd, &st) == 0 && sum_of(j->out.fd, (size_t)st.st_size, &j->t.checksum) == 0;
	if (ok) {
		j->t.body_size = (uint64_t)st.st_size;
		ok = pwrite_whole(j->out.fd, &j->t, sizeof(j->t), j->t.body_size) == 0;
	}
	if (!ok)
		cache_file_fail(j->cache, &j->out, j->dst, errno);
	else
		(void)cache_file_commit(j->cache, &j->out, j->dst);
	free(j->dst);
	free(j);
}

/* Its trailer (a checksum of its 9 MB for libc) and its name come later, on
 * cache->later's thread, while libdw reads it: the entry is an atomic_file, so that no reader sees
 * half of it. */
int debugcopy_make(const char *src, const char *dst, const uint8_t *bid, size_t bidlen,
		   const struct cache_ctx *cache)
{
	struct seal_job *j;
	int in, ok, rfd = -1, err = 0;
	struct stat st;
	size_t isize;
	const char *image, *why;
	Elf *e;

	/* never waits on a FIFO; another user's file is read from a private copy, which
	 * that user cannot cut short under the mapping */
	in = file_open_steady(src, &st, &why);
	if (in < 0)
		return -1;
	j = xcalloc(1, sizeof(*j));
	if (bidlen > sizeof(j->t.build_id) || cache_file_create(cache, &j->out, dst) != 0) {
		free(j);
		close(in);
		return -1;
	}
	j->cache = cache;
	j->dst = xstrdup(dst);
	e = elf_begin(in, ELF_C_READ_MMAP, NULL);
	image = e ? elf_rawfile(e, &isize) : NULL;
	ok = image && isize == (size_t)st.st_size &&
	     write_inflated(e, image, isize, j->out.fd, &err) == 0;
	elf_end(e);
	close(in);
	memcpy(j->t.build_id, bid, bidlen);
	j->t.build_id_size = (uint32_t)bidlen;
	j->t.version = DCACHE_VERSION;
	(void)file_id_of(src, &j->t.src);
	memcpy(j->t.magic, DCACHE_MAGIC, 8);
	/* this run's own descriptor: the job closes the entry's */
	rfd = ok ? fcntl(j->out.fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (rfd >= 0) {
		later_run(cache ? cache->later : NULL, seal_now, j);
		return rfd;
	}
	cache_file_fail(cache, &j->out, dst, err);
	free(j->dst);
	free(j);
	return -1;
}

/*
 * libdw's own search (build-id directories, .gnu_debuglink, debuginfod) with a
 * cache of decompressed copies in front of it.
 */
int debugcopy_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      GElf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	char *cached = NULL, hex[2 * 64 + 1] = "";
	const char *why = NULL;
	int fd;
	struct file_id src;
	struct find_hint *fh = userdata ? *userdata : NULL;
	const char *hint = fh ? fh->debug_file : NULL;
	const struct cache_ctx *cache = fh ? fh->cache : NULL;
	Elf *main_elf = dwfl_module_getelf(mod, &bias);
	GElf_Word crc;
	const char *main_link = main_elf ? dwelf_elf_gnu_debuglink(main_elf, &crc) : NULL;
	/* a copy is used when made from the debug file this search finds; with no
	 * debug file found, only when debuginfod may give one (any copy of the build id) */
	int have_src;

	(void)debuglink_crc;
	/*
	 * libdwfl asks again for a dwz supplement (.gnu_debugaltlink: Debian's and Fedora's
	 * -dbgsym files keep the types and inlined functions several files share there),
	 * naming the supplement as the debug link: no longer the object's own
	 * .gnu_debuglink (libdwfl passes that string itself). libdw's search would open
	 * its path blocking; it is found by symbolize/altlink.c instead, after libdwfl
	 * returns. Only debuginfod is asked here, by build id (no path given to search).
	 */
	if (debuglink_file && debuglink_file != main_link) {
		if (fh && fh->alt_fd < 0 && locate_uses_debuginfod()) {
			char *name = NULL;

			fh->alt_fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL,
								  NULL, 0, &name);
			free(name);
		}
		return -1;
	}
	have_src = hint && file_id_of(hint, &src) == 0;

	if (len > 0 && len <= 64 && (have_src || (!hint && locate_uses_debuginfod()))) {
		hex_bytes(hex, bits, (size_t)len);
		cached = cache_entry_path(cache ? cache->dir : NULL, CACHE_DEBUG, hex, 0);
	}
	/* non-blocking: a FIFO put there would wait forever for a writer */
	fd = cached ? cache_file_open(cache, cached, &why) : -1;
	if (fd < 0 && why)
		cache_damaged(cache, cached, why);
	if (fd >= 0) {
		enum cache_verdict v = check_copy(cached, fd, bits, (size_t)len, have_src ? &src : NULL, &why);

		if (v == CACHE_GOOD) {
			*debuginfo_file_name = cached;
			if (fh && hint)
				fh->found = xstrdup(hint);
			return fd;
		}
		close(fd);
		if (v == CACHE_DAMAGED)
			cache_damaged(cache, cached, why);
	}
	if (hint) {
		/* the separate debug file the symbol table came from (found at the
		 * places of locate's table): no search needed */
		struct stat st;

		fd = file_open_steady(hint, &st, &why);
		if (fd >= 0)
			*debuginfo_file_name = xstrdup(hint);
		else if (fd == -2 && fh)
			fh->problem = why;
	} else if (locate_uses_debuginfod()) {
		/* debuginfod by the build id: with no file name and no link, libdwfl's
		 * search opens no path beside the object (it would, blocking) */
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0,
						  debuginfo_file_name);
		(void)file_name;
	} else {
		/*
		 * The symbol table's search (build id and .gnu_debuglink directories)
		 * found no debug file: libdw's would find none either, but would load
		 * its debuginfod client (and libcurl) to ask no server.
		 */
		fd = -1;
	}
	if (fd >= 0 && fh && *debuginfo_file_name)
		fh->found = xstrdup(*debuginfo_file_name);
	if (fd >= 0 && cached && *debuginfo_file_name && has_compressed_debug(fd)) {
		free(cached); /* the same name, its directory made */
		cached = cache_entry_path(cache->dir, CACHE_DEBUG, hex, 1);
		int cfd = cached ? debugcopy_make(*debuginfo_file_name, cached, bits, (size_t)len, cache)
				 : -1;

		if (cfd >= 0) {
			close(fd);
			free(*debuginfo_file_name);
			*debuginfo_file_name = cached;
			return cfd;
		}
	}
	free(cached);
	return fd;
}
