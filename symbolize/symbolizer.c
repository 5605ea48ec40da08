/* symbolizer: native and kernel addresses to frames, finding the files they came from. */
#include "symbolize/symbolizer.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
#include "common/util.h"
#include "symbolize/dwarfinfo.h"
#include "symbolize/elfsyms.h"
#include "symbolize/kallsyms.h"
#include "symbolize/locate.h"

#define MAX_FRAMES 64   /* frames kept per address: inlined calls, then the function */

/* The frames of one (offset, return address) of an object: a run of `frames`. */
struct sym_result {
	uint32_t first, n;
};

/*
 * One object. Everything in it is used under its lock: by the main thread's
 * symbolizer_native() and by the prefetch thread, which fills `done` ahead of it.
 */
struct obj_slot {
	pthread_mutex_t lock;
	atomic_int main_waiting;   /* the main thread waits for the lock: the prefetch
				      thread lets it have it (a mutex is not fair) */
	int tried, dwarf_tried, prepared;
	int warn_mismatch;         /* 1: a warning for the main thread to print; 2: printed */
	enum sym_obj_problem problem;
	struct elf_obj *elf;
	struct dwarf_info *dwarf;
	struct u64map done;        /* (offset << 1 | ret) + 1 -> results index */
	struct sym_result *results;
	size_t nresults, results_cap;
	struct sym_frame *frames;
	size_t nframes, frames_cap;
	struct strtab names;       /* demangled names of the frames */
	/* an object loaded ahead by name (symbolizer_preload): the first object id asked
	 * for with this path and build id takes the slot over */
	const char *preload_path;
	uint8_t preload_bid[64];
	size_t preload_bidlen;
	int taken;
	struct sym_location *trace; /* symbolizer_locate(): every file tried goes here */
	struct sym_file_id fid;    /* what the recording says of the file (has_fid) */
	int has_fid;
	const char *unverified;    /* the file used could not be checked: why (static) */
};

/* An address the prefetch thread is to symbolize, or (`preload`) an object to load. */
struct prefetch_req {
	uint32_t obj;
	int ret;
	uint64_t offset;
	const char *path;
	uint8_t bid[64];
	size_t bidlen;
	struct obj_slot *preload;
};

struct symbolizer {
	struct sym_options opt;
	struct loc_places places;  /* where files are looked for, from opt */
	struct cache_ctx cache;    /* opt.cache_dir, damaged entries told to queue_damaged */
	struct diag *diag;
	/* damaged cache entries met on either thread, said by the main one */
	pthread_mutex_t damaged_lock;
	char **damaged;            /* "ENTRY\tWHY", each entry once */
	size_t ndamaged, damaged_said, damaged_cap;
	atomic_int damaged_new;    /* some not said yet: looked at without the lock */
	pthread_mutex_t objs_lock; /* guards objs and preloads; slots do not move */
	struct obj_slot **objs;    /* by object id; may point at a preloaded slot */
	size_t nobjs;
	struct obj_slot **preloads;
	size_t npreloads, preloads_cap;
	struct sym_file_id *fids;  /* by object id, under objs_lock: what the recording */
	uint8_t *has_fid;          /* says of each file (symbolizer_object_file_id) */
	size_t nfids;
	char *home_debug;
	/* native prefetch: addresses first, then objects to load */
	pthread_mutex_t queue_lock;
	pthread_cond_t queue_cond;
	struct prefetch_req *queue, *objq;
	size_t queue_head, queue_len, queue_cap, objq_head, objq_len, objq_cap;
	int prefetch_thread, prefetch_stop;
	pthread_t prefetch_tid;
	/* kernel */
	int kernel_tried;
	int kernel_state;       /* KERNEL_*, under queue_lock */
	pthread_cond_t kernel_cond;
	uint8_t kernel_bid[64];
	size_t kernel_bid_size;
	char kernel_warning[512]; /* printed by the main thread, after the join */
	struct kallsyms *ksyms;
	char kernel_source[4608];
};

/* Kernel symbols asked for ahead: the helper thread loads them before anything else. */
enum { KERNEL_NONE, KERNEL_QUEUED, KERNEL_LOADING, KERNEL_DONE };

static void kernel_ready(struct symbolizer *s);

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
	VEC_PUSH(s->damaged, s->ndamaged, s->damaged_cap, xasprintf("%s\t%s", entry, why));
	atomic_store(&s->damaged_new, 1);
	pthread_mutex_unlock(&s->damaged_lock);
}

