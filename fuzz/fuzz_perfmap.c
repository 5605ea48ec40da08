/* fuzz_perfmap: libFuzzer target for the perf map reader and the JIT code table it feeds. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/jit/jitcode.h"
#include "formats/read/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct perfmap_entry e;
	struct perfmap_reader *r;
	struct jitcode_frame f;
	struct jitcode *jc;
	struct strtab st;
	struct diag d;
	uint64_t sum = 0;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	diag_init(&d);
	d.quiet = 1;
	d.out = devnull;
	r = perfmap_reader_open_mem(data, size, "fuzz.map", &d);
	while (perfmap_reader_next(r, &e) == 1)
		sum += e.start + e.size + strlen(e.name) + e.line;
	perfmap_reader_close(r);

	r = perfmap_reader_open_mem(data, size, "fuzz.map", &d);
	strtab_init(&st);
	jc = jitcode_new(1);
	jitcode_add_perfmap(jc, r);
	perfmap_reader_close(r);
	jitcode_finish(jc);
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 32) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		if (jitcode_lookup(jc, 0, a, &f))
			sum += strlen(f.name) + f.size;
	}
	jitcode_free(jc);
	strtab_release(&st);
	fuzz_sink = sum;
	return 0;
}
