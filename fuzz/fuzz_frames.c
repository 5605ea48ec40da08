/* fuzz_frames: libFuzzer target for the frame cache's entries (symbolize/framecache.h). */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "fuzz/entry_edit.h"
#include "symbolize/framecache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

#define MAX_FRAMES 4

/* One lookup's answer from the input: an address (8 bytes), a frame count (1 byte,
 * modulo MAX_FRAMES + 1), then per frame a line (2 bytes) and a name and a file, each
 * up to a NUL (an empty one is absent). The bytes used, 0 at the end. */
static size_t next_answer(const uint8_t *p, size_t n, uint64_t *vaddr, struct dwarf_frame *f,
			  size_t *nf, char *strings, size_t room)
{
	size_t at = 9, used = 0;

	if (n < 9)
		return 0;
	memcpy(vaddr, p, 8);
	*nf = p[8] % (MAX_FRAMES + 1);
	for (size_t i = 0; i < *nf; i++) {
		const char **s[2] = { &f[i].name, &f[i].file };

		f[i].line = at + 2 <= n ? (uint32_t)(p[at] | p[at + 1] << 8) : 0;
		f[i].column = 0;
		at = at + 2 <= n ? at + 2 : n;
		for (int k = 0; k < 2; k++) {
			size_t len = 0;

			while (at + len < n && p[at + len] && len < 64)
				len++;
			if (used + len + 1 > room)
				len = 0;
			memcpy(strings + used, p + at, len);
			strings[used + len] = 0;
			*s[k] = len ? strings + used : NULL;
			used += len + 1;
			at = at + len < n ? at + len + 1 : n;
		}
	}
	return at;
}

/* The one entry in `dir`/frames (not its stamp), malloc'ed; NULL when none. */
static char *the_entry(const char *dir)
{
	char *sub = xasprintf("%s/frames", dir), *found = NULL;
	DIR *d = opendir(sub);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && !strstr(e->d_name, ".ok") && !found)
			found = xasprintf("%s/%s", sub, e->d_name);
	if (d)
		closedir(d);
	free(sub);
	return found;
}

/* Input: lookups' answers, kept in an entry, then edits of the entry
 * (fuzz/entry_edit.h); each address is then asked of the entry read again. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *cache_dir, *object;
	struct cache_ctx cache = { 0 };
	struct dwarf_frame f[MAX_FRAMES], got[MAX_FRAMES];
	char strings[MAX_FRAMES * 2 * 65];
	const uint8_t *edits;
	size_t nedits, len = entry_edit_split(data, size, &edits, &nedits), nf, used;
	struct frame_cache *fc;
	uint64_t vaddr, sum = 0;
	char *entry;

	if (!cache_dir) {
		unsetenv("DEBUGINFOD_URLS");
		cache_dir = xasprintf("%s/cache", entry_edit_dir("fuzz_frames"));
		object = xasprintf("%s/object", entry_edit_dir("fuzz_frames"));
		if (entry_edit_write(object, "\177ELF", 4) != 0)
			abort();
	}
	if ((entry = the_entry(cache_dir))) {
		unlink(entry);
		free(entry);
	}
	cache.dir = cache_dir;
	fc = frame_cache_open(&cache, object, NULL);
	if (!fc)
		abort();
	frame_cache_set_dwarf(fc, len > 0 && data[0] != 0);
	for (size_t at = 0; (used = next_answer(data + at, len - at, &vaddr, f, &nf, strings,
						 sizeof(strings))) != 0;
	     at += used)
		frame_cache_put(fc, vaddr, f, nf);
	frame_cache_save(fc);
	frame_cache_free(fc);
	entry = the_entry(cache_dir);
	if (!entry)
		return 0; /* nothing learnt: nothing written */
	entry_edit(entry, edits, nedits);
	free(entry);
	fc = frame_cache_open(&cache, object, NULL);
	sum += frame_cache_dwarf(fc);
	for (size_t at = 0; (used = next_answer(data + at, len - at, &vaddr, f, &nf, strings,
						 sizeof(strings))) != 0;
	     at += used) {
		long n = frame_cache_get(fc, vaddr, got, MAX_FRAMES);

		for (long i = 0; i < n && i < MAX_FRAMES; i++)
			sum += got[i].line + (got[i].name ? strlen(got[i].name) : 0) +
			       (got[i].file ? strlen(got[i].file) : 0);
	}
	frame_cache_free(fc);
	fuzz_sink = sum;
	return 0;
}
