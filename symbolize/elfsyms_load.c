/* elfsyms_load: an ELF object's function symbols loaded, by the rules of perf 6.1. */
/*
 * The rules follow tools/perf/util/symbol-elf.c (dso__load_sym, dso__load_sym_internal,
 * dso__synthesize_plt_symbols) and tools/perf/util/symbol.c (symbols__fixup_end,
 * symbols__fixup_duplicate, choose_best_symbol) of Linux 6.1, the perf on the machines
 * we compare against:
 *
 *  - kept: STT_FUNC, STT_GNU_IFUNC and STT_OBJECT symbols with a name and a section,
 *    plus STT_NOTYPE "labels" (not hidden, not internal, not absolute) that sit in a
 *    section whose name contains "text" or "data"; the section must be SHF_ALLOC;
 *  - the symbol file's .symtab is read first, then its .dynsym (perf 6.1 reads both);
 *    after each pass zero-size symbols end where the next one starts and symbols at
 *    one address are reduced to one by choose_best_symbol (in elfsyms.c, when a lookup
 *    first lands there: the same choice, over all of them in the order perf reads them);
 *  - "NAME@plt" symbols are made for the .plt entries of the runtime file after that.
 *
 * Addresses are link-time virtual addresses (perf keeps file offsets; the order and
 * the choices are the same).
 */
#include "symbolize/elfsyms_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/locate.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* ------------------------------------------------------------------ one ELF file */

struct sec_info {
	uint64_t addr, offset, size, entsize, flags;
	uint32_t type, link;
	const char *name;
};

struct elf_file {
	int fd;
	struct stat st;   /* as opened */
	Elf *elf;
	GElf_Ehdr ehdr;
	struct sec_info *secs;
	size_t nsecs;
	char *path;
};

static void ef_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->secs);
	free(f->path);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

/* The headers and sections of f->elf, opened: 0, else -2 (f left open). */
static int ef_parse(struct elf_file *f)
{
	size_t shstrndx, i;
	Elf_Scn *scn = NULL;

	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &f->ehdr))
		goto bad;
	if (elf_getshdrnum(f->elf, &f->nsecs) != 0)
		goto bad;
	if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
		shstrndx = 0;
	f->secs = calloc(f->nsecs ? f->nsecs : 1, sizeof(*f->secs));
	if (!f->secs)
		goto bad;
	for (i = 0; i < f->nsecs; i++) {
		GElf_Shdr sh;
		const char *name = NULL;

		scn = elf_getscn(f->elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		if (shstrndx)
			name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		f->secs[i] = (struct sec_info){ .addr = sh.sh_addr, .offset = sh.sh_offset,
						.size = sh.sh_size, .entsize = sh.sh_entsize,
						.flags = sh.sh_flags, .type = sh.sh_type,
						.link = sh.sh_link, .name = name ? name : "" };
	}
	return 0;
bad:
	return -2;
}

/* ef_parse(), `f` closed when it fails. */
static int ef_read(struct elf_file *f)
{
	if (ef_parse(f) == 0)
		return 0;
	ef_close(f);
	return -2;
}

static int ef_changed(const struct elf_file *f);

/*
 * 0 on success, -1 when there is no regular file, -2 when it is not a readable ELF file,
 * -3 when it could not be read as one because it changed meanwhile.
 * Opened without waiting (a FIFO swapped in after a look at the name would block a
 * plain open for good); a file another user can write is read section by section
 * (ELF_C_READ: pread into memory), not mapped: cut short meanwhile, a mapped page past
 * its new end is SIGBUS, a read is only short.
 */
static int ef_open(struct elf_file *f, const char *path)
{
	const char *why;
	int r;

	memset(f, 0, sizeof(*f));
	f->fd = file_open_regular(path, &f->st, &why);
	if (f->fd < 0) {
		f->fd = -1;
		return -1;
	}
	f->path = xstrdup(path);
	f->elf = elf_begin(f->fd, file_is_steady(&f->st) ? ELF_C_READ_MMAP : ELF_C_READ, NULL);
	if (ef_parse(f) == 0)
		return 0;
	r = ef_changed(f) ? -3 : -2;
	ef_close(f);
	return r;
}

/* Whether the file `f` was opened from has changed since (size, modification time):
 * what was read of it may be half of each. A file read from memory has not. */
