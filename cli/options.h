/* options: the one table of perfconv's options and the parser every command uses.
 *
 * Each option is a row naming the commands that take it; a command's parse builds
 * getopt_long's table from its rows, says an unknown option, a missing argument, --help
 * and --version the same way for every command, and hands each option it took to the
 * command's own `take`. The options of a conversion are taken here too (convert_option),
 * for perfconv, perfconv diff and perfconv upload alike.
 */
#ifndef PERFCONV_CLI_OPTIONS_H
#define PERFCONV_CLI_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "common/diag.h"
#include "convert/conversion.h"

/* The commands, as bits of a row's `commands`. */
enum {
	CMD_CONVERT = 1,
	CMD_INFO = 2,
	CMD_DIFF = 4,
	CMD_UPLOAD = 8,
};

/* A long option's id past every short option's letter. */
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
	OPT_SHOW_ART_FRAMES,
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
	/* perfconv info's own */
	OPT_JSON,
	OPT_INFO_TOP,
};

struct cli_option {
	const char *name;
	int has_arg;              /* getopt's no_argument or required_argument */
	int id;                   /* its short letter ('i'), or an OPT_ */
	unsigned commands;        /* CMD_ bits: the commands that take it */
};

/* Every option, NULL-terminated. */
extern const struct cli_option cli_options[];

/* What an option's taker (a command's `take`, convert_option, where_option) made of
 * the option it was given. */
enum opt_take {
	TAKE_OK = 0,   /* its own: taken */
	TAKE_NOT_MINE, /* not one of its options (the caller's own, or unknown) */
	TAKE_BAD,      /* its own, with a bad value: said (usage) */
};

/* One command's parse. */
struct cli_parse {
	unsigned command;         /* a CMD_ bit: its rows */
	void (*usage)(FILE *f);   /* --help's text */
	int version;              /* --version prints perfconv's version */
	/* The command's option `id` (its argument `arg`; argv for the words around it);
	 * TAKE_NOT_MINE is said as an unknown option. */
	enum opt_take (*take)(void *ctx, int id, const char *arg, char **argv);
	void *ctx;
};

/* What cli_parse() leaves the command to do. */
enum cli_parsed {
	CLI_PARSED = 0, /* go on: the operands are from argv[optind] on */
	CLI_RETURN,     /* return *status now: 0 after --help or --version, 2 after saying
			   what is wrong with the command line */
};

/* Parse argv's options (argv[0] the command's name). */
enum cli_parsed cli_parse(const struct cli_parse *cp, int argc, char **argv, int *status);

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

/* Take option `c` if it is one of them. */
enum opt_take where_option(struct where_opts *w, int c, const char *arg);
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
/* Take conversion option `opt` (TAKE_NOT_MINE: the caller's own, or unknown). */
enum opt_take convert_option(struct cli *c, int opt, const char *arg);
/* The options that apply to every input, checked once: 0, or -1 after saying why. */
int cli_finish(struct cli *c, struct diag *d);
/*
 * The names of the formats whose flags hold all of `want` and none of `not` (OF_),
 * in the table's order, into buf[0..cap): "a, b and c" with `last` " and " (or
 * " or "). Returns how many.
 */
size_t cli_format_list(char *buf, size_t cap, unsigned want, unsigned not, const char *last);
/* --for's words (formats/write/pprof.h's shapes) into buf[0..cap), as cli_format_list. */
void cli_shape_list(char *buf, size_t cap, const char *sep, const char *last);
/* "perfconv: MSG 'ARG'" and the hint to --help: returns 2, the usage exit code. */
int bad_usage(const char *msg, const char *arg);
/* The same, for an option's taker: TAKE_BAD. */
static inline enum opt_take take_bad(const char *msg, const char *arg)
{
	bad_usage(msg, arg);
	return TAKE_BAD;
}

#endif
