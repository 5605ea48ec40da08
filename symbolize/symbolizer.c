/* symbolizer: native and kernel addresses to frames, finding the files they came from. */
#include "symbolizer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "../common/util.h"
#include "dwarfinfo.h"
#include "elfsyms.h"
#include "kallsyms.h"

#define MAX_DEMANGLED 64

struct obj_slot {
	int tried, dwarf_tried;
	enum sym_obj_problem problem;
	struct elf_obj *elf;
	struct dwarf_info *dwarf;
};

struct symbolizer {
	struct sym_options opt;
	struct diag *diag;
	struct obj_slot *objs;
	size_t nobjs;
	char *home_debug;
	char *demangled[MAX_DEMANGLED]; /* names demangled by the last call */
	size_t ndemangled;
	/* kernel */
	int kernel_tried;
	int kernel_thread;      /* a prefetch thread is loading it */
	pthread_t kernel_tid;
	uint8_t kernel_bid[64];
	size_t kernel_bid_size;
	char kernel_warning[512]; /* printed by the main thread, after the join */
	struct kallsyms *ksyms;
	char kernel_source[4608];
};

static void kernel_ready(struct symbolizer *s);

struct symbolizer *symbolizer_new(const struct sym_options *o, struct diag *d)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	const char *home = getenv("HOME");

	s->opt = *o;
	s->diag = d;
	dwarf_info_set_cache(o->cache_dir);
	if (o->buildid_dir) {
		s->home_debug = xstrdup(o->buildid_dir);
	} else if (home) {
		s->home_debug = xmalloc(strlen(home) + 8);
		sprintf(s->home_debug, "%s/.debug", home);
	}
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	kernel_ready(s);
	for (size_t i = 0; i < s->nobjs; i++) {
		elf_obj_free(s->objs[i].elf);
		dwarf_info_free(s->objs[i].dwarf);
	}
	free(s->objs);
	free(s->home_debug);
	for (size_t i = 0; i < s->ndemangled; i++)
		free(s->demangled[i]);
	kallsyms_free(s->ksyms);
	dwarf_info_set_cache(NULL);
	free(s);
}

const char *sym_obj_problem_str(enum sym_obj_problem p)
{
	switch (p) {
	case SYM_OBJ_FINE: return "loaded, but the addresses lie outside its symbols";
	case SYM_OBJ_MISSING: return "file not found";
	case SYM_OBJ_MISMATCH: return "build id differs from the recording's";
	case SYM_OBJ_STRIPPED: return "no symbols (stripped)";
	case SYM_OBJ_NOT_ELF: return "not a file";
	}
	return "?";
}

/* The kernel's vDSO: perf names it [vdso]; its image is not a file. */
static int is_vdso(const char *path)
{
	return strcmp(path, "[vdso]") == 0 || strncmp(path, "/tmp/perf-vdso.so-", 18) == 0;
}

static int is_pseudo_path(const char *path)
{
	/* [anon:...], [heap], [stack], //anon, /memfd:x (deleted), anon_inode:... */
	return path[0] != '/' || strncmp(path, "//", 2) == 0 || strncmp(path, "/memfd:", 7) == 0 ||
	       strstr(path, " (deleted)") != NULL;
}

static void hexify(char *out, const uint8_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = '\0';
}

/* How good a loaded candidate is: 3 full .symtab, 2 .dynsym only, 1 no symbols but
 * loadable (DWARF, perhaps from debuginfod, may still name its code), 0 unusable
 * (including a debug file found alone: its offsets cannot be translated). */
static int candidate_rank(const struct elf_obj *o)
{
	if (!elf_obj_has_segments(o))
		return 0;
	switch (elf_obj_status(o)) {
	case ELF_OBJ_OK: return elf_obj_has_symtab(o) ? 3 : 2;
	case ELF_OBJ_STRIPPED: return 1;
	default: return 0;
	}
}

/*
 * Try one candidate file; keeps it when it beats the best so far. Returns 1 when
 * the search can stop (a full symbol table).
 */
