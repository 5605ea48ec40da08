/* fuzz_mapcache: libFuzzer target for a perf map's lines kept in the cache
 * (symbolize/jit/mapindex.h): the input's map read and its entry saved, the entry edited
 * and sealed again (fuzz/entry_edit.h), read back and looked up in, then the map grown
 * and read on from the entry. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "fuzz/entry_edit.h"
#include "symbolize/jit/mapindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

/* Lookups at addresses from the input's bytes. */
static uint64_t look(struct map_index *m, const uint8_t *data, size_t size)
{
	struct perfmap_entry e;
	struct map_line l;
	uint64_t sum = 0;

	if (!m)
		return 0;
	sum += map_index_lines(m);
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 24) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		if (map_index_lookup(m, a, &l, &e))
			sum += strlen(e.name) + l.start + l.end + l.seq;
		if (map_index_lookup(m, a & 0xffffff, &l, &e))
			sum += strlen(e.name) + l.offset;
	}
	return sum;
}

/* Input: a perf map, then edits of its cache entry (fuzz/entry_edit.h). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *map_path, *cache_dir;
	struct cache_ctx cache = { 0 };
	struct map_index *m;
	struct diag d;
	const uint8_t *edits;
	size_t nedits, len = entry_edit_split(data, size, &edits, &nedits);
	uint64_t from = 0, sum = 0;
	char *sub, *entry = NULL;
	FILE *f;

	if (!map_path) {
		const char *dir = entry_edit_dir("fuzz_mapcache");

		map_path = xasprintf("%s/perf-1.map", dir);
		cache_dir = xasprintf("%s/cache", dir);
	}
	diag_init(&d);
	d.quiet = 1;
	d.out = fopen("/dev/null", "w");
	/* the map as a runtime would have it when the entry was made: whole lines */
	if (entry_edit_write(map_path, data, len) != 0)
		abort();
	f = fopen(map_path, "a");
	if (!f || fputc('\n', f) == EOF || fclose(f) != 0)
		abort();
	cache.dir = cache_dir;
	m = map_index_load_cached(map_path, &cache, &d, &from);
	sum += look(m, data, len) + from;
	map_index_free(m);

	sub = xasprintf("%s/jit", cache_dir);
	entry = entry_edit_first(sub);
	free(sub);
	if (entry) {
		entry_edit(entry, edits, nedits);
		m = map_index_load_cached(map_path, &cache, &d, &from);
		sum += look(m, data, len) + from;
		map_index_free(m);
		/* grown: the input's first bytes again, read on from the entry */
		f = fopen(map_path, "a");
		if (!f || fwrite(data, 1, len < 256 ? len : 256, f) != (len < 256 ? len : 256) ||
		    fputc('\n', f) == EOF || fclose(f) != 0)
			abort();
		m = map_index_load_cached(map_path, &cache, &d, &from);
		sum += look(m, data, len) + from;
		map_index_free(m);
		(void)unlink(entry);
		sub = xasprintf("%s.ok", entry);
		(void)unlink(sub);
		free(sub);
		free(entry);
	}
	fclose(d.out);
	fuzz_sink = sum;
	return 0;
}
