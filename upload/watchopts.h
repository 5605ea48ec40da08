/* watchopts: sizes and ages as --max-backlog and --keep-sent take them and as the
 * watcher's messages say them. */
#ifndef PERFCONV_WATCHOPTS_H
#define PERFCONV_WATCHOPTS_H

#include <stddef.h>
#include <stdint.h>

/*
 * --max-backlog: "500" (chunks), "1G" (bytes: K, M, G or T, powers of 1024, B or iB
 * may follow, "1GiB"), "0" or "none" (no limit). 0 with *chunks or *bytes set (the
 * other 0), or -1.
 */
int watch_parse_backlog(const char *s, uint64_t *chunks, uint64_t *bytes);
/*
 * --keep-sent: a size as above ("1G"), an age ("90s", "30m" or "30min", "12h", "7d",
 * "2w") or "all" (no limit). 0 with *bytes or *age_s set (the other untouched), or -1.
 */
int watch_parse_keep(const char *s, uint64_t *bytes, int64_t *age_s);
/* "1.5 GiB", "512 KiB", "900 bytes" */
void watch_size_text(uint64_t v, char *buf, size_t cap);
/* "5 d 12 h", "3 h 20 min", "45 min", "30 s" */
void watch_age_text(int64_t s, char *buf, size_t cap);

#endif
