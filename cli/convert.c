/* main: perfconv's command line. Exit codes: 0 success, 1 bad input, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/convert.h"
#include "cli/diff.h"
#include "common/diag.h"
#include "common/util.h"
#include "common/version.h"
#include "convert/info.h"
#include "convert/labels.h"
#include "convert/output.h"
#include "convert/pipeline.h"
#include "formats/pprof.h"
#include "symbolize/cachedir.h"


static const struct option long_options[] = {
	CONVERT_OPTIONS
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
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
		"                        output has every event as sample types unless\n"
		"                        this names one\n"
		"      --time oncpu|offcpu|wall\n"
		"                        time, from a recording with scheduler switches\n"
		"                        (-e sched:sched_switch, or --switch-events): on the\n"
		"                        CPU (the CPU clock's samples), off it (from each\n"
		"                        switch-out to the next switch-in, by the state the\n"
		"                        thread left in), or both (wall); in nanoseconds.\n"
		"                        pprof has all three as sample types without it\n"
		"      --weight samples|period\n"
		"                        count samples (folded's default) or the event's\n"
		"                        period (speedscope's: nanoseconds for clock events)\n"
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
		"pprof for a backend (docs/BACKENDS.md; perfconv upload --help sends it):\n"
		"      --for datadog|pyroscope|parca|go\n"
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

		fprintf(f, "  %-10s %s (", of->name, of->help);
		for (size_t j = 0; of->suffixes[j]; j++)
			fprintf(f, "%s%s", j ? ", " : "", of->suffixes[j]);
		fprintf(f, ")\n");
	}
	fprintf(f, "\nExit status: 0 success, 1 bad input or output, 2 usage.\n");
}

/* Parse "1,2,3" into an array of u32; returns -1 on a bad number. */
static int parse_u32_list(const char *arg, uint32_t **out, size_t *n)
{
	size_t cap = 0;
	const char *s = arg;

	while (*s) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end == s || v > UINT32_MAX || (*end && *end != ','))
			return -1;
		VEC_PUSH(*out, *n, cap, (uint32_t)v);
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -1;
}

static void parse_str_list(const char *arg, char ***out, size_t *n)
{
	size_t cap = 0;
	const char *s = arg;

	while (*s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);

		if (len)
			VEC_PUSH(*out, *n, cap, xstrndup(s, len));
		s += len + (comma ? 1 : 0);
	}
}

/* A --jit-dir names a directory: 1, or 0 after saying why not. */
static int is_dir(const char *path, struct diag *d)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		diag_error(d, path, DIAG_NO_OFFSET, "--jit-dir: %s", strerror(errno));
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		diag_error(d, path, DIAG_NO_OFFSET, "--jit-dir: not a directory");
		return 0;
	}
	return 1;
}

int bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "perfconv: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'perfconv --help'.\n");
	return 2;
}

