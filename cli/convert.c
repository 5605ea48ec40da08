/* convert: perfconv's command line, a conversion. Exit codes: 0 success, 1 bad input,
 * 2 usage. */
#include "cli/convert.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "common/diag.h"
#include "common/util.h"
#include "convert/conversion.h"
#include "convert/output.h"


static void usage(FILE *f)
{
	char shapes[128];

	fprintf(f,
		"usage: perfconv [-i perf.data]... [-o OUTPUT] [-f FORMAT] [options] [perf.data...]\n"
		"       perfconv info [-i perf.data] [--json]   (perfconv info --help)\n"
		"       perfconv diff BASE NEW [-o OUTPUT] [options]   (perfconv diff --help)\n"
		"\n"
		"Convert a perf recording into a profile.\n"
		"\n"
		"  -i, --input FILE      perf.data file, `perf record --threads` directory, or -\n"
		"                        for a pipe (perf record -o - ... | perfconv -i -);\n"
		"                        default perf.data. Given more than once, the inputs\n"
		"                        are merged, each stack under a frame naming its input\n"
		"                        (FILE (HOST), the host from its header)\n"
		"  -o, --output FILE     output file, or - for standard output (the default)\n"
		"  -f, --format FORMAT   output format; default: from -o's suffix, else folded\n"
		"  -q, --quiet           no closing summary (errors and warnings still print)\n"
		"\n"
		"Symbols:\n"
		"      --symfs DIR       look for binaries under DIR (DIR/recorded/path, DIR/name)\n"
		"      --kallsyms FILE   kernel symbols from FILE (a saved /proc/kallsyms, plain\n"
		"                        or gzipped); /proc/kallsyms is used only when the running\n"
		"                        kernel's build id is the recorded one (with none recorded:\n"
		"                        its release, said to be unverified)\n"
		"      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
		"      --no-demangle     show names as written (C++, Rust, Java, Julia)\n"
		"      --no-inline       no frames for inlined calls (a function's line is then\n"
		"                        the call it inlined)\n"
		"      --no-symbols      no symbolization: every frame as module+0xoffset\n"
		"      --show-art-frames an Android app's recording by simpleperf: keep the ART\n"
		"                        runtime's frames between Java frames (hidden by default,\n"
		"                        as simpleperf's report hides them)\n"
		"      --cache-dir DIR   keep decompressed copies of compressed debug files,\n"
		"                        parsed symbol tables and jitdump tables here (default\n"
		"                        $PERFCONV_CACHE_DIR, else $XDG_CACHE_HOME/perfconv,\n"
		"                        else ~/.cache/perfconv); used only when it is yours\n"
		"                        (or root's) and no symbolic link\n"
		"      --cache-size SIZE past SIZE (512M, 1G: K, M, G, T), the entries used\n"
		"                        longest ago are removed (default 1G; 0: no limit)\n"
		"      --no-cache        do not read or write that cache\n"
		"\n"
		"JIT code (jit-PID.dump from node --perf-prof, lli, erl +JPperf, Julia, Wasmtime;\n"
		"perf-PID.map from --perf-basic-prof and the like):\n"
		"      --jit-dir DIR     also look for jit-PID.dump[.gz] and perf-PID.map below\n"
		"                        DIR (repeatable; covers LLVM's .debug/jit/*/); they are\n"
		"                        looked for first at the path the recording names, next\n"
		"                        to the input, and maps in /tmp when recorded here\n"
		"\n"
		"Filters (comma-separated lists, as perf report takes them):\n"
		"      --pid PID,...     only samples of these processes\n"
		"      --tid TID,...     only samples of these threads\n"
		"      --comm NAME,...   only samples of threads with these names\n"
		"\n"
		"Output:\n"
		"      --event NAME      only samples of this event (as perf names it, e.g.\n"
		"                        cpu-clock or page-faults); folded, speedscope and\n"
		"                        chrome output of a recording with several events\n"
		"                        shows the first unless this names another; pprof\n"
		"                        output has every event as sample types, firefox\n"
		"                        a track per thread and event, unless this names one\n"
		"      --time oncpu|offcpu|wall\n"
		"                        time, from a recording with scheduler switches\n"
		"                        (-e sched:sched_switch, or --switch-events): on the\n"
		"                        CPU (the CPU clock's samples), off it (from each\n"
		"                        switch-out to the next switch-in, by the state the\n"
		"                        thread left in), or both (wall); in nanoseconds.\n"
		"                        pprof has all three as sample types without it\n"
		"      --weight samples|period\n"
		"                        count samples (folded's default) or the event's\n"
		"                        period (speedscope's and firefox's: nanoseconds for\n"
		"                        clock events, which firefox shows as milliseconds)\n"
		"      --with-pid        folded, svg: first frame comm-PID\n"
		"      --with-tid        folded, svg: first frame comm-PID/TID\n"
		"      --annotate        folded: suffix _[k] kernel, _[j] JIT, _[i] inlined frames\n"
		"      --srcline         folded, samples, svg: frames as \"name (file:line)\" where the\n"
		"                        line is known (a return address shows its call's line)\n"
		"      --cpu-label       pprof: label each sample with its cpu\n"
		"      --title TEXT      svg: the graph's title (default: the recorded command)\n"
		"      --inverted        svg: an icicle graph, the root at the top\n"
		"      --width PIXELS    svg: image width (default 1200)\n"
		"      --minwidth PIXELS svg: frames narrower than this are not drawn, their\n"
		"                        weight staying in their callers' (default 0.1; 0 draws\n"
		"                        every frame); the file says how many were left out\n"
		"\n"
		"pprof for a backend (docs/BACKENDS.md; perfconv upload --help sends it):\n");
	cli_shape_list(shapes, sizeof(shapes), "|", "|");
	fprintf(f, "      --for %s\n", shapes);
	fprintf(f,
		"                        shape the pprof for it: its sample type and label names,\n"
		"                        no frame it would drop, time_nanos always set (perf's\n"
		"                        clock data, else the file's time less the recording's\n"
		"                        length), process_name, host and kernel_release labels\n"
		"      --service NAME    pprof: a `service` label on every sample\n"
		"      --label KEY=VALUE pprof: a label on every sample (repeatable)\n"
		"      --start-time RFC3339|UNIX\n"
		"                        pprof: the recording's start (time_nanos)\n"
		"  -h, --help            this text\n"
		"      --version         perfconv's version\n"
		"\n"
		"Formats:\n");
	for (size_t i = 0; output_formats[i]; i++) {
		const struct output_format *of = output_formats[i];

		if (of->flags & OF_DIFF_ONLY)
			continue;
		fprintf(f, "  %-10s %s (", of->name, of->help);
		for (size_t j = 0; of->suffixes[j]; j++)
			fprintf(f, "%s%s", j ? ", " : "", of->suffixes[j]);
		fprintf(f, ")\n");
	}
	fprintf(f, "\nExit status: 0 success, 1 bad input or output, 2 usage.\n");
}