/* Say the damaged cache entries not said yet: on the main thread. */
static void say_damaged(struct symbolizer *s)
{
	if (!atomic_exchange(&s->damaged_new, 0))
		return;
	pthread_mutex_lock(&s->damaged_lock);
	for (; s->damaged_said < s->ndamaged; s->damaged_said++) {
		char *e = s->damaged[s->damaged_said], *tab = strchr(e, '\t');

		*tab = 0;
		diag_warn(s->diag, e, DIAG_NO_OFFSET, "damaged cache entry (%s): not used, made again",
			  tab + 1);
		*tab = '\t';
	}
	pthread_mutex_unlock(&s->damaged_lock);
}
static void load_kernel(struct symbolizer *s, const uint8_t *bid, size_t bidlen);

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
	s->cache.dir = o->cache_dir;
	s->cache.damaged = queue_damaged;
	s->cache.arg = s;
	pthread_mutex_init(&s->damaged_lock, NULL);
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	kernel_ready(s);
	symbolizer_prefetch_stop(s);
	say_damaged(s);
	for (size_t i = 0; i < s->ndamaged; i++)
		free(s->damaged[i]);
	free(s->damaged);
	pthread_mutex_destroy(&s->damaged_lock);
	for (size_t i = 0; i < s->nobjs + s->npreloads; i++) {
		struct obj_slot *slot = i < s->nobjs ? s->objs[i] : s->preloads[i - s->nobjs];

		if (!slot || (i < s->nobjs && slot->preload_path))
			continue; /* a preloaded slot is freed from the preload list */
		elf_obj_free(slot->elf);
		dwarf_info_free(slot->dwarf);
		u64map_release(&slot->done);
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
	kallsyms_free(s->ksyms);
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
static int try_candidate(const struct symbolizer *s, struct obj_slot *slot, int *best,
			 const struct loc_candidate *c, const uint8_t *bid, size_t bidlen,
			 int *taken)
{
	struct elf_obj *o = elf_obj_load_cached(c->path + c->under, bid, bidlen, c->sysroot,
						&s->cache);
	int rank = candidate_rank(o);

	if (slot->trace && slot->trace->ntried < SYM_LOCATION_TRIED) {
		struct sym_tried *t = &slot->trace->tried[slot->trace->ntried++];

		snprintf(t->path, sizeof(t->path), "%s", c->path);
		t->result = rank == 3 ? "full symbol table" : rank == 2 ? "exported symbols only (.dynsym)"
			  : rank == 1 ? "no symbols (stripped)"
			  : elf_obj_status(o) == ELF_OBJ_OK || elf_obj_status(o) == ELF_OBJ_STRIPPED
			  ? "debug file only (no code)" : elf_obj_status_str(elf_obj_status(o));
	}

	if (elf_obj_status(o) == ELF_OBJ_MISMATCH && slot->problem == SYM_OBJ_MISSING)
		slot->problem = SYM_OBJ_MISMATCH;
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
static void find_object(struct symbolizer *s, struct obj_slot *slot, const char *path,
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

static struct obj_slot *new_slot(void)
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
	struct obj_slot *slot = new_slot();
	const char *f;

	memset(out, 0, sizeof(*out));
	slot->trace = out;
	pthread_mutex_lock(&s->objs_lock);
	if (obj < s->nfids && s->has_fid[obj]) {
		slot->fid = s->fids[obj];
		slot->has_fid = 1;
	}
	pthread_mutex_unlock(&s->objs_lock);
	find_object(s, slot, path, build_id, build_id_size);
	out->problem = slot->problem;
	out->unverified = slot->unverified;
	if (slot->elf && (f = elf_obj_file(slot->elf)))
		snprintf(out->found, sizeof(out->found), "%s", f);
	if (slot->elf && (f = elf_obj_symbol_file(slot->elf)))
		snprintf(out->symbols_from, sizeof(out->symbols_from), "%s", f);
	elf_obj_free(slot->elf);
	u64map_release(&slot->done);
	strtab_release(&slot->names);
	pthread_mutex_destroy(&slot->lock);
	free(slot);
	say_damaged(s);
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

/* The slot of object `obj` if it was ever used, else NULL. */
static struct obj_slot *existing_slot(struct symbolizer *s, uint32_t obj)
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
	slot = existing_slot(s, obj);
	if (!slot)
		return NULL;
	pthread_mutex_lock(&slot->lock);
	if (slot->tried && slot->elf && slot->unverified) {
		why = slot->unverified;
		if (file)
			*file = elf_obj_file(slot->elf);
	}
	pthread_mutex_unlock(&slot->lock);
	return why;
}

/* The slot of object `obj`, made on first use, or the preloaded slot of the same
 * path and build id; slots never move. */
static struct obj_slot *slot_for(struct symbolizer *s, uint32_t obj, const char *path,
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
		slot = s->objs[obj] = new_slot();
		if (obj < s->nfids && s->has_fid[obj]) {
			slot->fid = s->fids[obj];
			slot->has_fid = 1;
		}
	}
	pthread_mutex_unlock(&s->objs_lock);
	return slot;
}

/* The DWARF of the slot's object, opened on first use (the slot's lock held). */
static void open_dwarf(struct symbolizer *s, struct obj_slot *slot)
{
	const char *file, *symfile;

	if (slot->dwarf_tried || !slot->elf)
		return;
	slot->dwarf_tried = 1;
	file = elf_obj_file(slot->elf);
	symfile = elf_obj_symbol_file(slot->elf);
	slot->dwarf = dwarf_info_open(file, symfile && strcmp(symfile, file) ? symfile : NULL,
					&s->cache);
}

/* The demangled form of a C++ or Rust name, kept in the slot. */
static const char *demangle(const struct symbolizer *s, struct obj_slot *slot, const char *name)
{
	char *d;
	const char *kept;

	if (!s->opt.demangle)
		return name;
	d = demangle_name(name);
	if (!d)
		return name;
	kept = strtab_str(&slot->names, strtab_intern(&slot->names, d));
	free(d);
	return kept;
}

/*
 * Symbolize (offset, ret) of the object in `slot`, whose lock the caller holds, into
 * the slot's results: MAX_FRAMES at most, innermost first. Returns the result index,
 * or -1 when the address has no symbol.
 */
static long symbolize(struct symbolizer *s, struct obj_slot *slot, const char *path,
		      const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret)
{
	struct dwarf_frame df[MAX_FRAMES];
	struct sym_frame out[MAX_FRAMES];
	const struct elf_sym *sym;
	uint64_t vaddr, line_vaddr;
	size_t nd = 0, n = 0;
	struct sym_result r;

	if (!slot->tried)
		find_object(s, slot, path, build_id, build_id_size);
	if (!slot->elf)
		return -1;
	if (elf_obj_offset_to_vaddr(slot->elf, offset, &vaddr) != 0)
		return -1;
	sym = elf_obj_status(slot->elf) == ELF_OBJ_OK ? elf_obj_lookup(slot->elf, vaddr) : NULL;
	/* a call to a noreturn function as a function's last instruction pushes the
	 * address just past it: the caller is the function holding address - 1 */
	if (ret && !sym && vaddr > 0 && elf_obj_status(slot->elf) == ELF_OBJ_OK)
		sym = elf_obj_lookup(slot->elf, vaddr - 1);
	line_vaddr = vaddr;
	if (ret && vaddr > 0 && (!sym || vaddr - 1 >= sym->start))
		line_vaddr = vaddr - 1;
	open_dwarf(s, slot);
	if (slot->dwarf)
		nd = dwarf_info_frames(slot->dwarf, line_vaddr, df, MAX_FRAMES);
	if (!sym && (nd == 0 || !df[nd - 1].name))
		return -1;
	/* inlined callees first, as DWARF names them */
	if (s->opt.inline_frames)
		for (size_t i = 0; i + 1 < nd && n + 1 < MAX_FRAMES; i++) {
			if (!df[i].name)
				continue;
			out[n].system_name = df[i].name;
			out[n].name = demangle(s, slot, df[i].name);
			out[n].file = df[i].file;
			out[n].line = df[i].line;
			out[n].column = df[i].column;
			out[n].inlined = 1;
			n++;
		}
	/* the function itself: the symbol table's name, so that it is the name perf shows */
	memset(&out[n], 0, sizeof(out[n]));
	out[n].system_name = sym ? sym->name : df[nd - 1].name;
	out[n].name = demangle(s, slot, out[n].system_name);
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

/* The result for (offset, ret), symbolized now unless it is done; -1 for none. */
static long result_for(struct symbolizer *s, struct obj_slot *slot, const char *path,
		       const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret)
{
	uint64_t key = ((offset << 1) | (uint64_t)(ret != 0)) + 1;
	uint32_t *v = offset < (1ULL << 62) ? u64map_get(&slot->done, key) : NULL;
	long r;

	if (v)
		return (long)*v - 1;
	r = symbolize(s, slot, path, build_id, build_id_size, offset, ret);
	if (offset < (1ULL << 62))
		u64map_put(&slot->done, key, (uint32_t)(r + 1));
	return r;
}

size_t symbolizer_native(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
			 struct sym_frame *out, size_t cap)
{
	struct obj_slot *slot = slot_for(s, obj, path, build_id, build_id_size);
	const struct sym_result *r;
	size_t n = 0;
	long idx;

	atomic_fetch_add(&slot->main_waiting, 1);
	pthread_mutex_lock(&slot->lock);
	atomic_fetch_sub(&slot->main_waiting, 1);
	idx = result_for(s, slot, path, build_id, build_id_size, offset, ret);
	if (slot->warn_mismatch == 1) {
		slot->warn_mismatch = 2;
		diag_warn(s->diag, path, DIAG_NO_OFFSET,
			  "only files with another build id were found: not used for symbols");
	}
	say_damaged(s);
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
	struct obj_slot *slot = slot_for(s, obj, path, build_id, build_id_size);
	const char *f, *sf;

	*file = *debug_file = NULL;
	atomic_fetch_add(&slot->main_waiting, 1);
	pthread_mutex_lock(&slot->lock);
	atomic_fetch_sub(&slot->main_waiting, 1);
	if (!slot->tried)
		find_object(s, slot, path, build_id, build_id_size);
	if (slot->elf && (f = elf_obj_file(slot->elf)) != NULL) {
		*file = xstrdup(f);
		sf = elf_obj_symbol_file(slot->elf);
		if (sf && strcmp(sf, f) != 0)
			*debug_file = xstrdup(sf);
	}
	pthread_mutex_unlock(&slot->lock);
	say_damaged(s);
	return *file != NULL;
}

/* The prefetch thread's way to an object's lock: after the main thread's. */
static void lock_after_main(struct obj_slot *slot)
{
	while (atomic_load(&slot->main_waiting))
		sched_yield();
	pthread_mutex_lock(&slot->lock);
}

static void *prefetch_main(void *arg)
{
	struct symbolizer *s = arg;

	for (;;) {
		struct prefetch_req q;
		struct obj_slot *slot;

		pthread_mutex_lock(&s->queue_lock);
		while (s->queue_head == s->queue_len && s->objq_head == s->objq_len &&
		       s->kernel_state != KERNEL_QUEUED && !s->prefetch_stop)
			pthread_cond_wait(&s->queue_cond, &s->queue_lock);
		if (s->kernel_state == KERNEL_QUEUED) {
			/* quick from the cache; needed only when pass 2 is over, but a thread
			 * of its own would take the CPU from the main thread as it starts */
			s->kernel_state = KERNEL_LOADING;
			pthread_mutex_unlock(&s->queue_lock);
			load_kernel(s, s->kernel_bid, s->kernel_bid_size);
			pthread_mutex_lock(&s->queue_lock);
			s->kernel_state = KERNEL_DONE;
			pthread_cond_broadcast(&s->kernel_cond);
			pthread_mutex_unlock(&s->queue_lock);
			continue;
		}
		if (s->prefetch_stop) {
			pthread_mutex_unlock(&s->queue_lock);
			return NULL;
		}
		if (s->queue_head < s->queue_len)
			q = s->queue[s->queue_head++];
		else
			q = s->objq[s->objq_head++];
		pthread_mutex_unlock(&s->queue_lock);
		if (q.preload) {
			/* one step of three (the object, its DWARF, libdw's table of the
			 * units' address ranges), so that addresses asked for meanwhile
			 * wait for one step only */
			int more = 0;

			slot = q.preload;
			lock_after_main(slot);
			if (!slot->tried) {
				find_object(s, slot, slot->preload_path, slot->preload_bid,
					    slot->preload_bidlen);
				more = slot->elf != NULL;
			} else if (!slot->dwarf_tried) {
				open_dwarf(s, slot);
				more = slot->dwarf != NULL;
			} else if (!slot->prepared) {
				slot->prepared = 1;
				dwarf_info_prepare(slot->dwarf);
			}
			pthread_mutex_unlock(&slot->lock);
			if (more) {
				pthread_mutex_lock(&s->queue_lock);
				s->objq[--s->objq_head] = q;
				pthread_mutex_unlock(&s->queue_lock);
			}
			continue;
		}
		slot = slot_for(s, q.obj, q.path, q.bid, q.bidlen);
		lock_after_main(slot);
		result_for(s, slot, q.path, q.bid, q.bidlen, q.offset, q.ret);
		pthread_mutex_unlock(&slot->lock);
	}
}

/* The helper thread, started by the first thing it is given to do. */
static void start_helper(struct symbolizer *s)
{
	if (!s->prefetch_thread && !s->prefetch_stop &&
	    pthread_create(&s->prefetch_tid, NULL, prefetch_main, s) == 0)
		s->prefetch_thread = 1;
}

void symbolizer_prefetch(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret)
{
	struct prefetch_req q;

	if (build_id_size > sizeof(q.bid) || s->prefetch_stop)
		return;
	memset(&q, 0, sizeof(q));
	q.obj = obj;
	q.ret = ret != 0;
	q.offset = offset;
	q.path = path;
	if (build_id_size)
		memcpy(q.bid, build_id, build_id_size);
	q.bidlen = build_id_size;
	pthread_mutex_lock(&s->queue_lock);
	VEC_PUSH(s->queue, s->queue_len, s->queue_cap, q);
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	start_helper(s);
}

struct preload_order {
	uint64_t size;
	size_t i;
};

static int preload_cmp(const void *a, const void *b)
{
	const struct preload_order *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void symbolizer_preload(struct symbolizer *s, const struct sym_object *objs, size_t n)
{
	struct preload_order *order = xmalloc((n ? n : 1) * sizeof(*order));

	if (s->prefetch_stop || !n) {
		free(order);
		return;
	}
	/* the largest first: they take longest, and are mostly where the samples are */
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		order[i].size = stat(objs[i].path, &st) == 0 ? (uint64_t)st.st_size : 0;
		order[i].i = i;
	}
	qsort(order, n, sizeof(*order), preload_cmp);
	pthread_mutex_lock(&s->objs_lock);
	pthread_mutex_lock(&s->queue_lock);
	for (size_t k = 0; k < n; k++) {
		const struct sym_object *o = &objs[order[k].i];
		struct prefetch_req q;
		struct obj_slot *slot;

		if (o->build_id_size > sizeof(slot->preload_bid))
			continue;
		slot = new_slot();
		slot->preload_path = o->path;
		if (o->build_id_size)
			memcpy(slot->preload_bid, o->build_id, o->build_id_size);
		slot->preload_bidlen = o->build_id_size;
		VEC_PUSH(s->preloads, s->npreloads, s->preloads_cap, slot);
		memset(&q, 0, sizeof(q));
		q.preload = slot;
		VEC_PUSH(s->objq, s->objq_len, s->objq_cap, q);
	}
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	pthread_mutex_unlock(&s->objs_lock);
	free(order);
	start_helper(s);
}

void symbolizer_prefetch_stop(struct symbolizer *s)
{
	pthread_mutex_lock(&s->queue_lock);
	s->prefetch_stop = 1;
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	if (s->prefetch_thread) {
		pthread_join(s->prefetch_tid, NULL);
		s->prefetch_thread = 0;
	}
	say_damaged(s);
}

enum sym_obj_problem symbolizer_problem(struct symbolizer *s, uint32_t obj)
{
	struct obj_slot *slot;
	enum sym_obj_problem p;

	slot = existing_slot(s, obj);
	if (!slot)
		return SYM_OBJ_FINE;
	pthread_mutex_lock(&slot->lock);
	p = slot->tried ? slot->problem : SYM_OBJ_FINE;
	pthread_mutex_unlock(&slot->lock);
	return p;
}

/*
 * Kernel symbols from the kallsyms file `path`: through the cache when the kernel's
 * build id is known (a parsed table mapped, made on first use), else parsed.
 */
static struct kallsyms *load_kallsyms(struct symbolizer *s, const char *path,
				      const uint8_t *bid, size_t bidlen, char *err,
				      size_t errlen)
{
	struct file_id src;
	struct kallsyms *k;
	char hex[2 * 20 + 1], *file;
	const char *damage = NULL;

	if (!s->opt.cache_dir || !bidlen || bidlen > 20 || file_id_of(path, &src) != 0)
		return kallsyms_load(path, err, errlen);
	hex_bytes(hex, bid, bidlen);
	file = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 0);
	k = file ? kallsyms_cache_open(file, path, &src, bid, bidlen, &damage) : NULL;
	if (damage)
		cache_damaged(&s->cache, file, damage);
	if (!k) {
		k = kallsyms_load(path, err, errlen);
		free(file);
		file = k ? cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 1) : NULL;
		if (file)
			kallsyms_cache_write(k, file, path, &src, bid, bidlen);
	}
	free(file);
	return k;
}

