/* jitprocs: find the jitdumps and perf maps of a recording's processes and load them. */
#include "symbolize/jitprocs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/demangle.h"
#include "common/inflate.h"
#include "common/mapfile.h"
#include "formats/perfmap.h"
#include "symbolize/jitcache.h"
#include "symbolize/locate.h"
#include "symbolize/mapindex.h"
#include "symbolize/symbolizer.h"

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
	char *module;        /* the file that served it */
	struct jitcode *jc;
	int jc_stored;       /* jc is the store's (jit_search.store), not the set's */
	char *map_later;     /* a perf map beside a dump: loaded when the dump misses */
	struct map_index *map;
	char *map_module;
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
	struct jp_fork { uint32_t child, parent; } *forks; /* in the order forked */
	size_t nforks, forks_cap;
	struct u64map execed; /* pid + 1 -> 1: ran another program (COMM with exec) */
};

struct jit_procs *jit_procs_new(struct strtab *strings)
{
	struct jit_procs *jp = xcalloc(1, sizeof(*jp));

	jp->strings = strings;
	u64map_init(&jp->index);
	u64map_init(&jp->table_index);
	u64map_init(&jp->execed);
	return jp;
}

void jit_procs_free(struct jit_procs *jp)
{
	if (!jp)
		return;
	for (size_t i = 0; i < jp->nprocs; i++) {
		free(jp->procs[i].expected);
		free(jp->procs[i].module);
		if (!jp->procs[i].jc_stored)
			jitcode_free(jp->procs[i].jc);
		free(jp->procs[i].map_later);
		free(jp->procs[i].map_module);
		free(jp->procs[i].unused);
		free(jp->procs[i].unused_why);
		map_index_free(jp->procs[i].map);
	}
	for (size_t i = 0; i < jp->nfound; i++)
		free(jp->found[i].path);
	free(jp->found);
	free(jp->procs);
	free(jp->tables);
	free(jp->forks);
	u64map_release(&jp->execed);
	u64map_release(&jp->index);
	u64map_release(&jp->table_index);
	free(jp);
}

static struct jp_proc *proc_for(struct jit_procs *jp, uint32_t pid)
{
	uint32_t *v = u64map_get(&jp->index, (uint64_t)pid + 1);
	struct jp_proc p;

	if (v)
		return &jp->procs[*v - 1];
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	VEC_PUSH(jp->procs, jp->nprocs, jp->procs_cap, p);
	u64map_put(&jp->index, (uint64_t)pid + 1, (uint32_t)jp->nprocs);
	return &jp->procs[jp->nprocs - 1];
}

void jit_procs_seen(struct jit_procs *jp, uint32_t pid)
{
	if (pid != UINT32_MAX && pid != 0)
		(void)proc_for(jp, pid);
}

void jit_procs_expect(struct jit_procs *jp, uint32_t pid, const char *path,
		      const struct jit_mapping *m)
{
	struct jp_proc *p = proc_for(jp, pid);

	if (!p->expected) {
		p->expected = xstrdup(path);
		if (m)
			p->mapping = *m;
	}
}

void jit_procs_exited(struct jit_procs *jp, uint32_t pid)
{
	if (pid != UINT32_MAX && pid != 0)
		proc_for(jp, pid)->exited = 1;
}

void jit_procs_ns_pid(struct jit_procs *jp, uint32_t pid, uint32_t nspid)
{
	struct jp_proc *p;

	if (pid == UINT32_MAX || pid == 0 || nspid == 0 || nspid == pid)
		return;
	p = proc_for(jp, pid);
	if (!p->nspid)
		p->nspid = nspid;
}

/* The nspid of process `pid` as told, or 0. */
static uint32_t ns_pid_of(const struct jit_procs *jp, uint32_t pid)
{
	uint32_t *v = u64map_get(&jp->index, (uint64_t)pid + 1);

	return v ? jp->procs[*v - 1].nspid : 0;
}

/* "jit-123.dump" (FOUND_DUMP), "jit-123.dump.gz", "perf-123.map": 1 and the pid. */
static int parse_name(const char *name, uint32_t *pid, int *kind)
{
	const char *p;
	char *end;
	unsigned long v;

	if (strncmp(name, "jit-", 4) == 0)
		p = name + 4;
	else if (strncmp(name, "perf-", 5) == 0)
		p = name + 5;
	else
		return 0;
	if (*p < '0' || *p > '9')
		return 0;
	v = strtoul(p, &end, 10);
	if (v == 0 || v > UINT32_MAX)
		return 0;
	*pid = (uint32_t)v;
	if (name[0] == 'j' && strcmp(end, ".dump") == 0)
		*kind = FOUND_DUMP;
	else if (name[0] == 'j' && strcmp(end, ".dump.gz") == 0)
		*kind = FOUND_DUMP_GZ;
	else if (name[0] == 'p' && strcmp(end, ".map") == 0)
		*kind = FOUND_MAP;
	else
		return 0;
	return 1;
}

