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
 * temporary name). 0, or -1 when it cannot be written. */
int kallsyms_cache_write(const struct kallsyms *k, const char *file, const char *path,
			 const struct file_id *src, const uint8_t *build_id,
			 size_t build_id_size);

/*
 * The build id of the running kernel, from /sys/kernel/notes. Returns its size,
 * 0 when it cannot be read.
 */
size_t kernel_live_build_id(uint8_t *id, size_t cap);

/*
 * 1 when the file `path` holds exactly what `running` (/proc/kallsyms) reads now. perf
 * inject --jit copies the running kernel's kallsyms into the build-id cache under the
 * recorded kernel's build id, even when another kernel runs: such a copy names every
 * kernel frame wrong.
 */
int kallsyms_same_as_running(const char *path, const char *running);

#endif
