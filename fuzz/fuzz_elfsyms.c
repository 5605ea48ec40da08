/* fuzz_elfsyms: libFuzzer target for an ELF file's symbol table and its cache entry. */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "fuzz/entry_edit.h"
#include "symbolize/elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

static uint64_t probe(const struct elf_obj *o, const uint8_t *data, size_t size)
{
	const uint8_t *id;
	uint64_t sum = elf_obj_status(o) + elf_obj_build_id(o, &id) + elf_obj_has_symtab(o) +
		       elf_obj_has_segments(o), v;
	size_t n = elf_obj_nsyms(o);

	for (size_t i = 0; i < n && i < 4096; i++) {
		const struct elf_sym *s = elf_obj_sym(o, i);
		const char *raw = s ? elf_obj_raw_name(o, s) : NULL;

		if (s)
			sum += s->start + s->end + strlen(s->name) + (raw ? strlen(raw) : 0);
	}
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 40) {
		const struct elf_sym *s;
		uint64_t a;

		memcpy(&a, data + i, 8);
		if ((s = elf_obj_lookup(o, a & 0xffffff)))
			sum += strlen(s->name);
		if (elf_obj_offset_to_vaddr(o, a & 0xffffff, &v) == 0 && (s = elf_obj_lookup(o, v)))
			sum += strlen(s->name);
	}
	return sum;
}

/* The one entry in `dir`/symbols (not its stamp), malloc'ed; NULL when none. */
static char *the_entry(const char *dir, int remove_all)
{
	char *sub = xasprintf("%s/symbols", dir), *found = NULL;
	DIR *d = opendir(sub);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", sub, e->d_name);
		if (remove_all)
			unlink(p);
		if (!remove_all && !found && !strstr(e->d_name, ".ok"))
			found = p;
		else
			free(p);
	}
	if (d)
		closedir(d);
	free(sub);
	return found;
}

/* Input: an ELF file, then edits of the symbols' cache entry made of it
 * (fuzz/entry_edit.h); the file is loaded again through the edited entry. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *root, *object, *cache_dir;
	struct cache_ctx cache = { 0 };
	const uint8_t *edits;
	size_t nedits, len = entry_edit_split(data, size, &edits, &nedits);
	struct elf_obj *o;
	uint64_t sum = 0;
	char *entry;

	if (!root) {
		/* the object under a --symfs of its own: no search leaves it */
		root = xasprintf("%s/root", entry_edit_dir("fuzz_elfsyms"));
		object = xasprintf("%s/obj", root);
		cache_dir = xasprintf("%s/cache", entry_edit_dir("fuzz_elfsyms"));
		if (mkdir(root, 0700) != 0)
			abort();
	}
	free(the_entry(cache_dir, 1));
	if (entry_edit_write(object, data, len) != 0)
		abort();
	cache.dir = cache_dir;
	o = elf_obj_load_cached("/obj", NULL, 0, root, &cache);
	sum += probe(o, data, size);
	elf_obj_free(o);
	entry = the_entry(cache_dir, 0);
	if (entry) {
		entry_edit(entry, edits, nedits);
		free(entry);
		o = elf_obj_load_cached("/obj", NULL, 0, root, &cache);
		sum += probe(o, data, size);
		elf_obj_free(o);
	}
	fuzz_sink = sum;
	return 0;
}