/* Every jit-PID.dump[.gz] and perf-PID.map below `dir`; symbolic links to directories
 * are not followed, so a loop cannot trap the walk. What is not a regular file (a FIFO
 * would block the read) is left out, and said through `dg` unless it is NULL. */
static void index_dir(struct jit_procs *jp, const char *dir, size_t root, int depth,
		      struct diag *dg)
{
	DIR *d = depth < 32 ? opendir(dir) : NULL;
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *path;
		struct stat st;
		struct found f;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		path = xmalloc(strlen(dir) + strlen(e->d_name) + 2);
		sprintf(path, "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			index_dir(jp, path, root, depth + 1, dg);
			free(path);
			continue;
		}
		if (!parse_name(e->d_name, &f.pid, &f.kind)) {
			free(path);
			continue;
		}
		/* a FIFO of that name would block the read forever: regular files only */
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			if (dg)
				diag_warn(dg, path, DIAG_NO_OFFSET, "not a regular file, not used");
			free(path);
			continue;
		}
		f.path = path;
		f.root = root;
		VEC_PUSH(jp->found, jp->nfound, jp->found_cap, f);
	}
	closedir(d);
}

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The places of locate's table for this set's search. */
static struct loc_places places_of(const struct jit_search *s)
{
	struct loc_places pl;

	memset(&pl, 0, sizeof(pl));
	pl.input_dir = s->input_dir;
	pl.jit_dirs = s->jit_dirs;
	pl.njit_dirs = s->njit_dirs;
	pl.here = s->use_tmp_maps;
	return pl;
}

/* The file of `kind` (FOUND_*) below --jit-dir number `root`, or NULL. */
static const char *found_below(const struct jit_procs *jp, size_t root, uint32_t pid, int kind)
{
	for (size_t i = 0; i < jp->nfound; i++)
		if (jp->found[i].root == root && jp->found[i].pid == pid && jp->found[i].kind == kind)
			return jp->found[i].path;
	return NULL;
}

/* The file of `kind` at one place of locate's table for `pid`, whoever owns it. */
static char *file_at_any(struct jit_procs *jp, const struct loc_candidate *c,
			 enum loc_kind kind, uint32_t pid, int *gz)
{
	const char *f;

	*gz = 0;
	if (c->flags & LOC_F_BELOW) {
		int k = kind == LOC_PERFMAP ? FOUND_MAP : FOUND_DUMP;

		if ((f = found_below(jp, c->instance, pid, k)) != NULL)
			return xstrdup(f);
		if ((c->flags & LOC_F_GZ_TOO) &&
		    (f = found_below(jp, c->instance, pid, FOUND_DUMP_GZ)) != NULL) {
			*gz = 1;
			return xstrdup(f);
		}
	} else if (is_file(c->path)) {
		return xstrdup(c->path);
	} else if (c->flags & LOC_F_GZ_TOO) {
		char *z = xasprintf("%s.gz", c->path);

		if (is_file(z)) {
			*gz = 1;
			return z;
		}
		free(z);
	}
	return NULL;
}

/*
 * With s.check_owner, may `path` at place `c` be used? Another user's file beside the
 * input (the watched folder) or in /tmp would rename the frames of a profile sent as
 * the service's: a file and a link to it must be the input owner's or root's. What the
 * user named (--jit-dir) and the path the process itself mapped are not judged.
 */
static int owner_ok(struct jit_procs *jp, const struct loc_candidate *c, const char *path)
{
	struct stat l, st;
	unsigned uid = jp->s.owner_uid;

	if (!jp->s.check_owner || (c->place != LOC_BESIDE_INPUT && c->place != LOC_TMP))
		return 1;
	if (lstat(path, &l) != 0 || stat(path, &st) != 0)
		return 0;
	if ((l.st_uid == uid || l.st_uid == 0) && (st.st_uid == uid || st.st_uid == 0))
		return 1;
	if (jp->d)
		diag_warn(jp->d, path, DIAG_NO_OFFSET, "owned by uid %u, not by the recording's "
			  "owner (uid %u) or root: not used (--trust-folder uses it)",
			  (unsigned)(l.st_uid != uid && l.st_uid != 0 ? l.st_uid : st.st_uid), uid);
	return 0;
}

/* The file of `kind` at one place of locate's table for `pid`, malloc'ed, or NULL (*gz
 * set for a .gz dump). */
static char *file_at(struct jit_procs *jp, const struct loc_candidate *c, enum loc_kind kind,
		     uint32_t pid, int *gz)
{
	char *f = file_at_any(jp, c, kind, pid, gz);

	if (f && !owner_ok(jp, c, f)) {
		free(f);
		f = NULL;
		*gz = 0;
	}
	return f;
}

