/* fuzz_tracefmt: libFuzzer target for the trace-event format parser (tracefmt_parse) and
 * the decoding of a tracepoint sample's RAW bytes by its formats.
 *
 * Input: the tracing data (as feature HEADER_TRACING_DATA holds it); its last 256
 * bytes, or all of it when shorter, also serve as the RAW bytes of a sample of every
 * event it describes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/read/tracefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	const uint8_t *raw = size > 256 ? data + size - 256 : data;
	size_t raw_size = size > 256 ? 256 : size, i, j;
	struct tracefmt *t;
	struct diag d;
	uint64_t sum = 0;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	diag_init(&d);
	d.quiet = 1;
	d.out = devnull; /* errors print even when quiet */
	t = tracefmt_parse(data, size, "fuzz.tracing", &d);
	if (!t)
		return 0;
	sum += strlen(tracefmt_version(t));
	for (i = 0; i < tracefmt_nevents(t); i++) {
		const struct tracefmt_event *e = tracefmt_event(t, i);

		sum += e->id + strlen(e->system) + strlen(e->name) + strlen(e->print_fmt);
		if (tracefmt_find(t, e->id) == NULL)
			__builtin_trap();
		for (j = 0; j < e->nfields; j++) {
			const struct tracefmt_field *f = &e->fields[j];
			char buf[64];
			int64_t v = 0;
			size_t k;

			if (tracefmt_field(e, f->name) == NULL)
				__builtin_trap();
			sum += strlen(f->type) + f->offset + f->size;
			if (tracefmt_read_int(t, f, raw, raw_size, &v))
				sum += (uint64_t)v;
			sum += (uint64_t)tracefmt_read_str(t, f, raw, raw_size, buf, sizeof(buf));
			sum += tracefmt_label(f, (uint64_t)v, buf, sizeof(buf));
			sum += tracefmt_label(f, 0, buf, 1);
			for (k = 0; k < f->nlabels; k++)
				sum += strlen(f->labels[k].label) + f->labels[k].value;
			if (f->zero_label)
				sum += strlen(f->zero_label);
		}
	}
	fuzz_sink = sum;
	tracefmt_free(t);
	return 0;
}
