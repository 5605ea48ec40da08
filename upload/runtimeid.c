/* runtimeid: Datadog's runtime-id and profile_seq for the profiles of one run. */
#include "upload/runtimeid.h"

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
#define STATE_TMP ".perfconv-runtime-ids.new"
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

/* The runs written to a new file, renamed over the old one (nothing followed). */
static void save(const struct runtime_ids *r)
{
	char buf[4096];
	size_t len = 0;
	int fd;

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
	unlinkat(r->dfd, STATE_TMP, 0);
	fd = openat(r->dfd, STATE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		unlinkat(r->dfd, STATE_TMP, 0);
		return;
	}
	close(fd);
	if (renameat(r->dfd, STATE_TMP, r->dfd, STATE_FILE) != 0)
		unlinkat(r->dfd, STATE_TMP, 0);
}

void runtime_ids_init(struct runtime_ids *r, int dfd)
{
	memset(r, 0, sizeof(*r));
	r->dfd = dfd;
	if (dfd >= 0)
		load(r);
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