/*
 * Process `pid`'s perf map (LOC_PERFMAP), a malloc'ed path or NULL: the first place of
 * locate's table that has it. What the user named comes first (the --jit-dir trees),
 * then the file beside the recording, then for a recording made here
 * /tmp/perf-PID.map (which a later process with the same pid may have overwritten, or
 * an earlier one left).
 */
static char *find_file(struct jit_procs *jp, enum loc_kind kind, uint32_t pid,
		       const char *expected, int *gz)
{
	struct loc_places pl = places_of(&jp->s);
	struct loc_query q = { .path = kind == LOC_JITDUMP ? expected : NULL, .pid = pid };
	struct loc_list places;
	char *got = NULL;

	*gz = 0;
	locate_list(&pl, kind, &q, &places);
	for (size_t i = 0; i < places.n && !got; i++)
		got = file_at(jp, &places.v[i], kind, pid, gz);
	loc_list_release(&places);
	return got;
}

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

static void cands_release(struct cands *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].fd >= 0)
			close(c->v[i].fd);
		free(c->v[i].buf);
		free(c->v[i].path);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Every file that a place of locate's table holds as `pid`'s dump, in the table's order,
 * added to `out`. */
static void collect_dumps(struct jit_procs *jp, uint32_t pid, const char *expected,
			  struct cands *out)
{
	struct loc_places pl = places_of(&jp->s);
	struct loc_query q = { .path = expected, .pid = pid };
	struct loc_list places;

	locate_list(&pl, LOC_JITDUMP, &q, &places);
	for (size_t i = 0; i < places.n; i++) {
		struct cand c;
		int gz, dup = 0;
		char *f = file_at(jp, &places.v[i], LOC_JITDUMP, pid, &gz);

		for (size_t k = 0; f && k < out->n; k++)
			dup |= strcmp(out->v[k].path, f) == 0;
		if (!f || dup) {
			free(f);
			continue;
		}
		memset(&c, 0, sizeof(c));
		c.path = f;
		c.gz = gz;
		c.fd = -1;
		c.owner_checked = jp->s.check_owner && (places.v[i].place == LOC_BESIDE_INPUT ||
							places.v[i].place == LOC_TMP);
		VEC_PUSH(out->v, out->n, out->cap, c);
	}
	loc_list_release(&places);
}

/* Process `p`'s possible dumps: named by its pid, and in a pid namespace (a container)
 * by its pid there when it mapped one so named (only the dump it mapped: another
 * namespace's pid 1 wrote a jit-1.dump too). */
static void collect_dumps_of(struct jit_procs *jp, const struct jp_proc *p, struct cands *out)
{
	char name[32];

	collect_dumps(jp, p->pid, p->expected, out);
	snprintf(name, sizeof(name), "jit-%u.dump", p->nspid);
	if (p->nspid && p->expected && strcmp(path_base(p->expected), name) == 0)
		collect_dumps(jp, p->nspid, p->expected, out);
}

/* Slack for times that come from different records of one moment. */
#define JIT_TIME_SLACK 1000000000ull

/*
 * Whether `c` can be process `p`'s dump: opened (never waiting on a FIFO), its header's
 * pid, and with times comparable with the recording's, when its first code was loaded:
 * not before the process mapped its dump (an earlier process's with the same pid), not
 * after the recording ended (a later one's). c->why says why not.
 */
static void examine(struct jit_procs *jp, const struct jp_proc *p, struct cand *c)
{
	const struct jit_mapping *m = &p->mapping;
	struct jitdump_glance g;
	char why[200];

	if (c->gz) {
		c->buf = inflate_file(c->path, &c->len);
		if (!c->buf) {
			snprintf(c->why, sizeof(c->why), "cannot read the gzipped jitdump");
			return;
		}
	} else {
		c->fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (c->fd < 0 || fstat(c->fd, &c->st) != 0 || !S_ISREG(c->st.st_mode)) {
			snprintf(c->why, sizeof(c->why), "cannot read it: %s",
				 c->fd < 0 ? strerror(errno) : "not a regular file");
			return;
		}
		/* judged again on the descriptor read: the path's owner was judged before
		 * it was opened, and the file under that name may have been swapped since */
		if (c->owner_checked && c->st.st_uid != jp->s.owner_uid && c->st.st_uid != 0) {
			snprintf(c->why, sizeof(c->why), "owned by uid %u, not by the recording's "
				 "owner (uid %u) or root: not used", (unsigned)c->st.st_uid,
				 jp->s.owner_uid);
			return;
		}
		c->mapped = m->ino && c->st.st_ino == m->ino &&
			    (!(m->maj | m->min) || c->st.st_dev == makedev(m->maj, m->min));
	}
	if (jitdump_glance(c->fd, c->buf, c->len, jp->s.time_conv, &g, why, sizeof(why)) != 0) {
		snprintf(c->why, sizeof(c->why), "%s", why);
		return;
	}
	if (g.hdr.pid != p->pid && (!p->nspid || g.hdr.pid != p->nspid)) {
		snprintf(c->why, sizeof(c->why), "the dump was written by pid %u, not %u",
			 g.hdr.pid, p->pid);
		return;
	}
	if (c->mapped || !g.has_load || !jp->s.clock_monotonic || !g.hdr.times_converted)
		return;
	if (p->mapping.time && g.first_load_time + JIT_TIME_SLACK < p->mapping.time)
		snprintf(c->why, sizeof(c->why), "its code was loaded %.1f s before pid %u mapped "
			 "its dump: an earlier process's with the same pid",
			 (double)(p->mapping.time - g.first_load_time) / 1e9, p->pid);
	else if (jp->s.last_time && g.first_load_time > jp->s.last_time + JIT_TIME_SLACK)
		snprintf(c->why, sizeof(c->why), "its code was loaded %.1f s after the recording "
			 "ended: a later process's with the same pid",
			 (double)(g.first_load_time - jp->s.last_time) / 1e9);
}

