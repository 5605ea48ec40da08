/* convert: perfconv's command line, and what its other commands share of it; not for
 * callers.
 *
 * The command line is split by subcommand:
 *	main.c		the one main(): which command argv[1] names
 *	convert.c	perfconv (convert), perfconv info, and the options they share
 *	diff.c		perfconv diff: two recordings converted alike, one differential
 *			profile
 *	upload.c	perfconv upload: each input converted and sent, or a folder
 *			watched (upload/uploadrun.h runs it)
 */
#ifndef PERFCONV_CLI_CONVERT_H
#define PERFCONV_CLI_CONVERT_H

#include <getopt.h>
#include <stddef.h>

#include "common/diag.h"
#include "convert/conversion.h"

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
	OPT_TIME,
	OPT_SRCLINE,
	OPT_CACHE_DIR,
	OPT_JIT_DIR,
	OPT_NO_CACHE,
	OPT_CACHE_SIZE,
	OPT_CPU_LABEL,
	OPT_VERSION,
	OPT_TITLE,
	OPT_INVERTED,
	OPT_WIDTH,
	OPT_MINWIDTH,
	OPT_FOR,
	OPT_SERVICE,
	OPT_LABEL,
	OPT_START_TIME,
	/* perfconv diff's own */
	OPT_ABSOLUTE,
	OPT_DIFF_TOP,
	/* perfconv upload's own */
	OPT_TO,
	OPT_URL,
	OPT_TENANT,
	OPT_API_KEY_FILE,
	OPT_ALLOW_HTTP,
	OPT_DRY_RUN,
	OPT_WATCH,
	OPT_DELETE_SENT,
	OPT_TIMEOUT,
	OPT_RETRY_CAP,
	OPT_MAX_BACKLOG,
	OPT_KEEP_SENT,
	OPT_TRUST_FOLDER,
	OPT_PROXY,
	OPT_HEADER,
};

/* The conversion's options, shared by `perfconv` and `perfconv upload`. */
#define CONVERT_OPTIONS \
	{ "input", required_argument, NULL, 'i' }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "format", required_argument, NULL, 'f' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ "symfs", required_argument, NULL, OPT_SYMFS }, \
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS }, \
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR }, \
	{ "pid", required_argument, NULL, OPT_PID }, \
	{ "tid", required_argument, NULL, OPT_TID }, \
	{ "comm", required_argument, NULL, OPT_COMM }, \
	{ "weight", required_argument, NULL, OPT_WEIGHT }, \
	{ "with-pid", no_argument, NULL, OPT_WITH_PID }, \
	{ "with-tid", no_argument, NULL, OPT_WITH_TID }, \
	{ "annotate", no_argument, NULL, OPT_ANNOTATE }, \
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE }, \
	{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS }, \
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE }, \
	{ "event", required_argument, NULL, OPT_EVENT }, \
	{ "time", required_argument, NULL, OPT_TIME }, \
	{ "srcline", no_argument, NULL, OPT_SRCLINE }, \
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR }, \
	{ "jit-dir", required_argument, NULL, OPT_JIT_DIR }, \
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE }, \
	{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE }, \
	{ "cpu-label", no_argument, NULL, OPT_CPU_LABEL }, \
	{ "version", no_argument, NULL, OPT_VERSION }, \
	{ "title", required_argument, NULL, OPT_TITLE }, \
	{ "inverted", no_argument, NULL, OPT_INVERTED }, \
	{ "width", required_argument, NULL, OPT_WIDTH }, \
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH }, \
	{ "for", required_argument, NULL, OPT_FOR }, \
	{ "service", required_argument, NULL, OPT_SERVICE }, \
	{ "label", required_argument, NULL, OPT_LABEL }, \
	{ "start-time", required_argument, NULL, OPT_START_TIME },

/* The options that say where files are: the same for a conversion and for info. */
struct where_opts {
	struct sym_options *sym;
	const char **jit_dirs;
	size_t njit_dirs, jit_dirs_cap;
	const char *cache_dir;
	char *default_cache;
	int no_cache;
	int cache_size_set; /* --cache-size given: else CACHE_SIZE_DEFAULT */
};

/* Take option `c` if it is one of them: 1, else 0; 2 for a bad value, said (usage). */
int where_option(struct where_opts *w, int c, const char *arg);
/* After the options: the cache directory chosen, each --jit-dir checked. 0, or -1 after
 * saying what is wrong through `d`. */
int where_finish(struct where_opts *w, struct diag *d);
void where_release(struct where_opts *w);

/* A command line of `perfconv`, `perfconv diff` or `perfconv upload`: the conversion
 * it asks for, where files are, and what it writes. */
struct cli {
	struct conversion cv;
	struct where_opts where;
	const char *output, *format;
};

void cli_init(struct cli *c);
void cli_release(struct cli *c);
/*
 * Take conversion option `opt`: 0; 1 when it is not one (the caller's own, or
 * unknown); 2 after saying why its argument is bad (usage).
 */
int convert_option(struct cli *c, int opt, const char *arg);
/* The options that apply to every input, checked once: 0, or -1 after saying why. */
int cli_finish(struct cli *c, struct diag *d);
/* "perfconv: MSG 'ARG'" and the hint to --help: returns 2, the usage exit code. */
int bad_usage(const char *msg, const char *arg);
/*
 * getopt_long's '?' (an unknown option) or ':' (its argument missing), getopt's own
 * message turned off (opterr 0, the option string starting with ':'): says which, once,
 * and returns 2.
 */
int getopt_error(int opt, char **argv);

/* `perfconv` and `perfconv info` (argv[1] "info"): the program's main but for `perfconv
 * upload`, which main() (cli/main.c) takes first. */
int convert_main(int argc, char **argv);

#endif
