/* fuzz_otlpanswer: libFuzzer target for what an OTLP server answers (upload/otlp.c): any
 * bytes as a 200's ExportProfilesServiceResponse and as a failure's google.rpc.Status,
 * read into the message perfconv says. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "upload/backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long statuses[] = { 200, 400, 429, 500, 503 };
	const struct backend_ops *be = backend_of(BACKEND_OTLP);
	struct upload_options o;
	struct backend_ctx c;
	struct upload_profile p;
	/* as the transport keeps an answer: its first 4 KiB, with a NUL after them */
	char body[4097];
	size_t len = size < sizeof(body) - 1 ? size : sizeof(body) - 1;

	memcpy(body, data, len);
	body[len] = '\0';
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	memset(&p, 0, sizeof(p));
	c.o = &o;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		struct upload_result r;

		memset(&r, 0, sizeof(r));
		r.status = statuses[i];
		r.outcome = statuses[i] < 300 ? UPLOAD_SENT : statuses[i] == 400 ? UPLOAD_REFUSED :
			    UPLOAD_RETRY;
		be->answer(&c, &p, body, len, &r);
		if (memchr(r.what, '\0', sizeof(r.what)) == NULL)
			abort();
		fuzz_sink += strlen(r.what) + (uint64_t)r.outcome;
	}
	return 0;
}
