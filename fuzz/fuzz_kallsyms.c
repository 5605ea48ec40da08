/* fuzz_kallsyms: libFuzzer target for the kallsyms reader and its cache entries. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mapfile.h"
#include "common/util.h"
#include "fuzz/entry_edit.h"
#include "symbolize/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

static uint64_t probe(const struct kallsyms *k, const uint8_t *data, size_t size)
{
	uint64_t sum = kallsyms_count(k) + kallsyms_addr_of(k, "_text") + kallsyms_addr_of(k, "x");
	struct ksym s;

	for (size_t i = 0; i + 8 <= size && i < 2048; i += 24) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		if (kallsyms_lookup(k, a, &s))
			sum += s.start + s.end + strlen(s.name) + (s.module ? strlen(s.module) : 0);
		if (kallsyms_lookup(k, 0xffffffff81000000ULL + (a & 0xffffff), &s))
			sum += strlen(s.name);
	}
	return sum;
}

/* Input: a kallsyms file (plain or gzipped), then edits of the cache entry made of it
 * (fuzz/entry_edit.h). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct file_id src = { 1, 2, 3, 4 };
	static const uint8_t bid[20] = { 0x4a, 0x5a };
	static char *text, *entry;
	const uint8_t *edits;
	size_t nedits, text_len = entry_edit_split(data, size, &edits, &nedits);
	struct kallsyms *k, *c;
	const char *damage;
	uint64_t sum = 0;

	if (!text) {
		text = xasprintf("%s/kallsyms", entry_edit_dir("fuzz_kallsyms"));
		entry = xasprintf("%s/entry", entry_edit_dir("fuzz_kallsyms"));
	}
	if (entry_edit_write(text, data, text_len) != 0)
		abort();
	k = kallsyms_load(text, NULL, 0);
	if (!k)
		return 0;
	sum += probe(k, data, size);
	unlink(entry);
	if (kallsyms_cache_write(k, entry, "fuzz", &src, bid, sizeof(bid), NULL) != 0) {
		kallsyms_free(k);
		return 0;
	}
	kallsyms_free(k);
	entry_edit(entry, edits, nedits);
	c = kallsyms_cache_open(entry, "fuzz", &src, bid, sizeof(bid), &damage);
	if (c) {
		sum += probe(c, data, size);
		kallsyms_free(c);
	}
	fuzz_sink = sum;
	return 0;
}