static int try_candidate(struct obj_slot *slot, int *best, const char *file, const uint8_t *bid,
			 size_t bidlen, const char *sysroot)
{
	struct elf_obj *o = elf_obj_load(file, bid, bidlen, sysroot);
	int rank = candidate_rank(o);

	if (elf_obj_status(o) == ELF_OBJ_MISMATCH && slot->problem == SYM_OBJ_MISSING)
		slot->problem = SYM_OBJ_MISMATCH;
	if (rank <= *best) {
		elf_obj_free(o);
		return 0;
	}
	elf_obj_free(slot->elf);
	slot->elf = o;
	*best = rank;
	slot->problem = rank >= 2 ? SYM_OBJ_FINE : SYM_OBJ_STRIPPED;
	return rank == 3;
}

static void find_object(struct symbolizer *s, struct obj_slot *slot, const char *path,
			const uint8_t *bid, size_t bidlen)
{
	char buf[4096], hex[2 * 20 + 1];
	int best = 0;

	slot->tried = 1;
	slot->problem = SYM_OBJ_MISSING;
	hexify(hex, bid, bidlen);
	if (is_vdso(path)) {
		/* perf's saved copy in its build-id cache, or one saved beside the recording */
		if (bidlen && s->home_debug) {
			snprintf(buf, sizeof(buf), "%s/[vdso]/%s/vdso", s->home_debug, hex);
			if (try_candidate(slot, &best, buf, bid, bidlen, NULL))
				return;
		}
		if (s->opt.symfs) {
			snprintf(buf, sizeof(buf), "%s/vdso.so", s->opt.symfs);
			if (try_candidate(slot, &best, buf, bid, bidlen, NULL))
				return;
		}
		if (s->opt.input_dir) {
			snprintf(buf, sizeof(buf), "%s/vdso.so", s->opt.input_dir);
			if (try_candidate(slot, &best, buf, bid, bidlen, NULL))
				return;
		}
		return;
	}
	if (is_pseudo_path(path)) {
		slot->problem = SYM_OBJ_NOT_ELF;
		return;
	}
	if (s->opt.symfs) {
		if (try_candidate(slot, &best, path, bid, bidlen, s->opt.symfs))
			return;
		snprintf(buf, sizeof(buf), "%s/%s", s->opt.symfs, path_base(path));
		if (try_candidate(slot, &best, buf, bid, bidlen, NULL))
			return;
	}
	if (try_candidate(slot, &best, path, bid, bidlen, NULL))
		return;
	if (s->opt.input_dir) {
		snprintf(buf, sizeof(buf), "%s/%s", s->opt.input_dir, path_base(path));
		if (try_candidate(slot, &best, buf, bid, bidlen, NULL))
			return;
	}
	if (bidlen && s->home_debug) {
		snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s/elf", s->home_debug, hex, hex + 2);
		if (try_candidate(slot, &best, buf, bid, bidlen, NULL))
			return;
	}
	if (!best && slot->problem == SYM_OBJ_MISMATCH)
		diag_warn(s->diag, path, DIAG_NO_OFFSET,
			  "only files with another build id were found: not used for symbols");
}

static struct obj_slot *slot_for(struct symbolizer *s, uint32_t obj)
{
	if (obj >= s->nobjs) {
		size_t n = s->nobjs ? s->nobjs : 16;

		while (n <= obj)
			n *= 2;
		s->objs = xrealloc(s->objs, n * sizeof(*s->objs));
		memset(s->objs + s->nobjs, 0, (n - s->nobjs) * sizeof(*s->objs));
		s->nobjs = n;
	}
	return &s->objs[obj];
}

char *sym_demangle(const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* as perf shows them: no parameter lists (the mangled name tells overloads apart) */
	return cplus_demangle(name, DMGL_AUTO);
}

static void forget_demangled(struct symbolizer *s)
{
	for (size_t i = 0; i < s->ndemangled; i++)
		free(s->demangled[i]);
	s->ndemangled = 0;
}