static int ef_changed(const struct elf_file *f)
{
	struct stat now;

	if (f->fd < 0)
		return 0;
	return fstat(f->fd, &now) != 0 || now.st_size != f->st.st_size ||
	       now.st_mtim.tv_sec != f->st.st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec;
}

/* Index of the first section called `name` (of type `type` unless 0), or 0. */
static size_t ef_section(const struct elf_file *f, const char *name, uint32_t type)
{
	size_t i;

	for (i = 1; i < f->nsecs; i++)
		if (!strcmp(f->secs[i].name, name) && (!type || f->secs[i].type == type))
			return i;
	return 0;
}

static Elf_Data *ef_data(const struct elf_file *f, size_t idx)
{
	Elf_Scn *scn;

	if (idx == 0 || idx >= f->nsecs || f->secs[idx].type == SHT_NOBITS)
		return NULL;
	scn = elf_getscn(f->elf, idx);
	return scn ? elf_getdata(scn, NULL) : NULL;
}

/* What MiniDebugInfo may inflate to (a bomb is refused), and what the xz decoder may
 * use (xz -9's 64 MiB dictionary needs 65) */
#define DEBUGDATA_MAX ((size_t)64 << 20)
#define DEBUGDATA_DECODER_MAX ((uint64_t)96 << 20)

/*
 * MiniDebugInfo: Fedora, RHEL and their kin strip their binaries but keep, in an
 * xz-compressed ELF in .gnu_debugdata, a .symtab of the functions .dynsym does not
 * name (perf reads it). That ELF opened from memory in `f`, its bytes in *buf for the
 * caller to free after ef_close(f): 1, else 0.
 */
static int ef_open_debugdata(struct elf_file *f, const struct elf_file *mf, void **buf)
{
	size_t idx = ef_section(mf, ".gnu_debugdata", SHT_PROGBITS), cap = 0;
	Elf_Data *d = idx ? ef_data(mf, idx) : NULL;
	lzma_stream z = LZMA_STREAM_INIT;
	uint8_t *out = NULL;
	lzma_ret r = LZMA_OK;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	*buf = NULL;
	if (!d || !d->d_buf || d->d_size == 0 || d->d_size > DEBUGDATA_MAX ||
	    lzma_stream_decoder(&z, DEBUGDATA_DECODER_MAX, 0) != LZMA_OK)
		return 0;
	z.next_in = d->d_buf;
	z.avail_in = d->d_size;
	while (r == LZMA_OK) {
		if (z.avail_out == 0) {
			size_t used = (size_t)z.total_out;

			if (cap >= DEBUGDATA_MAX)
				break;
			cap = cap ? 2 * cap : 4 * d->d_size + 4096;
			cap = cap < DEBUGDATA_MAX ? cap : DEBUGDATA_MAX;
			out = xrealloc(out, cap);
			z.next_out = out + used;
			z.avail_out = cap - used;
		}
		r = lzma_code(&z, LZMA_FINISH);
	}
	lzma_end(&z);
	if (r != LZMA_STREAM_END) {
		free(out);
		return 0;
	}
	f->elf = elf_memory((char *)out, (size_t)z.total_out);
	f->path = xstrdup(mf->path);
	if (ef_read(f) != 0) {
		free(out);
		return 0;
	}
	*buf = out;
	return 1;
}

static size_t ef_build_id(const struct elf_file *f, uint8_t *out, size_t cap)
{
	size_t i;

	for (i = 1; i < f->nsecs; i++) {
		Elf_Data *d;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (f->secs[i].type != SHT_NOTE)
			continue;
		d = ef_data(f, i);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz > 0) {
				size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;

				memcpy(out, (const char *)d->d_buf + doff, n);
				return n;
			}
		}
	}
	return 0;
}

/* Build ids are equal when their common part is and the longer one is zero beyond it. */
static int build_id_equal(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	size_t i, n = na < nb ? na : nb;

	if (na == 0 || nb == 0)
		return 0;
	if (memcmp(a, b, n))
		return 0;
	for (i = n; i < na; i++)
		if (a[i])
			return 0;
	for (i = n; i < nb; i++)
		if (b[i])
			return 0;
	return 1;
}

static int ef_has_symtab(const struct elf_file *f)
{
	return ef_section(f, ".symtab", SHT_SYMTAB) != 0;
}

