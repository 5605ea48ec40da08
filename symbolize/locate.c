/* locate: where every file perfconv reads is looked for, as one table; where its cache
 * keeps what it makes; and whether a mapping's code is in a file at all.
 *
 * The places follow perf's own search where perf has one (tools/perf/util/symbol.c,
 * dso__load and its binary types; build-id.c for the build-id cache layout;
 * jitdump.c and map.c for jitdumps and perf maps), in the order that lets what the
 * user names win.
 */
#include "symbolize/locate.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/later.h"
#include "common/util.h"

static const struct loc_row table[] = {
	/* the file a mapping's code came from */
	/* (for a mapping named "PATH (deleted)", the first four as named, then as PATH) */
	{ LOC_OBJECT, LOC_SYMFS_PATH, 0, "--symfs DIR: DIR/recorded/path (its debug files under DIR too)" },
	{ LOC_OBJECT, LOC_SYMFS_NAME, 0, "--symfs DIR: DIR/NAME (its debug files under DIR too)" },
	{ LOC_OBJECT, LOC_RECORDED, 0, "the recorded path" },
	{ LOC_OBJECT, LOC_BESIDE_INPUT, 0, "NAME beside the input perf.data" },
	{ LOC_OBJECT, LOC_BUILDID_ELF, 0,
	  "perf's build-id cache (--buildid-dir, else ~/.debug): .build-id/xx/rest/elf, "
	  "when the recording has the build id" },
	/* the vDSO: perf record saves its image */
	{ LOC_VDSO, LOC_BUILDID_VDSO, 0, "perf's build-id cache: [vdso]/BUILDID/vdso" },
	{ LOC_VDSO, LOC_SYMFS_VDSO, 0, "--symfs DIR: DIR/vdso.so" },
	{ LOC_VDSO, LOC_BESIDE_VDSO, 0, "vdso.so beside the input perf.data" },
	/* an object's separate debug file, for a stripped object's .symtab and DWARF */
	{ LOC_DEBUG, LOC_DEBUG_BUILDID, 0,
	  "[DIR]/usr/lib/debug/.build-id/xx/rest.debug (DIR: the --symfs the object is under)" },
	{ LOC_DEBUG, LOC_DEBUGLINK_DIR, LOC_F_CRC, "the .gnu_debuglink NAME in the object's directory" },
	{ LOC_DEBUG, LOC_DEBUGLINK_DOTDEBUG, LOC_F_CRC, "the .gnu_debuglink NAME in its .debug/" },
	{ LOC_DEBUG, LOC_DEBUGLINK_USRLIB, LOC_F_CRC, "/usr/lib/debug/OBJECT_DIR/NAME (.gnu_debuglink)" },
	{ LOC_DEBUG, LOC_DEBUG_PATH_DEBUG, 0, "/usr/lib/debug/PATH.debug, with a build id to check" },
	{ LOC_DEBUG, LOC_DEBUG_PATH, 0, "/usr/lib/debug/PATH, with a build id to check" },
	{ LOC_DEBUG, LOC_DEBUGINFOD, LOC_F_LIBDW,
	  "debuginfod, through libdw, when DEBUGINFOD_URLS is set (DWARF only)" },
	/* kernel symbols */
	{ LOC_KALLSYMS, LOC_KALLSYMS_OPTION, LOC_F_ONLY, "--kallsyms FILE: then the only place" },
	{ LOC_KALLSYMS, LOC_BUILDID_KALLSYMS, 0, "perf's build-id cache: [kernel.kallsyms]/BUILDID/kallsyms" },
	{ LOC_KALLSYMS, LOC_PROC_KALLSYMS, LOC_F_SAME_KERNEL,
	  "/proc/kallsyms, when the running kernel's build id is the recorded one" },
	/* JIT code: what the user names first, then what the recording names */
	{ LOC_JITDUMP, LOC_JIT_DIRS, LOC_F_BELOW | LOC_F_GZ_TOO, "jit-PID.dump[.gz] anywhere below each --jit-dir" },
	{ LOC_JITDUMP, LOC_BESIDE_INPUT, LOC_F_GZ_TOO, "jit-PID.dump[.gz] beside the input perf.data" },
	{ LOC_JITDUMP, LOC_RECORDED, 0, "the jit-PID.dump the process mapped, at its recorded path" },
	{ LOC_PERFMAP, LOC_JIT_DIRS, LOC_F_BELOW, "perf-PID.map anywhere below each --jit-dir" },
	{ LOC_PERFMAP, LOC_BESIDE_INPUT, 0, "perf-PID.map beside the input perf.data" },
	{ LOC_PERFMAP, LOC_TMP, 0, "/tmp/perf-PID.map, when the recording was made on this host" },
};

