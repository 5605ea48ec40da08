/* fuzz_jitdump: libFuzzer target for the jitdump reader and the JIT code table it feeds. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/jit/jitcode.h"
#include "formats/read/jitdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

/* Touch what a record lends, so that the sanitizers see any bad pointer. */
static uint64_t touch(const struct jitdump_record *rec)
{
	uint64_t sum = rec->id + rec->size + rec->timestamp;
	size_t i;

	switch (rec->id) {
	case JITDUMP_CODE_LOAD:
		sum += strlen(rec->u.load.name) + rec->u.load.code_addr;
		if (rec->u.load.code && rec->u.load.code_size)
			sum += rec->u.load.code[rec->u.load.code_size - 1];
		break;
	case JITDUMP_CODE_DEBUG_INFO:
		for (i = 0; i < rec->u.debug.nentries; i++)
			sum += rec->u.debug.entries[i].addr + rec->u.debug.entries[i].line +
			       strlen(rec->u.debug.entries[i].file);
		break;
	case JITDUMP_CODE_UNWINDING_INFO:
		if (rec->u.unwind.data_size)
			sum += rec->u.unwind.data[rec->u.unwind.data_size - 1];
		break;
	default:
		break;
	}
	return sum;
}

/* Two frames agree. */
static int same_frame(const struct jitcode_frame *a, const struct jitcode_frame *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->raw_name, b->raw_name) &&
	       !a->file == !b->file && (!a->file || !strcmp(a->file, b->file)) &&
	       a->line == b->line && a->start == b->start && a->size == b->size &&
	       a->from_map == b->from_map;
}

/*
 * The dump read as a watcher reads a live one: its first part (the cut from the
 * input's last bytes) with JITDUMP_LIVE, finished and pruned at a time, then the rest
 * from where that read stopped: lookups at or after the prune time give what the
 * table of the whole dump (`whole`) gives, unless a record older than the prune came
 * after it (the table says so).
 */
static uint64_t incremental(const uint8_t *data, size_t size, const struct jitcode *whole,
			    struct diag *d)
{
	struct jitdump_open o = { .flags = JITDUMP_LIVE };
	struct jitdump_reader *r;
	struct jitcode_frame f, g;
	struct jitcode *jc;
	uint64_t prune = 0, sum = 0;
	size_t cut;

	if (size < 64)
		return 0;
	cut = (size_t)data[size - 1] << 8 | data[size - 2];
	cut = cut % size;
	memcpy(&prune, data + size - 16, 8);
	prune &= 0xffff;
	r = jitdump_reader_open_mem_at(data, cut, "fuzz.dump", &o, d);
	if (!r)
		return 0;
	jc = jitcode_new(1);
	if (size & 2)
		jitcode_set_timeless(jc);
	jitcode_add_dump(jc, r, jitdump_reader_header(r)->pid);
	o.from = jitdump_reader_resume(r);
	jitdump_reader_close(r);
	jitcode_finish(jc);
	if (size & 4)
		jitcode_prune(jc, prune);
	else
		prune = 0;
	o.flags = 0;
	r = jitdump_reader_open_mem_at(data, size, "fuzz.dump", &o, d);
	if (!r)
		abort(); /* where the first read stopped is a place to go on at */
	jitcode_add_dump(jc, r, jitdump_reader_header(r)->pid);
	jitdump_reader_close(r);
	jitcode_finish(jc);
	for (size_t i = 0; i + 16 <= size && i < 4096 && !jitcode_inexact(jc); i += 64) {
		uint64_t t, a;
		int x, y;

		memcpy(&t, data + i, 8);
		memcpy(&a, data + i + 8, 8);
		if (t < prune)
			t = prune;
		x = jitcode_lookup(whole, t, a, &f);
		y = jitcode_lookup(jc, t, a, &g);
		if (x != y || (x && !same_frame(&f, &g)))
			abort();
		sum += (uint64_t)x;
	}
	jitcode_free(jc);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct jitdump_time_conv tc = { 10, 1000, 5, 0, 0, 0 };
	static FILE *devnull;
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct jitcode_frame f;
	struct jitcode *jc;
	struct diag d;
	uint64_t sum = 0;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	diag_init(&d);
	d.quiet = 1;
	d.out = devnull; /* errors print even when quiet */
	r = jitdump_reader_open_mem(data, size, "fuzz.dump", (size & 1) ? &tc : NULL, &d);
	if (!r)
		return 0;
	while (jitdump_reader_next(r, &rec) == 1)
		sum += touch(&rec);
	jitdump_reader_close(r);

	/* the same bytes through the code table, and a few lookups */
	r = jitdump_reader_open_mem(data, size, "fuzz.dump", NULL, &d);
	jc = jitcode_new(1);
	if (size & 2)
		jitcode_set_timeless(jc);
	jitcode_add_dump(jc, r, jitdump_reader_header(r)->pid);
	jitdump_reader_close(r);
	jitcode_finish(jc);
	for (size_t i = 0; i + 16 <= size && i < 4096; i += 64) {
		uint64_t t, a;

		memcpy(&t, data + i, 8);
		memcpy(&a, data + i + 8, 8);
		if (jitcode_lookup(jc, t, a, &f))
			sum += strlen(f.name) + strlen(f.raw_name) + (f.file ? strlen(f.file) : 0) +
			       f.line;
	}
	sum += incremental(data, size, jc, &d);
	jitcode_free(jc);
	fuzz_sink = sum;
	return 0;
}