/* DWARF in the file itself (compressed with SHF_COMPRESSED, or GNU's .zdebug) */
static int ef_has_dwarf(const struct elf_file *f)
{
	size_t i = ef_section(f, ".debug_info", 0);

	if (!i)
		i = ef_section(f, ".zdebug_info", 0);
	return i && f->secs[i].type != SHT_NOBITS;
}

/* ------------------------------------------------------------------ candidate symbols */

struct rawsym {
	uint64_t start, end;
	const char *name; /* borrowed from the ELF data */
	uint32_t seq;     /* insertion order: perf's tree keeps equal starts in this order */
	uint8_t bind;
	uint8_t plt;      /* name gets "@plt" appended */
};

struct symvec {
	struct rawsym *v;
	size_t n, cap;
	size_t sorted;    /* v[0 .. sorted) is in rawsym order */
	uint32_t seq;
};

static void symvec_push(struct symvec *s, struct rawsym r)
{
	s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
	r.seq = s->seq++;
	s->v[s->n++] = r;
}

static inline int rawsym_before(const struct rawsym *a, const struct rawsym *b)
{
	return a->start != b->start ? a->start < b->start : a->seq < b->seq;
}

/* Merge the sorted runs v[0 .. mid) and v[mid .. n) through `tmp` (room for mid). */
static void merge_runs(struct rawsym *v, size_t mid, size_t n, struct rawsym *tmp)
{
	size_t i = 0, j = mid, k = 0;

	if (mid == 0 || mid == n || !rawsym_before(&v[mid], &v[mid - 1]))
		return;
	memcpy(tmp, v, mid * sizeof(*v));
	while (i < mid && j < n)
		v[k++] = rawsym_before(&v[j], &tmp[i]) ? v[j++] : tmp[i++];
	memcpy(v + k, tmp + i, (mid - i) * sizeof(*v));
}

/*
 * Sort symbols that were pushed in seq order by (start, seq): a stable sort of their
 * starts. qsort, calling through a pointer and sorting 40-byte elements indirectly,
 * was most of the time it took to load libc's symbols.
 */