/* A regular file or nothing yet at `path` (not a device such as /dev/null). */
static int is_file_or_new(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/* The output is none of the inputs: 0, or -1 after saying so. */
static int output_check_inputs(const struct cli *c, struct diag *d)
{
	for (size_t i = 0; i < c->cv.ninputs; i++)
		if (output_check_not_input(c->output, c->cv.inputs[i], d) != 0)
			return -1;
	return c->cv.ninputs ? 0 : output_check_not_input(c->output, c->cv.co.input, d);
}

/* Without -f or a suffix of its own: a conversion's format. */
#define DEFAULT_FORMAT "folded"

/* Each other format's first suffix, "X is NAME, Y NAME2, ...": what -o could have ended
 * with. */
static void suffix_hint(char *buf, size_t cap)
{
	size_t len = 0, k = 0;

	buf[0] = '\0';
	for (size_t i = 0; output_formats[i] && len < cap; i++) {
		const struct output_format *of = output_formats[i];

		if ((of->flags & OF_DIFF_ONLY) || strcmp(of->name, DEFAULT_FORMAT) == 0)
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s %s%s", k ? ", " : "",
					of->suffixes[0], k ? "" : "is ", of->name);
		k++;
	}
}

/* The options given go with format `of` (its row's flags): 0, or 2 after saying why not. */
static int format_fits(const struct cli *c, const struct output_format *of)
{
	char names[128], msg[256];
	size_t n;

	if (strcmp(c->output, "-") == 0 && isatty(STDOUT_FILENO) && (of->flags & OF_PROTOBUF)) {
		n = cli_format_list(names, sizeof(names), OF_PROTOBUF, OF_DIFF_ONLY, " and ");
		snprintf(msg, sizeof(msg), "%s %s protobuf, not for a terminal: give -o FILE or send "
			 "standard output elsewhere", names, n > 1 ? "are" : "is");
		return bad_usage(msg, NULL);
	}
	if (c->cv.pprof_for > 0 && !(of->flags & OF_SHAPED)) {
		cli_format_list(names, sizeof(names), OF_SHAPED, OF_DIFF_ONLY, " and ");
		snprintf(msg, sizeof(msg), "--for is for %s output", names);
		return bad_usage(msg, NULL);
	}
	if ((c->cv.meta.service || c->cv.meta.nlabels || c->cv.meta.start_time_set) &&
	    !(of->flags & OF_META)) {
		cli_format_list(names, sizeof(names), OF_META, OF_DIFF_ONLY, " and ");
		snprintf(msg, sizeof(msg), "--service, --label and --start-time are for %s output",
			 names);
		return bad_usage(msg, NULL);
	}
	return 0;
}

