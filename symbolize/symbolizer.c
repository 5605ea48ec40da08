/* symbolizer: native addresses to frames, finding and checking the files they came from. */
#include "symbolize/symbolizer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/demangle.h"
#include "common/later.h"

/* Remember "WHAT\tWHY" in `v` (under damaged_lock) unless it is there: 1 when new. */
static int remember(struct symbolizer *s, char ***v, size_t *n, size_t *cap, const char *what,
		    const char *why)
{
	size_t len = strlen(what);

	for (size_t i = 0; i < *n; i++)
		if (strncmp((*v)[i], what, len) == 0 && (*v)[i][len] == '\t' &&
		    strcmp((*v)[i] + len + 1, why) == 0)
			return 0;
	VEC_PUSH(*v, *n, *cap, xasprintf("%s\t%s", what, why));
	atomic_store(&s->damaged_new, 1);
	return 1;
}

/* cache_ctx's `damaged`: runs on either thread. */
static void queue_damaged(void *arg, const char *entry, const char *why)
{
	struct symbolizer *s = arg;
	size_t len = strlen(entry);

	pthread_mutex_lock(&s->damaged_lock);
	for (size_t i = 0; i < s->ndamaged; i++)
		if (strncmp(s->damaged[i], entry, len) == 0 && s->damaged[i][len] == '\t') {
			pthread_mutex_unlock(&s->damaged_lock);
			return;
		}
	remember(s, &s->damaged, &s->ndamaged, &s->damaged_cap, entry, why);
	pthread_mutex_unlock(&s->damaged_lock);
}

/* cache_ctx's `problem` (a folder refused, a full filesystem): runs on either thread;
 * each said once. */
static void queue_problem(void *arg, const char *folder, const char *why)
{
	struct symbolizer *s = arg;

	pthread_mutex_lock(&s->damaged_lock);
	remember(s, &s->problems, &s->nproblems, &s->problems_cap, folder, why);
	pthread_mutex_unlock(&s->damaged_lock);
}

/* A warning about the file `file` met on either thread, said by the main one (once):
 * kept with the damaged entries, marked by a first byte \1. */
static void queue_warning(struct symbolizer *s, const char *file, const char *what)
{
	char *key = xasprintf("\1%s", file);

	queue_damaged(s, key, what);
	free(key);
}

void sym_say_damaged(struct symbolizer *s)
{
	if (!atomic_exchange(&s->damaged_new, 0))
		return;
	pthread_mutex_lock(&s->damaged_lock);
	for (; s->problems_said < s->nproblems; s->problems_said++) {
		char *e = s->problems[s->problems_said], *tab = strchr(e, '\t');

		*tab = 0;
		diag_warn(s->diag, e, DIAG_NO_OFFSET, "%s", tab + 1);
		*tab = '\t';
	}
	for (; s->damaged_said < s->ndamaged; s->damaged_said++) {
		char *e = s->damaged[s->damaged_said], *tab = strchr(e, '\t');

		*tab = 0;
		if (e[0] == '\1')
			diag_warn(s->diag, e + 1, DIAG_NO_OFFSET, "%s", tab + 1);
		else
			diag_warn(s->diag, e, DIAG_NO_OFFSET,
				  "damaged cache entry (%s): not used, made again", tab + 1);
		*tab = '\t';
	}
	pthread_mutex_unlock(&s->damaged_lock);
}

struct symbolizer *symbolizer_new(const struct sym_options *o, struct diag *d)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	const char *home = getenv("HOME");

	s->opt = *o;
	s->diag = d;
	pthread_mutex_init(&s->objs_lock, NULL);
	pthread_mutex_init(&s->queue_lock, NULL);
	pthread_cond_init(&s->queue_cond, NULL);
	pthread_cond_init(&s->kernel_cond, NULL);
	if (o->buildid_dir) {
		s->home_debug = xstrdup(o->buildid_dir);
	} else if (home) {
		s->home_debug = xmalloc(strlen(home) + 8);
		sprintf(s->home_debug, "%s/.debug", home);
	}
	s->places.symfs = o->symfs;
	s->places.input_dir = o->input_dir;
	s->places.buildid_dir = s->home_debug;
	s->places.kallsyms = o->kallsyms;
	s->cache.later = later_new();
	s->cache.damaged = queue_damaged;
	s->cache.problem = queue_problem;
	s->cache.arg = s;
	s->cache.max_size = o->cache_size;
	pthread_mutex_init(&s->damaged_lock, NULL);
	/* a folder another user owns, or a link: said, and no cache this run */
	if (o->cache_dir && o->cache_dir[0] && cache_dir_usable(&s->cache, o->cache_dir) != 0)
		s->opt.cache_dir = NULL;
	s->cache.dir = s->opt.cache_dir;
	return s;
}