int locate_row(size_t i, struct loc_row *out)
{
	if (i >= sizeof(table) / sizeof(table[0]))
		return 0;
	*out = table[i];
	return 1;
}

/* "jit-123.dump" or "perf-123.map" as a whole name. */
static int is_jit_file_name(const char *name)
{
	const char *p = starts_with(name, "jit-") ? name + 4 : starts_with(name, "perf-") ? name + 5 : NULL;
	char *end;

	if (!p || *p < '0' || *p > '9')
		return 0;
	strtoul(p, &end, 10);
	return name[0] == 'j' ? strcmp(end, ".dump") == 0 : strcmp(end, ".map") == 0;
}

enum map_origin map_origin(const char *path)
{
	/* perf names the vDSO [vdso]; a copy it extracted to read is /tmp/perf-vdso.so-* */
	if (strcmp(path, "[vdso]") == 0 || starts_with(path, "/tmp/perf-vdso.so-"))
		return MAP_VDSO;
	/* anonymous memory as the kernel names it ([heap], [stack], [anon:NAME],
	 * anon_inode:..., //anon), memory files, and what perf's map.c calls no-dso or
	 * anonymous memory */
	if (path[0] != '/' || starts_with(path, "//") || starts_with(path, "/memfd:") ||
	    starts_with(path, "/dev/zero") || starts_with(path, "/anon_hugepage") ||
	    starts_with(path, "/SYSV") || starts_with(path, "/dev/shm/"))
		return MAP_NO_FILE;
	/* a runtime maps its jitdump to mark it for perf; perf inject names JIT code by
	 * the perf map */
	if (is_jit_file_name(path_base(path)))
		return MAP_NO_FILE;
	return MAP_FILE;
}

char *locate_debug_build_id_path(const char *sysroot, const uint8_t *id, size_t n)
{
	char rel[64 + 2 * 64];
	size_t k;

	if (n < 2 || n > 64)
		return NULL;
	k = (size_t)snprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%02x/", id[0]);
	hex_bytes(rel + k, id + 1, n - 1);
	strcat(rel, ".debug");
	return sysroot ? path_join(sysroot, rel) : xstrdup(rel);
}

int locate_uses_debuginfod(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[0];
}

static void add(struct loc_list *l, const struct loc_row *r, char *path)
{
	struct loc_candidate c;

	memset(&c, 0, sizeof(c));
	c.place = r->place;
	c.flags = r->flags;
	c.path = path;
	VEC_PUSH(l->v, l->n, l->cap, c);
}

