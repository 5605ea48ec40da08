/* kallsyms: kernel symbols from /proc/kallsyms or a saved copy of it. */
#ifndef PERFCONV_KALLSYMS_H
#define PERFCONV_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "common/mapfile.h"

/*
 * Code and data symbols (types t, T, w, W, d, D, b, B, as perf keeps them) sorted by
 * address; each ends where the next begins (as perf does). Symbols of modules keep
 * their module name ("[ext4]" in the file, "ext4" here).
 */
struct ksym {
	uint64_t start, end;
	const char *name;   /* owned by the table */
	const char *module; /* NULL for the core kernel */
};

struct kallsyms;
struct cache_ctx;

/*
 * Load a kallsyms file (plain or gzip-compressed). Returns NULL and fills `err` when
 * the file cannot be read or holds no text symbol with a nonzero address
 * (kptr_restrict hides them as zeros).
 */
struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen);
/* The symbol holding `addr`: 1 and *out filled (its strings owned by the table), 0
 * when there is none. */
int kallsyms_lookup(const struct kallsyms *k, uint64_t addr, struct ksym *out);
size_t kallsyms_count(const struct kallsyms *k);
/* Address of a symbol by exact name (e.g. "_text"), 0 when absent. */
uint64_t kallsyms_addr_of(const struct kallsyms *k, const char *name);
void kallsyms_free(struct kallsyms *k);

/*
 * A parsed table kept as a file, so that the next conversion of a recording of the
 * same kernel maps it instead of parsing 120,000 lines. A cache file names its
 * source (path, and its identity: size, modification time, inode, device) and the
 * kernel's build id, and carries a checksum; it is used only when all of these are
 * what they are now.
 */
/* The table in cache `file` when it was made from `path` as `src` describes it and for
 * this build id, and its checksum holds; NULL otherwise (missing, stale or damaged:
 * then *damage says what is wrong with it, else it is NULL). */
struct kallsyms *kallsyms_cache_open(const char *file, const char *path,
				     const struct file_id *src, const uint8_t *build_id,
				     size_t build_id_size, const char **damage);
/* Write `k`, parsed from `path` as `src` describes it, to cache `file` (through a
 * temporary name) on cache->later's thread (common/later.h; `cache` or its `later`
 * NULL: now), from k's own arrays: kallsyms_free(k) waits for it, and a reader in this
 * process waits for cache->later. 0, or -1 when it cannot be made. */
int kallsyms_cache_write(struct kallsyms *k, const char *file, const char *path,
			 const struct file_id *src, const uint8_t *build_id,
			 size_t build_id_size, const struct cache_ctx *cache);

/*
 * The running kernel's table, /proc/kallsyms, without parsing it on every run. Reading
 * /proc/kallsyms is costly in itself (the kernel formats 120,000 lines: 40 ms of system
 * time), and what it says changes as modules, BPF programs and trampolines come and
 * go, so a cache of the whole file could not be trusted. What is kept is the core
 * kernel's part within its image (from _text to the last core symbol): it is fixed for
 * one kernel in one boot, and nothing that comes and goes is placed inside the image.
 * Such an entry holds the kernel's build id (/sys/kernel/notes), the boot id
 * (/proc/sys/kernel/random/boot_id) and the first bytes /proc/kallsyms reads (the
 * kernel's load address, and whether addresses are shown at all); it is used only when
 * all three are what they are now. A lookup outside the core range parses the live
 * file then, once, and answers from it, as a run without the cache would.
 */
struct kallsyms_live {
	const char *kallsyms, *notes, *boot_id; /* the files: KALLSYMS_LIVE for the real ones */
};
#define KALLSYMS_LIVE { "/proc/kallsyms", "/sys/kernel/notes", "/proc/sys/kernel/random/boot_id" }
/* What identifies the running kernel's table now; filled by kallsyms_live_id. */
struct kallsyms_live_id {
	uint8_t build_id[64];
	size_t build_id_size;
	char ident[4608]; /* the live file's path, the boot id and the file's first bytes */
	size_t ident_len;
};
/* 0 and `id` filled; -1 when something is unreadable or the first bytes show no
 * address (then there is no caching). */
int kallsyms_live_id(const struct kallsyms_live *src, struct kallsyms_live_id *id);
/* The core table in cache `file` made for `id`, answering outside its range from
 * src->kallsyms parsed on demand; NULL when missing, stale or damaged (*damage). */
struct kallsyms *kallsyms_live_open(const char *file, const struct kallsyms_live *src,
				    const struct kallsyms_live_id *id, const char **damage);
/* Write the core part of `k` (parsed from the live file as `id` describes it) to
 * cache `file`, as kallsyms_cache_write does (later): 0, or -1 when it cannot be made
 * or the table has no core range free of other symbols. */
int kallsyms_live_write(struct kallsyms *k, const char *file, const struct kallsyms_live_id *id,
			const struct cache_ctx *cache);

/*
 * The build id of the running kernel, from /sys/kernel/notes. Returns its size,
 * 0 when it cannot be read.
 */
size_t kallsyms_live_build_id(uint8_t *id, size_t cap);

/*
 * 1 when the file `path` holds exactly what `running` (/proc/kallsyms) reads now. perf
 * inject --jit copies the running kernel's kallsyms into the build-id cache under the
 * recorded kernel's build id, even when another kernel runs: such a copy names every
 * kernel frame wrong.
 */
int kallsyms_same_as_running(const char *path, const char *running);

#endif
