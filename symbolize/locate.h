/* locate: where every file perfconv reads is looked for, as one table; where its cache
 * keeps what it makes; and whether a mapping's code is in a file at all. */
#ifndef PERFCONV_LOCATE_H
#define PERFCONV_LOCATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/mapfile.h"
#include "symbolize/cachedir.h"

/*
 * Where a mapping's code lies, from the name the recording gives it. One rule for
 * every part of perfconv that asks.
 */
enum map_origin {
	MAP_FILE,    /* an ELF file at that path; also "PATH (deleted)": the file that was
			at PATH when it was mapped (removed or replaced while it ran), looked
			for at each place as named, then as PATH */
	MAP_VDSO,    /* [vdso]: the kernel's image, which perf saves in its build-id cache */
	MAP_NO_FILE, /* code in no file: //anon, [anon:...], [heap], [stack], other [names],
			memfd:, /dev/zero, /anon_hugepage, SysV and /dev/shm memory, a mapped
			jit-PID.dump or /tmp/perf-PID.map: where JIT runtimes put code */
};
enum map_origin map_origin(const char *path);

/* What is looked for. */
enum loc_kind {
	LOC_OBJECT,   /* the ELF file of a mapping (MAP_FILE) */
	LOC_VDSO,     /* the [vdso] image */
	LOC_DEBUG,    /* an object's separate debug file (its .symtab, its DWARF) */
	LOC_KALLSYMS, /* the recorded kernel's symbols */
	LOC_JITDUMP,  /* jit-PID.dump, or jit-PID.dump.gz, that a JIT runtime wrote */
	LOC_PERFMAP,  /* perf-PID.map */
};

/* One row of the table: a place, for one kind. */
enum loc_place {
	LOC_SYMFS_PATH,        /* --symfs DIR/recorded/path */
	LOC_SYMFS_NAME,        /* --symfs DIR/NAME */
	LOC_RECORDED,          /* the path the recording names */
	LOC_BESIDE_INPUT,      /* NAME in the input perf.data's directory */
	LOC_BUILDID_ELF,       /* perf's build-id cache: DIR/.build-id/xx/rest/elf */
	LOC_BUILDID_VDSO,      /* DIR/[vdso]/BUILDID/vdso */
	LOC_SYMFS_VDSO,        /* --symfs DIR/vdso.so */
	LOC_BESIDE_VDSO,       /* vdso.so beside the input */
	LOC_DEBUG_BUILDID,     /* [symfs]/usr/lib/debug/.build-id/xx/rest.debug */
	LOC_DEBUGLINK_DIR,     /* the .gnu_debuglink name in the object's directory */
	LOC_DEBUGLINK_DOTDEBUG, /* ... in its .debug/ */
	LOC_DEBUGLINK_USRLIB,  /* ... in /usr/lib/debug/DIR/ */
	LOC_DEBUG_PATH_DEBUG,  /* /usr/lib/debug/PATH.debug */
	LOC_DEBUG_PATH,        /* /usr/lib/debug/PATH */
	LOC_DEBUGINFOD,        /* libdw's debuginfod client */
	LOC_KALLSYMS_OPTION,   /* --kallsyms FILE */
	LOC_BUILDID_KALLSYMS,  /* DIR/[kernel.kallsyms]/BUILDID/kallsyms */
	LOC_PROC_KALLSYMS,     /* /proc/kallsyms */
	LOC_JIT_DIRS,          /* anywhere below a --jit-dir */
	LOC_TMP,               /* /tmp/NAME */
};

/* What a candidate asks of whoever tries it. */
#define LOC_F_BELOW      1u  /* `path` is a directory: `name` is looked for anywhere below */
#define LOC_F_GZ_TOO     2u  /* `path`, then `path`.gz (a compressed jitdump) */
#define LOC_F_CRC        4u  /* without a build id, the .gnu_debuglink CRC must match */
#define LOC_F_LIBDW      8u  /* not a path: libdw's own search (debuginfod) */
#define LOC_F_ONLY      16u  /* given, it is the only place (--kallsyms) */
#define LOC_F_SAME_KERNEL 32u /* only when the running kernel's build id is the recorded one */
#define LOC_F_UNDELETED 64u  /* OBJECT: the recorded "PATH (deleted)" looked for as PATH */