/* The demangled form of a C++ or Rust name; valid until the next symbolizer call. */
static const char *demangle(struct symbolizer *s, const char *name)
{
	char *d;

	if (!s->opt.demangle || s->ndemangled >= MAX_DEMANGLED)
		return name;
	d = sym_demangle(name);
	if (!d)
		return name;
	s->demangled[s->ndemangled++] = d;
	return d;
}

size_t symbolizer_native(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
			 struct sym_frame *out, size_t cap)
{
	struct obj_slot *slot = slot_for(s, obj);
	struct dwarf_frame df[64];
	const struct elf_sym *sym;
	uint64_t vaddr, line_vaddr;
	size_t nd = 0, n = 0;

	forget_demangled(s);
	if (!slot->tried)
		find_object(s, slot, path, build_id, build_id_size);
	if (!slot->elf || !cap)
		return 0;
	if (elf_obj_offset_to_vaddr(slot->elf, offset, &vaddr) != 0)
		return 0;
	sym = elf_obj_status(slot->elf) == ELF_OBJ_OK ? elf_obj_lookup(slot->elf, vaddr) : NULL;
	line_vaddr = vaddr;
	if (ret && vaddr > 0 && (!sym || vaddr - 1 >= sym->start))
		line_vaddr = vaddr - 1;
	if (!slot->dwarf_tried) {
		slot->dwarf_tried = 1;
		const char *file = elf_obj_file(slot->elf), *symfile = elf_obj_symbol_file(slot->elf);

		slot->dwarf = dwarf_info_open(file, symfile && strcmp(symfile, file) ? symfile : NULL);
	}
	if (slot->dwarf)
		nd = dwarf_info_frames(slot->dwarf, line_vaddr, df, sizeof(df) / sizeof(df[0]));
	if (!sym && (nd == 0 || !df[nd - 1].name))
		return 0;
	/* inlined callees first, as DWARF names them */
	if (s->opt.inline_frames)
		for (size_t i = 0; i + 1 < nd && n + 1 < cap; i++) {
			if (!df[i].name)
				continue;
			out[n].system_name = df[i].name;
			out[n].name = demangle(s, df[i].name);
			out[n].file = df[i].file;
			out[n].line = df[i].line;
			out[n].column = df[i].column;
			out[n].inlined = 1;
			n++;
		}
	/* the function itself: the symbol table's name, so that it is the name perf shows */
	memset(&out[n], 0, sizeof(out[n]));
	out[n].system_name = sym ? sym->name : df[nd - 1].name;
	out[n].name = demangle(s, out[n].system_name);
	if (nd) {
		out[n].file = df[nd - 1].file;
		out[n].line = df[nd - 1].line;
		out[n].column = df[nd - 1].column;
	}
	return n + 1;
}

enum sym_obj_problem symbolizer_problem(const struct symbolizer *s, uint32_t obj)
{
	if (obj >= s->nobjs || !s->objs[obj].tried)
		return SYM_OBJ_FINE;
	return s->objs[obj].problem;
}

/*
 * Kernel symbols from the kallsyms file `path`: through the cache when the kernel's
 * build id is known (a parsed table mapped, made on first use), else parsed.
 */
static struct kallsyms *load_kallsyms(struct symbolizer *s, const char *path,
				      const uint8_t *bid, size_t bidlen, char *err,
				      size_t errlen)
{
	struct kallsyms_source src;
	struct kallsyms *k;
	char dir[4096], file[4096 + 48], hex[2 * 20 + 1];

	if (!s->opt.cache_dir || !bidlen || bidlen > 20 || kallsyms_source_of(path, &src) != 0)
		return kallsyms_load(path, err, errlen);
	hexify(hex, bid, bidlen);
	snprintf(dir, sizeof(dir), "%s/kallsyms", s->opt.cache_dir);
	snprintf(file, sizeof(file), "%s/%s", dir, hex);
	k = kallsyms_cache_open(file, path, &src, bid, bidlen);
	if (k)
		return k;
	k = kallsyms_load(path, err, errlen);
	if (k && make_dirs(dir) == 0)
		kallsyms_cache_write(k, file, path, &src, bid, bidlen);
	return k;
}

