/* jitprocs: find the jitdumps and perf maps of a recording's processes and load them. */
#ifndef PERFCONV_JITPROCS_H
#define PERFCONV_JITPROCS_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "common/util.h"
#include "formats/read/jitdump.h"
#include "symbolize/jit/jitcode.h"
#include "symbolize/jit/jitstore.h"

struct jit_search {
	const char *input_dir;       /* directory of the input perf.data, or NULL */
	const char *const *jit_dirs; /* --jit-dir, searched recursively */
	size_t njit_dirs;
	int use_tmp_maps;            /* look at /tmp/perf-PID.map (the recording was made here) */
	int clock_monotonic;         /* sample times are CLOCK_MONOTONIC (perf record -k 1) */
	const struct jitdump_time_conv *time_conv; /* for ARCH_TIMESTAMP dumps, or NULL */
	int demangle;
	uint64_t recording_start_wall_ns; /* when the recording began (ns since the
					     epoch), 0 when unknown: older maps are
					     warned about */
	uint64_t first_time, last_time; /* the recording's first and last record times
					    (its clock), 0 when unknown */
	/* A long-lived session's dumps (a watcher's), or NULL: each dump is read on from
	 * where the last conversion stopped, and its table kept there, pruned to what
	 * lookups from first_time on can meet. */
	struct jit_store *store;
	/* perfconv's cache (--cache-dir), or NULL: without a store, each dump's table is
	 * kept there as far as it was read (symbolize/jit/jitcache.h) */
	const struct cache_ctx *cache;
	/* A watcher's folder is not trusted (perfconv upload --watch without
	 * --trust-folder): a dump or map beside the input or in /tmp is used only when it,
	 * and a link leading to it, is owned by `owner_uid` (the chunk's owner) or root;
	 * another is not used, and said. */
	int check_owner;
	unsigned owner_uid;
};

/* How a process mapped its jitdump: the MMAP2 record's file identity and time. */
struct jit_mapping {
	uint32_t maj, min;           /* the file's device; 0, 0 when not recorded */
	uint64_t ino;                /* 0 when not recorded */
	uint64_t time;               /* the record's time, 0 for a synthesized one (a process
				        that was running when perf began) */
};

struct jit_procs;

/*
 * An empty set: the recording's processes are told to it as pass 1 meets them
 * (jit_procs_seen, jit_procs_expect), then jit_procs_load() finds and loads their
 * files once the search is known (the clock and TIME_CONV are known only after
 * pass 1). Names are interned in `strings`, which must outlive the set.
 */
struct jit_procs *jit_procs_new(struct strtab *strings);
void jit_procs_free(struct jit_procs *jp);

/* A process of the recording (any record naming its pid). */
void jit_procs_seen(struct jit_procs *jp, uint32_t pid);
/*
 * A process mapped `path`, a file named jit-PID.dump: it wrote a jitdump there. `m`
 * (may be NULL) says which file it was: that file, found where the recording says or
 * elsewhere, is the process's dump above any other of the same name.
 */
void jit_procs_expect(struct jit_procs *jp, uint32_t pid, const char *path,
		      const struct jit_mapping *m);
/* Process `pid` exited during the recording (its main thread's EXIT): its runtime no
 * longer writes its dump, which a partial last record then damages. The dump of a
 * process that did not is live (JITDUMP_LIVE). */
void jit_procs_exited(struct jit_procs *jp, uint32_t pid);
/* Process `pid`'s main thread is named `comm` (a COMM record): its first name is kept. */
void jit_procs_named(struct jit_procs *jp, uint32_t pid, const char *comm);
/* Process `child` was forked from `parent`: with no dump or map of its own, it is
 * given its parent's (the code compiled before the fork). `synthesized`: a FORK perf
 * made from /proc for a process already running when it began (it may have run another
 * program since, unseen): given its parent's only when named as its parent is. */
