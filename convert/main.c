/* main: perfconv's command line. Exit codes: 0 success, 1 bad input, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/diag.h"
#include "common/util.h"
#include "common/version.h"
#include "convert/info.h"
#include "convert/output.h"
#include "convert/pipeline.h"

enum {
	OPT_SYMFS = 256,
	OPT_KALLSYMS,
	OPT_BUILDID_DIR,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_WEIGHT,
	OPT_WITH_PID,
	OPT_WITH_TID,
	OPT_ANNOTATE,
	OPT_NO_DEMANGLE,
	OPT_NO_SYMBOLS,
	OPT_NO_INLINE,
	OPT_EVENT,
	OPT_SRCLINE,
	OPT_CACHE_DIR,
	OPT_JIT_DIR,
	OPT_NO_CACHE,
	OPT_CPU_LABEL,
	OPT_VERSION,
	OPT_TITLE,
	OPT_INVERTED,
	OPT_WIDTH,
	OPT_MINWIDTH,
};

static const struct option long_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "with-pid", no_argument, NULL, OPT_WITH_PID },
	{ "with-tid", no_argument, NULL, OPT_WITH_TID },
	{ "annotate", no_argument, NULL, OPT_ANNOTATE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "srcline", no_argument, NULL, OPT_SRCLINE },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "jit-dir", required_argument, NULL, OPT_JIT_DIR },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "cpu-label", no_argument, NULL, OPT_CPU_LABEL },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: perfconv [-i perf.data] [-o OUTPUT] [-f FORMAT] [options]\n"
		"       perfconv info [-i perf.data] [--json]   (perfconv info --help)\n"
		"\n"
		"Convert a perf recording into a profile.\n"
		"\n"
		"  -i, --input FILE      perf.data file, `perf record --threads` directory, or -\n"
		"                        for a pipe (perf record -o - ... | perfconv -i -);\n"
		"                        default perf.data\n"
		"  -o, --output FILE     output file, or - for standard output (the default)\n"
		"  -f, --format FORMAT   output format; default: from -o's suffix, else folded\n"
		"  -q, --quiet           no closing summary (errors and warnings still print)\n"
		"\n"
		"Symbols:\n"
		"      --symfs DIR       look for binaries under DIR (DIR/recorded/path, DIR/name)\n"
		"      --kallsyms FILE   kernel symbols from FILE (a saved /proc/kallsyms, plain\n"
		"                        or gzipped); /proc/kallsyms is used only when the running\n"
		"                        kernel's build id is the recorded one\n"
		"      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
		"      --no-demangle     show C++ and Rust names as in the binary\n"
		"      --no-inline       no frames for inlined calls (a function's line is then\n"
		"                        the call it inlined)\n"
		"      --no-symbols      no symbolization: every frame as module+0xoffset\n"
		"      --cache-dir DIR   keep decompressed copies of compressed debug files\n"
		"                        and parsed symbol tables here (default\n"
		"                        $PERFCONV_CACHE_DIR, else $XDG_CACHE_HOME/perfconv,\n"
		"                        else ~/.cache/perfconv)\n"
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

static int bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "perfconv: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'perfconv --help'.\n");
	return 2;
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

/* Does `name` name event `e`? "cpu-clock" names "cpu-clock:pppH" too. */
static int event_matches(const struct profile *p, const struct pc_event *e, const char *name)
{
	const char *full = profile_text(p, e->name);
	size_t len = strlen(name);

	return strcmp(full, name) == 0 || (strncmp(full, name, len) == 0 && full[len] == ':');
}

/*
 * The event a writer shows: the one --event names, or for a format that shows one
 * event (folded, speedscope, chrome) of a recording with several events the first
 * that has samples (summing page faults with CPU samples would mean nothing).
 */