/*
 * Process `p`'s dump among `c`: the file it mapped, wherever it is found (only a plain
 * file can be: each is looked at); else the first that can be its dump (a gzipped one
 * inflated only when none before it will do). Its index, or -1; the candidates after
 * it may not have been looked at (their why empty).
 */
static int choose_dump(struct jit_procs *jp, const struct jp_proc *p, struct cands *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->v[i].gz)
			examine(jp, p, &c->v[i]);
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].mapped && !c->v[i].why[0])
			return (int)i;
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].gz)
			examine(jp, p, &c->v[i]);
		if (!c->v[i].why[0])
			return (int)i;
	}
	return -1;
}

/*
 * Keep, for the summary, the dump of `c` that was found for `p` but not used: the one
 * chosen (`k`) that gave no code, for reason `why`; with none chosen (k -1), the one the
 * process mapped, else the first found, for the reason it was found wrong.
 */
static void note_unused(struct jp_proc *p, const struct cands *c, int k, const char *why)
{
	int at = k;

	for (size_t i = 0; k < 0 && i < c->n; i++)
		if (c->v[i].why[0] && (at < 0 || (c->v[i].mapped && !c->v[at].mapped)))
			at = (int)i;
	if (at < 0)
		return;
	free(p->unused);
	free(p->unused_why);
	p->unused = xstrdup(c->v[at].path);
	p->unused_why = xstrdup(k >= 0 ? why : c->v[at].why);
}

/* Process `p`'s dump as jit_procs_load() chooses it, a malloc'ed path or NULL (*gz set
 * for a .gz); with none, when `w` is not NULL, the one found but not used and why in
 * w->unused, w->unused_why (as note_unused() picks it). */
static char *find_dump(struct jit_procs *jp, const struct jp_proc *p, int *gz,
		       struct jit_where *w)
{
	struct cands c = { 0 };
	char *f = NULL;
	int k;

	collect_dumps_of(jp, p, &c);
	k = choose_dump(jp, p, &c);
	if (k >= 0) {
		f = c.v[k].path;
		*gz = c.v[k].gz;
		c.v[k].path = NULL;
	} else if (w) {
		struct jp_proc q;

		memset(&q, 0, sizeof(q));
		note_unused(&q, &c, -1, NULL);
		w->unused = q.unused;
		w->unused_why = q.unused_why;
	}
	cands_release(&c);
	return f;
}

/* Process `pid`'s perf map, a malloc'ed path or NULL: by its pid, else by its pid in its
 * namespace. */
static char *find_map(struct jit_procs *jp, uint32_t pid)
{
	uint32_t ns = ns_pid_of(jp, pid);
	int gz;
	char *f = find_file(jp, LOC_PERFMAP, pid, NULL, &gz);

	return f || !ns ? f : find_file(jp, LOC_PERFMAP, ns, NULL, &gz);
}

