/* watchopts: sizes and ages as --max-backlog and --keep-sent take them and as the
 * watcher's messages say them. */
#include "upload/watchopts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int watch_parse_backlog(const char *s, uint64_t *chunks, uint64_t *bytes)
{
	uint64_t v;
	int suffix;

	*chunks = *bytes = 0;
	if (strcmp(s, "none") == 0)
		return 0;
	if (parse_size(s, &v, &suffix) != 0)
		return -1;
	if (suffix)
		*bytes = v;
	else
		*chunks = v;
	return 0;
}

int watch_parse_keep(const char *s, uint64_t *bytes, int64_t *age_s)
{
	static const struct { const char *unit; int64_t s; } units[] = {
		{ "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
		{ "w", 7 * 86400 },
	};
	char *end;
	unsigned long long n;
	uint64_t v;
	int suffix;

	if (strcmp(s, "all") == 0) {
		*bytes = 0;
		*age_s = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || !*end)
		return -1; /* a bare number could be either */
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			if (n == 0 || n > (unsigned long long)(INT64_MAX / units[i].s))
				return -1;
			*age_s = (int64_t)n * units[i].s;
			return 0;
		}
	if (parse_size(s, &v, &suffix) != 0 || v == 0)
		return -1;
	*bytes = v;
	return 0;
}

/* "1.5 GiB", "512 KiB", "900 bytes" */
void watch_size_text(uint64_t v, char *buf, size_t cap)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	int u = -1;

	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, cap, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, cap, "%.*f %s", x < 10 && x != (double)(uint64_t)x ? 1 : 0, x, units[u]);
}

/* "5 d 12 h", "3 h 20 min", "45 min", "30 s" */
void watch_age_text(int64_t s, char *buf, size_t cap)
{
	if (s >= 2 * 86400)
		snprintf(buf, cap, "%lld d %lld h", (long long)(s / 86400), (long long)(s % 86400 / 3600));
	else if (s >= 3600)
		snprintf(buf, cap, "%lld h %lld min", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else if (s >= 60)
		snprintf(buf, cap, "%lld min", (long long)(s / 60));
	else
		snprintf(buf, cap, "%lld s", (long long)(s < 0 ? 0 : s));
}
