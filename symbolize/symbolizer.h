/* symbolizer: native and kernel addresses to frames, finding the files they came from. */
#ifndef PERFCONV_SYMBOLIZER_H
#define PERFCONV_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

struct sym_options {
	const char *symfs;       /* --symfs DIR, or NULL */
	const char *kallsyms;    /* --kallsyms FILE, or NULL */
	const char *input_dir;   /* directory of the input perf.data ("." for a pipe) */
	const char *buildid_dir; /* --buildid-dir, or NULL for ~/.debug */
	int demangle;            /* 0 with --no-demangle */
	int inline_frames;       /* 0 with --no-inline: no frames for inlined calls */
	const char *cache_dir;   /* decompressed debug files are kept here; NULL: none */
	uint64_t cache_size;     /* the cache's cap in bytes (--cache-size); 0: none */
};

/* One frame of an address; innermost first when an address yields several. */
struct sym_frame {
	const char *name;        /* to show: demangled */
	const char *system_name; /* as in the binary */
	const char *file;        /* source file or NULL */
	uint32_t line, column;
	int inlined;             /* inlined into the next frame */
};

/* Why an object gave no symbols. */
enum sym_obj_problem {
	SYM_OBJ_FINE = 0,
	SYM_OBJ_MISSING,         /* no file found at any place looked */
	SYM_OBJ_MISMATCH,        /* only files with another build id */
	SYM_OBJ_STRIPPED,        /* no symbols in the file or its debug file */
	SYM_OBJ_NOT_ELF,         /* [anon], [heap], memfd: nothing to read */
};

struct symbolizer;

/* The options' strings must outlive the symbolizer. */
struct symbolizer *symbolizer_new(const struct sym_options *o, struct diag *d);
/* Its helper thread stopped and the kernel's symbols loaded, with what they had to
 * report reported: the first steps of symbolizer_free, for a caller that frees it on
 * another thread later (after which nothing of it speaks through the diag). */
void symbolizer_quiesce(struct symbolizer *s);
/* The cache entries it made written whole (they are written on a thread of their own
 * while the run goes on): for a caller that leaves it to the process's exit unfreed. */
void symbolizer_wait_writes(struct symbolizer *s);
void symbolizer_free(struct symbolizer *s);
struct sp_info;
/* The symbol tables the recording carries (simpleperf's FILE/FILE2 features,
 * formats/read/simpleperf.h; NULL: none), borrowed until symbolizer_free(): asked first
 * by symbolizer_native() and symbolizer_kernel(); a file they have symbols for is not
 * looked for on disk. Call before the first of those. */
void symbolizer_embedded(struct symbolizer *s, const struct sp_info *si);
struct cache_ctx;
/* The cache it reads and writes (--cache-dir), for other users of it in the run (the JIT
 * dumps' tables): its entries are written on the same thread and waited for alike. */
const struct cache_ctx *symbolizer_cache(const struct symbolizer *s);

/*
 * Frames for native code at file offset `offset` of the object `path` (as the
 * recording names it, with its build id when known). `obj` is the caller's id for
 * the (path, build id) pair: the file is looked for once per id. `ret` says the
 * address is a return address: the function, its line and inlined frames are those
 * of the call, at `offset - 1` (as perf's dwarf mode names callers: after a call to
 * a noreturn function `offset` is the next function's). Returns the number of frames
 * written (innermost first; with more than `cap`, the innermost inlined calls and
 * the function), 0 when the address has no symbol. The strings stay valid until
 * symbolizer_free(). Call from one thread (the one that made the symbolizer).
 */
size_t symbolizer_native(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret,
			 struct sym_frame *out, size_t cap);

/*
 * Symbolize (offset, ret) of object `obj` on a second thread, started by the first
 * request, so that a symbolizer_native() call for it later finds it done: for
 * addresses the caller expects to be asked for (a sample of the recording, read
 * ahead). Requests are taken in order; `path` must stay valid until
 * symbolizer_prefetch_stop(), the build id is copied. The results are the same with
 * or without this: it only moves work.
 */
void symbolizer_prefetch(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret);
/*
 * The file the symbolizer reads for object `obj` (found as symbolizer_native() finds
 * it, on first use) and its separate debug file: 1 and malloc'd copies in *file and
 * *debug_file (NULL when none), or 0 when no usable file was found. For the unwinder's
 * CFI. Call from the thread that made the symbolizer.
 */
int symbolizer_object_files(struct symbolizer *s, uint32_t obj, const char *path,
			    const uint8_t *build_id, size_t build_id_size, char **file,
			    char **debug_file);

/*
 * What a recording's PERF_RECORD_MMAP2 says of an object's file besides its name,
 * when it carries no build id: the device and inode it was mapped from.
 */
struct sym_file_id {
	uint32_t maj, min;        /* the device */
	uint64_t ino, generation; /* generation 0: unknown */
	int same_host;            /* the recording was made on this host, so the recorded
				     path's file can be compared with these */
};

/*
 * What the recording says of object `obj`'s file, told before the object is first
 * used (as the mappings are read; the first one told wins). Without a build id the
 * file at the recorded path is held to it: the same device and inode make it
 * verified. Any other file found for an object without a build id is used, and said
 * to be unverified. Call from the thread that made the symbolizer.
 */
