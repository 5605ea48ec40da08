/* entry_edit: what the cache entries' fuzz targets share: a temporary directory, and a
 * cache entry edited as the input says and sealed again. */
#ifndef PERFCONV_FUZZ_ENTRY_EDIT_H
#define PERFCONV_FUZZ_ENTRY_EDIT_H

#include <dirent.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "symbolize/locate.h"

/*
 * An input is what the entry is made of, then optionally the marker "\0MUT" and edits
 * of the entry made, 5 bytes each: a 4-byte position (modulo the entry's length) and
 * a byte XORed there; a position with its top bit set cuts the entry there instead.
 * The edited entry is sealed again (its checksum made to hold), so that what reads it
 * past the checksum is fuzzed, not only the checksum.
 */
static const char ENTRY_EDIT_MARK[4] = { 0, 'M', 'U', 'T' };

/* The length of the input before the edits; *edits and *nedits the edits. */
static inline size_t entry_edit_split(const uint8_t *data, size_t size, const uint8_t **edits,
				      size_t *nedits)
{
	*edits = NULL;
	*nedits = 0;
	for (size_t i = 0; i + sizeof(ENTRY_EDIT_MARK) <= size; i++)
		if (!memcmp(data + i, ENTRY_EDIT_MARK, sizeof(ENTRY_EDIT_MARK))) {
			*edits = data + i + sizeof(ENTRY_EDIT_MARK);
			*nedits = (size - i - sizeof(ENTRY_EDIT_MARK)) / 5;
			return i;
		}
	return size;
}

static char entry_edit_tmp[128];

static inline int entry_edit_remove(const char *path, const struct stat *st, int flag,
				    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

static inline void entry_edit_cleanup(void)
{
	(void)nftw(entry_edit_tmp, entry_edit_remove, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new temporary directory, once per process (the path is static), removed with what
 * it holds when the process exits. */
static inline const char *entry_edit_dir(const char *name)
{
	if (!entry_edit_tmp[0]) {
		snprintf(entry_edit_tmp, sizeof(entry_edit_tmp), "%s/%s.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
		if (!mkdtemp(entry_edit_tmp))
			abort();
		atexit(entry_edit_cleanup);
	}
	return entry_edit_tmp;
}

static inline int entry_edit_write(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* The entry `path` (written whole: anything else aborts) edited and sealed again. */
static inline void entry_edit(const char *path, const uint8_t *edits, size_t nedits)
{
	struct cache_head h;
	uint8_t *buf;
	long len;
	FILE *f = fopen(path, "rb");

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < (long)sizeof(h))
		abort();
	buf = xmalloc((size_t)len);
	rewind(f);
	if (fread(buf, 1, (size_t)len, f) != (size_t)len)
		abort();
	fclose(f);
	for (size_t i = 0; i < nedits && i < 64 && len >= (long)sizeof(h); i++) {
		uint32_t at;

		memcpy(&at, edits + 5 * i, 4);
		if (at & 0x80000000u)
			len = (long)((at & 0x7fffffffu) % (uint32_t)len);
		else
			buf[at % (uint32_t)len] ^= edits[5 * i + 4];
	}
	if (len >= (long)sizeof(h)) {
		char magic[sizeof(h.magic) + 1] = { 0 };

		memcpy(&h, buf, sizeof(h));
		memcpy(magic, h.magic, sizeof(h.magic));
		cache_head_seal(buf, (size_t)len, magic, h.version, h.header_size);
	}
	if (entry_edit_write(path, buf, (size_t)len) != 0)
		abort();
	free(buf);
}

/* The path of the first entry (not a stamp, not hidden) in `dir`, to be freed; NULL when
 * there is none. */
static inline char *entry_edit_first(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char *entry = NULL;

	while (dp && !entry && (e = readdir(dp)))
		if (e->d_name[0] != '.' && !strstr(e->d_name, ".ok"))
			entry = xasprintf("%s/%s", dir, e->d_name);
	if (dp)
		closedir(dp);
	return entry;
}

#endif