/* A regular file or nothing yet at `path` (not a device such as /dev/null). */
static int is_file_or_new(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

int getopt_error(int opt, char **argv)
{
	char shortopt[3] = { '-', (char)optopt, 0 };
	const char *what = optopt ? shortopt : argv[optind - 1];

	return bad_usage(opt == ':' ? "option needs an argument" : "unknown option", what);
}

/* $PERFCONV_CACHE_DIR, else $XDG_CACHE_HOME/perfconv, else ~/.cache/perfconv; NULL
 * when none can be named. */
static char *default_cache_dir(void)
{
	const char *env = getenv("PERFCONV_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *dir;

	if (env && env[0])
		return xstrdup(env);
	if (xdg && xdg[0]) {
		dir = xmalloc(strlen(xdg) + 16);
		sprintf(dir, "%s/perfconv", xdg);
		return dir;
	}
	if (!home || !home[0])
		return NULL;
	dir = xmalloc(strlen(home) + 24);
	sprintf(dir, "%s/.cache/perfconv", home);
	return dir;
}

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

int where_option(struct where_opts *w, int c, const char *arg)
{
	switch (c) {
	case OPT_SYMFS: w->sym->symfs = arg; return 1;
	case OPT_KALLSYMS: w->sym->kallsyms = arg; return 1;
	case OPT_BUILDID_DIR: w->sym->buildid_dir = arg; return 1;
	case OPT_CACHE_DIR: w->cache_dir = arg; return 1;
	case OPT_JIT_DIR: VEC_PUSH(w->jit_dirs, w->njit_dirs, w->jit_dirs_cap, arg); return 1;
	case OPT_NO_CACHE: w->no_cache = 1; return 1;
	case OPT_CACHE_SIZE: {
		int unit;

		if (parse_size(arg, &w->sym->cache_size, &unit) != 0)
			return bad_usage("--cache-size takes a size (512M, 1G: K, M, G or T), or 0 for "
					 "no limit", arg);
		/* no limit: still counted, so that a later run with one finds the count */
		if (!w->sym->cache_size)
			w->sym->cache_size = UINT64_MAX;
		w->cache_size_set = 1;
		return 1;
	}
	default: return 0;
	}
}

int where_finish(struct where_opts *w, struct diag *d)
{
	if (w->cache_dir && !w->cache_dir[0] && !w->no_cache) {
		/* not the filesystem's root, nor the working directory: none */
		diag_warn(d, NULL, DIAG_NO_OFFSET, "--cache-dir \"\" names no directory: no cache used");
		w->no_cache = 1;
	}
	if (!w->no_cache)
		w->sym->cache_dir = w->cache_dir ? w->cache_dir
						 : (w->default_cache = default_cache_dir());
	if (!w->cache_size_set)
		w->sym->cache_size = CACHE_SIZE_DEFAULT;
	for (size_t i = 0; i < w->njit_dirs; i++)
		if (!is_dir(w->jit_dirs[i], d))
			return -1;
	return 0;
}

void where_release(struct where_opts *w)
{
	free(w->default_cache);
	free(w->jit_dirs);
}

/* perfconv info: its own options; the ones that say where files are as for a conversion. */
static int info_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
		{ "jit-dir", required_argument, NULL, OPT_JIT_DIR },
		{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
		{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
		{ NULL, 0, NULL, 0 },
	};
	struct info_options io;
	struct diag d;
	struct where_opts w;
	int c, rc, have_input = 0;

	memset(&io, 0, sizeof(io));
	memset(&w, 0, sizeof(w));
	w.sym = &io.sym;
	io.input = "perf.data";
	io.top = 10;
	io.sym.demangle = 1;
	io.sym.inline_frames = 1;
	diag_init(&d);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:h", opts, NULL)) != -1) {
		switch (c) {
		case '?':
		case ':': where_release(&w); return getopt_error(c, argv);
		case 'i': io.input = optarg; have_input = 1; break;
		case 'h': info_usage(stdout); where_release(&w); return 0;
		case 'j': io.json = 1; break;
		case 't': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || v == 0 || v > 1000000) {
				where_release(&w);
				return bad_usage("--top takes a positive number", optarg);
			}
			io.top = v;
			break;
		}
		default:
			rc = where_option(&w, c, optarg);
			if (rc == 1)
				break;
			where_release(&w);
			return rc == 2 ? 2 : bad_usage("unknown option", NULL);
		}
	}
	/* the recording may follow the options, as it may for a conversion: one */
	if (optind < argc && !have_input) {
		io.input = argv[optind++];
		have_input = 1;
	}
	if (optind < argc) {
		where_release(&w);
		return bad_usage("info reads one recording; unexpected argument", argv[optind]);
	}
	io.jit_dirs = w.jit_dirs;
	io.njit_dirs = w.njit_dirs;
	rc = where_finish(&w, &d) || info_run(&io, stdout, &d) ? 1 : 0;
	where_release(&w);
	return rc;
}

void cli_init(struct cli *c)
{
	memset(c, 0, sizeof(*c));
	conversion_init(&c->cv);
	c->where.sym = &c->cv.co.sym;
	c->output = "-";
}

void cli_release(struct cli *c)
{
	conversion_release(&c->cv);
	where_release(&c->where);
}