/* Runs on the prefetch thread or the main one: touches only the kernel fields. */
static void load_kernel(struct symbolizer *s, const uint8_t *bid, size_t bidlen)
{
	char err[256];

	if (s->opt.kallsyms) {
		s->ksyms = load_kallsyms(s, s->opt.kallsyms, bid, bidlen, err, sizeof(err));
		if (!s->ksyms) {
			snprintf(s->kernel_warning, sizeof(s->kernel_warning), "%s", err);
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s: %s",
				 s->opt.kallsyms, err);
		} else {
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s", s->opt.kallsyms);
		}
		return;
	}
	if (bidlen && s->home_debug) {
		/* perf record keeps a copy of the recorded kernel's kallsyms in its cache */
		char hex[2 * 20 + 1], path[4096];

		hexify(hex, bid, bidlen);
		snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", s->home_debug, hex);
		s->ksyms = load_kallsyms(s, path, bid, bidlen, err, sizeof(err));
		if (s->ksyms) {
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s", path);
			return;
		}
	}
	if (bidlen) {
		uint8_t live[64];
		size_t n = kernel_live_build_id(live, sizeof(live));

		if (n != bidlen || memcmp(live, bid, n) != 0) {
			snprintf(s->kernel_source, sizeof(s->kernel_source),
				 "the running kernel is not the recorded one: give --kallsyms");
			return;
		}
	}
	s->ksyms = kallsyms_load("/proc/kallsyms", err, sizeof(err));
	if (s->ksyms)
		snprintf(s->kernel_source, sizeof(s->kernel_source), "/proc/kallsyms");
	else
		snprintf(s->kernel_source, sizeof(s->kernel_source), "/proc/kallsyms: %s", err);
}

static void *kernel_thread_main(void *arg)
{
	struct symbolizer *s = arg;

	load_kernel(s, s->kernel_bid, s->kernel_bid_size);
	return NULL;
}

void symbolizer_kernel_prefetch(struct symbolizer *s, const uint8_t *build_id,
				size_t build_id_size)
{
	if (s->kernel_tried || build_id_size > sizeof(s->kernel_bid))
		return;
	s->kernel_tried = 1;
	if (build_id_size)
		memcpy(s->kernel_bid, build_id, build_id_size);
	s->kernel_bid_size = build_id_size;
	if (pthread_create(&s->kernel_tid, NULL, kernel_thread_main, s) == 0)
		s->kernel_thread = 1;
	else
		load_kernel(s, s->kernel_bid, s->kernel_bid_size);
}

/* Wait for the prefetch thread, once, and report what it could not do. */
static void kernel_ready(struct symbolizer *s)
{
	if (s->kernel_thread) {
		pthread_join(s->kernel_tid, NULL);
		s->kernel_thread = 0;
	}
	if (s->kernel_warning[0]) {
		diag_warn(s->diag, s->opt.kallsyms, DIAG_NO_OFFSET, "%s", s->kernel_warning);
		s->kernel_warning[0] = 0;
	}
}

int symbolizer_kernel(struct symbolizer *s, uint64_t addr, const uint8_t *build_id,
		      size_t build_id_size, struct sym_frame *out, const char **module)
{
	struct ksym k;

	if (!s->kernel_tried) {
		s->kernel_tried = 1;
		load_kernel(s, build_id, build_id_size);
	}
	kernel_ready(s);
	if (!s->ksyms)
		return 0;
	if (!kallsyms_lookup(s->ksyms, addr, &k))
		return 0;
	memset(out, 0, sizeof(*out));
	out->name = out->system_name = k.name;
	if (module)
		*module = k.module;
	return 1;
}

const char *symbolizer_kernel_source(struct symbolizer *s)
{
	kernel_ready(s);
	return s->kernel_source[0] ? s->kernel_source : NULL;
}
