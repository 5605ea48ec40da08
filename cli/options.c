/* options: the one table of perfconv's options, the parser every command uses, and the
 * options of a conversion. */
#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "common/version.h"
#include "formats/write/pprof.h"
#include "symbolize/cachedir.h"

/* The options of a conversion: perfconv's, and every other command's but info's. */
#define CONV (CMD_CONVERT | CMD_DIFF | CMD_UPLOAD)
/* -i, --help and where files are: every command's */
#define ALL (CONV | CMD_INFO)

const struct cli_option cli_options[] = {
	{ "input", required_argument, 'i', ALL },
	{ "output", required_argument, 'o', CONV },
	{ "format", required_argument, 'f', CONV },
	{ "quiet", no_argument, 'q', CONV },
	{ "help", no_argument, 'h', ALL },
	{ "symfs", required_argument, OPT_SYMFS, ALL },
	{ "kallsyms", required_argument, OPT_KALLSYMS, ALL },
	{ "buildid-dir", required_argument, OPT_BUILDID_DIR, ALL },
	{ "pid", required_argument, OPT_PID, CONV },
	{ "tid", required_argument, OPT_TID, CONV },
	{ "comm", required_argument, OPT_COMM, CONV },
	{ "weight", required_argument, OPT_WEIGHT, CONV },
	{ "with-pid", no_argument, OPT_WITH_PID, CONV },
	{ "with-tid", no_argument, OPT_WITH_TID, CONV },
	{ "annotate", no_argument, OPT_ANNOTATE, CONV },
	{ "no-demangle", no_argument, OPT_NO_DEMANGLE, CONV },
	{ "no-symbols", no_argument, OPT_NO_SYMBOLS, CONV },
	{ "no-inline", no_argument, OPT_NO_INLINE, CONV },
	{ "show-art-frames", no_argument, OPT_SHOW_ART_FRAMES, CONV },
	{ "event", required_argument, OPT_EVENT, CONV },
	{ "time", required_argument, OPT_TIME, CONV },
	{ "srcline", no_argument, OPT_SRCLINE, CONV },
	{ "cache-dir", required_argument, OPT_CACHE_DIR, ALL },
	{ "jit-dir", required_argument, OPT_JIT_DIR, ALL },
	{ "no-cache", no_argument, OPT_NO_CACHE, ALL },
	{ "cache-size", required_argument, OPT_CACHE_SIZE, ALL },
	{ "cpu-label", no_argument, OPT_CPU_LABEL, CONV },
	{ "version", no_argument, OPT_VERSION, CONV },
	{ "title", required_argument, OPT_TITLE, CONV },
	{ "inverted", no_argument, OPT_INVERTED, CONV },
	{ "width", required_argument, OPT_WIDTH, CONV },
	{ "minwidth", required_argument, OPT_MINWIDTH, CONV },
	{ "for", required_argument, OPT_FOR, CONV },
	{ "service", required_argument, OPT_SERVICE, CONV },
	{ "label", required_argument, OPT_LABEL, CONV },
	{ "start-time", required_argument, OPT_START_TIME, CONV },
	{ "json", no_argument, OPT_JSON, CMD_INFO },
	{ "top", required_argument, OPT_INFO_TOP, CMD_INFO },
	{ "absolute", no_argument, OPT_ABSOLUTE, CMD_DIFF },
	{ "top", required_argument, OPT_DIFF_TOP, CMD_DIFF },
	{ "to", required_argument, OPT_TO, CMD_UPLOAD },
	{ "url", required_argument, OPT_URL, CMD_UPLOAD },
	{ "tenant", required_argument, OPT_TENANT, CMD_UPLOAD },
	{ "api-key-file", required_argument, OPT_API_KEY_FILE, CMD_UPLOAD },
	{ "allow-http", no_argument, OPT_ALLOW_HTTP, CMD_UPLOAD },
	{ "dry-run", no_argument, OPT_DRY_RUN, CMD_UPLOAD },
	{ "watch", required_argument, OPT_WATCH, CMD_UPLOAD },
	{ "delete-sent", no_argument, OPT_DELETE_SENT, CMD_UPLOAD },
	{ "timeout", required_argument, OPT_TIMEOUT, CMD_UPLOAD },
	{ "retry-cap", required_argument, OPT_RETRY_CAP, CMD_UPLOAD },
	{ "max-backlog", required_argument, OPT_MAX_BACKLOG, CMD_UPLOAD },
	{ "keep-sent", required_argument, OPT_KEEP_SENT, CMD_UPLOAD },
	{ "trust-folder", no_argument, OPT_TRUST_FOLDER, CMD_UPLOAD },
	{ "proxy", required_argument, OPT_PROXY, CMD_UPLOAD },
	{ "header", required_argument, OPT_HEADER, CMD_UPLOAD },
	{ NULL, 0, 0, 0 },
};

