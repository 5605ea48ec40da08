/* samples: one line per sample in time order, for reading and diffing. */
#include "formats/write/samples.h"

#include "common/writeend.h"
#include "formats/write/frametext.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int samples_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	uint32_t *frames = NULL;
	size_t frames_cap = 0, text_cap = 0;
	char name[4096], *text = NULL;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		size_t n = profile_stack_all(p, s->stack, &frames, &frames_cap);
		const char *ev = s->event < p->nevents ? profile_text(p, p->events[s->event].name) : "";
		char cpu[16];

		if (o->event >= 0 && s->event != o->event)
			continue;
		snprintf(name, sizeof(name), "%s", profile_text(p, s->comm));
		frame_name_sanitize(name);
		if (s->cpu == PC_NO_CPU)
			snprintf(cpu, sizeof(cpu), "-");
		else
			snprintf(cpu, sizeof(cpu), "%u", s->cpu);
		fprintf(out, "%s\t%d/%d\t%s\t%" PRIu64 ".%09" PRIu64 "\t%s\t%" PRIu64 "\t", name,
			(int)s->pid, (int)s->tid, cpu, s->time / 1000000000u, s->time % 1000000000u, ev,
			s->period);
		while (n-- > 0) {
			fputs(frame_text_all(p, &p->frames[frames[n]], o, &text, &text_cap), out);
			if (n)
				fputc(';', out);
		}
		if (fputc('\n', out) == EOF)
			break;
	}
	free(frames);
	free(text);
	return write_end(out, 0);
}