int convert_option(struct cli *c, int opt, const char *arg)
{
	const char *why;

	switch (opt) {
	case 'i':
		c->cv.co.input = arg;
		VEC_PUSH(c->cv.inputs, c->cv.ninputs, c->cv.inputs_cap, arg);
		break;
	case 'o': c->output = arg; break;
	case 'f': c->format = arg; break;
	case 'q': c->cv.co.quiet = 1; break;
	case OPT_NO_DEMANGLE: c->cv.co.sym.demangle = 0; break;
	case OPT_NO_SYMBOLS: c->cv.co.no_symbols = 1; break;
	case OPT_NO_INLINE: c->cv.co.sym.inline_frames = 0; break;
	case OPT_EVENT: c->cv.event = arg; break;
	case OPT_TIME:
		if (strcmp(arg, "oncpu") && strcmp(arg, "offcpu") && strcmp(arg, "wall"))
			return bad_usage("--time takes oncpu, offcpu or wall", arg);
		c->cv.time = arg;
		break;
	case OPT_PID:
		if (parse_u32_list(arg, &c->cv.co.pids, &c->cv.co.npids))
			return bad_usage("--pid takes a comma-separated list of numbers", arg);
		break;
	case OPT_TID:
		if (parse_u32_list(arg, &c->cv.co.tids, &c->cv.co.ntids))
			return bad_usage("--tid takes a comma-separated list of numbers", arg);
		break;
	case OPT_COMM: parse_str_list(arg, &c->cv.co.comms, &c->cv.co.ncomms); break;
	case OPT_WEIGHT:
		if (strcmp(arg, "samples") == 0)
			c->cv.wo.weight_period = 0;
		else if (strcmp(arg, "period") == 0)
			c->cv.wo.weight_period = 1;
		else
			return bad_usage("--weight takes samples or period", arg);
		c->cv.weight_set = 1;
		break;
	case OPT_WITH_PID: c->cv.wo.with_pid = 1; break;
	case OPT_WITH_TID: c->cv.wo.with_tid = 1; break;
	case OPT_ANNOTATE: c->cv.wo.annotate = 1; break;
	case OPT_SRCLINE: c->cv.wo.srcline = 1; break;
	case OPT_CPU_LABEL: c->cv.wo.cpu_label = 1; break;
	case OPT_TITLE: c->cv.wo.title = arg; break;
	case OPT_INVERTED: c->cv.wo.inverted = 1; break;
	case OPT_WIDTH: {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (*end || end == arg || v < 100 || v > 100000)
			return bad_usage("--width takes a number of pixels, 100 to 100000", arg);
		c->cv.wo.width = (unsigned)v;
		break;
	}
	case OPT_MINWIDTH: {
		char *end;
		double v = strtod(arg, &end);

		if (*end || end == arg || !(v >= 0) || v > 1000)
			return bad_usage("--minwidth takes a number of pixels, 0 to 1000", arg);
		c->cv.wo.minwidth = v > 0 ? v : 1e-9;
		break;
	}
	case OPT_FOR:
		c->cv.pprof_for = pprof_for_by_name(arg);
		if (c->cv.pprof_for < 0)
			return bad_usage("--for takes datadog, pyroscope, parca or go", arg);
		break;
	case OPT_SERVICE:
		if (meta_set_service(&c->cv.meta, arg, &why) != 0)
			return bad_usage(why, arg);
		break;
	case OPT_LABEL:
		if (meta_add_label(&c->cv.meta, arg, &why) != 0)
			return bad_usage(why, arg);
		break;
	case OPT_START_TIME:
		if (meta_parse_time(arg, &c->cv.meta.start_time) != 0)
			return bad_usage("--start-time takes RFC 3339 (2026-05-01T12:00:00Z) or Unix seconds",
					 arg);
		c->cv.meta.start_time_set = 1;
		break;
	default:
		switch (where_option(&c->where, opt, arg)) {
		case 1: return 0;
		case 2: return 2;
		default: return 1;
		}
	}
	return 0;
}

int cli_finish(struct cli *c, struct diag *d)
{
	c->cv.co.jit_dirs = c->where.jit_dirs;
	c->cv.co.njit_dirs = c->where.njit_dirs;
	return where_finish(&c->where, d);
}