void symbolizer_object_file_id(struct symbolizer *s, uint32_t obj, const struct sym_file_id *id);

/*
 * Whether the file used for object `obj` could not be checked against the recording:
 * "not verified: no build id" (and why, more), with *file (may be NULL) the file
 * used; NULL when it was checked (build id, inode) or no file was used. The strings
 * stay valid until symbolizer_free(). Call from the thread that made the symbolizer.
 */
const char *symbolizer_unverified(struct symbolizer *s, uint32_t obj, const char **file);

/* An object by the name and build id the recording gives it. */
struct sym_object {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_size;
};

/*
 * Load these objects (their symbols, their DWARF) on that thread, the largest first,
 * each after the addresses asked for meanwhile: for the objects a recording says its
 * samples hit. The first symbolizer_native() or symbolizer_prefetch() of an object id
 * with the same path and build id uses the loaded one. The paths must stay valid
 * until symbolizer_free(); the build ids are copied.
 */
void symbolizer_preload(struct symbolizer *s, const struct sym_object *objs, size_t n);
/* No more prefetching: requests not taken yet are dropped; waits for the thread. */
void symbolizer_prefetch_stop(struct symbolizer *s);

/* Where an object's file was looked for, in the order of symbolizer_native()'s search. */
#define SYM_LOCATION_TRIED 12
struct sym_tried {
	char path[4096];
	const char *result; /* "full symbol table", "file not found", "build id differs ..." */
};
struct sym_location {
	enum sym_obj_problem problem; /* as symbolizer_problem() would say */
	char found[4096];             /* the file used; "" when none */
	char symbols_from[4096];      /* the file its symbols come from (a debug file); "" */
	const char *symbols;          /* what the file chosen gave ("full symbol table",
					 "exported symbols only (.dynsym)", ...), NULL when none */
	struct sym_tried tried[SYM_LOCATION_TRIED];
	size_t ntried;
	const char *unverified;       /* as symbolizer_unverified() says, or NULL */
};

/*
 * Look for the file of object `path` (build id as the recording gives it) as
 * symbolizer_native() does, and say where: each candidate tried with what it gave,
 * the one chosen. Loads its symbol table (through the cache) but symbolizes nothing
 * and keeps nothing. Call from the thread that made the symbolizer.
 */
void symbolizer_locate(struct symbolizer *s, const char *path, const uint8_t *build_id,
		       size_t build_id_size, struct sym_location *out);
/* symbolizer_locate() for object `obj`, held to what symbolizer_object_file_id() was
 * told of it. */
void symbolizer_locate_object(struct symbolizer *s, uint32_t obj, const char *path,
			      const uint8_t *build_id, size_t build_id_size,
			      struct sym_location *out);

/* Why object `obj` gave no symbols (SYM_OBJ_FINE when it loaded), and the path tried. */
enum sym_obj_problem symbolizer_problem(struct symbolizer *s, uint32_t obj);
const char *sym_obj_problem_str(enum sym_obj_problem p);

/*
 * The recorded kernel's release (HEADER_OSRELEASE, "5.6.15"), or NULL when the
 * recording does not say: what decides whether /proc/kallsyms may name the kernel's
 * code of a recording that names no kernel build id. Copied. Call before the first
 * symbolizer_kernel() or symbolizer_kernel_prefetch().
 */
void symbolizer_kernel_release(struct symbolizer *s, const char *release);

/*
 * Kernel code at `addr`. `build_id` is the recording's kernel build id (size 0 when
 * unknown): /proc/kallsyms is used only when the running kernel's matches, or, with
 * none, when the running kernel's release is the recorded one (symbolizer_kernel_
 * unverified() then says so); else the --kallsyms file. Returns 1 and fills *out (name) and *module ("[kernel.kallsyms]"
 * or "[ext4]"), 0 when there is no kernel symbol for it.
 */
int symbolizer_kernel(struct symbolizer *s, uint64_t addr, const uint8_t *build_id,
		      size_t build_id_size, struct sym_frame *out, const char **module);

/*
 * Kernel module code `offset` bytes into the mapping of module `path` (as the
 * recording names it): 1 and *out from the recording's own table of that module
 * (symbolizer_embedded), 0 when it has none there (then symbolizer_kernel by address).
 */
int symbolizer_kernel_module(struct symbolizer *s, const char *path, uint64_t offset,
			     struct sym_frame *out);

/*
 * Start loading the kernel symbols for the recorded kernel (same choice of source as
 * symbolizer_kernel) on a second thread, so that it overlaps reading the recording.
 * The first symbolizer_kernel() call waits for it.
 */
void symbolizer_kernel_prefetch(struct symbolizer *s, const uint8_t *build_id,
				size_t build_id_size);

/* Where kernel symbols came from, or why there are none (for the summary). */
const char *symbolizer_kernel_source(struct symbolizer *s);
/* Why the kernel symbols used could not be checked against the recording ("matched by
 * release only: ..."), or NULL when they were, or none were used. */
const char *symbolizer_kernel_unverified(struct symbolizer *s);

#endif