/* The debug places, which need the object's directory (as below the sysroot). */
static void add_debug(struct loc_list *l, const struct loc_row *r, const struct loc_query *q)
{
	const char *path = q->path ? q->path : "";
	int bid = q->build_id && q->build_id_size;
	char *dir, *slash, *p = NULL;

	switch (r->place) {
	case LOC_DEBUG_BUILDID:
		p = bid ? locate_debug_build_id_path(q->sysroot, q->build_id, q->build_id_size) : NULL;
		break;
	case LOC_DEBUGLINK_DIR:
	case LOC_DEBUGLINK_DOTDEBUG:
	case LOC_DEBUGLINK_USRLIB:
		if (!q->debuglink || !q->debuglink[0] || strchr(q->debuglink, '/'))
			return;
		dir = xstrdup(path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else
			dir[0] = 0;
		p = r->place == LOC_DEBUGLINK_DIR ? xasprintf("%s/%s", dir, q->debuglink)
		  : r->place == LOC_DEBUGLINK_DOTDEBUG ? xasprintf("%s/.debug/%s", dir, q->debuglink)
		  : xasprintf("/usr/lib/debug%s/%s", dir, q->debuglink);
		free(dir);
		break;
	case LOC_DEBUG_PATH_DEBUG:
	case LOC_DEBUG_PATH:
		/* these names carry no checksum: only where a build id can vouch */
		if (path[0] == '/' && bid)
			p = xasprintf("/usr/lib/debug%s%s", path,
				      r->place == LOC_DEBUG_PATH_DEBUG ? ".debug" : "");
		break;
	case LOC_DEBUGINFOD:
		if (locate_uses_debuginfod())
			add(l, r, NULL);
		return;
	default:
		return;
	}
	if (!p)
		return;
	if (r->place != LOC_DEBUG_BUILDID && q->sysroot) {
		char *full = path_join(q->sysroot, p);

		free(p);
		p = full;
	}
	add(l, r, p);
}

static void add_jit(struct loc_list *l, const struct loc_row *r, const struct loc_places *pl,
		    const struct loc_query *q)
{
	char name[64];

	if (r->kind == LOC_JITDUMP)
		snprintf(name, sizeof(name), "jit-%u.dump", q->pid);
	else
		snprintf(name, sizeof(name), "perf-%u.map", q->pid);
	switch (r->place) {
	case LOC_JIT_DIRS:
		for (size_t i = 0; i < pl->njit_dirs; i++) {
			add(l, r, xstrdup(pl->jit_dirs[i]));
			l->v[l->n - 1].instance = i;
			snprintf(l->v[l->n - 1].name, sizeof(l->v[0].name), "%s", name);
		}
		break;
	case LOC_BESIDE_INPUT:
		if (pl->input_dir)
			add(l, r, xasprintf("%s/%s", pl->input_dir, name));
		break;
	case LOC_RECORDED:
		if (q->path)
			add(l, r, xstrdup(q->path));
		break;
	case LOC_TMP:
		if (pl->here)
			add(l, r, xasprintf("/tmp/%s", name));
		break;
	default:
		break;
	}
}

size_t deleted_path_len(const char *path)
{
	static const char mark[] = " (deleted)";
	size_t n = strlen(path), m = sizeof(mark) - 1;

	return n > m && strcmp(path + n - m, mark) == 0 ? n - m : 0;
}

/* The places that take the object's name: `path` below --symfs, its base name there,
 * the path itself, its base name beside the input. */
static void add_named(struct loc_list *l, const struct loc_row *r, const struct loc_places *pl,
		      const char *path, unsigned flags)
{
	char *p = NULL;

	if (!path[0])
		return;
	switch (r->place) {
	case LOC_SYMFS_PATH:
		if (pl->symfs) {
			size_t root = strlen(pl->symfs);

			while (root > 0 && pl->symfs[root - 1] == '/')
				root--;
			add(l, r, path_join(pl->symfs, path));
			l->v[l->n - 1].sysroot = pl->symfs;
			l->v[l->n - 1].under = root;
			l->v[l->n - 1].flags |= flags;
		}
		return;
	case LOC_SYMFS_NAME:
		/* its debug files under DIR too, as perf looks for every file under --symfs */
		if (pl->symfs) {
			size_t root = strlen(pl->symfs);

			while (root > 0 && pl->symfs[root - 1] == '/')
				root--;
			p = path_join(pl->symfs, path_base(path));
			add(l, r, p);
			l->v[l->n - 1].sysroot = pl->symfs;
			l->v[l->n - 1].under = root;
			l->v[l->n - 1].flags |= flags;
		}
		return;
	case LOC_RECORDED:
		p = xstrdup(path);
		break;
	case LOC_BESIDE_INPUT:
		if (pl->input_dir)
			p = xasprintf("%s/%s", pl->input_dir, path_base(path));
		break;
	default:
		break;
	}
	if (p) {
		add(l, r, p);
		l->v[l->n - 1].flags |= flags;
	}
}

void locate_list(const struct loc_places *pl, enum loc_kind kind, const struct loc_query *q,
		 struct loc_list *out)
{
	static const struct loc_places none;
	char hex[2 * 64 + 1] = "";
	int bid = q->build_id && q->build_id_size && q->build_id_size <= 64;
	const char *path = q->path ? q->path : "";

	memset(out, 0, sizeof(*out));
	if (!pl)
		pl = &none;
	if (bid)
		hex_bytes(hex, q->build_id, q->build_id_size);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct loc_row *r = &table[i];
		char *p = NULL;

		if (r->kind != kind)
			continue;
		if (kind == LOC_DEBUG) {
			add_debug(out, r, q);
			continue;
		}
		if (kind == LOC_JITDUMP || kind == LOC_PERFMAP) {
			add_jit(out, r, pl, q);
			continue;
		}
		switch (r->place) {
		case LOC_SYMFS_PATH:
		case LOC_SYMFS_NAME:
		case LOC_RECORDED:
		case LOC_BESIDE_INPUT:
			/* a deleted file: the name as recorded (a file may be called that),
			 * then the path it had */
			add_named(out, r, pl, path, 0);
			if (deleted_path_len(path)) {
				char *undeleted = xstrndup(path, deleted_path_len(path));

				add_named(out, r, pl, undeleted, LOC_F_UNDELETED);
				free(undeleted);
			}
			continue;
		case LOC_BUILDID_ELF:
			if (bid && pl->buildid_dir)
				p = xasprintf("%s/.build-id/%.2s/%s/elf", pl->buildid_dir, hex, hex + 2);
			break;
		case LOC_BUILDID_VDSO:
			if (bid && pl->buildid_dir)
				p = xasprintf("%s/[vdso]/%s/vdso", pl->buildid_dir, hex);
			break;
		case LOC_SYMFS_VDSO:
			if (pl->symfs)
				p = xasprintf("%s/vdso.so", pl->symfs);
			break;
		case LOC_BESIDE_VDSO:
			if (pl->input_dir)
				p = xasprintf("%s/vdso.so", pl->input_dir);
			break;
		case LOC_KALLSYMS_OPTION:
			if (pl->kallsyms)
				p = xstrdup(pl->kallsyms);
			break;
		case LOC_BUILDID_KALLSYMS:
			if (bid && pl->buildid_dir)
				p = xasprintf("%s/[kernel.kallsyms]/%s/kallsyms", pl->buildid_dir, hex);
			break;
		case LOC_PROC_KALLSYMS:
			p = xstrdup("/proc/kallsyms");
			break;
		default:
			break;
		}
		if (p)
			add(out, r, p);
		if (p && (r->flags & LOC_F_ONLY))
			break;
	}
}