enum { NOPTIONS = sizeof(cli_options) / sizeof(cli_options[0]) - 1 };

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

size_t cli_format_list(char *buf, size_t cap, unsigned want, unsigned not, const char *last)
{
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; output_formats[i]; i++)
		n += (output_formats[i]->flags & want) == want && !(output_formats[i]->flags & not);
	buf[0] = '\0';
	for (size_t i = 0; output_formats[i] && len < cap; i++) {
		const struct output_format *of = output_formats[i];

		if ((of->flags & want) != want || (of->flags & not))
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", !k ? "" : k + 1 < n ? ", " : last,
					of->name);
		k++;
	}
	return n;
}

void cli_shape_list(char *buf, size_t cap, const char *sep, const char *last)
{
	size_t n = 1, len = 0;

	while (pprof_for_name((int)n)[0])
		n++;
	buf[0] = '\0';
	for (size_t i = 1; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i == 1 ? "" : i + 1 < n ? sep : last,
					pprof_for_name((int)i));
}

int bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "perfconv: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'perfconv --help'.\n");
	return 2;
}

/*
 * getopt_long's '?' (an unknown option) or ':' (its argument missing), getopt's own
 * message turned off (opterr 0, the option string starting with ':'): says which, once,
 * and returns 2.
 */
static int getopt_error(int opt, char **argv)
{
	char shortopt[3] = { '-', (char)optopt, 0 };
	/* a long option's optopt is its id, no letter: its word is the one named */
	const char *what = optopt > 0 && optopt < OPT_SYMFS ? shortopt : argv[optind - 1];

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

enum opt_take where_option(struct where_opts *w, int c, const char *arg)
{
	switch (c) {
	case OPT_SYMFS: w->sym->symfs = arg; return TAKE_OK;
	case OPT_KALLSYMS: w->sym->kallsyms = arg; return TAKE_OK;
	case OPT_BUILDID_DIR: w->sym->buildid_dir = arg; return TAKE_OK;
	case OPT_CACHE_DIR: w->cache_dir = arg; return TAKE_OK;
	case OPT_JIT_DIR: VEC_PUSH(w->jit_dirs, w->njit_dirs, w->jit_dirs_cap, arg); return TAKE_OK;
	case OPT_NO_CACHE: w->no_cache = 1; return TAKE_OK;
	case OPT_CACHE_SIZE: {
		int unit;

		if (parse_size(arg, &w->sym->cache_size, &unit) != 0)
			return take_bad("--cache-size takes a size (512M, 1G: K, M, G or T), or 0 for "
					 "no limit", arg);
		/* no limit: still counted, so that a later run with one finds the count */
		if (!w->sym->cache_size)
			w->sym->cache_size = UINT64_MAX;
		w->cache_size_set = 1;
		return TAKE_OK;
	}
	default: return TAKE_NOT_MINE;
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

enum opt_take convert_option(struct cli *c, int opt, const char *arg)
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
	case OPT_SHOW_ART_FRAMES: c->cv.co.show_art_frames = 1; break;
	case OPT_EVENT: c->cv.event = arg; break;
	case OPT_TIME:
		if (strcmp(arg, "oncpu") && strcmp(arg, "offcpu") && strcmp(arg, "wall"))
			return take_bad("--time takes oncpu, offcpu or wall", arg);
		c->cv.time = arg;
		break;
	case OPT_PID:
		if (parse_u32_list(arg, &c->cv.co.pids, &c->cv.co.npids))
			return take_bad("--pid takes a comma-separated list of numbers", arg);
		break;
	case OPT_TID:
		if (parse_u32_list(arg, &c->cv.co.tids, &c->cv.co.ntids))
			return take_bad("--tid takes a comma-separated list of numbers", arg);
		break;
	case OPT_COMM: parse_str_list(arg, &c->cv.co.comms, &c->cv.co.ncomms); break;
	case OPT_WEIGHT:
		if (strcmp(arg, "samples") == 0)
			c->cv.wo.weight_period = 0;
		else if (strcmp(arg, "period") == 0)
			c->cv.wo.weight_period = 1;
		else
			return take_bad("--weight takes samples or period", arg);
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
			return take_bad("--width takes a number of pixels, 100 to 100000", arg);
		c->cv.wo.width = (unsigned)v;
		break;
	}
	case OPT_MINWIDTH: {
		char *end;
		double v = strtod(arg, &end);

		if (*end || end == arg || !(v >= 0) || v > 1000)
			return take_bad("--minwidth takes a number of pixels, 0 to 1000", arg);
		c->cv.wo.minwidth = v > 0 ? v : 1e-9;
		break;
	}
	case OPT_FOR:
		c->cv.pprof_for = pprof_for_by_name(arg);
		if (c->cv.pprof_for < 0) {
			char names[128], msg[160];

			cli_shape_list(names, sizeof(names), ", ", " or ");
			snprintf(msg, sizeof(msg), "--for takes %s", names);
			return take_bad(msg, arg);
		}
		break;
	case OPT_SERVICE:
		if (meta_set_service(&c->cv.meta, arg, &why) != 0)
			return take_bad(why, arg);
		break;
	case OPT_LABEL:
		if (meta_add_label(&c->cv.meta, arg, &why) != 0)
			return take_bad(why, arg);
		break;
	case OPT_START_TIME:
		if (meta_parse_time(arg, &c->cv.meta.start_time) != 0)
			return take_bad("--start-time takes RFC 3339 (2026-05-01T12:00:00Z) or Unix seconds",
					 arg);
		c->cv.meta.start_time_set = 1;
		break;
	default:
		return where_option(&c->where, opt, arg);
	}
	return TAKE_OK;
}

