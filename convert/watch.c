/* watch: send each finished chunk `perf record --switch-output` leaves in a folder.
 *
 * perf record --switch-output writes PATH (perf.data) and, at each switch and at its
 * end, finishes the file's header and renames it PATH.<timestamp> (builtin-record.c
 * record__switch_output, 16 digits: %Y%m%d%H%M%S and centiseconds). So the file with
 * the plain name is the one perf still writes, and a renamed one is finished; a
 * header whose data section runs past the file (a copy still being written) is
 * waited for.
 */
#include "convert/watch.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/perf_abi.h"
#include "common/util.h"

/* A file left with data.size 0 (perf killed) this long ago is converted as it is. */
#define STALE_S 60

/* NAME ends in ".<at least 8 digits>": perf's switch-output suffix. */
static int chunk_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t n = 0;

	if (!dot || dot == name)
		return 0;
	for (const char *c = dot + 1; *c; c++, n++)
		if (*c < '0' || *c > '9')
			return 0;
	return n >= 8;
}

int watch_chunk_complete(const char *dir, const char *name)
{
	char *path = xmalloc(strlen(dir) + strlen(name) + 2);
	uint8_t h[56];
	struct stat st;
	FILE *f;
	int sw, ok = 0;
	uint64_t magic, off, size;

	sprintf(path, "%s/%s", dir, name);
	if (!chunk_name(name) || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		free(path);
		return 0;
	}
	f = fopen(path, "rb");
	free(path);
	if (!f)
		return 0;
	if (fread(h, 1, sizeof(h), f) == sizeof(h)) {
		magic = ld64(h, 0);
		sw = magic != PERF_FILE_MAGIC2;
		if (!sw || ld64(h, 1) == PERF_FILE_MAGIC2) {
			/* u64 magic, size, attr_size; section attrs, data (offset, size) */
			off = ld64(h + 40, sw);
			size = ld64(h + 48, sw);
			if (size)
				ok = off <= (uint64_t)st.st_size && size <= (uint64_t)st.st_size - off;
			else
				ok = time(NULL) - st.st_mtime > STALE_S;
		}
	}
	fclose(f);
	return ok;
}

struct chunk {
	char *name;
};

static int chunk_cmp(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;
	const char *dx = strrchr(x->name, '.'), *dy = strrchr(y->name, '.');
	size_t lx = strlen(dx), ly = strlen(dy);

	/* by the timestamp (as a number: equal lengths compare as strings), then name */
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (strcmp(dx, dy))
		return strcmp(dx, dy);
	return strcmp(x->name, y->name);
}

static int in_list(char **list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

/* The finished chunks not given up on, oldest first. */
static size_t scan(const char *dir, char **skip, size_t nskip, struct chunk **out, size_t *cap)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		struct chunk c;

		if (de->d_name[0] == '.' || !chunk_name(de->d_name) ||
		    in_list(skip, nskip, de->d_name) || !watch_chunk_complete(dir, de->d_name))
			continue;
		c.name = xstrdup(de->d_name);
		VEC_PUSH(*out, n, *cap, c);
	}
	closedir(dp);
	if (n > 1)
		qsort(*out, n, sizeof(**out), chunk_cmp);
	return n;
}

static void free_chunks(struct chunk *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
}

static void sleep_ms(unsigned ms, struct upload_stop *stop)
{
	for (unsigned t = 0; t < ms && !upload_stop_check(stop); t += 100) {
		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL);
	}
}

/* DIR/SUB/NAME made for a chunk moved aside; SUB is made when missing. */
static int move_to(const char *dir, const char *sub, const char *name, struct diag *d)
{
	char *from = xmalloc(strlen(dir) + strlen(name) + 2);
	char *to = xmalloc(strlen(dir) + strlen(sub) + strlen(name) + 3);
	int ret;

	sprintf(from, "%s/%s", dir, name);
	sprintf(to, "%s/%s", dir, sub);
	if (mkdir(to, 0755) != 0 && errno != EEXIST) {
		diag_error(d, to, DIAG_NO_OFFSET, "cannot make the folder: %s", strerror(errno));
		free(from);
		free(to);
		return -1;
	}
	sprintf(to, "%s/%s/%s", dir, sub, name);
	ret = rename(from, to);
	if (ret != 0)
		diag_error(d, from, DIAG_NO_OFFSET, "cannot move it to %s/: %s", sub, strerror(errno));
	free(from);
	free(to);
	return ret;
}