void loc_list_release(struct loc_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const char *loc_candidate_shown(const struct loc_candidate *c, char *buf, size_t size)
{
	if (c->flags & LOC_F_LIBDW)
		snprintf(buf, size, "debuginfod (DEBUGINFOD_URLS)");
	else
		snprintf(buf, size, "%s%s%s%s", c->path, c->flags & LOC_F_BELOW ? "/.../" : "",
			 c->flags & LOC_F_BELOW ? c->name : "", c->flags & LOC_F_GZ_TOO ? "[.gz]" : "");
	return buf;
}

char *cache_entry_path(const char *dir, enum cache_kind kind, const char *key, int make)
{
	char *file;
	const char *name;
	int fd;

	if (!dir || !dir[0] || !key || !key[0])
		return NULL;
	file = xasprintf("%s/%s/%s%s", dir, cache_kind_folder(kind), key,
			 kind == CACHE_DEBUG ? ".debug" : "");
	if (make) {
		fd = cache_folder_of(NULL, file, 1, &name);
		if (fd < 0) {
			free(file);
			return NULL;
		}
		close(fd);
	}
	return file;
}

/* File format of a stamp: "PCSTAMP1", then u64 device, inode, size, mtime_ns and
 * ctime_ns of the entry (host byte order). */
struct entry_stamp {
	char magic[8];
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
};

static void stamp_of(const struct stat *st, struct entry_stamp *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->magic, "PCSTAMP1", 8);
	s->dev = (uint64_t)st->st_dev;
	s->ino = (uint64_t)st->st_ino;
	s->size = (uint64_t)st->st_size;
	s->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
	s->ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

int cache_entry_stamped(const char *entry, const struct stat *st)
{
	struct entry_stamp want, got;
	const char *why;
	char *path = xasprintf("%s.ok", entry);
	int fd = cache_file_open(NULL, path, &why), ok;

	free(path);
	if (fd < 0)
		return 0;
	stamp_of(st, &want);
	ok = pread(fd, &got, sizeof(got), 0) == (ssize_t)sizeof(got) &&
	     memcmp(&got, &want, sizeof(want)) == 0 && lseek(fd, 0, SEEK_END) == (off_t)sizeof(got);
	if (ok) /* the entry's last use, which eviction goes by */
		cache_file_used(fd);
	close(fd);
	return ok;
}

void cache_entry_stamp(const char *entry, int fd, const struct stat *st)
{
	struct entry_stamp s;
	struct timespec now;
	char *path;

	/* 50 ms: well past a coarse clock's tick (4 ms at HZ=250). An entry used again
	 * that soon (quick runs one after another) still needs its use known to eviction. */
	if (clock_gettime(CLOCK_REALTIME, &now) != 0 || now.tv_sec < st->st_ctim.tv_sec ||
	    (uint64_t)(now.tv_sec - st->st_ctim.tv_sec) * 1000000000u + (uint64_t)now.tv_nsec <
		    (uint64_t)st->st_ctim.tv_nsec + 50000000u) {
		cache_file_used(fd);
		return;
	}
	stamp_of(st, &s);
	path = xasprintf("%s.ok", entry);
	(void)cache_file_write(NULL, path, &s, sizeof(s));
	free(path);
}

void cache_damaged(const struct cache_ctx *c, const char *entry, const char *why)
{
	char *stamp = xasprintf("%s.ok", entry);

	/* a FIFO or a file: gone, so that the remade entry can take the name */
	cache_file_remove(c, entry);
	cache_file_remove(c, stamp);
	free(stamp);
	if (c && c->damaged)
		c->damaged(c->arg, entry, why);
}

uint64_t cache_entry_sum(const void *entry, size_t len, size_t at)
{
	const unsigned char *p = entry;
	size_t after = at + 8 <= len ? at + 8 : len;

	return hash_u64(checksum64(p, at) ^ hash_u64(checksum64(p + after, len - after) + len));
}


struct entry_job {
	const struct cache_ctx *cache;
	char *file;
	void *head;
	size_t head_len, len, header_size, nparts;
	struct cache_part *parts;
	const char *magic;
	uint32_t version;
};

/*
 * The head of an entry of `len` bytes (its first head_len bytes, the header of
 * header_size bytes in them) and `nparts` parts after it, zeros between: filled and
 * sealed, its checksum what cache_entry_sum gives for the entry whole.
 */
static void seal(void *head, size_t head_len, const struct cache_part *parts, size_t nparts,
		 size_t len, const char *magic, uint32_t version, size_t header_size)
{
	struct cache_head h;
	size_t at = offsetof(struct cache_head, checksum), after = at + 8, pos = head_len;
	struct checksum c;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, magic, strnlen(magic, sizeof(h.magic)));
	h.version = version;
	h.header_size = (uint32_t)header_size;
	h.file_size = len;
	memcpy(head, &h, sizeof(h));
	checksum_begin(&c, len - after);
	checksum_add(&c, (const char *)head + after, head_len - after);
	for (size_t i = 0; i < nparts; i++) {
		checksum_add_zeros(&c, (size_t)parts[i].off - pos);
		checksum_add(&c, parts[i].p, parts[i].len);
		pos = (size_t)parts[i].off + parts[i].len;
	}
	checksum_add_zeros(&c, len - pos);
	h.checksum = hash_u64(checksum64(head, at) ^ hash_u64(checksum_end(&c) + len));
	memcpy(head, &h, sizeof(h));
}