int cli_finish(struct cli *c, struct diag *d)
{
	c->cv.co.jit_dirs = c->where.jit_dirs;
	c->cv.co.njit_dirs = c->where.njit_dirs;
	return where_finish(&c->where, d);
}


enum cli_parsed cli_parse(const struct cli_parse *cp, int argc, char **argv, int *status)
{
	struct option longs[NOPTIONS + 1];
	char shorts[2 * NOPTIONS + 2] = ":";
	size_t nl = 0, ns = 1;
	int opt, w;

	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct cli_option *r = &cli_options[i];

		if (!(r->commands & cp->command))
			continue;
		longs[nl++] = (struct option){ r->name, r->has_arg, NULL, r->id };
		if (r->id < OPT_SYMFS) {
			shorts[ns++] = (char)r->id;
			if (r->has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	memset(&longs[nl], 0, sizeof(longs[nl]));
	shorts[ns] = '\0';
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			*status = getopt_error(opt, argv);
			return CLI_RETURN;
		}
		if (opt == 'h') {
			cp->usage(stdout);
			*status = 0;
			return CLI_RETURN;
		}
		if (opt == OPT_VERSION && cp->version) {
			printf("perfconv %s\n", PERFCONV_VERSION);
			*status = 0;
			return CLI_RETURN;
		}
		if ((w = cp->take(cp->ctx, opt, optarg, argv)) != TAKE_OK) {
			*status = w == TAKE_BAD ? 2 : bad_usage("unknown option", NULL);
			return CLI_RETURN;
		}
	}
	return CLI_PARSED;
}
