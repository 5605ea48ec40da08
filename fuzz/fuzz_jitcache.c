/* fuzz_jitcache: libFuzzer target for a jitdump's code table kept in the cache
 * (symbolize/jit/jitcache.h): the table of the input's dump saved as an entry, the entry
 * edited and sealed again (fuzz/entry_edit.h), read back in place, looked up in, and
 * read on (copied, its replay made again). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "fuzz/entry_edit.h"
#include "formats/read/jitdump.h"
#include "symbolize/jit/jitcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

/* Lookups at times and addresses from the input's bytes. */
static uint64_t look(const struct jitcode *jc, const uint8_t *data, size_t size)
{
	struct jitcode_frame f;
	uint64_t sum = 0;

	for (size_t i = 0; i + 16 <= size && i < 4096; i += 48) {
		uint64_t t, a;

		memcpy(&t, data + i, 8);
		memcpy(&a, data + i + 8, 8);
		if (jitcode_lookup(jc, t, a, &f))
			sum += strlen(f.name) + strlen(f.raw_name) + (f.file ? strlen(f.file) : 0) +
			       f.line + f.start;
		sum += (uint64_t)jitcode_why_absent(jc, t, a);
	}
	return sum;
}

/* Input: a jitdump, then edits of its cache entry (fuzz/entry_edit.h). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dump_path, *cache_dir;
	struct cache_ctx cache = { 0 };
	struct jitdump_open o = { 0 };
	struct jit_store_key key;
	struct jitdump_reader *r;
	struct jitcode *jc;
	struct stat st;
	struct diag d;
	const uint8_t *edits;
	size_t nedits, len = entry_edit_split(data, size, &edits, &nedits);
	uint64_t resume, sum = 0;
	char *sub, *entry = NULL;
	int fd;

	if (!dump_path) {
		const char *dir = entry_edit_dir("fuzz_jitcache");

		dump_path = xasprintf("%s/jit-1.dump", dir);
		cache_dir = xasprintf("%s/cache", dir);
	}
	diag_init(&d);
	d.quiet = 1;
	d.out = fopen("/dev/null", "w");
	if (entry_edit_write(dump_path, data, len) != 0)
		abort();
	fd = open(dump_path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0)
		abort();
	cache.dir = cache_dir;
	r = jitdump_reader_open_fd(fd, dump_path, &o, &d);
	if (!r)
		goto out;
	memset(&key, 0, sizeof(key));
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.hdr = *jitdump_reader_header(r);
	key.timeless = (size & 1) != 0;
	key.demangle = 1;
	jc = jitcode_new(1);
	if (key.timeless)
		jitcode_set_timeless(jc);
	/* the first half, live, as a recording that ends there would read it */
	jitcode_add_dump(jc, r, key.hdr.pid);
	resume = jitdump_reader_resume(r);
	jitdump_reader_close(r);
	sum += look(jc, data, len);
	jitcache_save(&cache, &key, fd, jc, resume);
	jitcode_free(jc);

	/* the entry, edited */
	sub = xasprintf("%s/jit", cache_dir);
	entry = entry_edit_first(sub);
	free(sub);
	if (!entry)
		goto out;
	entry_edit(entry, edits, nedits);
	jc = jitcache_open(&cache, &key, fd, &st, &resume);
	if (jc) {
		sum += look(jc, data, len) + resume;
		/* a record more: the arrays copied, the replay made again */
		jitcode_add_load(jc, 1, 0x1000, 0x10, "fuzz");
		jitcode_finish(jc);
		sum += look(jc, data, len);
		jitcode_prune(jc, 2);
		sum += look(jc, data, len);
		jitcode_free(jc);
	}
	(void)unlink(entry);
	sub = xasprintf("%s.ok", entry);
	(void)unlink(sub);
	free(sub);
	free(entry);
out:
	close(fd);
	fclose(d.out);
	fuzz_sink = sum;
	return 0;
}
