/* uploadrun: perfconv upload's run below its command line: each input converted and
 * sent to a backend, or a `perf record --switch-output` folder watched. */
#ifndef PERFCONV_UPLOADRUN_H
#define PERFCONV_UPLOADRUN_H

#include <stddef.h>

#include "common/diag.h"
#include "convert/conversion.h"
#include "upload/upload.h"
#include "upload/watch.h"

struct upload_run_options {
	struct upload_options *uo;       /* the backend, where, how */
	struct watch_options *wopt;      /* wopt->dir set: the folder watched */
	const char *const *inputs;       /* without --watch: each sent alone */
	size_t ninputs;
	int dry_run;                     /* say what would be sent, send nothing */
	const char *dry_prefix;          /* with dry_run: the bodies written to PREFIX.*, or NULL */
};

/*
 * Send each input (or watch the folder until SIGINT or SIGTERM), converted as `cv`
 * says (its pprof_for and upload set for the backend; a watcher's co.quiet and
 * co.jit_store are changed). 0 when every profile was sent (or watching stopped),
 * 1 after saying why one was refused or could not be sent, or an input is bad.
 */
int upload_run(struct conversion *cv, const struct upload_run_options *ro, struct diag *d);

#endif