size_t jit_procs_describe_search(const struct jit_procs *jp, uint32_t pid, char *buf,
				 size_t size)
{
	struct loc_places pl = places_of(&jp->s);
	struct loc_query q = { .pid = pid };
	struct loc_list places;
	struct sbuf {
		char *p;
		size_t n, size;
	} b = { buf, 0, size };
	const char *sep = " ";
	uint32_t *v = u64map_get(&jp->index, (uint64_t)pid + 1);
	const struct jp_proc *p = v ? &jp->procs[*v - 1] : NULL;

#define PUT(...)                                                                       \
	do {                                                                           \
		if (b.n < b.size)                                                      \
			b.n += (size_t)snprintf(b.p + b.n, b.size - b.n, __VA_ARGS__); \
	} while (0)
	/* a dump that was there but would not do: what was found, and why not, rather
	 * than send the user looking for it */
	if (p && p->unused) {
		PUT("%s found at %s but not used: %s; no perf-%u.map", path_base(p->unused),
		    p->unused, p->unused_why, pid);
	} else {
		PUT("no jit-%u.dump or perf-%u.map", pid, pid);
	}
	if (ns_pid_of(jp, pid) && p && p->unused)
		PUT(" (nor perf-%u.map: pid %u in its namespace)", ns_pid_of(jp, pid),
		    ns_pid_of(jp, pid));
	else if (ns_pid_of(jp, pid))
		PUT(" (nor jit-%u.dump, perf-%u.map: pid %u in its namespace)", ns_pid_of(jp, pid),
		    ns_pid_of(jp, pid), ns_pid_of(jp, pid));
	/* a map's places: a dump's but the one the process mapped, which it did not */
	locate_list(&pl, LOC_PERFMAP, &q, &places);
	for (size_t i = 0; i < places.n; i++, sep = ", ") {
		const struct loc_candidate *c = &places.v[i];

		if (c->place == LOC_JIT_DIRS)
			PUT("%s%s%s", sep, c->instance ? "" : "below --jit-dir ",
			    jp->s.jit_dirs[c->instance]);
		else if (c->place == LOC_BESIDE_INPUT)
			PUT("%sbeside the recording (%s)", sep, jp->s.input_dir);
		else if (c->place == LOC_TMP)
			PUT("%sin /tmp", sep);
	}
	loc_list_release(&places);
	if (!jp->s.njit_dirs && p && p->unused)
		PUT("; give a sound copy of the dump with --jit-dir");
	else if (!jp->s.njit_dirs)
		PUT("; name where they are with --jit-dir");
#undef PUT
	return b.n < size ? b.n : size - 1;
}

/* How far before a conversion's first record a kept table answers for (a runtime that
 * writes a record late, records of a moment written out of order). */
#define JIT_PRUNE_MARGIN (10 * 1000000000ull)

/* Why a dump read as `r` gave no code load: into `why` (`size` bytes). */
static void why_no_loads(const struct jitdump_reader *r, char *why, size_t size)
{
	const struct jitdump_stats *st = jitdump_reader_stats(r);

	if (st->truncated_bytes)
		snprintf(why, size, "no code load before the damage at offset 0x%" PRIx64
			 " (the last %" PRIu64 " bytes unreadable)", jitdump_reader_resume(r),
			 st->truncated_bytes);
	else if (st->skipped_bad)
		snprintf(why, size, "no code load that could be read (%" PRIu64 " damaged "
			 "records skipped)", st->skipped_bad);
	else
		snprintf(why, size, "it holds no code loads");
}

/*
 * Load dump `c` (examined) into p->jc; 1 when it gave code, else 0 with why not in
 * `why` (`why_size` bytes). With the search's store,
 * the table the store kept for it is read on from where the last read stopped, pruned,
 * and given back (p->jc then borrowed from the store). A dump of a process that did not
 * exit during the recording is read as live (JITDUMP_LIVE).
 */