void symbolizer_quiesce(struct symbolizer *s)
{
	if (!s)
		return;
	sym_kernel_ready(s);
	symbolizer_prefetch_stop(s);
	/* no lookup comes after: what this run's DWARF lookups learnt is kept */
	for (size_t i = 0; i < s->nobjs + s->npreloads; i++) {
		struct obj_slot *slot = i < s->nobjs ? s->objs[i] : s->preloads[i - s->nobjs];

		if (slot)
			frame_cache_save(slot->fc);
	}
	sym_say_damaged(s);
}

void symbolizer_wait_writes(struct symbolizer *s)
{
	if (s)
		later_wait(s->cache.later);
}

const struct cache_ctx *symbolizer_cache(const struct symbolizer *s)
{
	return &s->cache;
}

void symbolizer_embedded(struct symbolizer *s, const struct sp_info *si)
{
	sp_syms_free(s->embedded);
	s->embedded = sp_syms_new(si, s->opt.demangle);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	symbolizer_quiesce(s);
	sp_syms_free(s->embedded);
	/* the entries still being written may have something to say of the cache */
	later_wait(s->cache.later);
	for (size_t i = 0; i < s->ndamaged; i++)
		free(s->damaged[i]);
	free(s->damaged);
	for (size_t i = 0; i < s->nproblems; i++)
		free(s->problems[i]);
	free(s->problems);
	pthread_mutex_destroy(&s->damaged_lock);
	for (size_t i = 0; i < s->nobjs + s->npreloads; i++) {
		struct obj_slot *slot = i < s->nobjs ? s->objs[i] : s->preloads[i - s->nobjs];

		if (!slot || (i < s->nobjs && slot->preload_path))
			continue; /* a preloaded slot is freed from the preload list */
		elf_obj_free(slot->elf);
		dwarf_info_free(slot->dwarf);
		frame_cache_free(slot->fc);
		u64map_release(&slot->done);
		u64map_release(&slot->demangled);
		free(slot->results);
		free(slot->frames);
		strtab_release(&slot->names);
		pthread_mutex_destroy(&slot->lock);
		free(slot);
	}
	free(s->objs);
	free(s->preloads);
	free(s->fids);
	free(s->has_fid);
	free(s->home_debug);
	free(s->queue);
	free(s->objq);
	pthread_mutex_destroy(&s->objs_lock);
	pthread_mutex_destroy(&s->queue_lock);
	pthread_cond_destroy(&s->queue_cond);
	pthread_cond_destroy(&s->kernel_cond);
	kallsyms_free(s->ksyms); /* waits for an entry written from it */
	later_free(s->cache.later); /* waits for the others */
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
static int try_candidate(struct symbolizer *s, struct obj_slot *slot, int *best,
			 const struct loc_candidate *c, const uint8_t *bid, size_t bidlen,
			 int *taken)
{
	struct elf_obj *o = elf_obj_load_cached(c->path + c->under, bid, bidlen, c->sysroot,
						&s->cache);
	int rank = candidate_rank(o);

	if (slot->trace && slot->trace->ntried < SYM_LOCATION_TRIED) {
		struct sym_tried *t = &slot->trace->tried[slot->trace->ntried++];

		snprintf(t->path, sizeof(t->path), "%s", c->path);
		t->result = rank == 3 && elf_obj_minidebug(o) ? "functions' symbols from .gnu_debugdata (MiniDebugInfo)"
			  : rank == 3 ? "full symbol table" : rank == 2 ? "exported symbols only (.dynsym)"
			  : rank == 1 ? "no symbols (stripped)"
			  : elf_obj_status(o) == ELF_OBJ_OK || elf_obj_status(o) == ELF_OBJ_STRIPPED
			  ? "debug file only (no code)" : elf_obj_status_str(elf_obj_status(o));
	}

	if (elf_obj_status(o) == ELF_OBJ_MISMATCH && slot->problem == SYM_OBJ_MISSING)
		slot->problem = SYM_OBJ_MISMATCH;
	if (elf_obj_status(o) == ELF_OBJ_CHANGED)
		queue_warning(s, c->path, elf_obj_status_str(ELF_OBJ_CHANGED));
	if (rank <= *best) {
		elf_obj_free(o);
		return 0;
	}
	if (slot->trace && slot->trace->ntried)
		slot->trace->symbols = slot->trace->tried[slot->trace->ntried - 1].result;
	elf_obj_free(slot->elf);
	slot->elf = o;
	*taken = 1;
	*best = rank;
	slot->problem = rank >= 2 ? SYM_OBJ_FINE : SYM_OBJ_STRIPPED;
	return rank == 3;
}

/* Whether the file at `path` is the one the recording names by device and inode. */
static int same_file(const char *path, const struct sym_file_id *id)
{
	struct stat st;
	unsigned v;
	int fd, same;

	if (stat(path, &st) != 0 || major(st.st_dev) != id->maj || minor(st.st_dev) != id->min ||
	    (uint64_t)st.st_ino != id->ino)
		return 0;
	if (!id->generation)
		return 1;
	/* the inode's generation, where the filesystem keeps one (ext4, xfs, btrfs) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	same = fd < 0 || ioctl(fd, FS_IOC_GETVERSION, &v) != 0 || v == id->generation;
	if (fd >= 0)
		close(fd);
	return same;
}

/*
 * An object without a build id in the recording: the file `c` taken for it can be
 * checked only when it is at the recorded path of a recording made here, against the
 * MMAP2 record's device and inode. NULL when that holds, else what to say.
 */
static const char *check_unchecked(const struct obj_slot *slot, const struct loc_candidate *c)
{
	if (c->place != LOC_RECORDED || (c->flags & LOC_F_UNDELETED) || !slot->has_fid ||
	    !slot->fid.same_host || !slot->fid.ino)
		return "not verified: no build id";
	if (same_file(c->path, &slot->fid))
		return NULL;
	return "not verified: no build id, and the file there now is not the one recorded "
	       "(another inode)";
}

/* The object's file: each place of locate's table in turn, until one gives a full
 * symbol table; the best candidate is kept. */
void sym_find_object(struct symbolizer *s, struct obj_slot *slot, const char *path,
			const uint8_t *bid, size_t bidlen)
{
	struct loc_query q = { .path = path, .build_id = bid, .build_id_size = bidlen };
	enum map_origin origin = map_origin(path);
	struct loc_list places;
	size_t chosen = 0;
	int best = 0;

	slot->tried = 1;
	slot->problem = SYM_OBJ_MISSING;
	if (origin == MAP_NO_FILE) {
		slot->problem = SYM_OBJ_NOT_ELF;
		return;
	}
	locate_list(&s->places, origin == MAP_VDSO ? LOC_VDSO : LOC_OBJECT, &q, &places);
	for (size_t i = 0; i < places.n; i++) {
		int taken = 0, done = try_candidate(s, slot, &best, &places.v[i], bid, bidlen, &taken);

		if (taken)
			chosen = i;
		if (done)
			break;
	}
	if (slot->elf && !bidlen)
		slot->unverified = check_unchecked(slot, &places.v[chosen]);
	loc_list_release(&places);
	if (!best && slot->problem == SYM_OBJ_MISMATCH)
		slot->warn_mismatch = 1; /* said by the main thread: this may be the prefetch one */
}

struct obj_slot *sym_new_slot(void)
{
	struct obj_slot *slot = xcalloc(1, sizeof(*slot));

	pthread_mutex_init(&slot->lock, NULL);
	u64map_init(&slot->done);
	strtab_init(&slot->names);
	return slot;
}

/* symbolizer_locate() with `obj`'s file identity, or none (obj UINT32_MAX). */
static void locate(struct symbolizer *s, uint32_t obj, const char *path, const uint8_t *build_id,
		   size_t build_id_size, struct sym_location *out)
{
	struct obj_slot *slot;
	const char *f;

	memset(out, 0, sizeof(*out));
	if (sp_syms_covers(s->embedded, path)) {
		/* named from the recording's own table: no file of it is looked for */
		snprintf(out->found, sizeof(out->found), "the recording's symbol table "
			 "(simpleperf's FILE feature)");
		out->symbols = "the symbols its samples hit";
		return;
	}
	slot = sym_new_slot();
	slot->trace = out;
	pthread_mutex_lock(&s->objs_lock);
	if (obj < s->nfids && s->has_fid[obj]) {
		slot->fid = s->fids[obj];
		slot->has_fid = 1;
	}
	pthread_mutex_unlock(&s->objs_lock);
	sym_find_object(s, slot, path, build_id, build_id_size);
	out->problem = slot->problem;
	out->unverified = slot->unverified;
	if (slot->elf && (f = elf_obj_file(slot->elf)))
		snprintf(out->found, sizeof(out->found), "%s", f);
	if (slot->elf && (f = elf_obj_symbol_file(slot->elf)))
		snprintf(out->symbols_from, sizeof(out->symbols_from), "%s", f);
	elf_obj_free(slot->elf);
	u64map_release(&slot->done);
	u64map_release(&slot->demangled);
	strtab_release(&slot->names);
	pthread_mutex_destroy(&slot->lock);
	free(slot);
	sym_say_damaged(s);
}

void symbolizer_locate(struct symbolizer *s, const char *path, const uint8_t *build_id,
		       size_t build_id_size, struct sym_location *out)
{
	locate(s, UINT32_MAX, path, build_id, build_id_size, out);
}

void symbolizer_locate_object(struct symbolizer *s, uint32_t obj, const char *path,
			      const uint8_t *build_id, size_t build_id_size,
			      struct sym_location *out)
{
	locate(s, obj, path, build_id, build_id_size, out);
}

struct obj_slot *sym_existing_slot(struct symbolizer *s, uint32_t obj)
{
	struct obj_slot *slot;

	pthread_mutex_lock(&s->objs_lock);
	slot = obj < s->nobjs ? s->objs[obj] : NULL;
	pthread_mutex_unlock(&s->objs_lock);
	return slot;
}

void symbolizer_object_file_id(struct symbolizer *s, uint32_t obj, const struct sym_file_id *id)
{
	pthread_mutex_lock(&s->objs_lock);
	if (obj >= s->nfids) {
		size_t n = s->nfids ? s->nfids : 16, old = s->nfids;

		while (n <= obj)
			n *= 2;
		s->fids = xrealloc(s->fids, n * sizeof(*s->fids));
		s->has_fid = xrealloc(s->has_fid, n);
		memset(s->has_fid + old, 0, n - old);
		s->nfids = n;
	}
	if (!s->has_fid[obj]) {
		s->fids[obj] = *id;
		s->has_fid[obj] = 1;
	}
	pthread_mutex_unlock(&s->objs_lock);
}

const char *symbolizer_unverified(struct symbolizer *s, uint32_t obj, const char **file)
{
	struct obj_slot *slot;
	const char *why = NULL;

	if (file)
		*file = NULL;
	slot = sym_existing_slot(s, obj);
	if (!slot)
		return NULL;
	pthread_mutex_lock(&slot->lock);
	if (slot->tried && slot->elf && slot->unverified && !slot->embedded) {
		why = slot->unverified;
		if (file)
			*file = elf_obj_file(slot->elf);
	}
	pthread_mutex_unlock(&slot->lock);
	return why;
}

struct obj_slot *sym_slot_for(struct symbolizer *s, uint32_t obj, const char *path,
				 const uint8_t *build_id, size_t build_id_size)
{
	struct obj_slot *slot;

	pthread_mutex_lock(&s->objs_lock);
	if (obj >= s->nobjs) {
		size_t n = s->nobjs ? s->nobjs : 16;

		while (n <= obj)
			n *= 2;
		s->objs = xrealloc(s->objs, n * sizeof(*s->objs));
		memset(s->objs + s->nobjs, 0, (n - s->nobjs) * sizeof(*s->objs));
		s->nobjs = n;
	}
	slot = s->objs[obj];
	for (size_t i = 0; !slot && i < s->npreloads; i++) {
		struct obj_slot *p = s->preloads[i];

		if (!p->taken && strcmp(p->preload_path, path) == 0 &&
		    p->preload_bidlen == build_id_size &&
		    (!build_id_size || memcmp(p->preload_bid, build_id, build_id_size) == 0)) {
			p->taken = 1;
			slot = s->objs[obj] = p;
		}
	}
	if (!slot) {
		slot = s->objs[obj] = sym_new_slot();
		if (obj < s->nfids && s->has_fid[obj]) {
			slot->fid = s->fids[obj];
			slot->has_fid = 1;
		}
	}
	pthread_mutex_unlock(&s->objs_lock);
	return slot;
}

/* The files the slot's DWARF is read from: the object's, and its debug file or NULL. */
static const char *dwarf_files(const struct obj_slot *slot, const char **debug_file)
{
	const char *file = elf_obj_file(slot->elf), *symfile = elf_obj_symbol_file(slot->elf);

	*debug_file = symfile && strcmp(symfile, file) ? symfile : NULL;
	return file;
}

void sym_open_dwarf(struct symbolizer *s, struct obj_slot *slot)
{
	const char *file, *debug_file;

	if (slot->dwarf_tried || !slot->elf)
		return;
	slot->dwarf_tried = 1;
	file = dwarf_files(slot, &debug_file);
	slot->dwarf = dwarf_info_open(file, debug_file, &s->cache);
	if (dwarf_info_problem(slot->dwarf))
		queue_warning(s, file, dwarf_info_problem(slot->dwarf));
}

/* The slot's frame cache, opened on first use (the slot's lock held); NULL: none. */
static struct frame_cache *slot_frame_cache(struct symbolizer *s, struct obj_slot *slot)
{
	const char *file, *debug_file;

	if (!slot->fc_tried && slot->elf) {
		slot->fc_tried = 1;
		file = dwarf_files(slot, &debug_file);
		slot->fc = frame_cache_open(&s->cache, file, debug_file);
	}
	return slot->fc;
}

int sym_dwarf_cached(struct symbolizer *s, struct obj_slot *slot)
{
	return frame_cache_dwarf(slot_frame_cache(s, slot)) != FRAME_CACHE_UNKNOWN;
}

/*
 * What DWARF says of `vaddr` in the slot's object (its lock held): what an earlier
 * lookup of this run or an earlier one gave, from the frame cache, else libdw's answer
 * (the DWARF opened now if it is not yet), kept there; with `cached_only`, *missed set
 * instead of libdw asked.
 */
static size_t dwarf_frames(struct symbolizer *s, struct obj_slot *slot, uint64_t vaddr,
			   struct dwarf_frame *df, size_t cap, int cached_only, int *missed)
{
	struct frame_cache *fc = slot_frame_cache(s, slot);
	long known;
	size_t nd = 0;

	if (frame_cache_dwarf(fc) == FRAME_CACHE_NONE)
		return 0;
	known = frame_cache_get(fc, vaddr, df, cap);
	if (known >= 0)
		return (size_t)known;
	if (cached_only) {
		*missed = 1;
		return 0;
	}
	sym_open_dwarf(s, slot);
	frame_cache_set_dwarf(fc, slot->dwarf != NULL);
	if (slot->dwarf)
		nd = dwarf_info_frames(slot->dwarf, vaddr, df, cap);
	frame_cache_put(fc, vaddr, df, nd);
	return nd;
}

/* "jitted-PID-N.so": the ELF file perf inject --jit writes for each code load of a
 * jitdump, its one symbol the dump's name. */
static int is_jitted_so(const char *path)
{
	unsigned pid, n;
	int end = 0;

	return path && sscanf(path_base(path), "jitted-%u-%u.so%n", &pid, &n, &end) == 2 &&
	       end > 0 && path_base(path)[end] == 0;
}

/* The demangled form of a C++ or Rust name, kept in the slot; in a jitted-PID-N.so, as
 * the dump's names are shown (Julia's too), so that perf inject --jit's output names
 * the code as the recording with its dump does. */
static const char *demangle(const struct symbolizer *s, struct obj_slot *slot, const char *name,
			    int jitted)
{
	uint64_t key = (uint64_t)(uintptr_t)name;
	uint32_t *v;
	char *d;

	if (!s->opt.demangle)
		return name;
	/* once per name, not once per address in its function: the names are the
	 * object's (its symbol table's, its DWARF's) and stay where they are */
	v = u64map_get(&slot->demangled, key);
	if (v)
		return *v ? strtab_str(&slot->names, *v - 1) : name;
	d = jitted ? demangle_jit_name(name, &slot->dm) : demangle_name(name, &slot->dm);
	u64map_put(&slot->demangled, key, d ? strtab_intern(&slot->names, d) + 1 : 0);
	free(d);
	v = u64map_get(&slot->demangled, key);
	return *v ? strtab_str(&slot->names, *v - 1) : name;
}

/*
 * Symbolize (offset, ret) of the object in `slot`, whose lock the caller holds, into
 * the slot's results: MAX_FRAMES at most, innermost first. Returns the result index,
 * or -1 when the address has no symbol; with `cached_only`, -2 where the object would
 * be looked for or its DWARF read (nothing done).
 */
static long symbolize(struct symbolizer *s, struct obj_slot *slot, const char *path,
		      const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
		      int cached_only)
{
	struct dwarf_frame df[MAX_FRAMES];
	struct sym_frame out[MAX_FRAMES];
	const struct elf_sym *sym;
	uint64_t vaddr, line_vaddr;
	size_t nd = 0, n = 0;
	struct sym_result r;
	int missed = 0, jitted = is_jitted_so(path);

	if (!slot->tried && cached_only)
		return -2;
	if (!slot->tried)
		sym_find_object(s, slot, path, build_id, build_id_size);
	if (!slot->elf)
		return -1;
	if (elf_obj_offset_to_vaddr(slot->elf, offset, &vaddr) != 0)
		return -1;
	/* a return address is the byte after its call: the call is what ran, and when it
	 * is a function's last instruction (a call to a noreturn function) the address
	 * is another function's first byte, so the call's byte is looked up. But a
	 * signal handler returns to its restorer (__restore_rt), which no call precedes:
	 * a function's first byte with no function before it is the address itself. */
	line_vaddr = ret && vaddr > 0 ? vaddr - 1 : vaddr;
	sym = elf_obj_status(slot->elf) == ELF_OBJ_OK ? elf_obj_lookup(slot->elf, line_vaddr) : NULL;
	if (!sym && line_vaddr != vaddr && elf_obj_status(slot->elf) == ELF_OBJ_OK &&
	    (sym = elf_obj_lookup(slot->elf, vaddr)) != NULL)
		line_vaddr = vaddr;
	nd = dwarf_frames(s, slot, line_vaddr, df, MAX_FRAMES, cached_only, &missed);
	if (missed)
		return -2;
	if (!sym && (nd == 0 || !df[nd - 1].name))
		return -1;
	/* inlined callees first, as DWARF names them */
	if (s->opt.inline_frames)
		for (size_t i = 0; i + 1 < nd && n + 1 < MAX_FRAMES; i++) {
			if (!df[i].name)
				continue;
			out[n].system_name = df[i].name;
			out[n].name = demangle(s, slot, df[i].name, jitted);
			out[n].file = df[i].file;
			out[n].line = df[i].line;
			out[n].column = df[i].column;
			out[n].inlined = 1;
			n++;
		}
	/* the function itself: the symbol table's name, so that it is the name perf shows */
	memset(&out[n], 0, sizeof(out[n]));
	out[n].system_name = sym ? sym->name : df[nd - 1].name;
	out[n].name = demangle(s, slot, out[n].system_name, jitted);
	if (nd) {
		out[n].file = df[nd - 1].file;
		out[n].line = df[nd - 1].line;
		out[n].column = df[nd - 1].column;
	}
	n++;
	r.first = (uint32_t)slot->nframes;
	r.n = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		VEC_PUSH(slot->frames, slot->nframes, slot->frames_cap, out[i]);
	VEC_PUSH(slot->results, slot->nresults, slot->results_cap, r);
	return (long)slot->nresults - 1;
}

long sym_result_for(struct symbolizer *s, struct obj_slot *slot, const char *path,
		       const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
		       int cached_only)
{
	uint64_t key = ((offset << 1) | (uint64_t)(ret != 0)) + 1;
	uint32_t *v = offset < (1ULL << 62) ? u64map_get(&slot->done, key) : NULL;
	long r;

	if (v)
		return (long)*v - 1;
	r = symbolize(s, slot, path, build_id, build_id_size, offset, ret, cached_only);
	if (r != -2 && offset < (1ULL << 62))
		u64map_put(&slot->done, key, (uint32_t)(r + 1));
	return r;
}

size_t symbolizer_native(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
			 struct sym_frame *out, size_t cap)
{
	struct obj_slot *slot;
	const struct sym_result *r;
	size_t n = 0;
	long idx;
	int covered;

	/* the recording's own table first: made with the binaries the samples hit, where
	 * a file found here by name may be another build */
	if (s->embedded && cap) {
		int hit = sp_syms_native(s->embedded, path, offset, ret, out, &covered);

		if (covered) {
			slot = sym_slot_for(s, obj, path, build_id, build_id_size);
			pthread_mutex_lock(&slot->lock);
			slot->embedded = 1;
			pthread_mutex_unlock(&slot->lock);
			return hit ? 1 : 0;
		}
	}
	/* the first user frame asked for: the kernel's symbols, if they still wait for a
	 * free thread, are loaded here first (they are needed next, for the kernel
	 * frames), while the helper thread goes on with the objects it was given (a
	 * first run: libc's DWARF inflating on one core, 122,000 kallsyms lines parsed on
	 * the other; else this thread would inflate libc itself between the helper's
	 * steps and the kernel after it) */
	if (!s->native_began) {
		s->native_began = 1;
		sym_kernel_take(s);
	}
	slot = sym_slot_for(s, obj, path, build_id, build_id_size);
	if (pthread_mutex_trylock(&slot->lock) != 0) {
		/* the helper thread has the object (inflating its DWARF) */
		atomic_fetch_add(&slot->main_waiting, 1);
		pthread_mutex_lock(&slot->lock);
		atomic_fetch_sub(&slot->main_waiting, 1);
	}
	idx = sym_result_for(s, slot, path, build_id, build_id_size, offset, ret, 0);
	if (slot->warn_mismatch == 1) {
		slot->warn_mismatch = 2;
		diag_warn(s->diag, path, DIAG_NO_OFFSET,
			  "only files with another build id were found: not used for symbols");
	}
	if (!slot->dm_said && demangle_kept(&slot->dm)) {
		slot->dm_said = 1;
		diag_warn(s->diag, path, DIAG_NO_OFFSET,
			  "names kept mangled: demangling passed the bound of %u KiB or %u ms of "
			  "CPU time a name (after %u such names, the others are kept untried)",
			  DEMANGLE_OUT_MAX / 1024, DEMANGLE_CPU_NS / 1000000, DEMANGLE_KEPT_MAX);
	}
	sym_say_damaged(s);
	if (idx >= 0 && cap) {
		r = &slot->results[idx];
		/* too many for `cap`: the innermost inlined calls and the function */
		n = r->n < cap ? r->n : cap;
		memcpy(out, slot->frames + r->first, (n - 1) * sizeof(*out));
		out[n - 1] = slot->frames[r->first + r->n - 1];
	}
	pthread_mutex_unlock(&slot->lock);
	return n;
}

int symbolizer_object_files(struct symbolizer *s, uint32_t obj, const char *path,
			    const uint8_t *build_id, size_t build_id_size, char **file,
			    char **debug_file)
{
	struct obj_slot *slot = sym_slot_for(s, obj, path, build_id, build_id_size);
	const char *f, *sf;

	*file = *debug_file = NULL;
	atomic_fetch_add(&slot->main_waiting, 1);
	pthread_mutex_lock(&slot->lock);
	atomic_fetch_sub(&slot->main_waiting, 1);
	if (!slot->tried)
		sym_find_object(s, slot, path, build_id, build_id_size);
	if (slot->elf && (f = elf_obj_file(slot->elf)) != NULL) {
		*file = xstrdup(f);
		sf = elf_obj_symbol_file(slot->elf);
		if (sf && strcmp(sf, f) != 0)
			*debug_file = xstrdup(sf);
	}
	pthread_mutex_unlock(&slot->lock);
	sym_say_damaged(s);
	return *file != NULL;
}

enum sym_obj_problem symbolizer_problem(struct symbolizer *s, uint32_t obj)
{
	struct obj_slot *slot;
	enum sym_obj_problem p;

	slot = sym_existing_slot(s, obj);
	if (!slot)
		return SYM_OBJ_FINE;
	pthread_mutex_lock(&slot->lock);
	p = slot->tried && !slot->embedded ? slot->problem : SYM_OBJ_FINE;
	pthread_mutex_unlock(&slot->lock);
	return p;
}