/* Where the user said files are. Strings borrowed; each NULL when not given. */
struct loc_places {
	const char *symfs;        /* --symfs */
	const char *input_dir;    /* the directory of the input perf.data */
	const char *buildid_dir;  /* perf's build-id cache: --buildid-dir, else ~/.debug */
	const char *kallsyms;     /* --kallsyms */
	const char *const *jit_dirs; /* --jit-dir, each searched recursively */
	size_t njit_dirs;
	int here;                 /* the recording was made on this host (/tmp maps) */
};

/* What one search is for. */
struct loc_query {
	const char *path;         /* OBJECT, VDSO: as the recording names it; DEBUG: the
				     object's path (under `sysroot`); JITDUMP: the dump the
				     process mapped, or NULL */
	const uint8_t *build_id;  /* the recorded one (DEBUG: the one to match); may be NULL */
	size_t build_id_size;
	uint32_t pid;             /* JITDUMP, PERFMAP */
	const char *sysroot;      /* DEBUG: the --symfs the object was found under, or NULL */
	const char *debuglink;    /* DEBUG: the object's .gnu_debuglink name, or NULL */
};

/* One place to look, in the table's order. */
struct loc_candidate {
	enum loc_place place;
	unsigned flags;           /* LOC_F_* */
	char *path;               /* the file (LOC_F_BELOW: the directory); NULL for LOC_F_LIBDW */
	const char *sysroot;      /* OBJECT: the --symfs `path` lies under, whose debug files
				     are looked for under it too; else NULL */
	size_t under;             /* path + under: the part below `sysroot` (0 without one) */
	size_t instance;          /* LOC_F_BELOW: which --jit-dir */
	char name[64];            /* LOC_F_BELOW: the file name looked for */
};

struct loc_list {
	struct loc_candidate *v;
	size_t n, cap;
};

/* The length of `path` without a trailing " (deleted)" (the kernel's mark of a file
 * removed after it was mapped), or 0 when it has none. */
size_t deleted_path_len(const char *path);

/*
 * Every place to look for a file of `kind` for `q`, in the table's order, skipping
 * those that do not apply (no --symfs, no build id, ...). `pl` may be NULL for
 * LOC_DEBUG. What each candidate must be (its build id, its CRC, a regular file) is
 * checked by the caller, who tries them in order. Release with loc_list_release().
 */
void locate_list(const struct loc_places *pl, enum loc_kind kind, const struct loc_query *q,
		 struct loc_list *out);
void loc_list_release(struct loc_list *l);
/* How a place is shown in a list of places looked at ("DIR/.../jit-42.dump[.gz]"):
 * into `buf` (NUL-terminated, cut at `size`); returns buf. */
const char *loc_candidate_shown(const struct loc_candidate *c, char *buf, size_t size);

/* The table itself, for documentation and tests: row `i` (0 ...) or 0 past the end. */
struct loc_row {
	enum loc_kind kind;
	enum loc_place place;
	unsigned flags;
	const char *doc;          /* how the place is written, and when it applies */
};
int locate_row(size_t i, struct loc_row *out);

/* [sysroot]/usr/lib/debug/.build-id/xx/rest.debug, malloc'ed; NULL for an id shorter
 * than 2 bytes or longer than 64. */
char *locate_debug_build_id_path(const char *sysroot, const uint8_t *id, size_t n);
/* Whether libdw's debuginfod client is one of the places (DEBUGINFOD_URLS is set). */
int locate_uses_debuginfod(void);

/*
 * The cache (--cache-dir DIR): what perfconv makes from the files it finds, kept for
 * later conversions.
 *   DIR/symbols/KEY          a parsed ELF symbol table (KEY: 16 hex digits of the
 *                            object's path and the build id asked for)
 *   DIR/debug/BUILDID.debug  a separate debug file with its sections inflated
 *   DIR/kallsyms/BUILDID     a parsed kallsyms of that kernel
 *   DIR/frames/KEY           what an object's DWARF said of the addresses asked
 *                            (symbolize/framecache.h; KEY: 16 hex digits of the
 *                            object's file and its debug file)
 *   DIR/jit/KEY              a jitdump's code table, as far as it was read
 *                            (symbolize/jit/jitcache.h; KEY: 16 hex digits of the
 *                            dump's file, header and how it was read)
 *   ENTRY.ok                 an entry's stamp (below)
 *   DIR/perfconv-size        the bytes it takes (symbolize/cachedir.h)
 * Its folders and files are trusted, made and capped as symbolize/cachedir.h says.
 */
/* The file of the entry `key` (hex), malloc'ed, its folders made first (0700) when
 * `make` (NULL when they cannot be, or are refused); NULL too when there is no cache
 * (`dir` NULL or ""). */
