/* fuzz_jitdump: libFuzzer target for the jitdump reader and the JIT code table it feeds. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/jitcode.h"
#include "formats/jitdump.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct jitdump_time_conv tc = { 10, 1000, 5, 0, 0, 0 };
	static FILE *devnull;
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct jitcode_frame f;
	struct jitcode *jc;
	struct strtab st;
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
	strtab_init(&st);
	jc = jitcode_new(&st, 1);
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
	jitcode_free(jc);
	strtab_release(&st);
	fuzz_sink = sum;
	return 0;
}
