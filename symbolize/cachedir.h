/* cachedir: the cache's folders as perfconv trusts them, its files written whole under
 * names of their own, and its size held under a cap by dropping what was used longest
 * ago. */
#ifndef PERFCONV_CACHEDIR_H
#define PERFCONV_CACHEDIR_H

#include <stddef.h>
#include <stdint.h>

#include "common/mapfile.h"

/*
 * Trust. perfconv runs as root for months with a cache that another user may reach
 * (--cache-dir names any folder; a stamp there skips an entry's checksum). A folder of
 * the cache, DIR and the folder of each kind of entry in it (DIR/symbols, ...), is
 * used only when it is a directory, not a symbolic link, owned by this process's user
 * or by root; each is opened relative to the one above it once that is checked
 * (openat, O_NOFOLLOW), so that neither a link nor a rename between a check and a use
 * leads elsewhere. An entry or a stamp is used only when it is a regular file, no
 * link, owned likewise. Folders are made 0700 and files 0600 whatever the umask; a
 * kind's folder of ours that others may enter (older perfconvs made them 0755) is
 * closed to them. A folder refused is said once (cache_problem) and the run goes on
 * without the cache.
 */

/* The kinds of entry, each in its folder of the cache (cache_kind_folder). */
enum cache_kind { CACHE_SYMBOLS, CACHE_DEBUG, CACHE_KALLSYMS, CACHE_FRAMES, CACHE_JIT, CACHE_KINDS };
/* "symbols", "debug", "kallsyms", "frames", "jit". */
const char *cache_kind_folder(enum cache_kind kind);

struct later;

/* The cache as the code that reads and writes entries holds it. */
struct cache_ctx {
	const char *dir; /* NULL or "": no cache */
	/* told of each damaged entry (the entry's path, what is wrong with it); may be NULL */
	void (*damaged)(void *arg, const char *entry, const char *why);
	void *arg;
	/* where entries are written while the run goes on (common/later.h); NULL: at once */
	struct later *later;
	/* told of what the user should hear of the cache as a whole (the folder, why): a
	 * folder refused, a full filesystem; may be NULL */
	void (*problem)(void *arg, const char *folder, const char *why);
	/* the cap on its size in bytes (--cache-size, see below); 0: none, nor a count */
	uint64_t max_size;
};

/* Every function below takes the cache `c` it works for only to say what it meets
 * (c->problem) and to count and cap its size (c->max_size): `c` may be NULL. */

/* Whether DIR can be the cache: 0 when it is (or is missing: it is made when first
 * written), -1 when it or a kind's folder in it is refused (said). */
int cache_dir_usable(const struct cache_ctx *c, const char *dir);

/*
 * The folder of the cache file `path` (DIR/KIND/NAME, as cache_entry_path names it),
 * DIR and KIND each opened and checked as above, each made (0700; DIR with the
 * folders above it) when `make` and missing: a descriptor of KIND's folder (the
 * caller's to close), with *name pointing at NAME in `path`; or -1 when one is
 * missing or refused (said).
 */
int cache_folder_of(const struct cache_ctx *c, const char *path, int make, const char **name);

/* The cache file `path` opened to read (non-blocking: a FIFO does not wait): a
 * descriptor, or -1 with *why NULL when there is none (or its folder cannot be used),
 * else saying what is there instead (a link, another user's file, ...). */
int cache_file_open(const struct cache_ctx *c, const char *path, const char **why);
/* Whether the cache file `path` is there and ours. */
int cache_file_exists(const struct cache_ctx *c, const char *path);
/* The name `path` (an entry or a stamp) removed, in its folder as checked. */
void cache_file_remove(const struct cache_ctx *c, const char *path);

/* A new file (0600) to become the cache file `path`, in its folder as checked, made
 * when missing: 0 and `f` ready, or -1 (a full filesystem said). */
int cache_file_create(const struct cache_ctx *c, struct atomic_file *f, const char *path);
/* `f`, written, given its name: 0, or -1 with nothing left behind (a full filesystem
 * said). What it adds to the cache is counted, and past c->max_size the cache
 * trimmed (below). */
int cache_file_commit(const struct cache_ctx *c, struct atomic_file *f, const char *path);
/* `f` dropped after a write into it failed with errno `err`: nothing left behind, and
 * a full filesystem (ENOSPC, EDQUOT) said. */
void cache_file_fail(const struct cache_ctx *c, struct atomic_file *f, const char *path, int err);
/* `len` bytes written as the cache file `path`, whole or not at all: 0 or -1. */
int cache_file_write(const struct cache_ctx *c, const char *path, const void *data, size_t len);

/* The cache file open as `fd` (an entry's stamp) used now: its modification time set
 * to now, which eviction goes by (the entry itself is not touched: that would move its
 * change time, which its stamp records). */
void cache_file_used(int fd);

/*
 * Size. The bytes the cache takes (its files' blocks) are counted in DIR/perfconv-size
 * (a decimal number, read and written under flock, so that several processes at once
 * count alike): each entry written adds its size, less that of the entry it
 * replaces. Only when the count passes the cap, or is missing or unreadable, are the
 * folders listed: the count is made again, and past the cap the entries used longest
 * ago (by the later modification time of an entry and its stamp, which each use sets)
 * are removed with their stamps until the cache is at 80% of the cap, as ccache does.
 * An entry whose source is gone is never used again, so it is among the first to go.
 * Stamps (48 bytes) are counted only then; temporary files an interrupted write left
 * go once an hour old.
 */
/* 1 GiB by default: an entry is a few MB at most (libc's inflated debug file 9 MB, its
 * symbol table 0.5 MB, a kernel's table 5 MB), so a host's few hundred objects stay,
 * a fifth of what ccache keeps of compilers' outputs. */
#define CACHE_SIZE_DEFAULT (1ull << 30)

#endif