static int choose_event(const struct profile *p, const struct output_format *of,
			const char *name, struct write_options *wo, int quiet, struct diag *d)
{
	size_t with_samples = 0;

	if (name) {
		for (size_t i = 0; i < p->nevents; i++)
			if (event_matches(p, &p->events[i], name)) {
				wo->event = (int)i;
				return 0;
			}
		diag_error(d, NULL, DIAG_NO_OFFSET, "no event '%s' in the recording; it has:", name);
		for (size_t i = 0; i < p->nevents; i++)
			diag_note(d, "  %s", profile_text(p, p->events[i].name));
		return -1;
	}
	for (size_t i = 0; i < p->nevents; i++)
		with_samples += p->events[i].nsamples > 0;
	if (with_samples < 2 || !of->one_event)
		return 0;
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].nsamples) {
			wo->event = (int)i;
			if (!quiet)
				diag_note(d, "%zu events recorded; counting %s (choose with --event)",
					  with_samples, profile_text(p, p->events[i].name));
			return 0;
		}
	return 0;
}

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: perfconv info [-i perf.data] [--json] [options]\n"
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
		"      --cache-dir DIR, --no-cache\n"
		"                        where files are looked for, as for a conversion\n"
		"  -h, --help            this text\n");
}

/* The options that say where files are: the same for a conversion and for info. */
struct where_opts {
	struct sym_options *sym;
	const char **jit_dirs;
	size_t njit_dirs, jit_dirs_cap;
	const char *cache_dir;
	char *default_cache;
	int no_cache;
};

/* Take option `c` if it is one of them: 1, else 0. */
static int where_option(struct where_opts *w, int c, const char *arg)
{
	switch (c) {
	case OPT_SYMFS: w->sym->symfs = arg; return 1;
	case OPT_KALLSYMS: w->sym->kallsyms = arg; return 1;
	case OPT_BUILDID_DIR: w->sym->buildid_dir = arg; return 1;
	case OPT_CACHE_DIR: w->cache_dir = arg; return 1;
	case OPT_JIT_DIR: VEC_PUSH(w->jit_dirs, w->njit_dirs, w->jit_dirs_cap, arg); return 1;
	case OPT_NO_CACHE: w->no_cache = 1; return 1;
	default: return 0;
	}
}

/* After the options: the cache directory chosen, each --jit-dir checked. 0, or -1 after
 * saying what is wrong through `d`. */
static int where_finish(struct where_opts *w, struct diag *d)
{
	if (w->cache_dir && !w->cache_dir[0] && !w->no_cache) {
		/* not the filesystem's root, nor the working directory: none */
		diag_warn(d, NULL, DIAG_NO_OFFSET, "--cache-dir \"\" names no directory: no cache used");
		w->no_cache = 1;
	}
	if (!w->no_cache)
		w->sym->cache_dir = w->cache_dir ? w->cache_dir
						 : (w->default_cache = default_cache_dir());
	for (size_t i = 0; i < w->njit_dirs; i++)
		if (!is_dir(w->jit_dirs[i], d))
			return -1;
	return 0;
}

static void where_release(struct where_opts *w)
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
		{ NULL, 0, NULL, 0 },
	};
	struct info_options io;
	struct diag d;
	struct where_opts w;
	int c, rc;

	memset(&io, 0, sizeof(io));
	memset(&w, 0, sizeof(w));
	w.sym = &io.sym;
	io.input = "perf.data";
	io.top = 10;
	io.sym.demangle = 1;
	io.sym.inline_frames = 1;
	diag_init(&d);
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i': io.input = optarg; break;
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
			if (where_option(&w, c, optarg))
				break;
			where_release(&w);
			return bad_usage("unknown option", NULL);
		}
	}
	if (optind < argc) {
		where_release(&w);
		return bad_usage("unexpected argument", argv[optind]);
	}
	io.jit_dirs = w.jit_dirs;
	io.njit_dirs = w.njit_dirs;
	rc = where_finish(&w, &d) || info_run(&io, stdout, &d) ? 1 : 0;
	where_release(&w);
	return rc;
}