static void sort_syms(struct rawsym *v, size_t n, struct rawsym *tmp)
{
	struct sort_pair *keys = xmalloc(2 * n * sizeof(*keys));

	for (size_t i = 0; i < n; i++)
		keys[i] = (struct sort_pair){ v[i].start, i };
	sort_pairs(keys, keys + n, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[keys[i].val];
	memcpy(v, tmp, n * sizeof(*v));
	free(keys);
}

/* Bring the whole vector into order: the part added since the last sort is sorted
 * and merged into the part that already was. */
static void symvec_sort(struct symvec *s)
{
	struct rawsym *tmp;

	if (s->sorted >= s->n)
		return;
	/* the new part was pushed in seq order, as the radix sort needs */
	tmp = xmalloc((s->n - s->sorted > s->sorted ? s->n - s->sorted : s->sorted) *
		      sizeof(*tmp));
	sort_syms(s->v + s->sorted, s->n - s->sorted, tmp);
	merge_runs(s->v, s->sorted, s->n, tmp);
	free(tmp);
	s->sorted = s->n;
}

static int strcontains(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

/*
 * Read one symbol table of `sf` (`symidx` is .symtab or .dynsym). `rf` is the runtime
 * file: section names of NOBITS sections in a debug file are taken from it, as perf does.
 */
static void collect_symbols(struct symvec *out, const struct elf_file *sf, size_t symidx,
			    const struct elf_file *rf)
{
	const struct sec_info *symsec = &sf->secs[symidx];
	Elf_Data *syms = ef_data(sf, symidx), *strs;
	size_t nsyms, i;
	int arm = sf->ehdr.e_machine == EM_ARM || sf->ehdr.e_machine == EM_AARCH64;
	int rel = sf->ehdr.e_type == ET_REL;

	if (!syms || symsec->entsize == 0 || symsec->link >= sf->nsecs)
		return;
	strs = ef_data(sf, symsec->link);
	if (!strs || strs->d_size == 0)
		return;
	nsyms = symsec->size / symsec->entsize;
	for (i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		const struct sec_info *sec;
		const char *name;
		int type, vis, is_label;
		uint64_t value;

		if (!gelf_getsym(syms, (int)i, &sym))
			break;
		if (sym.st_name == 0 || sym.st_name >= strs->d_size || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		vis = GELF_ST_VISIBILITY(sym.st_other);
		is_label = type == STT_NOTYPE && sym.st_shndx != SHN_ABS && vis != STV_HIDDEN &&
			   vis != STV_INTERNAL;
		if (!is_label && type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
			continue;
		name = (const char *)strs->d_buf + sym.st_name;
		if (!memchr(name, 0, strs->d_size - sym.st_name))
			continue;
		/* ARM mapping symbols ($a, $d, $t, $x) name no function. */
		if (arm && name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
		    (name[2] == 0 || name[2] == '.'))
			continue;
		/* Absolute, common and extended-index symbols have no section perf can read. */
		if (sym.st_shndx >= SHN_LORESERVE || sym.st_shndx >= sf->nsecs)
			continue;
		sec = &sf->secs[sym.st_shndx];
		if (!(sec->flags & SHF_ALLOC))
			continue;
		if (sec->type == SHT_NOBITS && rf && sym.st_shndx < rf->nsecs)
			sec = &rf->secs[sym.st_shndx];
		if (is_label && !strcontains(sec->name, "text") && !strcontains(sec->name, "data"))
			continue;
		value = sym.st_value;
		if (sf->ehdr.e_machine == EM_ARM && type == STT_FUNC && (value & 1))
			value--;
		if (rel)
			value += sec->offset; /* a .ko: file offsets, as perf keeps them */
		symvec_push(out, (struct rawsym){ .start = value,
						  .end = sym.st_size ? value + sym.st_size : value,
						  .name = name,
						  .bind = (uint8_t)GELF_ST_BIND(sym.st_info) });
	}
}

/* Sort, end zero-size symbols where the next one starts. Symbols at one address are
 * all kept: the one perf keeps is chosen at lookup (slot_choose). */
static void fixup(struct symvec *s)
{
	size_t i;

	if (s->n == 0)
		return;
	symvec_sort(s);
	for (i = 1; i < s->n; i++)
		if (s->v[i - 1].end == s->v[i - 1].start)
			s->v[i - 1].end = s->v[i].start;
	if (s->v[s->n - 1].end == s->v[s->n - 1].start)
		s->v[s->n - 1].end = ((s->v[s->n - 1].start + 4095) & ~(uint64_t)4095) + 4096;
}

/*
 * The .plt entries of the runtime file, named after the .dynsym symbol of their
 * relocation, as perf 6.1 does: the first entry is the PLT header, entries follow
 * in relocation order, each sh_entsize bytes.
 */
static void collect_plt(struct symvec *out, const struct elf_file *f)
{
	size_t dynidx = ef_section(f, ".dynsym", SHT_DYNSYM);
	size_t relidx = ef_section(f, ".rela.plt", 0), pltidx = ef_section(f, ".plt", 0);
	const struct sec_info *rs, *ps, *ds;
	Elf_Data *rel, *syms, *strs;
	uint64_t hdr, ent, addr;
	size_t n, i;

	if (!relidx)
		relidx = ef_section(f, ".rel.plt", 0);
	if (!dynidx || !relidx || !pltidx)
		return;
	rs = &f->secs[relidx];
	ps = &f->secs[pltidx];
	ds = &f->secs[dynidx];
	if (rs->link != dynidx || rs->entsize == 0 || ds->link >= f->nsecs)
		return;
	if (rs->type != SHT_RELA && rs->type != SHT_REL)
		return;
	rel = ef_data(f, relidx);
	syms = ef_data(f, dynidx);
	strs = ef_data(f, ds->link);
	if (!rel || !syms || !strs || strs->d_size == 0)
		return;
	switch (f->ehdr.e_machine) {
	case EM_ARM:
		hdr = 20, ent = 12;
		break;
	case EM_AARCH64:
		hdr = 32, ent = 16;
		break;
	case EM_SPARCV9:
		hdr = 128, ent = 32;
		break;
	default:
		hdr = ent = ps->entsize;
		break;
	}
	if (ent == 0)
		return;
	/*
	 * A symbol before .plt (_init) that fixup() stretched over it is cut at .plt, as
	 * later perf versions do explicitly; perf 6.1's tree search mostly gives the same.
	 */
	for (i = 0; i < out->n; i++)
		if (out->v[i].start < ps->addr && out->v[i].end > ps->addr)
			out->v[i].end = ps->addr;
	n = rs->size / rs->entsize;
	addr = ps->addr + hdr;
	for (i = 0; i < n; i++, addr += ent) {
		GElf_Sym sym;
		uint64_t info;
		const char *name = "";

		if (rs->type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(rel, (int)i, &r))
				break;
			info = r.r_info;
		} else {
			GElf_Rel r;

			if (!gelf_getrel(rel, (int)i, &r))
				break;
			info = r.r_info;
		}
		if (gelf_getsym(syms, (int)GELF_R_SYM(info), &sym) && sym.st_name < strs->d_size &&
		    memchr((const char *)strs->d_buf + sym.st_name, 0, strs->d_size - sym.st_name))
			name = (const char *)strs->d_buf + sym.st_name;
		symvec_push(out, (struct rawsym){ .start = addr, .end = addr + ent, .name = name,
						  .bind = STB_GLOBAL, .plt = 1 });
	}
}

/* ------------------------------------------------------------------ finding files */

/* The CRC of the file open on `fd` (the one judged, not its name opened again). */
static uint32_t debuglink_crc_of_file(int fd, int *ok)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t r;
	off_t off = 0;

	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)r);
		off += r;
	}
	*ok = r == 0;
	return (uint32_t)crc;
}

