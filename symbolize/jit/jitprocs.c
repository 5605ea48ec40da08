/* jitprocs: the jitdumps and perf maps of a recording's processes: told which processes
 * there are, loads each one's table (symbolize/jit/jitprocs_find.c finds the files), gives a forked
 * worker its parent's, and serves lookups. */
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

#include "common/demangle.h"
#include "common/inflate.h"
#include "common/mapfile.h"
#include "formats/read/perfmap.h"
#include "symbolize/jit/jitcache.h"
#include "symbolize/locate.h"
#include "symbolize/jit/mapindex.h"
#include "symbolize/symbolizer.h"

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
		u64map_release(&jp->procs[i].map_names);
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

/* The nspid of process `pid` as told, or 0. *//* How far before a conversion's first record a kept table answers for (a runtime that
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
		jc = jit_store_take(store, &key, (uint64_t)c->st.st_size, jp->s.first_time, &resume,
				    NULL);
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
		jit_store_put(store, &key, jc, resume, 0);
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
 * The map the reader has open (status `st`), opened again for the cache's check of its
 * bytes: a descriptor, or -1 when the name is now another file's. Never waiting: the
 * reader saw a regular file, but the name may have changed since.
 */
static int open_again(const char *path, const struct stat *st)
{
	struct stat fst;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd >= 0 && (fstat(fd, &fst) != 0 || fst.st_dev != st->st_dev ||
			fst.st_ino != st->st_ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * A perf map's table in a one-off conversion, through the cache (symbolize/jit/jitcache.h,
 * its key the map's device and inode): read back, and read on from where the entry's
 * read stopped at a line's end; a map written again since (the 4 KB before that point
 * differ) is read whole. An entry is made when every line read was whole.
 */
static int load_map_cached(struct jit_procs *jp, struct jp_proc *p, const char *path,
			   struct diag *d)
{
	struct perfmap_reader *r = perfmap_reader_open(path, d);
	const struct stat *st;
	struct jit_store_key key;
	uint64_t resume = 0, whole;
	int fd;

	if (!r)
		return 0;
	st = perfmap_reader_stat(r);
	fd = open_again(path, st);
	memset(&key, 0, sizeof(key));
	key.dev = st->st_dev;
	key.ino = st->st_ino;
	key.demangle = jp->s.demangle;
	key.perf_map = 1;
	p->jc = fd >= 0 ? jitcache_open(jp->s.cache, &key, fd, st, &resume) : NULL;
	if (!p->jc) {
		p->jc = jitcode_new(jp->s.demangle);
		resume = 0;
	}
	perfmap_reader_seek(r, resume);
	jitcode_add_perfmap(p->jc, r);
	whole = perfmap_reader_whole_lines(r);
	if (fd >= 0 && whole != resume && whole == (uint64_t)st->st_size)
		jitcache_save(jp->s.cache, &key, fd, p->jc, whole);
	if (fd >= 0)
		close(fd);
	perfmap_reader_close(r);
	return jitcode_stats(p->jc)->map_entries > 0;
}

/*
 * A watcher's perf map (--perf-basic-prof: a service appends to it for as long as it
 * runs, megabytes an hour): its table kept in the search's store from one chunk to the
 * next, and read on from where the last read stopped, at a line's end (a last line
 * without its newline waits for the next chunk): a chunk reads what was appended
 * since, not the whole file again. A file rewritten since (perf-map-agent writes its
 * whole map again; another process's with that pid), told by the bytes before that
 * point, is read whole. The table is the store's (p->jc_stored). It is kept in the
 * cache as well, as a one-off conversion keeps it (the same entry), each time it grew:
 * a watcher started again (a reboot, an upgrade) reads on from there, where it read
 * the whole map before.
 */
static int load_map_stored(struct jit_procs *jp, struct jp_proc *p, const char *path,
			   struct diag *d, int quiet)
{
	struct perfmap_reader *r = perfmap_reader_open(path, d);
	const struct stat *st;
	struct jit_store_key key;
	struct jitcode *jc;
	uint64_t resume = 0, check = 0, end, before;
	int fd = -1;

	if (!r)
		return 0;
	st = perfmap_reader_stat(r);
	end = perfmap_reader_whole_lines(r);
	memset(&key, 0, sizeof(key));
	key.dev = st->st_dev;
	key.ino = st->st_ino;
	key.demangle = jp->s.demangle;
	key.perf_map = 1;
	jc = jit_store_take(jp->s.store, &key, end, 0, &resume, &check);
	if (jc && perfmap_reader_digest(r, resume) != check) {
		if (!quiet)
			diag_note(d, "perf map of pid %u, %s: written again since it was read "
				  "(its first %" PRIu64 " bytes changed): read whole", p->pid, path,
				  resume);
		jitcode_free(jc);
		jc = NULL;
	}
	if (jp->s.cache && jp->s.cache->dir && jp->s.cache->dir[0])
		fd = open_again(path, st);
	if (!jc && fd >= 0) {
		/* the entry ends at a line's end the map had then: past the whole lines it
		 * has now, the map is another */
		jc = jitcache_open(jp->s.cache, &key, fd, st, &resume);
		if (jc && resume > end) {
			jitcode_free(jc);
			jc = NULL;
		}
	}
	if (!jc) {
		jc = jitcode_new(jp->s.demangle);
		resume = 0;
	}
	before = jitcode_stats(jc)->map_entries;
	perfmap_reader_seek(r, resume);
	perfmap_reader_end(r, end);
	jitcode_add_perfmap(jc, r);
	if (!quiet && resume)
		diag_note(d, "perf map of pid %u, %s: read on from byte %" PRIu64 ": %" PRIu64
			  " new entries", p->pid, path, resume,
			  jitcode_stats(jc)->map_entries - before);
	jitcode_finish(jc);
	if (fd >= 0) {
		if (end != resume)
			jitcache_save(jp->s.cache, &key, fd, jc, end);
		close(fd);
	}
	jit_store_put(jp->s.store, &key, jc, end, perfmap_reader_digest(r, end));
	perfmap_reader_close(r);
	p->jc = jc;
	p->jc_stored = 1;
	return jitcode_stats(jc)->map_entries > 0;
}

/*
 * A perf map has no times: one written before a process that began during the
 * recording is another process's that had the same pid (a stale /tmp/perf-PID.map),
 * or a copy that lost its time. Either way its names may be wrong: say so. Of a
 * process already running when perf began, a map written before is as likely its own
 * (a service's runtime wrote it an hour ago, perf-map-agent at attach): a note.
 */
static void warn_if_stale(const struct jit_procs *jp, const struct jp_proc *p, const char *map,
			  struct diag *d, int quiet)
{
	struct stat st;
	int64_t written;

	if (!jp->s.recording_start_wall_ns || stat(map, &st) != 0)
		return;
	written = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	/* a second of slack: file times are coarse on some filesystems */
	if (written + 1000000000 >= (int64_t)jp->s.recording_start_wall_ns)
		return;
	if (p->began)
		diag_warn(d, map, DIAG_NO_OFFSET,
			  "perf map of pid %u last written %" PRId64 " s before the recording "
			  "began, and the process began during it: it is another process's with "
			  "the same pid; give the right one with --jit-dir", p->pid,
			  ((int64_t)jp->s.recording_start_wall_ns - written) / 1000000000);
	else if (!quiet)
		diag_note(d, "perf map of pid %u, %s: last written %" PRId64 " s before the "
			  "recording began, by the process running then (if its names are "
			  "another's, give the right map with --jit-dir)", p->pid, map,
			  ((int64_t)jp->s.recording_start_wall_ns - written) / 1000000000);
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

void jit_procs_named(struct jit_procs *jp, uint32_t pid, const char *comm)
{
	struct jp_proc *p;

	if (pid == UINT32_MAX || pid == 0)
		return;
	p = proc_for(jp, pid);
	if (!p->name1)
		p->name1 = strtab_intern(jp->strings, comm) + 1;
}

void jit_procs_forked(struct jit_procs *jp, uint32_t child, uint32_t parent, int synthesized)
{
	struct jp_fork f = { child, parent, synthesized };

	if (child != parent)
		VEC_PUSH(jp->forks, jp->nforks, jp->forks_cap, f);
}

void jit_procs_execed(struct jit_procs *jp, uint32_t pid)
{
	u64map_put(&jp->execed, (uint64_t)pid + 1, 1);
	jit_procs_began(jp, pid);
}

void jit_procs_began(struct jit_procs *jp, uint32_t pid)
{
	if (pid != UINT32_MAX && pid != 0)
		proc_for(jp, pid)->began = 1;
}

/*
 * A process with no dump or map of its own runs the code its parent compiled before
 * the fork (a pre-fork server's workers: php-fpm, gunicorn, unicorn): its parent's
 * table names it, as perf names it through the parent's map that the fork copied.
 * In the order forked, so that a worker's worker inherits too. One that ran another
 * program (exec) does not: its anonymous memory is not its parent's code. A worker
 * already running when perf began has a FORK perf made from /proc, which cannot say
 * whether it exec'd since (perf then names nothing of it through its parent's map):
 * it is given its parent's code when it bears its parent's name, as a pre-fork
 * server's workers do, and not otherwise.
 */
static int same_name(const struct jit_procs *jp, uint32_t a, uint32_t b)
{
	const uint32_t *va = u64map_get(&jp->index, (uint64_t)a + 1);
	const uint32_t *vb = u64map_get(&jp->index, (uint64_t)b + 1);

	return va && vb && jp->procs[*va - 1].name1 &&
	       jp->procs[*va - 1].name1 == jp->procs[*vb - 1].name1;
}

static void inherit_tables(struct jit_procs *jp, struct diag *d, int quiet)
{
	for (size_t i = 0; i < jp->nforks; i++) {
		const struct jp_fork *f = &jp->forks[i];
		uint32_t *v = u64map_get(&jp->table_index, (uint64_t)f->parent + 1);

		if (!v || u64map_get(&jp->table_index, (uint64_t)f->child + 1) ||
		    u64map_get(&jp->execed, (uint64_t)f->child + 1))
			continue;
		if (f->synthesized && !same_name(jp, f->child, f->parent)) {
			if (!quiet)
				diag_note(d, "JIT code of pid %u: not its parent's, pid %u (%s): it "
					  "was running before the recording under another name, "
					  "so it may run another program", f->child, f->parent,
					  jp->procs[jp->tables[*v - 1]].module);
			continue;
		}
		u64map_put(&jp->table_index, (uint64_t)f->child + 1, *v);
		if (!quiet)
			diag_note(d, "JIT code of pid %u: its parent's, pid %u (%s), as forked",
				  f->child, f->parent, jp->procs[jp->tables[*v - 1]].module);
	}
}

/* Names of `file` the demangler's bounds kept mangled (common/demangle.h): said once
 * per table (a watcher's table held from chunk to chunk: its new ones). */
static void say_kept(uint32_t pid, const char *file, uint64_t n, struct diag *d)
{
	if (n)
		diag_warn(d, file, DIAG_NO_OFFSET,
			  "JIT code of pid %u: %" PRIu64 " name%s kept mangled: demangling passed "
			  "the bound of %u KiB or %u ms of CPU time a name (after %u such names, "
			  "the others are kept untried)",
			  pid, n, n == 1 ? "" : "s", DEMANGLE_OUT_MAX / 1024,
			  DEMANGLE_CPU_NS / 1000000, DEMANGLE_KEPT_MAX);
}

void jit_procs_load(struct jit_procs *jp, const struct jit_search *s, struct diag *d, int quiet)
{
	int warned_clock = 0;

	jp->s = *s;
	jp->d = d;
	if (jp->s.store)
		jit_store_begin(jp->s.store);
	for (size_t i = 0; !jp->indexed && i < jp->s.njit_dirs; i++)
		jf_index_dir(jp, jp->s.jit_dirs[i], i, 0, d);
	jp->indexed = 1;
	for (size_t i = 0; i < jp->nprocs; i++) {
		struct jp_proc *p = &jp->procs[i];
		struct cands c = { 0 };
		const char *dump = NULL;
		char *map;
		int k, got_dump = 0, got_map = 0, timeless = 0;

		jf_collect_dumps_of(jp, p, &c);
		k = jf_choose_dump(jp, p, &c);
		if (k < 0)
			jf_note_unused(p, &c, -1, NULL);
		map = jf_find_map(jp, p->pid);
		if (k < 0 && !map) {
			say_passed_over(p, &c, -1, d, quiet);
			if (p->expected && !c.n)
				diag_warn(d, p->expected, DIAG_NO_OFFSET,
					  "pid %u wrote this jitdump, but it is not there, next to the "
					  "recording or in a --jit-dir: its JIT code shows as "
					  "addresses", p->pid);
			jf_cands_release(&c);
			continue;
		}
		if (k >= 0) {
			char why[256];

			dump = c.v[k].path;
			got_dump = load_dump(jp, p, &c.v[k], d, &timeless, why, sizeof(why));
			if (!got_dump)
				jf_note_unused(p, &c, k, why);
		}
		if (k < 0)
			say_passed_over(p, &c, -1, d, quiet);
		/* a map beside a dump (BEAM writes both) only matters where the dump names
		 * nothing: it is read when that happens */
		if (map && got_dump) {
			p->map_later = xstrdup(map);
		} else if (map && jp->s.store) {
			got_map = load_map_stored(jp, p, map, d, quiet);
		} else if (map && jp->s.cache && jp->s.cache->dir && jp->s.cache->dir[0]) {
			got_map = load_map_cached(jp, p, map, d);
		} else if (map) {
			p->jc = jitcode_new(jp->s.demangle);
			got_map = load_map(jp, p->jc, map, d);
		}
		if (got_map)
			warn_if_stale(jp, p, map, d, quiet);
		if (p->jc && !p->jc_stored)
			jitcode_finish(p->jc);
		if (!got_dump && !got_map) {
			if (!p->jc_stored)
				jitcode_free(p->jc);
			p->jc = NULL;
			p->jc_stored = 0;
			jf_cands_release(&c);
			free(map);
			continue;
		}
		p->module = xstrdup(path_base(got_dump ? dump : map));
		say_kept(p->pid, got_dump ? dump : map, jitcode_kept_unsaid(p->jc), d);
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
		jf_cands_release(&c);
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
			jf_index_dir(jp, s->jit_dirs[i], i, 0, NULL);
		jp->indexed = 1;
	}
	w->expected = p ? p->expected : NULL;
	/* jit_procs_load()'s search, and its places */
	{
		struct jp_proc anon;

		memset(&anon, 0, sizeof(anon));
		anon.pid = pid;
		w->dump = jf_find_dump(jp, p ? p : &anon, &gz, w);
	}
	w->map = jf_find_map(jp, pid);
	pl = jf_places_of(s);
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
	uint32_t raw, *shown;
	char *name;

	if (p->map_later) {
		p->map = map_index_load_cached(p->map_later, jp->s.cache, d, NULL);
		p->map_module = xstrdup(path_base(p->map_later));
		free(p->map_later);
		p->map_later = NULL;
	}
	if (!p->map || !map_index_lookup(p->map, addr, &l, &e))
		return 0;
	memset(f, 0, sizeof(*f));
	raw = strtab_intern_n(jp->strings, e.name, jitcode_function_name_len(e.name));
	f->raw_name = strtab_str(jp->strings, raw);
	f->name = f->raw_name;
	/* each name demangled once, not once per sample that meets it */
	shown = jp->s.demangle ? u64map_get(&p->map_names, (uint64_t)raw + 1) : NULL;
	if (shown) {
		f->name = strtab_str(jp->strings, *shown);
	} else if (jp->s.demangle) {
		name = demangle_jit_name(f->raw_name, &p->map_dm);
		if (name) {
			f->name = strtab_str(jp->strings, strtab_intern(jp->strings, name));
			free(name);
		}
		u64map_put(&p->map_names, (uint64_t)raw + 1,
			   strtab_intern(jp->strings, f->name));
		if (demangle_kept(&p->map_dm) && !p->map_dm_said) {
			p->map_dm_said = 1;
			say_kept(p->pid, p->map_module, 1, d);
		}
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