void cache_head_seal(void *entry, size_t len, const char *magic, uint32_t version,
		     size_t header_size)
{
	seal(entry, len, NULL, 0, len, magic, version, header_size);
}

static void write_entry_now(void *arg)
{
	struct entry_job *j = arg;
	struct atomic_file f;
	int ok, err = 0;

	seal(j->head, j->head_len, j->parts, j->nparts, j->len, j->magic, j->version,
	     j->header_size);
	if (cache_file_create(j->cache, &f, j->file) == 0) {
		ok = pwrite_whole(f.fd, j->head, j->head_len, 0) == 0;
		for (size_t i = 0; ok && i < j->nparts; i++)
			ok = pwrite_whole(f.fd, j->parts[i].p, j->parts[i].len, j->parts[i].off) == 0;
		/* the zeros after the last part */
		ok = ok && ftruncate(f.fd, (off_t)j->len) == 0;
		if (!ok)
			err = errno;
		if (!ok)
			cache_file_fail(j->cache, &f, j->file, err);
		else
			(void)cache_file_commit(j->cache, &f, j->file);
	}
	for (size_t i = 0; i < j->nparts; i++)
		free(j->parts[i].own);
	free(j->parts);
	free(j->head);
	free(j->file);
	free(j);
}

void cache_entry_write_parts_later(const struct cache_ctx *c, char *file, void *head,
				   size_t head_len, const struct cache_part *parts, size_t nparts,
				   size_t len, const char *magic, uint32_t version,
				   size_t header_size)
{
	struct entry_job *j = xmalloc(sizeof(*j));

	*j = (struct entry_job){ c, file, head, head_len, len, header_size, nparts, NULL, magic, version };
	if (nparts) {
		j->parts = xmalloc(nparts * sizeof(*parts));
		memcpy(j->parts, parts, nparts * sizeof(*parts));
	}
	later_run(c ? c->later : NULL, write_entry_now, j);
}