/*
 * Open `path` as a debug file for the object: it must have a .symtab and, when
 * `want` is known, the same build id; without one, the debuglink CRC must match.
 */
static int try_debug_file(struct elf_file *df, const char *path, const uint8_t *want,
			  size_t nwant, int check_crc, uint32_t crc)
{
	if (ef_open(df, path) != 0)
		return 0;
	if (!ef_has_symtab(df))
		goto no;
	if (nwant) {
		uint8_t id[BUILD_ID_MAX];
		size_t n = ef_build_id(df, id, sizeof(id));

		if (!build_id_equal(id, n, want, nwant))
			goto no;
	} else if (check_crc) {
		int ok;

		if (debuglink_crc_of_file(df->fd, &ok) != crc || !ok)
			goto no;
	}
	return 1;
no:
	ef_close(df);
	return 0;
}

/*
 * Find the separate debug file of `mf` (opened from `path`, below `sysroot` when not
 * NULL) at the places of locate's table, in its order: each must have a .symtab and
 * the build id `want`, or without one, the CRC its .gnu_debuglink gives.
 */
static int find_debug_file(struct elf_file *df, const struct elf_file *mf, const char *path,
			   const char *sysroot, const uint8_t *want, size_t nwant)
{
	size_t li = ef_section(mf, ".gnu_debuglink", 0);
	struct loc_query q = { .path = path, .build_id = want, .build_id_size = nwant,
			       .sysroot = sysroot };
	struct loc_list places;
	char *link = NULL;
	uint32_t crc = 0;
	int found = 0;

	if (li) {
		Elf_Data *d = ef_data(mf, li);
		const char *l = d ? d->d_buf : NULL;
		size_t len = l ? strnlen(l, d->d_size) : 0;

		if (l && len > 0 && len < d->d_size) {
			size_t crcoff = (len + 4) & ~(size_t)3;

			if (crcoff + 4 <= d->d_size)
				memcpy(&crc, (const char *)d->d_buf + crcoff, 4);
			if (mf->ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
				crc = __builtin_bswap32(crc);
			link = xstrndup(l, len);
		}
	}
	q.debuglink = link;
	locate_list(NULL, LOC_DEBUG, &q, &places);
	for (size_t i = 0; i < places.n && !found; i++) {
		const struct loc_candidate *c = &places.v[i];

		/* libdw's debuginfod is for DWARF (dwarfinfo); the debug file is never the
		 * object itself */
		if (!(c->flags & LOC_F_LIBDW) && strcmp(c->path, mf->path) != 0)
			found = try_debug_file(df, c->path, want, nwant, (c->flags & LOC_F_CRC) != 0, crc);
	}
	loc_list_release(&places);
	free(link);
	return found;
}

/* ------------------------------------------------------------------ the object */

static void read_segments(struct elf_obj *o, const struct elf_file *f)
{
	size_t n, i;

	if (elf_getphdrnum(f->elf, &n) != 0 || n == 0)
		return;
	o->segs = xmalloc(n * sizeof(*o->segs));
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* a separate debug file keeps the headers but not the bytes: such a
		 * segment cannot say where a file offset lies */
		if (ph.p_filesz == 0)
			continue;
		o->segs[o->nsegs++] = (struct load_seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
							 ph.p_memsz };
	}
}