static int load_dump(struct jit_procs *jp, struct jp_proc *p, struct cand *c, struct diag *d,
		     int *timeless, char *why, size_t why_size)
{
	struct jitdump_open o = { .tc = jp->s.time_conv, .flags = p->exited ? 0 : JITDUMP_LIVE };
	struct jit_store *store = c->gz ? NULL : jp->s.store;
	const struct cache_ctx *cache = c->gz || store ? NULL : jp->s.cache;
	struct jitdump_reader *r;
	const struct jitdump_header *h;
	struct jit_store_key key;
	struct jitcode *jc = NULL;
	uint64_t resume = 0, was = 0;
	int cut;

	/* a conversion reads what its samples can meet: up to a while after its last
	 * record (a watcher reads on to the end: the next chunk begins there) */
	if (!store && jp->s.clock_monotonic && jp->s.last_time)
		o.stop_after = jp->s.last_time + JIT_PRUNE_MARGIN;
	r = c->gz ? jitdump_reader_open_mem_at(c->buf, c->len, c->path, &o, d)
		  : jitdump_reader_open_fd(c->fd, c->path, &o, d);
	if (!r) {
		snprintf(why, why_size, "it could not be read as a jitdump (said above)");
		return 0;
	}
	h = jitdump_reader_header(r);
	/* 1: samples not on CLOCK_MONOTONIC; 2: they are, but the dump's times are the
	 * CPU's counter and the recording has no TIME_CONV to bring them there */
	*timeless = !jp->s.clock_monotonic ? 1 : !h->times_converted ? 2 : 0;
	memset(&key, 0, sizeof(key));
	key.dev = c->st.st_dev;
	key.ino = c->st.st_ino;
	key.hdr = *h;
	if (jp->s.time_conv)
		key.tc = *jp->s.time_conv;
	key.timeless = *timeless;
	key.demangle = jp->s.demangle;
	if (store)
		jc = jit_store_take(store, &key, (uint64_t)c->st.st_size, jp->s.first_time, &resume);
	else if (cache)
		jc = jitcache_open(cache, &key, c->fd, &c->st, &resume);
	if (jc && jitdump_reader_go_on(r, resume) != 0) {
		jitcode_free(jc);
		jc = NULL;
	}
	was = jc ? resume : 0;
	if (!jc) {
		jc = jitcode_new(jp->s.demangle);
		if (*timeless)
			jitcode_set_timeless(jc);
	}
	/* its records name the writer by its pid, in its namespace */
	jitcode_add_dump(jc, r, h->pid);
	resume = jitdump_reader_resume(r);
	why_no_loads(r, why, why_size);
	/* a load cut inside its code, kept: a read that went on at `resume` would add it
	 * again, so the table is kept by neither the store nor the cache */
	cut = jitdump_reader_stats(r)->cut_loads != 0;
	jitdump_reader_close(r);
	if (store && !cut) {
		/* what the next conversions can meet: code live from a while before this
		 * one's first record on (a timeless table: what is live at the end) */
		if (*timeless || jp->s.first_time > JIT_PRUNE_MARGIN)
			jitcode_prune(jc, *timeless ? 0 : jp->s.first_time - JIT_PRUNE_MARGIN);
		jitcode_finish(jc);
		jit_store_put(store, &key, jc, resume);
		p->jc_stored = 1;
	} else if (cache && resume != was && !cut) {
		jitcache_save(cache, &key, c->fd, jc, resume);
	}
	p->jc = jc;
	if (!jitcode_loads(jc)) {
		diag_warn(d, c->path, DIAG_NO_OFFSET, "no code loads in this jitdump of pid %u: not "
			  "used, its JIT code shows as addresses", p->pid);
		if (!p->jc_stored)
			jitcode_free(jc);
		p->jc = NULL;
		p->jc_stored = 0;
		return 0;
	}
	return 1;
}

static int load_map(struct jit_procs *jp, struct jitcode *jc, const char *path, struct diag *d)
{
	struct perfmap_reader *r = perfmap_reader_open(path, d);
	uint64_t n;

	if (!r)
		return 0;
	n = jitcode_add_perfmap(jc, r);
	perfmap_reader_close(r);
	return n > 0;
}

/*
 * A perf map has no times: one written before the recording began is another
 * process's that had the same pid (a stale /tmp/perf-PID.map), or a copy that lost
 * its time. Either way its names may be wrong: say so.
 */
static void warn_if_stale(const struct jit_procs *jp, const char *map, uint32_t pid,
			  struct diag *d)
{
	struct stat st;
	int64_t written;

	if (!jp->s.recording_start_wall_ns || stat(map, &st) != 0)
		return;
	written = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	/* a second of slack: file times are coarse on some filesystems */
	if (written + 1000000000 >= (int64_t)jp->s.recording_start_wall_ns)
		return;
	diag_warn(d, map, DIAG_NO_OFFSET,
		  "perf map of pid %u last written %" PRId64 " s before the recording began: "
		  "it may be another process's with the same pid; give the right one with "
		  "--jit-dir", pid, ((int64_t)jp->s.recording_start_wall_ns - written) / 1000000000);
}

/*
 * Say why the dumps of `c` other than the chosen one (`k`, -1 none) were not used: with
 * none chosen, each as it was found wrong (an error for a file that is no jitdump, a
 * warning else); with one chosen, a note for each passed over (found wrong, or below the
 * file the process mapped).
 */
static void say_passed_over(const struct jp_proc *p, const struct cands *c, int k,
			    struct diag *d, int quiet)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct cand *x = &c->v[i];

		if ((int)i == k)
			continue;
		if (k < 0 && x->why[0] && strncmp(x->why, "offset ", 7) == 0)
			diag_error(d, x->path, DIAG_NO_OFFSET, "%s", x->why);
		else if (k < 0 && x->why[0])
			diag_warn(d, x->path, DIAG_NO_OFFSET, "%s: not used for pid %u", x->why,
				  p->pid);
		else if (k >= 0 && !quiet && x->why[0])
			diag_note(d, "  not %s: %s", x->path, x->why);
		else if (k >= 0 && !quiet && c->v[k].mapped)
			diag_note(d, "  not %s: %s is the file pid %u mapped", x->path,
				  c->v[k].path, p->pid);
		/* else a later place than the one chosen, as ever: nothing to say */
	}
}