void jit_procs_forked(struct jit_procs *jp, uint32_t child, uint32_t parent, int synthesized);
/* Process `pid` ran another program (exec): it inherits no parent's JIT code. */
void jit_procs_execed(struct jit_procs *jp, uint32_t pid);
/* Process `pid` began during the recording (forked then; an exec counts too). */
void jit_procs_began(struct jit_procs *jp, uint32_t pid);
/*
 * Process `pid` is `nspid` in its own pid namespace (a container): its dump and perf
 * map are named by that pid (jit-1.dump, /tmp/perf-1.map), looked for when none is
 * named by `pid`. The first told wins; nspid 0 or equal to pid tells nothing.
 */
void jit_procs_ns_pid(struct jit_procs *jp, uint32_t pid, uint32_t nspid);

/*
 * Find and load every dump and map: for each process, its dump in the --jit-dir trees,
 * next to the input (jit-PID.dump or jit-PID.dump.gz), at the path the recording
 * names; its perf map in the --jit-dir trees, next to the input, at
 * /tmp/perf-PID.map (use_tmp_maps). The file the process mapped (its device and inode,
 * jit_procs_expect) wins wherever it is found; else what the user named does. A dump
 * that cannot be the process's is not used: written by another pid (its header), or
 * its code loaded before the process mapped its dump (an earlier process with the same
 * pid) or after the recording ended (a later one); the next place is tried, and a note
 * says which was used and why another was not. A map written before the recording
 * began is warned about.
 * Says which file served which process (notes, unless `quiet`), and warns about dumps
 * a process mapped that were not found, dumps of another pid, and a clock that makes
 * attribution fall back to the last load. Damaged dumps and maps are warned about and
 * used up to the damage. The search's strings must outlive the call; its `demangle`
 * holds for the set's life.
 */
void jit_procs_load(struct jit_procs *jp, const struct jit_search *s, struct diag *d, int quiet);

/* Where the files of one process are, or would be (jit_procs_where). */
struct jit_where {
	const char *expected; /* the jit-PID.dump path the process mapped (owned by the set) */
	char *dump;           /* the dump jit_procs_load() would read, or NULL */
	char *map;            /* the perf map it would read, or NULL */
	char *unused;         /* with no dump to read: one found but not the process's or
				 not a jitdump, or NULL */
	char *unused_why;     /* why not */
	char **looked;        /* every place looked at, in order ("DIR/.../NAME": anywhere below DIR) */
	size_t nlooked;
};

/*
 * For process `pid`: the dump and the map jit_procs_load() would take, by the same
 * search, and the places it looks at, without reading them. Use it instead of
 * jit_procs_load() (the first call fixes the search); release with jit_where_release().
 */
void jit_procs_where(struct jit_procs *jp, const struct jit_search *s, uint32_t pid,
		     struct jit_where *w);
void jit_where_release(struct jit_where *w);

/* The table of process `pid` (index for jit_procs_table/_module), -1 when it has none. */
int jit_procs_find(const struct jit_procs *jp, uint32_t pid);
const struct jitcode *jit_procs_table(const struct jit_procs *jp, int idx);
/*
 * For an address the process's dump names nothing at: the perf map beside the dump,
 * read the first time it is needed. 1 and *f (name, start, size; no lines) and
 * *module (the map's file name) filled, 0 when no line covers `addr`.
 */
int jit_procs_fallback(struct jit_procs *jp, int idx, uint64_t addr, struct diag *d,
		       struct jitcode_frame *f, const char **module);
/* The file that served it ("jit-30720.dump", "perf-30787.map"): the frames' module. */
const char *jit_procs_module(const struct jit_procs *jp, int idx);
size_t jit_procs_count(const struct jit_procs *jp);

/*
 * For a message about process `pid`'s unnamed anonymous code: which files were looked
 * for and where ("no jit-42.dump or perf-42.map below DIR, in DIR2, in /tmp"). Writes
 * at most `size` bytes with the NUL; returns the length.
 */
size_t jit_procs_describe_search(const struct jit_procs *jp, uint32_t pid, char *buf,
				 size_t size);

#endif