static int has_version(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at != name && at[1] && strcmp(at, "@plt") != 0;
}

void elf_strip_version(char *name)
{
	if (name && has_version(name))
		*strchr(name, '@') = 0;
}

/*
 * 1 when `r` is a copy of one of the symbols o->syms[first .. n) of its slot (the
 * same end, binding and name: .dynsym repeats most of .symtab): perf's choice is the
 * same without it. Of symbols with equal keys choose_best_symbol keeps the one it
 * holds, unless that one's name starts with "SyS", which a name without "SyS" does
 * not, demangled or not. A few symbols back are looked at, not a slot's thousands.
 */
static int repeats(const struct elf_obj *o, size_t first, size_t n, const struct rawsym *r)
{
	if (strstr(r->name, "SyS"))
		return 0;
	for (size_t j = n; j > first && n - j < 64; j--)
		if (o->syms[j - 1].end == r->end && o->bind[j - 1] == r->bind &&
		    !strcmp(o->arena + o->raw[j - 1], r->name))
			return 1;
	return 0;
}

/*
 * Copy the symbols into one arena and build the lookup arrays: the symbols of one
 * address (a PLT entry alone) make a slot, and each slot's parent is the innermost
 * earlier one that may still cover its start.
 */
static void finish(struct elf_obj *o, struct symvec *s)
{
	size_t i, n = 0, bytes = 0, off = 0, nstack = 0, nslots = 0;
	uint32_t *raw, *stack;
	uint8_t *bind;
	struct sym_slot *slots;

	symvec_sort(s);
	for (i = 0; i < s->n; i++) {
		size_t len = strlen(s->v[i].name) + (s->v[i].plt ? 4 : 0) + 1;

		bytes += len;
		if (!s->v[i].plt && has_version(s->v[i].name))
			bytes += len;
	}
	o->arena = xmalloc(bytes);
	o->syms = xmalloc(s->n * sizeof(*o->syms));
	o->raw = raw = xmalloc(s->n * sizeof(*raw));
	o->bind = bind = xmalloc(s->n);
	slots = xmalloc(s->n * sizeof(*slots));
	stack = xmalloc(s->n * sizeof(*stack));
	for (i = 0; i < s->n; i++) {
		const struct rawsym *r = &s->v[i];
		size_t len = strlen(r->name);
		char *name = o->arena + off;
		int same_slot = nslots > 0 && !r->plt && !s->v[i - 1].plt &&
				r->start == o->syms[slots[nslots - 1].first].start;

		if (same_slot && repeats(o, slots[nslots - 1].first, n, r))
			continue;
		memcpy(name, r->name, len);
		if (r->plt) {
			memcpy(name + len, "@plt", 4);
			len += 4;
		}
		name[len] = 0;
		raw[n] = (uint32_t)off;
		bind[n] = r->bind;
		off += len + 1;
		o->syms[n] = (struct elf_sym){ r->start, r->end, name };
		if (!r->plt && has_version(name)) {
			char *stripped = o->arena + off;

			memcpy(stripped, name, len + 1);
			elf_strip_version(stripped);
			off += len + 1;
			o->syms[n].name = stripped;
		}
		n++;
		if (same_slot) {
			if (r->end > slots[nslots - 1].maxend)
				slots[nslots - 1].maxend = r->end;
			continue;
		}
		while (nstack > 0 && slots[stack[nstack - 1]].maxend <= r->start)
			nstack--;
		slots[nslots] = (struct sym_slot){ r->end, (uint32_t)(n - 1),
						   nstack ? stack[nstack - 1] : NO_PARENT };
		stack[nstack++] = (uint32_t)nslots++;
	}
	free(stack);
	o->nsyms = n;
	o->syms = xrealloc(o->syms, n * sizeof(*o->syms));
	o->slots = xrealloc(slots, nslots * sizeof(*slots));
	o->nslots = nslots;
	o->chosen = xcalloc(nslots, sizeof(*o->chosen));
	o->cmp_kept = xcalloc(1, sizeof(*o->cmp_kept));
}

static struct elf_obj *fail(struct elf_obj *o, enum elf_obj_status st)
{
	o->status = st;
	return o;
}

