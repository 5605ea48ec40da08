/* locate: where every file perfconv reads is looked for, as one table; where its cache
 * keeps what it makes; and whether a mapping's code is in a file at all. */
#ifndef PERFCONV_LOCATE_H
#define PERFCONV_LOCATE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where a mapping's code lies, from the name the recording gives it. One rule for
 * every part of perfconv that asks.
 */
enum map_origin {
	MAP_FILE,    /* an ELF file at that path; also "PATH (deleted)": the file that was
			at PATH when it was mapped (removed or replaced while it ran) */
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
 */
enum cache_kind { CACHE_SYMBOLS, CACHE_DEBUG, CACHE_KALLSYMS };
/* The file of the entry `key` (hex), malloc'ed, its directory made first when `make`
 * (NULL when it cannot be); NULL too when there is no cache (`dir` NULL or ""). */
char *cache_entry_path(const char *dir, enum cache_kind kind, const char *key, int make);

#endif
