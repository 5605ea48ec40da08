/* runtimeid: Datadog's runtime-id and profile_seq for the profiles of one run. */
#include "upload/runtimeid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_FILE ".perfconv-runtime-ids"
#define STATE_TMP ".perfconv-runtime-ids.tmp-" /* and 8 hex digits */
#define STATE_TMP_HEX 8
#define STATE_OLD_TMP ".perfconv-runtime-ids.new" /* the one name older perfconvs used */
#define TMP_TRIES 16
#define STATE_HEAD "perfconv runtime-ids 1\n"
#define SAME_BOOT_NS (60LL * 1000000000LL)
#define MAX_SEQ (1LL << 62) /* a count no run reaches: past it the file is not believed */

void runtime_id_new(char out[RUNTIME_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t got = 0;
	char *o = out;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n > 0) {
			got += (size_t)n;
		} else {
			/* no entropy source at all: the time and pid, still unlikely twice */
			struct timespec t;

			clock_gettime(CLOCK_REALTIME, &t);
			for (; got < sizeof(b); got++)
				b[got] = (unsigned char)((t.tv_nsec >> (got % 4 * 8)) ^
							 (getpid() >> (got % 2 * 8)) ^ got * 37);
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		*o++ = hex[b[i] >> 4];
		*o++ = hex[b[i] & 15];
	}
	*o = '\0';
}

int runtime_id_valid(const char *s)
{
	for (int i = 0; i < RUNTIME_ID_LEN; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return s[RUNTIME_ID_LEN] == '\0' && s[14] == '4';
}

/* The state file, when it is perfconv's own: its runs into r. */
static void load(struct runtime_ids *r)
{
	char buf[4096], *line, *save = NULL;
	struct stat st;
	ssize_t n;
	int fd = openat(r->dfd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		close(fd);
		return;
	}
	close(fd);
	buf[n] = '\0';
	if (strncmp(buf, STATE_HEAD, strlen(STATE_HEAD)) != 0)
		return;
	for (line = strtok_r(buf + strlen(STATE_HEAD), "\n", &save); line && r->n < RUNTIME_RUNS;
	     line = strtok_r(NULL, "\n", &save)) {
		struct runtime_run u;

		memset(&u, 0, sizeof(u));
		if (sscanf(line, "run %" SCNu64 " boot %" SCNd64 " id %36s seq %" SCNd64, &u.run,
			   &u.boot_ns, u.id, &u.next_seq) != 4 || !runtime_id_valid(u.id) ||
		    u.next_seq < 0 || u.next_seq > MAX_SEQ || !u.run)
			continue;
		u.used = ++r->clock;
		r->runs[r->n++] = u;
	}
}

/* Is `name` a temporary file's name of save(), or of an older perfconv's? */
static int tmp_name(const char *name)
{
	size_t n = strlen(STATE_TMP);

	if (strcmp(name, STATE_OLD_TMP) == 0)
		return 1;
	if (strncmp(name, STATE_TMP, n) != 0 || strlen(name + n) != STATE_TMP_HEX)
		return 0;
	return strspn(name + n, "0123456789abcdef") == STATE_TMP_HEX;
}

/* What a perfconv killed between its save's open and rename left: removed when it is
 * a regular file of ours with one link (no link to another file, nothing of others). */
static void remove_leftovers(int dfd)
{
	int fd = dup(dfd);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!dp) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dp);
	while ((e = readdir(dp)) != NULL)
		if (e->d_name[0] == '.' && tmp_name(e->d_name) &&
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() && st.st_nlink == 1)
			unlinkat(dfd, e->d_name, 0);
	closedir(dp);
}