void jit_procs_forked(struct jit_procs *jp, uint32_t child, uint32_t parent)
{
	struct jp_fork f = { child, parent };

	if (child != parent)
		VEC_PUSH(jp->forks, jp->nforks, jp->forks_cap, f);
}

void jit_procs_execed(struct jit_procs *jp, uint32_t pid)
{
	u64map_put(&jp->execed, (uint64_t)pid + 1, 1);
}

/*
 * A process with no dump or map of its own runs the code its parent compiled before
 * the fork (a pre-fork server's workers: php-fpm, gunicorn, unicorn): its parent's
 * table names it, as perf names it through the parent's map that the fork copied.
 * In the order forked, so that a worker's worker inherits too. One that ran another
 * program (exec) does not: its anonymous memory is not its parent's code.
 */
static void inherit_tables(struct jit_procs *jp, struct diag *d, int quiet)
{
	for (size_t i = 0; i < jp->nforks; i++) {
		const struct jp_fork *f = &jp->forks[i];
		uint32_t *v = u64map_get(&jp->table_index, (uint64_t)f->parent + 1);

		if (!v || u64map_get(&jp->table_index, (uint64_t)f->child + 1) ||
		    u64map_get(&jp->execed, (uint64_t)f->child + 1))
			continue;
		u64map_put(&jp->table_index, (uint64_t)f->child + 1, *v);
		if (!quiet)
			diag_note(d, "JIT code of pid %u: its parent's, pid %u (%s), as forked",
				  f->child, f->parent, jp->procs[jp->tables[*v - 1]].module);
	}
}

void jit_procs_load(struct jit_procs *jp, const struct jit_search *s, struct diag *d, int quiet)
{
	int warned_clock = 0;

	jp->s = *s;
	jp->d = d;
	if (jp->s.store)
		jit_store_begin(jp->s.store);
	for (size_t i = 0; !jp->indexed && i < jp->s.njit_dirs; i++)
		index_dir(jp, jp->s.jit_dirs[i], i, 0, d);
	jp->indexed = 1;
	for (size_t i = 0; i < jp->nprocs; i++) {
		struct jp_proc *p = &jp->procs[i];
		struct cands c = { 0 };
		const char *dump = NULL;
		char *map;
		int k, got_dump = 0, got_map = 0, timeless = 0;

		collect_dumps_of(jp, p, &c);
		k = choose_dump(jp, p, &c);
		if (k < 0)
			note_unused(p, &c, -1, NULL);
		map = find_map(jp, p->pid);
		if (k < 0 && !map) {
			say_passed_over(p, &c, -1, d, quiet);
			if (p->expected && !c.n)
				diag_warn(d, p->expected, DIAG_NO_OFFSET,
					  "pid %u wrote this jitdump, but it is not there, next to the "
					  "recording or in a --jit-dir: its JIT code shows as "
					  "addresses", p->pid);
			cands_release(&c);
			continue;
		}
		if (k >= 0) {
			char why[256];

			dump = c.v[k].path;
			got_dump = load_dump(jp, p, &c.v[k], d, &timeless, why, sizeof(why));
			if (!got_dump)
				note_unused(p, &c, k, why);
		}
		if (k < 0)
			say_passed_over(p, &c, -1, d, quiet);
		/* a map beside a dump (BEAM writes both) only matters where the dump names
		 * nothing: it is read when that happens */
		if (map && got_dump) {
			p->map_later = xstrdup(map);
		} else if (map) {
			p->jc = jitcode_new(jp->s.demangle);
			got_map = load_map(jp, p->jc, map, d);
		}
		if (got_map)
			warn_if_stale(jp, map, p->pid, d);
		if (p->jc && !p->jc_stored)
			jitcode_finish(p->jc);
		if (!got_dump && !got_map) {
			if (!p->jc_stored)
				jitcode_free(p->jc);
			p->jc = NULL;
			p->jc_stored = 0;
			cands_release(&c);
			free(map);
			continue;
		}
		p->module = xstrdup(path_base(got_dump ? dump : map));
		VEC_PUSH(jp->tables, jp->ntables, jp->tables_cap, (int)i);
		u64map_put(&jp->table_index, (uint64_t)p->pid + 1, (uint32_t)jp->ntables);
		if (!quiet) {
			const struct jitcode_stats *st = jitcode_stats(p->jc);

			char what[256];

			if (got_dump)
				snprintf(what, sizeof(what), "%" PRIu64 " code loads, %" PRIu64
					 " with lines", st->loads, st->debug_infos);
			else
				snprintf(what, sizeof(what), "%" PRIu64 " map entries, no lines",
					 st->map_entries);
			diag_note(d, "JIT code of pid %u: %s (%s)%s%s%s", p->pid, got_dump ? dump : map,
				  what, p->map_later ? "; " : "", p->map_later ? p->map_later : "",
				  p->map_later ? " where the dump names nothing" : "");
		}
		if (k >= 0)
			say_passed_over(p, &c, k, d, quiet);
		if (timeless == 1 && !warned_clock) {
			warned_clock = 1;
			diag_warn(d, dump, DIAG_NO_OFFSET,
				  "sample times are not on the jitdump's clock (record with perf "
				  "record -k 1): each JIT address is given the code loaded there last");
		} else if (timeless == 2 && !warned_clock) {
			warned_clock = 1;
			diag_warn(d, dump, DIAG_NO_OFFSET,
				  "the jitdump's times are the CPU's timestamp counter "
				  "(JITDUMP_USE_ARCH_TIMESTAMP) and the recording has no TIME_CONV "
				  "record to convert them (perf writes one where the kernel offers "
				  "the conversion; a VM often does not): each JIT address is given "
				  "the code loaded there last");
		}
		cands_release(&c);
		free(map);
	}
	inherit_tables(jp, d, quiet);
}

