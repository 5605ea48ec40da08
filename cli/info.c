/* info: perfconv info's command line. */
#include "cli/info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/options.h"
#include "convert/info.h"

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: perfconv info [-i] [perf.data] [--json] [options]\n"
		"\n"
		"Describe a recording for a bug report: perf version, host, kernel, command,\n"
		"events and call-graph mode, time span, lost events, the busiest processes\n"
		"and threads, every object samples fall in with its build id and where its\n"
		"file was found (or the places looked at), JIT dumps and maps, kernel symbols.\n"
		"Samples are counted, not symbolized.\n"
		"\n"
		"  -i, --input FILE      perf.data file, --threads directory, or - (default perf.data)\n"
		"      --json            JSON instead of text (the same facts)\n"
		"      --top N           processes and threads listed (default 10)\n"
		"      --symfs DIR, --kallsyms FILE, --buildid-dir DIR, --jit-dir DIR,\n"
		"      --cache-dir DIR, --cache-size SIZE, --no-cache\n"
		"                        where files are looked for, as for a conversion\n"
		"  -h, --help            this text\n");
}

/* What perfconv info's options fill. */
struct info_cli {
	struct info_options io;
	struct where_opts w;
	int have_input;
};

static enum opt_take info_take(void *ctx, int id, const char *arg, char **argv)
{
	struct info_cli *ic = ctx;

	(void)argv;
	switch (id) {
	case 'i': ic->io.input = arg; ic->have_input = 1; return TAKE_OK;
	case OPT_JSON: ic->io.json = 1; return TAKE_OK;
	case OPT_INFO_TOP: {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (*end || end == arg || v == 0 || v > 1000000)
			return take_bad("--top takes a positive number", arg);
		ic->io.top = v;
		return TAKE_OK;
	}
	default: return where_option(&ic->w, id, arg);
	}
}

int info_main(int argc, char **argv)
{
	struct info_cli ic;
	const struct cli_parse cp = { CMD_INFO, info_usage, 0, info_take, &ic };
	struct diag d;
	int rc;

	memset(&ic, 0, sizeof(ic));
	ic.w.sym = &ic.io.sym;
	ic.io.input = "perf.data";
	ic.io.top = 10;
	ic.io.sym.demangle = 1;
	ic.io.sym.inline_frames = 1;
	diag_init(&d);
	if (cli_parse(&cp, argc, argv, &rc) != CLI_PARSED)
		goto out;
	/* the recording may follow the options, as it may for a conversion: one */
	if (optind < argc && !ic.have_input) {
		ic.io.input = argv[optind++];
		ic.have_input = 1;
	}
	if (optind < argc) {
		rc = bad_usage("info reads one recording; unexpected argument", argv[optind]);
		goto out;
	}
	ic.io.jit_dirs = ic.w.jit_dirs;
	ic.io.njit_dirs = ic.w.njit_dirs;
	rc = where_finish(&ic.w, &d) || info_run(&ic.io, stdout, &d) ? 1 : 0;
out:
	where_release(&ic.w);
	return rc;
}