/* perfconv's options: the conversion's. */
static enum opt_take convert_take(void *ctx, int id, const char *arg, char **argv)
{
	(void)argv;
	return convert_option(ctx, id, arg);
}

int convert_main(int argc, char **argv)
{
	struct cli c;
	const struct cli_parse cp = { CMD_CONVERT, usage, 1, convert_take, &c };
	struct profile p;
	struct profile_meta m;
	struct diag d;
	const struct output_format *of = NULL;
	int rc = 0, w;

	cli_init(&c);
	diag_init(&d);
	profile_init(&p);
	memset(&m, 0, sizeof(m));
	if (cli_parse(&cp, argc, argv, &rc) != CLI_PARSED)
		goto out;
	/* inputs may also follow the options, as pprof and speedscope take them */
	for (; optind < argc; optind++) {
		c.cv.co.input = argv[optind];
		VEC_PUSH(c.cv.inputs, c.cv.ninputs, c.cv.inputs_cap, argv[optind]);
	}
	if (c.format) {
		of = output_by_name(c.format);
		if (!of) {
			char names[256];

			output_format_names(names, sizeof(names));
			fprintf(stderr, "perfconv: unknown format: %s (formats: %s)\n", c.format, names);
			rc = 2;
			goto out;
		}
	} else {
		of = strcmp(c.output, "-") ? output_by_path(c.output) : NULL;
		if (!of && strcmp(c.output, "-") != 0 && is_file_or_new(c.output)) {
			char hint[256];

			suffix_hint(hint, sizeof(hint));
			diag_warn(&d, c.output, DIAG_NO_OFFSET, "no format has its suffix: writing "
				  "%s (-f chooses; %s)", DEFAULT_FORMAT, hint);
		}
		if (!of)
			of = output_by_name(DEFAULT_FORMAT);
	}
	if ((rc = format_fits(&c, of)) != 0)
		goto out;
	if (cli_finish(&c, &d) != 0)
		rc = 1;
	else if (output_check_inputs(&c, &d) != 0 || output_check_writable(c.output, &d) != 0)
		rc = 1;
	else if (convert_one(&c.cv, of, &p, &m, &d) != 0)
		rc = 1;
	else if ((w = output_write(of, &p, &c.cv.wo, c.output, &d)) != OUTPUT_WRITTEN)
		/* a broken pipe: the shell's status of a process SIGPIPE ended */
		rc = w == OUTPUT_BROKEN_PIPE ? 128 + SIGPIPE : 1;
out:
	profile_meta_release(&m);
	profile_release(&p);
	cli_release(&c);
	return rc;
}