struct elf_obj *elf_obj_load(const char *path, const uint8_t *build_id, size_t build_id_size,
			     const char *sysroot)
{
	struct elf_obj *o = calloc(1, sizeof(*o));
	struct elf_file mf, df, xf, *sf, *rf;
	void *xbuf = NULL;
	struct symvec s = { 0 };
	const uint8_t *want = build_id_size ? build_id : NULL;
	size_t nwant = build_id ? build_id_size : 0, idx;
	char *full;
	int r;

	if (!o)
		abort();
	if (build_id_size > BUILD_ID_MAX)
		nwant = BUILD_ID_MAX;
	if (!path || !path[0])
		return fail(o, ELF_OBJ_MISSING);
	elf_version(EV_CURRENT);
	full = sysroot && sysroot[0] ? path_join(sysroot, path) : xstrdup(path);
	memset(&df, 0, sizeof(df));
	df.fd = -1;
	memset(&xf, 0, sizeof(xf));
	xf.fd = -1;
	r = ef_open(&mf, full);
	if (r == 0) {
		o->file = full;
		o->build_id_size = ef_build_id(&mf, o->build_id, sizeof(o->build_id));
		if (nwant && !build_id_equal(o->build_id, o->build_id_size, want, nwant)) {
			/* another build of the file: its debug file may still be installed */
			char *p;

			if (ef_changed(&mf)) { /* or the same, cut short while it was read */
				ef_close(&mf);
				return fail(o, ELF_OBJ_CHANGED);
			}
			p = locate_debug_build_id_path(sysroot, want, nwant);
			ef_close(&mf);
			if (!p || !try_debug_file(&mf, p, want, nwant, 0, 0)) {
				free(p);
				return fail(o, ELF_OBJ_MISMATCH);
			}
			free(o->file);
			o->file = p;
			o->debug_only = 1;
		}
	} else {
		char *p = locate_debug_build_id_path(sysroot, want, nwant);

		free(full);
		if (!p || !try_debug_file(&mf, p, want, nwant, 0, 0)) {
			free(p);
			return fail(o, r == -3 ? ELF_OBJ_CHANGED
				       : r == -2 ? ELF_OBJ_BAD_ELF : ELF_OBJ_MISSING);
		}
		o->file = p;
		o->debug_only = 1;
	}
	o->build_id_size = ef_build_id(&mf, o->build_id, sizeof(o->build_id));
	if (!nwant && o->build_id_size) {
		/* perf holds every candidate file to the object's own build id */
		want = o->build_id;
		nwant = o->build_id_size;
	}

	rf = &mf;
	sf = &mf;
	/* a file with no symbol table, or with one but no DWARF (strip --strip-debug, the
	 * split-debug builds: objcopy --only-keep-debug, then --add-gnu-debuglink): its
	 * debug file, where found, gives the symbols (perf reads a debug file's before the
	 * object's) and the lines and inlined calls */
	if ((!ef_has_symtab(&mf) || (!o->debug_only && !ef_has_dwarf(&mf))) &&
	    find_debug_file(&df, &mf, path, sysroot, want, nwant))
		sf = &df;
	/* else, with no symbol table, its MiniDebugInfo (with .dynsym, as perf) */
	if (sf == &mf && !ef_has_symtab(&mf) && ef_open_debugdata(&xf, &mf, &xbuf) &&
	    ef_has_symtab(&xf))
		sf = &xf;
	o->is_rel = rf->ehdr.e_type == ET_REL;
	read_segments(o, rf);
	o->symfile = xstrdup(sf->path);

	idx = ef_section(sf, ".symtab", SHT_SYMTAB);
	if (idx) {
		o->has_symtab = sf == &xf ? 2 : 1;
		collect_symbols(&s, sf, idx, rf);
		fixup(&s);
	}
	idx = ef_section(sf == &xf ? &mf : sf, ".dynsym", SHT_DYNSYM);
	if (idx) {
		collect_symbols(&s, sf == &xf ? &mf : sf, idx, rf);
		fixup(&s);
	}
	if (s.n > 0) /* perf adds PLT symbols only when the table loaded */
		collect_plt(&s, rf);
	if (ef_changed(&mf) || (sf == &df && ef_changed(&df)))
		o->status = ELF_OBJ_CHANGED;
	else if (s.n == 0)
		o->status = ELF_OBJ_STRIPPED;
	else
		finish(o, &s);
	free(s.v);
	ef_close(&xf);
	free(xbuf);
	ef_close(&df);
	ef_close(&mf);
	return o;
}
