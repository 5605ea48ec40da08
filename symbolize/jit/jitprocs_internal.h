/* jitprocs_internal: what symbolize/jit/jitprocs.c (loading and serving each process's
 * table) and symbolize/jit/jitprocs_find.c (finding each process's dumps and map, and which is its)
 * share. Not for other files. */
#ifndef PERFCONV_JITPROCS_INTERNAL_H
#define PERFCONV_JITPROCS_INTERNAL_H

#include <sys/stat.h>

#include "common/demangle.h"
#include "common/util.h"
#include "symbolize/jit/jitprocs.h"
#include "symbolize/locate.h"
#include "symbolize/jit/mapindex.h"

enum { FOUND_DUMP, FOUND_DUMP_GZ, FOUND_MAP };

struct found {
	uint32_t pid;
	int kind;
	size_t root;         /* the --jit-dir it is below */
	char *path;
};

struct jp_proc {
	uint32_t pid;
	uint32_t nspid;      /* its pid in its own pid namespace, 0 when unknown or the same */
	char *expected;      /* the jit-PID.dump path the process mapped, or NULL */
	struct jit_mapping mapping; /* how it mapped it */
	int exited;          /* its main thread exited during the recording */
	uint32_t name1;      /* its first name (its main thread's first COMM), interned, + 1;
				0 when never named */
	int began;           /* it began during the recording (a FORK perf did not make up, an
				exec): a perf map of its pid written before is another's */
	char *module;        /* the file that served it */
	struct jitcode *jc;
	int jc_stored;       /* jc is the store's (jit_search.store), not the set's */
	char *map_later;     /* a perf map beside a dump: loaded when the dump misses */
	struct map_index *map;
	char *map_module;
	struct u64map map_names; /* the map's names met: raw name's id + 1 -> shown name's id */
	struct demangle_budget map_dm; /* the demangler's bounds on the map's names */
	int map_dm_said;         /* a name of the map kept mangled was said */
	char *unused;        /* a dump found for it but not used (the first said), or NULL */
	char *unused_why;    /* why not */
};

struct jit_procs {
	struct strtab *strings;
	struct jit_search s;
	struct jp_proc *procs;
	size_t nprocs, procs_cap;
	struct u64map index;  /* pid + 1 -> procs index + 1 */
	int *tables;          /* procs index of each loaded table */
	size_t ntables, tables_cap;
	struct u64map table_index; /* pid + 1 -> tables index + 1 */
	struct found *found;  /* files in the --jit-dir trees */
	size_t nfound, found_cap;
	int indexed;          /* the --jit-dir trees were walked */
	struct diag *d;       /* jit_procs_load's, for the files not used */
	struct jp_fork { uint32_t child, parent; int synthesized; } *forks; /* in the order forked */
	size_t nforks, forks_cap;
	struct u64map execed; /* pid + 1 -> 1: ran another program (COMM with exec) */
};

/* A file that may be a process's dump. */
struct cand {
	char *path;
	int gz;
	int fd;               /* a plain dump, open once looked at; else -1 */
	struct stat st;
	void *buf;            /* a .gz dump, inflated once looked at */
	size_t len;
	int mapped;           /* the very file the process mapped */
	int owner_checked;    /* found where s.check_owner judges the owner (owner_ok) */
	char why[300];        /* why it is not the process's; "" when it may be */
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

/* jitprocs_find.c */
struct loc_places jf_places_of(const struct jit_search *s);
void jf_collect_dumps_of(struct jit_procs *jp, const struct jp_proc *p, struct cands *out);
int jf_choose_dump(struct jit_procs *jp, const struct jp_proc *p, struct cands *c);
void jf_note_unused(struct jp_proc *p, const struct cands *c, int k, const char *why);
char *jf_find_dump(struct jit_procs *jp, const struct jp_proc *p, int *gz,
		   struct jit_where *w);
char *jf_find_map(struct jit_procs *jp, uint32_t pid);
void jf_cands_release(struct cands *c);
void jf_index_dir(struct jit_procs *jp, const char *dir, size_t root, int depth,
		  struct diag *dg);

#endif