void jit_procs_where(struct jit_procs *jp, const struct jit_search *s, uint32_t pid,
		     struct jit_where *w)
{
	uint32_t *v = u64map_get(&jp->index, (uint64_t)pid + 1);
	const struct jp_proc *p = v ? &jp->procs[*v - 1] : NULL;
	struct loc_places pl;
	size_t cap = 0;
	int gz;

	memset(w, 0, sizeof(*w));
	if (!jp->indexed) {
		jp->s = *s;
		for (size_t i = 0; i < s->njit_dirs; i++)
			index_dir(jp, s->jit_dirs[i], i, 0, NULL);
		jp->indexed = 1;
	}
	w->expected = p ? p->expected : NULL;
	/* jit_procs_load()'s search, and its places */
	{
		struct jp_proc anon;

		memset(&anon, 0, sizeof(anon));
		anon.pid = pid;
		w->dump = find_dump(jp, p ? p : &anon, &gz, w);
	}
	w->map = find_map(jp, pid);
	pl = places_of(s);
	for (int k = 0; k < 2; k++) {
		struct loc_query q = { .path = k == 0 ? w->expected : NULL, .pid = pid };
		struct loc_list places;

		locate_list(&pl, k == 0 ? LOC_JITDUMP : LOC_PERFMAP, &q, &places);
		for (size_t i = 0; i < places.n; i++) {
			char buf[4200];

			loc_candidate_shown(&places.v[i], buf, sizeof(buf));
			VEC_PUSH(w->looked, w->nlooked, cap, xstrdup(buf));
		}
		loc_list_release(&places);
	}
}

void jit_where_release(struct jit_where *w)
{
	free(w->dump);
	free(w->unused);
	free(w->unused_why);
	free(w->map);
	for (size_t i = 0; i < w->nlooked; i++)
		free(w->looked[i]);
	free(w->looked);
}

int jit_procs_find(const struct jit_procs *jp, uint32_t pid)
{
	uint32_t *v = u64map_get(&jp->table_index, (uint64_t)pid + 1);

	return v ? (int)*v - 1 : -1;
}

int jit_procs_fallback(struct jit_procs *jp, int idx, uint64_t addr, struct diag *d,
		       struct jitcode_frame *f, const char **module)
{
	struct jp_proc *p = &jp->procs[jp->tables[idx]];
	struct map_line l;
	struct perfmap_entry e;
	char *name;

	if (p->map_later) {
		p->map = map_index_load(p->map_later, d);
		p->map_module = xstrdup(path_base(p->map_later));
		free(p->map_later);
		p->map_later = NULL;
	}
	if (!p->map || !map_index_lookup(p->map, addr, &l, &e))
		return 0;
	memset(f, 0, sizeof(*f));
	f->raw_name = strtab_str(jp->strings, strtab_intern_n(jp->strings, e.name,
							     jitcode_function_name_len(e.name)));
	f->name = f->raw_name;
	name = jp->s.demangle ? demangle_jit_name(f->raw_name) : NULL;
	if (name) {
		f->name = strtab_str(jp->strings, strtab_intern(jp->strings, name));
		free(name);
	}
	f->start = l.start;
	f->size = l.end - l.start;
	f->code = l.seq;
	f->from_map = 1;
	*module = p->map_module;
	return 1;
}

const struct jitcode *jit_procs_table(const struct jit_procs *jp, int idx)
{
	return jp->procs[jp->tables[idx]].jc;
}

const char *jit_procs_module(const struct jit_procs *jp, int idx)
{
	return jp->procs[jp->tables[idx]].module;
}

size_t jit_procs_count(const struct jit_procs *jp)
{
	return jp->ntables;
}