struct backlog {
	const struct watch_options *o;
	char **skip;
	size_t nskip;
	size_t reported;      /* the backlog last said */
	char reason[600];
	int reason_said;      /* the current reason was said */
	struct diag *d;
};

/* Say the backlog when it grew since it was last said. */
static void say_backlog(struct backlog *b, size_t n, const char *oldest)
{
	if (n > b->reported && (n > 1 || b->reason[0]) && !b->o->quiet)
		diag_note(b->d, "%s: backlog of %zu chunks (oldest %s): %s", b->o->dir, n, oldest,
			  b->reason[0] ? b->reason : "converting and sending");
	b->reported = n;
}

static int on_retry(void *ctx, const struct upload_result *r, unsigned wait)
{
	struct backlog *b = ctx;
	struct chunk *list = NULL;
	size_t cap = 0, n;

	snprintf(b->reason, sizeof(b->reason), "the backend answered %s; trying again in %u s",
		 r->what, wait);
	n = scan(b->o->dir, b->skip, b->nskip, &list, &cap);
	if (!b->reason_said) {
		/* the first failure of a run of them is said, whatever the count */
		b->reported = 0;
		b->reason_said = 1;
	}
	if (n)
		say_backlog(b, n, list[0].name);
	free_chunks(list, n);
	free(list);
	return 0;
}

int watch_run(const struct watch_options *o, struct uploader *u, watch_make_fn make,
	      watch_release_fn release, void *ctx, struct upload_stop *stop, struct diag *d)
{
	struct backlog b;
	struct stat st;
	size_t skip_cap = 0;
	unsigned poll = o->poll_ms ? o->poll_ms : 1000;

	if (stat(o->dir, &st) != 0) {
		diag_error(d, o->dir, DIAG_NO_OFFSET, "--watch: %s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		diag_error(d, o->dir, DIAG_NO_OFFSET, "--watch: not a directory");
		return -1;
	}
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.d = d;
	while (!upload_stop_check(stop)) {
		struct chunk *list = NULL;
		size_t cap = 0, n = scan(o->dir, b.skip, b.nskip, &list, &cap);
		struct upload_profile up;
		struct upload_result r;
		char *path;
		void *job = NULL;

		if (n == 0) {
			b.reported = 0;
			b.reason[0] = '\0';
			free(list);
			sleep_ms(poll, stop);
			continue;
		}
		say_backlog(&b, n, list[0].name);
		path = xmalloc(strlen(o->dir) + strlen(list[0].name) + 2);
		sprintf(path, "%s/%s", o->dir, list[0].name);
		memset(&up, 0, sizeof(up));
		if (make(ctx, path, &up, &job, d) != 0) {
			diag_warn(d, path, DIAG_NO_OFFSET, "not converted: left in place, not tried again "
				  "until perfconv starts again");
			VEC_PUSH(b.skip, b.nskip, skip_cap, xstrdup(list[0].name));
		} else {
			uploader_send_retrying(u, &up, 0, stop, on_retry, &b, &r);
			if (r.outcome == UPLOAD_SENT) {
				if (o->delete_sent ? unlink(path) : move_to(o->dir, "sent", list[0].name, d)) {
					if (o->delete_sent)
						diag_error(d, path, DIAG_NO_OFFSET, "sent, but cannot delete it: %s",
							   strerror(errno));
					/* not marked: sending it again beats losing track of it */
					VEC_PUSH(b.skip, b.nskip, skip_cap, xstrdup(list[0].name));
				} else if (!o->quiet) {
					diag_note(d, "%s: sent to %s (%s)", path, uploader_url(u), r.what);
				}
				b.reason[0] = '\0';
			} else if (r.outcome == UPLOAD_REFUSED) {
				diag_warn(d, path, DIAG_NO_OFFSET, "refused by %s: %s; moved to refused/",
					  uploader_url(u), r.what);
				if (move_to(o->dir, "refused", list[0].name, d) != 0)
					VEC_PUSH(b.skip, b.nskip, skip_cap, xstrdup(list[0].name));
			}
			/* UPLOAD_STOPPED: left as it is; the loop ends */
			release(ctx, job);
		}
		free(path);
		free_chunks(list, n);
		free(list);
	}
	for (size_t i = 0; i < b.nskip; i++)
		free(b.skip[i]);
	free(b.skip);
	return 0;
}
