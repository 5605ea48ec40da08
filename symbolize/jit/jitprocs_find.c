/* jitprocs_find: where each process's jitdumps and perf map are (the --jit-dir trees, beside
 * the recording, the recorded path, /tmp), and which dump is the process's. */
#include "symbolize/jit/jitprocs_internal.h"

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

#include "common/inflate.h"
#include "common/mapfile.h"
#include "formats/read/jitdump.h"

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
void jf_index_dir(struct jit_procs *jp, const char *dir, size_t root, int depth,
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
			jf_index_dir(jp, path, root, depth + 1, dg);
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
struct loc_places jf_places_of(const struct jit_search *s)
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
	struct loc_places pl = jf_places_of(&jp->s);
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


void jf_cands_release(struct cands *c)
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
	struct loc_places pl = jf_places_of(&jp->s);
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
void jf_collect_dumps_of(struct jit_procs *jp, const struct jp_proc *p, struct cands *out)
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
int jf_choose_dump(struct jit_procs *jp, const struct jp_proc *p, struct cands *c)
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
void jf_note_unused(struct jp_proc *p, const struct cands *c, int k, const char *why)
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
 * w->unused, w->unused_why (as jf_note_unused() picks it). */
char *jf_find_dump(struct jit_procs *jp, const struct jp_proc *p, int *gz,
		   struct jit_where *w)
{
	struct cands c = { 0 };
	char *f = NULL;
	int k;

	jf_collect_dumps_of(jp, p, &c);
	k = jf_choose_dump(jp, p, &c);
	if (k >= 0) {
		f = c.v[k].path;
		*gz = c.v[k].gz;
		c.v[k].path = NULL;
	} else if (w) {
		struct jp_proc q;

		memset(&q, 0, sizeof(q));
		jf_note_unused(&q, &c, -1, NULL);
		w->unused = q.unused;
		w->unused_why = q.unused_why;
	}
	jf_cands_release(&c);
	return f;
}

/* Process `pid`'s perf map, a malloc'ed path or NULL: by its pid, else by its pid in its
 * namespace. */
char *jf_find_map(struct jit_procs *jp, uint32_t pid)
{
	uint32_t ns = ns_pid_of(jp, pid);
	int gz;
	char *f = find_file(jp, LOC_PERFMAP, pid, NULL, &gz);

	return f || !ns ? f : find_file(jp, LOC_PERFMAP, ns, NULL, &gz);
}

size_t jit_procs_describe_search(const struct jit_procs *jp, uint32_t pid, char *buf,
				 size_t size)
{
	struct loc_places pl = jf_places_of(&jp->s);
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