/* The output is none of the inputs: 0, or -1 after saying so. */
static int output_check_inputs(const struct cli *c, struct diag *d)
{
	for (size_t i = 0; i < c->cv.ninputs; i++)
		if (output_check_not_input(c->output, c->cv.inputs[i], d) != 0)
			return -1;
	return c->cv.ninputs ? 0 : output_check_not_input(c->output, c->cv.co.input, d);
}

/*
 * One conversion, then exit: memory freed on the way is kept for what comes next
 * rather than given back and asked for again. Each munmap, mremap (a vector grown
 * past 128 KB) and the second thread's own arena (mapped, then trimmed) flushes the
 * other core's TLB while the symbolizer's thread lives: an interrupt each, 5% of the
 * CPU time of a --call-graph dwarf recording to pprof in a VM. Not for `upload
 * --watch`, which runs for days.
 */
static void batch_malloc(void)
{
	mallopt(M_ARENA_MAX, 1);
}

int convert_main(int argc, char **argv)
{
	struct cli c;
	struct profile p;
	struct profile_meta m;
	struct diag d;
	const struct output_format *of;
	int opt, rc = 0, w;

	/* a closed stderr (2>&1 | head -1) must not end the conversion before its
	 * output is renamed into place: writes fail with EPIPE instead */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "info") == 0)
		return info_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "diff") == 0) {
		batch_malloc();
		return diff_main(argc - 1, argv + 1);
	}
	batch_malloc();
	cli_init(&c);
	diag_init(&d);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:o:f:qh", long_options, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			cli_release(&c);
			return getopt_error(opt, argv);
		}
		if (opt == 'h') {
			usage(stdout);
			cli_release(&c);
			return 0;
		}
		if (opt == OPT_VERSION) {
			printf("perfconv %s\n", PERFCONV_VERSION);
			cli_release(&c);
			return 0;
		}
		if ((w = convert_option(&c, opt, optarg)) != 0) {
			cli_release(&c);
			return w == 2 ? 2 : bad_usage("unknown option", NULL);
		}
	}
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
			cli_release(&c);
			return 2;
		}
	} else {
		of = strcmp(c.output, "-") ? output_by_path(c.output) : NULL;
		if (!of && strcmp(c.output, "-") != 0 && is_file_or_new(c.output))
			diag_warn(&d, c.output, DIAG_NO_OFFSET, "no format has its suffix: writing "
				  "folded (-f chooses; "
				  ".pb.gz is pprof, .speedscope.json speedscope, .trace.json chrome, "
				  ".svg svg, .otlp.pb otlp)");
		if (!of)
			of = output_by_name("folded");
	}
	if (strcmp(c.output, "-") == 0 && isatty(STDOUT_FILENO) &&
	    (strcmp(of->name, "pprof") == 0 || strcmp(of->name, "otlp") == 0)) {
		cli_release(&c);
		return bad_usage("pprof and otlp are protobuf, not for a terminal: give -o FILE "
				 "or send standard output elsewhere", NULL);
	}
	if (c.cv.pprof_for > 0 && strcmp(of->name, "pprof") != 0) {
		cli_release(&c);
		return bad_usage("--for is for pprof output", NULL);
	}
	if ((c.cv.meta.service || c.cv.meta.nlabels || c.cv.meta.start_time_set) &&
	    strcmp(of->name, "pprof") != 0 && strcmp(of->name, "otlp") != 0) {
		cli_release(&c);
		return bad_usage("--service, --label and --start-time are for pprof and otlp output",
				 NULL);
	}
	profile_init(&p);
	memset(&m, 0, sizeof(m));
	if (cli_finish(&c, &d) != 0)
		rc = 1;
	else if (output_check_inputs(&c, &d) != 0 || output_check_writable(c.output, &d) != 0)
		rc = 1;
	else if (convert_one(&c.cv, of, &p, &m, &d) != 0)
		rc = 1;
	else if ((w = output_write(of, &p, &c.cv.wo, c.output, &d)) != 0)
		rc = w > 0 ? 128 + SIGPIPE : 1; /* the shell's status of a process SIGPIPE ended */
	profile_meta_release(&m);
	profile_release(&p);
	cli_release(&c);
	return rc;
}
