/* labels: where and when a profile was made, for pprof files and uploads. */
#include "convert/labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/util.h"

#define MAX_VALUE 200

/* Keys perfconv writes itself, on samples or as an upload's labels. */
static const char *const reserved[] = {
	"service", "service_name", "host", "kernel_release", "process_id", "thread_id",
	"thread_name", "process_name", "cpu", NULL,
};

static int key_valid(const char *k, size_t len)
{
	if (!len || !((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z') || k[0] == '_'))
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
		      (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return 0;
	return 1;
}

/* UTF-8, no control character, none of `,{}`: 1. */
static int value_valid(const char *v)
{
	size_t n = strlen(v), bad = 0;

	if (n > MAX_VALUE)
		return 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)v[i];
		size_t len = c < 0x80 ? 1 : utf8_seq_len((const unsigned char *)v + i, n - i, &bad);

		if (bad || len == 0)
			return 0;
		if (c < 0x20 || c == 0x7f || c == ',' || c == '{' || c == '}')
			return 0;
		i += len;
	}
	return 1;
}

int meta_add_label(struct meta_options *m, const char *kv, const char **why)
{
	const char *eq = strchr(kv, '=');
	char *copy;
	struct write_label l;

	if (!eq) {
		*why = "--label takes KEY=VALUE";
		return -1;
	}
	if (!key_valid(kv, (size_t)(eq - kv)) || (eq - kv >= 2 && kv[0] == '_' && kv[1] == '_')) {
		*why = "--label: KEY must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __";
		return -1;
	}
	for (size_t i = 0; reserved[i]; i++)
		if (strlen(reserved[i]) == (size_t)(eq - kv) && !strncmp(kv, reserved[i], (size_t)(eq - kv)) &&
		    strcmp(reserved[i], "host") != 0 && strcmp(reserved[i], "kernel_release") != 0) {
			*why = "--label: perfconv writes this key itself (--service names the service)";
			return -1;
		}
	if (!value_valid(eq + 1)) {
		*why = "--label: VALUE must be UTF-8 of at most 200 bytes, without control characters, ',', '{' or '}'";
		return -1;
	}
	copy = xstrdup(kv);
	copy[eq - kv] = '\0';
	VEC_PUSH(m->kv, m->nkv, m->kv_cap, copy);
	l.key = copy;
	l.value = copy + (eq - kv) + 1;
	for (size_t i = 0; i < m->nlabels; i++)
		if (strcmp(m->labels[i].key, l.key) == 0) {
			m->labels[i] = l;
			return 0;
		}
	VEC_PUSH(m->labels, m->nlabels, m->labels_cap, l);
	return 0;
}

int meta_set_service(struct meta_options *m, const char *name, const char **why)
{
	size_t n = strlen(name);

	*why = "--service: NAME must be 1 to 200 of A-Z a-z 0-9 _ . - /";
	if (n == 0 || n > MAX_VALUE)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || strchr("_.-/", name[i])))
			return -1;
	m->service = name;
	return 0;
}

/* Digits at *s into *v (at most `max` of them, at least one): 0, or -1. */
static int digits(const char **s, int max, long long *v)
{
	int n = 0;

	*v = 0;
	while (n < max && **s >= '0' && **s <= '9') {
		*v = *v * 10 + (**s - '0');
		(*s)++;
		n++;
	}
	return n ? 0 : -1;
}

/* ".123456789" at *s: nanoseconds (more digits are cut). */
static long long fraction(const char **s)
{
	long long ns = 0, scale = 100000000;

	if (**s != '.')
		return 0;
	(*s)++;
	while (**s >= '0' && **s <= '9') {
		ns += (**s - '0') * scale;
		scale /= 10;
		(*s)++;
	}
	return ns;
}