int main(int argc, char **argv)
{
	struct convert_options co;
	struct write_options wo;
	struct convert_stats st;
	struct profile p;
	struct diag d;
	const char *output = "-", *format = NULL, *event = NULL;
	const struct output_format *of;
	int c, weight_set = 0, rc = 0, w;
	struct where_opts where;

	/* a closed stderr (2>&1 | head -1) must not end the conversion before its
	 * output is renamed into place: writes fail with EPIPE instead */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "info") == 0)
		return info_main(argc - 1, argv + 1);
	memset(&co, 0, sizeof(co));
	memset(&wo, 0, sizeof(wo));
	wo.event = -1;
	co.input = "perf.data";
	co.sym.demangle = 1;
	co.sym.inline_frames = 1;
	memset(&where, 0, sizeof(where));
	where.sym = &co.sym;
	diag_init(&d);
	while ((c = getopt_long(argc, argv, "i:o:f:qh", long_options, NULL)) != -1) {
		switch (c) {
		case 'i': co.input = optarg; break;
		case 'o': output = optarg; break;
		case 'f': format = optarg; break;
		case 'q': co.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case OPT_NO_DEMANGLE: co.sym.demangle = 0; break;
		case OPT_NO_SYMBOLS: co.no_symbols = 1; break;
		case OPT_NO_INLINE: co.sym.inline_frames = 0; break;
		case OPT_EVENT: event = optarg; break;
		case OPT_PID:
			if (parse_u32_list(optarg, &co.pids, &co.npids))
				return bad_usage("--pid takes a comma-separated list of numbers", optarg);
			break;
		case OPT_TID:
			if (parse_u32_list(optarg, &co.tids, &co.ntids))
				return bad_usage("--tid takes a comma-separated list of numbers", optarg);
			break;
		case OPT_COMM: parse_str_list(optarg, &co.comms, &co.ncomms); break;
		case OPT_WEIGHT:
			if (strcmp(optarg, "samples") == 0)
				wo.weight_period = 0;
			else if (strcmp(optarg, "period") == 0)
				wo.weight_period = 1;
			else
				return bad_usage("--weight takes samples or period", optarg);
			weight_set = 1;
			break;
		case OPT_WITH_PID: wo.with_pid = 1; break;
		case OPT_WITH_TID: wo.with_tid = 1; break;
		case OPT_ANNOTATE: wo.annotate = 1; break;
		case OPT_SRCLINE: wo.srcline = 1; break;
		case OPT_CPU_LABEL: wo.cpu_label = 1; break;
		case OPT_TITLE: wo.title = optarg; break;
		case OPT_INVERTED: wo.inverted = 1; break;
		case OPT_WIDTH: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || v < 100 || v > 100000)
				return bad_usage("--width takes a number of pixels, 100 to 100000", optarg);
			wo.width = (unsigned)v;
			break;
		}
		case OPT_MINWIDTH: {
			char *end;
			double v = strtod(optarg, &end);

			if (*end || end == optarg || !(v >= 0) || v > 1000)
				return bad_usage("--minwidth takes a number of pixels, 0 to 1000", optarg);
			wo.minwidth = v > 0 ? v : 1e-9;
			break;
		}
		case OPT_VERSION: printf("perfconv %s\n", PERFCONV_VERSION); return 0;
		default:
			if (!where_option(&where, c, optarg))
				return bad_usage("unknown option", NULL);
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument", argv[optind]);
	if (format) {
		of = output_by_name(format);
		if (!of)
			return bad_usage("unknown format", format);
	} else {
		of = strcmp(output, "-") ? output_by_path(output) : NULL;
		if (!of)
			of = output_by_name("folded");
	}
	if (!weight_set)
		wo.weight_period = of->weight_period;

	co.jit_dirs = where.jit_dirs;
	co.njit_dirs = where.njit_dirs;
	profile_init(&p);
	p.aggregate = of->totals_only;
	if (where_finish(&where, &d) != 0)
		rc = 1;
	else if (output_check_not_input(output, co.input, &d) != 0)
		rc = 1;
	else if (convert_read(&co, &p, &st, &d) != 0)
		rc = 1;
	else if (choose_event(&p, of, event, &wo, co.quiet, &d) != 0)
		rc = 1;
	else if ((w = output_write(of, &p, &wo, output, &d)) != 0)
		rc = w > 0 ? 128 + SIGPIPE : 1; /* the shell's status of a process SIGPIPE ended */
	profile_release(&p);
	where_release(&where);
	free(co.pids);
	free(co.tids);
	for (size_t i = 0; i < co.ncomms; i++)
		free(co.comms[i]);
	free(co.comms);
	return rc;
}
