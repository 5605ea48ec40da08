/* symbolizer_internal: what the parts of the symbolizer share; not for callers.
 *
 * The symbolizer (symbolize/symbolizer.h) is split by job:
 *	symbolizer.c		objects: their files found and checked, native lookups
 *	symbolizer_prefetch.c	the helper thread: addresses read ahead, objects preloaded
 *	symbolizer_kernel.c	kernel symbols: which kallsyms, loaded ahead, looked up
 * The helper thread and the main one share the object slots (each under its lock) and
 * the queues (under queue_lock); the kernel fields are the loading thread's until
 * kernel_state says KERNEL_DONE.
 */
#ifndef PERFCONV_SYMBOLIZER_INTERNAL_H
#define PERFCONV_SYMBOLIZER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/demangle.h"
#include "common/diag.h"
#include "common/util.h"
#include "symbolize/dwarfinfo.h"
#include "symbolize/elfsyms.h"
#include "symbolize/framecache.h"
#include "symbolize/kallsyms.h"
#include "symbolize/locate.h"
#include "symbolize/spsyms.h"
#include "symbolize/symbolizer.h"

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
	struct frame_cache *fc;    /* what earlier runs' DWARF lookups gave (fc_tried: opened) */
	int fc_tried;
	struct u64map done;        /* (offset << 1 | ret) + 1 -> results index */
	struct sym_result *results;
	size_t nresults, results_cap;
	struct sym_frame *frames;
	size_t nframes, frames_cap;
	struct strtab names;       /* demangled names of the frames */
	struct u64map demangled;   /* a name's address -> its demangled form's id in `names`
				      + 1, 0: shown as it is */
	struct demangle_budget dm; /* the demangler's bounds on the object's names */
	int dm_said;               /* a name kept mangled was said (by the main thread) */
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
	int embedded;              /* named from the recording's own table: no file of it
				      is looked for, none is unverified or missing */
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
	struct sp_syms *embedded;  /* the recording's own symbol tables (simpleperf), asked
				      first; NULL: none */
	struct loc_places places;  /* where files are looked for, from opt */
	struct cache_ctx cache;    /* opt.cache_dir, damaged entries told to queue_damaged */
	struct diag *diag;
	/* damaged cache entries (and problems) met on either thread, said by the main one */
	pthread_mutex_t damaged_lock;
	char **damaged;            /* "ENTRY\tWHY", each entry once */
	size_t ndamaged, damaged_said, damaged_cap;
	atomic_int damaged_new;    /* some not said yet: looked at without the lock */
	char **problems;           /* "FOLDER\tWHY" of the cache as a whole, each once */
	size_t nproblems, problems_said, problems_cap;
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
	int queue_woken;           /* the helper was signalled for the first request */
	int prefetch_thread, prefetch_stop;
	pthread_t prefetch_tid;
	/* kernel */
	int kernel_tried;
	int native_began;       /* the main thread has asked for a user frame */
	int kernel_state;       /* KERNEL_*, under queue_lock */
	pthread_cond_t kernel_cond;
	uint8_t kernel_bid[64];
	size_t kernel_bid_size;
	char kernel_warning[512]; /* printed by the main thread, after the join */
	char kernel_release[256]; /* the recorded one (HEADER_OSRELEASE), "" when unknown */
	struct kallsyms *ksyms;
	char kernel_source[4608];
	const char *kernel_unverified; /* why ksyms could not be checked, or NULL */
};

/* Kernel symbols asked for ahead: the helper thread loads them before anything else. */
enum { KERNEL_NONE, KERNEL_QUEUED, KERNEL_LOADING, KERNEL_DONE };

/* Say the damaged cache entries not said yet: on the main thread. */
void sym_say_damaged(struct symbolizer *s);
/* The object's file, looked for in each place of locate's table (the slot's lock held
 * or the slot not shared yet): sets slot->tried, elf, problem, unverified. */
void sym_find_object(struct symbolizer *s, struct obj_slot *slot, const char *path,
		     const uint8_t *bid, size_t bidlen);
/* An empty slot, its lock and tables initialized. */
struct obj_slot *sym_new_slot(void);
/* The slot of object `obj`, made on first use, or the preloaded slot of the same
 * path and build id; slots never move. */
struct obj_slot *sym_slot_for(struct symbolizer *s, uint32_t obj, const char *path,
			      const uint8_t *build_id, size_t build_id_size);
/* The slot of object `obj` if it was ever used, else NULL. */
struct obj_slot *sym_existing_slot(struct symbolizer *s, uint32_t obj);
/* The DWARF of the slot's object, opened on first use (the slot's lock held). */
void sym_open_dwarf(struct symbolizer *s, struct obj_slot *slot);
/* Whether the frame cache knows the slot's DWARF (the slot's lock held): lookups then
 * need it opened only for addresses no earlier run asked for. */
int sym_dwarf_cached(struct symbolizer *s, struct obj_slot *slot);
/* The result index for (offset, ret) in the slot (its lock held), symbolized now
 * unless it is done; -1 for none. With `cached_only`, -2 (and nothing done) where that
 * would take more than the caches: the object looked for, its DWARF read. */
long sym_result_for(struct symbolizer *s, struct obj_slot *slot, const char *path,
		    const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
		    int cached_only);
/* Start the helper thread unless it runs or was stopped. */
void sym_start_helper(struct symbolizer *s);
/* Load the kernel symbols of the kernel with build id `bid` into s->ksyms, saying where
 * they came from in s->kernel_source: on the helper thread or the main one. */
void sym_load_kernel(struct symbolizer *s, const uint8_t *bid, size_t bidlen);
/* Wait for the kernel symbols asked for ahead (loading them here when no thread
 * will), and report what could not be done: on the main thread. */
void sym_kernel_ready(struct symbolizer *s);
/* Load the kernel's symbols on this thread when they are queued and no thread has
 * begun: 1 when it did. */
int sym_kernel_take(struct symbolizer *s);

#endif