int meta_parse_time(const char *s, int64_t *ns)
{
	const char *p = s;
	long long y, mo, d, h, mi, sec, off = 0, frac;
	struct tm tm;
	time_t t;

	if (digits(&p, 20, &y) != 0)
		return -1;
	if (*p == '\0' || *p == '.') {
		/* Unix seconds */
		frac = fraction(&p);
		if (*p || y > 9000000000LL)
			return -1;
		*ns = (int64_t)(y * 1000000000LL + frac);
		return 0;
	}
	if (p - s != 4 || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d) ||
	    (*p != 'T' && *p != 't' && *p != ' '))
		return -1;
	p++;
	if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
	    digits(&p, 2, &sec))
		return -1;
	frac = fraction(&p);
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		long long oh, om;
		int sign = *p == '-' ? -1 : 1;

		p++;
		if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || oh > 23 || om > 59)
			return -1;
		off = sign * (oh * 3600 + om * 60);
	} else {
		return -1;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (int)(y - 1900);
	tm.tm_mon = (int)(mo - 1);
	tm.tm_mday = (int)d;
	tm.tm_hour = (int)h;
	tm.tm_min = (int)mi;
	tm.tm_sec = (int)sec;
	t = timegm(&tm);
	if (t == (time_t)-1 || t - off < 0)
		return -1;
	*ns = (int64_t)(t - off) * 1000000000LL + frac;
	return 0;
}

void meta_options_release(struct meta_options *m)
{
	for (size_t i = 0; i < m->nkv; i++)
		free(m->kv[i]);
	free(m->kv);
	free(m->labels);
}

void meta_rfc3339(int64_t ns, char *buf, size_t cap)
{
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(ns % 1000000000LL));
}

static void push_label(struct profile_meta *m, size_t *cap, const char *k, const char *v)
{
	struct write_label l = { k, v };

	VEC_PUSH(m->labels, m->nlabels, *cap, l);
}

static int has_key(const struct meta_options *o, const char *k)
{
	for (size_t i = 0; i < o->nlabels; i++)
		if (strcmp(o->labels[i].key, k) == 0)
			return 1;
	return 0;
}

/*
 * A `perf record --threads` directory: the time of its header file (`data`), which
 * perf writes last, less what the recording spans. 1 with *ns set, or 0.
 */
static int dir_time(const char *input, const struct profile *p, int64_t *ns)
{
	struct stat st;
	char *path;
	int ok;

	if (stat(input, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	path = xmalloc(strlen(input) + 8);
	sprintf(path, "%s/data", input);
	ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	if (!ok)
		return 0;
	*ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	if (p->has_time && p->first_time_set)
		*ns -= (int64_t)(p->last_time - p->first_time);
	return 1;
}

void profile_meta_make(const struct meta_options *o, const struct profile *p, const char *input,
		       int quiet, struct profile_meta *m, struct diag *d)
{
	size_t cap = 0;
	double span;

	memset(m, 0, sizeof(*m));
	m->host = p->hostname ? profile_text(p, p->hostname) : "";
	m->kernel_release = p->osrelease ? profile_text(p, p->osrelease) : "";
	if (p->has_time && p->first_time_set)
		m->duration_ns = (int64_t)(p->last_time - p->first_time);
	span = (double)m->duration_ns / 1e9;
	if (o->start_time_set) {
		m->start_ns = o->start_time;
		m->start_from = START_OPTION;
	} else if (p->has_wall_clock && p->has_time && p->first_time_set) {
		/* as the pprof writer has always written time_nanos */
		m->start_ns = (int64_t)(p->first_time - p->clock_ns + p->wall_ns);
		m->start_from = START_CLOCK_DATA;
	} else if (p->start_wall_ns || dir_time(input, p, &m->start_ns)) {
		if (p->start_wall_ns)
			m->start_ns = (int64_t)p->start_wall_ns;
		m->start_from = START_FILE_TIME;
		if (!quiet)
			diag_note(d, "%s: no clock data (perf record -k 1 writes it): start time "
				  "estimated from the file's modification time less the recording's "
				  "%.3f s", input, span);
	} else {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		m->start_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - m->duration_ns;
		m->start_from = START_STREAM_END;
		if (!quiet)
			diag_note(d, "%s: no clock data (perf record -k 1 writes it) and no file time: "
				  "start time taken as now less the recording's %.3f s", input, span);
	}
	if (o->service)
		push_label(m, &cap, "service", o->service);
	for (size_t i = 0; i < o->nlabels; i++)
		push_label(m, &cap, o->labels[i].key, o->labels[i].value);
	m->nuser = m->nlabels;
	if (m->host[0] && !has_key(o, "host"))
		push_label(m, &cap, "host", m->host);
	if (m->kernel_release[0] && !has_key(o, "kernel_release"))
		push_label(m, &cap, "kernel_release", m->kernel_release);
}

void profile_meta_release(struct profile_meta *m)
{
	free(m->labels);
	memset(m, 0, sizeof(*m));
}