void cache_entry_write_later(const struct cache_ctx *c, char *file, void *entry, size_t len,
			     const char *magic, uint32_t version, size_t header_size)
{
	cache_entry_write_parts_later(c, file, entry, len, NULL, 0, len, magic, version,
				      header_size);
}

enum cache_verdict cache_entry_open(const char *file, const char *magic, uint32_t version,
				    size_t header_size, struct mapped_file *mf, const char **why)
{
	struct cache_head h, want;
	struct stat st;
	int fd = cache_file_open(NULL, file, why), r;

	memset(mf, 0, sizeof(*mf));
	if (fd < 0)
		return *why ? CACHE_DAMAGED : CACHE_MISSING;
	r = mapped_file_try_fd(mf, fd, why, &st);
	if (r != 0) {
		close(fd);
		return CACHE_DAMAGED;
	}
	memset(&want, 0, sizeof(want));
	memcpy(want.magic, magic, strnlen(magic, sizeof(want.magic)));
	memset(&h, 0, sizeof(h));
	if (mf->len) /* an empty file maps nothing */
		memcpy(&h, mf->map, mf->len < sizeof(h) ? mf->len : sizeof(h));
	*why = NULL;
	if (mf->len < offsetof(struct cache_head, header_size))
		*why = "truncated";
	else if (memcmp(h.magic, want.magic, sizeof(h.magic)) != 0)
		*why = "not an entry of this kind";
	else if (h.version != version)
		goto stale; /* another version's layout: not damage */
	else if (mf->len < sizeof(h) || h.header_size != header_size || mf->len < header_size)
		*why = "truncated";
	else if (h.file_size != mf->len)
		*why = h.file_size > mf->len ? "truncated" : "longer than it was written";
	else if (!cache_entry_stamped(file, &st)) {
		if (h.checksum != cache_entry_sum(mf->map, mf->len, offsetof(struct cache_head, checksum)))
			*why = "checksum differs: altered since it was written";
		else
			cache_entry_stamp(file, fd, &st);
	}
	close(fd);
	if (!*why)
		return CACHE_GOOD;
	mapped_file_close(mf);
	return CACHE_DAMAGED;
stale:
	close(fd);
	mapped_file_close(mf);
	*why = NULL;
	return CACHE_STALE;
}