char *cache_entry_path(const char *dir, enum cache_kind kind, const char *key, int make);

/*
 * Each entry carries what it was made from (the source file's size, modification
 * time, inode and device; the build id) and a checksum of its bytes. What reading
 * one found:
 */
enum cache_verdict {
	CACHE_MISSING, /* none: made now */
	CACHE_GOOD,    /* used */
	CACHE_STALE,   /* made from another file or build id, or by another version of
			  perfconv: made again without a word */
	CACHE_DAMAGED, /* there, but truncated, altered, replaced by something else, or not
			  a regular file: removed and made again, with a warning */
};

/* Tell `c` that `entry` is damaged (`why`), and remove it, so that it can be made again.
 * NULL-safe. */
void cache_damaged(const struct cache_ctx *c, const char *entry, const char *why);
/* The checksum an entry of `len` bytes keeps in its 8 bytes at offset `at` (`at` + 8 <=
 * `len`, or `at` == `len` for none inside): of all its other bytes. */
uint64_t cache_entry_sum(const void *entry, size_t len, size_t at);

/* The first bytes of a symbol table or kallsyms entry (host byte order). */
struct cache_head {
	char magic[8];        /* which kind of entry */
	uint32_t version;     /* of its layout: another is an older (or newer) perfconv's */
	uint32_t header_size; /* of the kind's whole header, this included */
	uint64_t file_size;   /* of the entry */
	uint64_t checksum;    /* cache_entry_sum() of the entry, at this field */
};
/*
 * Computing a checksum over a 10 MB entry costs milliseconds on every run, so a stamp
 * beside the entry (ENTRY.ok) records the entry's file (device, inode, size,
 * modification and change times) as it was when its checksum last held; while the
 * file is exactly that, the checksum is not computed again. Any write to the file
 * moves its change time, which no one can set back; and a stamp is read only in a
 * folder no one but this user (or root) can write in (cachedir.h). Each time it
 * vouches, its own modification time is set to now: the entry's last use.
 */
/* 1 when the stamp of `entry` (open, with status `st`) vouches for it as it is. */
int cache_entry_stamped(const char *entry, const struct stat *st);
/* Its checksum held: stamp `entry` (open as `fd`, status `st`). Not done while its
 * change time is within the clock's coarse resolution of now (a write in that tick could
 * not be told apart); the next run stamps it then, and this use is recorded on the entry
 * itself (its modification time: eviction goes by the later of the two). */
void cache_entry_stamp(const char *entry, int fd, const struct stat *st);

/* Fill `entry`'s head (its first bytes) for an entry of `len` bytes and seal it with
 * its checksum: the last thing done before writing it. */
void cache_head_seal(void *entry, size_t len, const char *magic, uint32_t version,
		     size_t header_size);
/*
 * Seal `entry` (as cache_head_seal) and write it as `file` (cache_file_create) on
 * c->later's thread (common/later.h; `c` or its `later` NULL: now), while the caller
 * goes on: both are the callee's, freed once written. A reader in the same process
 * waits for c->later first.
 */
void cache_entry_write_later(const struct cache_ctx *c, char *file, void *entry, size_t len,
			     const char *magic, uint32_t version, size_t header_size);
/* One part of an entry written by cache_entry_write_parts_later: `len` bytes of `p` at
 * offset `off`; `own` is freed once written (NULL: the caller keeps p alive until then). */
struct cache_part {
	uint64_t off;
	const void *p;
	size_t len;
	void *own;
};
/* The same for an entry of `len` bytes made of `head` (its first head_len bytes, at
 * least its header; the callee's) and `nparts` parts in order of offset after it,
 * zeros between them and after the last. */
void cache_entry_write_parts_later(const struct cache_ctx *c, char *file, void *head,
				   size_t head_len, const struct cache_part *parts, size_t nparts,
				   size_t len, const char *magic, uint32_t version,
				   size_t header_size);
/*
 * Map the entry `file` and check its head: CACHE_GOOD with `mf` mapped (the caller
 * then checks what the entry was made from, and closes it), or another verdict
 * with nothing mapped; *why says what is wrong for CACHE_DAMAGED, and is NULL
 * otherwise. Never waits on a FIFO.
 */
enum cache_verdict cache_entry_open(const char *file, const char *magic, uint32_t version,
				    size_t header_size, struct mapped_file *mf, const char **why);

#endif