/* A new file of a name no one can foresee, into `name`: its descriptor, or -1 (errno). */
static int open_tmp(int dfd, char name[sizeof(STATE_TMP) + STATE_TMP_HEX])
{
	static const char hex[] = "0123456789abcdef";

	for (int t = 0; t < TMP_TRIES; t++) {
		unsigned char b[STATE_TMP_HEX / 2];
		char *o = name + strlen(STATE_TMP);
		int fd;

		if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
			struct timespec ts;

			/* no entropy yet (early boot): the clock and pid, told apart by O_EXCL */
			clock_gettime(CLOCK_REALTIME, &ts);
			for (size_t i = 0; i < sizeof(b); i++)
				b[i] = (unsigned char)((unsigned long)ts.tv_nsec >> (i * 8) ^
						       (unsigned)getpid() >> (i * 4) ^ (unsigned)t * 97u);
		}
		memcpy(name, STATE_TMP, strlen(STATE_TMP));
		for (size_t i = 0; i < sizeof(b); i++) {
			*o++ = hex[b[i] >> 4];
			*o++ = hex[b[i] & 15];
		}
		*o = '\0';
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* `what` failed with `err`, said when a diag is given. */
static void say_failed(const struct runtime_ids *r, const char *what, int err)
{
	if (!r->d)
		return;
	diag_warn(r->d, NULL, DIAG_NO_OFFSET, "%s/%s: not saved (%s: %s): a perfconv started "
		  "again would give the runs going on a new Datadog runtime-id and profile_seq from 0",
		  r->dir ? r->dir : ".", STATE_FILE, what, strerror(err));
}

/* The runs written to a new file, renamed over the old one (nothing followed). */
static void save(const struct runtime_ids *r)
{
	char buf[4096], tmp[sizeof(STATE_TMP) + STATE_TMP_HEX];
	size_t len = 0, done = 0;
	int fd, err;

	if (r->dfd < 0)
		return;
	len = (size_t)snprintf(buf, sizeof(buf), "%s", STATE_HEAD);
	for (unsigned i = 0; i < r->n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"run %" PRIu64 " boot %" PRId64 " id %s seq %" PRId64 "\n",
					r->runs[i].run, r->runs[i].boot_ns, r->runs[i].id,
					r->runs[i].next_seq);
	if (len >= sizeof(buf))
		return;
	fd = open_tmp(r->dfd, tmp);
	if (fd < 0) {
		say_failed(r, "a new file beside it", errno);
		return;
	}
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			close(fd);
			unlinkat(r->dfd, tmp, 0);
			say_failed(r, "writing it", err);
			return;
		}
		done += (size_t)n;
	}
	if (close(fd) != 0) {
		err = errno;
		unlinkat(r->dfd, tmp, 0);
		say_failed(r, "writing it", err);
		return;
	}
	if (renameat(r->dfd, tmp, r->dfd, STATE_FILE) != 0) {
		err = errno;
		unlinkat(r->dfd, tmp, 0);
		say_failed(r, "the new file renamed over it", err);
	}
}

void runtime_ids_init(struct runtime_ids *r, int dfd)
{
	memset(r, 0, sizeof(*r));
	r->dfd = dfd;
	if (dfd >= 0) {
		remove_leftovers(dfd);
		load(r);
	}
}

void runtime_ids_say(struct runtime_ids *r, struct diag *d, const char *dir)
{
	r->d = d;
	r->dir = dir;
}

void runtime_ids_take(struct runtime_ids *r, uint64_t run, int64_t boot_ns,
		      char id[RUNTIME_ID_LEN + 1], int64_t *seq)
{
	struct runtime_run *u = NULL;

	for (unsigned i = 0; run && i < r->n && !u; i++) {
		struct runtime_run *x = &r->runs[i];
		uint64_t d = x->boot_ns > boot_ns ? (uint64_t)x->boot_ns - (uint64_t)boot_ns :
						    (uint64_t)boot_ns - (uint64_t)x->boot_ns;

		if (x->run == run && (!x->boot_ns || !boot_ns || d < (uint64_t)SAME_BOOT_NS))
			u = x;
	}
	if (!u) {
		if (r->n < RUNTIME_RUNS) {
			u = &r->runs[r->n++];
		} else {
			u = &r->runs[0];
			for (unsigned i = 1; i < r->n; i++)
				if (r->runs[i].used < u->used)
					u = &r->runs[i];
		}
		memset(u, 0, sizeof(*u));
		u->run = run;
		u->boot_ns = boot_ns;
		runtime_id_new(u->id);
	}
	if (!u->boot_ns)
		u->boot_ns = boot_ns;
	u->used = ++r->clock;
	memcpy(id, u->id, RUNTIME_ID_LEN + 1);
	*seq = u->next_seq++;
	if (run)
		save(r);
	else
		u->run = 0; /* never matched again */
}

int runtime_ids_offset(const struct runtime_ids *r, uint64_t run, int64_t *offset)
{
	const struct runtime_run *u = NULL;

	for (unsigned i = 0; run && i < r->n; i++)
		if (r->runs[i].run == run && r->runs[i].boot_ns && (!u || r->runs[i].used > u->used))
			u = &r->runs[i];
	if (u)
		*offset = u->boot_ns;
	return u != NULL;
}