/* Runs on the prefetch thread or the main one: touches only the kernel fields. The
 * places of locate's table in turn, until one gives symbols. */
static void load_kernel(struct symbolizer *s, const uint8_t *bid, size_t bidlen)
{
	struct loc_query q = { .build_id = bid, .build_id_size = bidlen };
	struct loc_list places;
	uint8_t live[64];
	size_t nlive = kernel_live_build_id(live, sizeof(live));
	int same = nlive == bidlen && memcmp(live, bid, nlive) == 0;
	char err[256];

	locate_list(&s->places, LOC_KALLSYMS, &q, &places);
	for (size_t i = 0; i < places.n; i++) {
		const struct loc_candidate *c = &places.v[i];

		/* perf inject --jit poisons perf's copy: it writes the running kernel's
		 * kallsyms there, whatever kernel was recorded */
		if (c->place == LOC_BUILDID_KALLSYMS && nlive && !same &&
		    kallsyms_same_as_running(c->path, "/proc/kallsyms")) {
			char hex[2 * 64 + 1], *cached;

			snprintf(s->kernel_warning, sizeof(s->kernel_warning),
				 "%.250s is the running kernel's /proc/kallsyms (perf inject --jit "
				 "copies it there), but the recording is of another kernel: not "
				 "used; give the recorded kernel's kallsyms with --kallsyms", c->path);
			hex_bytes(hex, bid, bidlen);
			/* nor what perfconv's cache made of it */
			cached = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 0);
			if (cached)
				unlink(cached);
			free(cached);
			continue;
		}
		if (c->flags & LOC_F_SAME_KERNEL) {
			/* it changes as modules load: parsed, never cached */
			if (bidlen && !same) {
				snprintf(s->kernel_source, sizeof(s->kernel_source),
					 "the running kernel is not the recorded one: give --kallsyms");
				break;
			}
			s->ksyms = kallsyms_load(c->path, err, sizeof(err));
		} else {
			s->ksyms = load_kallsyms(s, c->path, bid, bidlen, err, sizeof(err));
		}
		if (s->ksyms) {
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s", c->path);
			break;
		}
		if (c->flags & (LOC_F_ONLY | LOC_F_SAME_KERNEL))
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s: %s", c->path, err);
		if (c->flags & LOC_F_ONLY) {
			snprintf(s->kernel_warning, sizeof(s->kernel_warning), "%s", err);
			break;
		}
	}
	loc_list_release(&places);
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
	pthread_mutex_lock(&s->queue_lock);
	s->kernel_state = KERNEL_QUEUED;
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	start_helper(s);
}

/* Wait for the kernel symbols asked for ahead (loading them here when no thread
 * will), and report what could not be done. */
static void kernel_ready(struct symbolizer *s)
{
	int here = 0;

	pthread_mutex_lock(&s->queue_lock);
	if (s->kernel_state == KERNEL_QUEUED && (!s->prefetch_thread || s->prefetch_stop)) {
		s->kernel_state = KERNEL_LOADING;
		here = 1;
	}
	while (!here && (s->kernel_state == KERNEL_QUEUED || s->kernel_state == KERNEL_LOADING))
		pthread_cond_wait(&s->kernel_cond, &s->queue_lock);
	pthread_mutex_unlock(&s->queue_lock);
	if (here) {
		load_kernel(s, s->kernel_bid, s->kernel_bid_size);
		pthread_mutex_lock(&s->queue_lock);
		s->kernel_state = KERNEL_DONE;
		pthread_mutex_unlock(&s->queue_lock);
	}
	if (s->kernel_warning[0]) {
		diag_warn(s->diag, s->opt.kallsyms, DIAG_NO_OFFSET, "%s", s->kernel_warning);
		s->kernel_warning[0] = 0;
	}
	say_damaged(s);
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
