/* kallsyms: kernel symbols from /proc/kallsyms or a saved copy of it. */
#ifndef PERFCONV_KALLSYMS_H
#define PERFCONV_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Text symbols (types t, T, w, W) sorted by address; each ends where the next
 * begins (as perf does). Symbols of modules keep their module name
 * ("[ext4]" in the file, "ext4" here).
 */
struct ksym {
	uint64_t start, end;
	const char *name;   /* owned by the table */
	const char *module; /* NULL for the core kernel */
};

struct kallsyms;

/*
 * Load a kallsyms file (plain or gzip-compressed: both read through zlib's
 * gzopen). Returns NULL and fills `err` when the file cannot be read or holds no
 * text symbol with a nonzero address (kptr_restrict hides them as zeros).
 */
struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen);
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);
size_t kallsyms_count(const struct kallsyms *k);
/* Address of a symbol by exact name (e.g. "_text"), 0 when absent. */
uint64_t kallsyms_addr_of(const struct kallsyms *k, const char *name);
void kallsyms_free(struct kallsyms *k);

/*
 * The build id of the running kernel, from /sys/kernel/notes. Returns its size,
 * 0 when it cannot be read.
 */
size_t kernel_live_build_id(uint8_t *id, size_t cap);

#endif
