/* main: perfconv's entry: which command argv[1] names, each run by its own file. */
#include <malloc.h>
#include <signal.h>
#include <string.h>

#include "cli/convert.h"
#include "cli/diff.h"
#include "cli/info.h"
#include "cli/upload.h"

/* A command: argv[1]'s word, and how the process is set up for it. */
struct command {
	const char *name;         /* NULL: perfconv itself, a conversion */
	int (*run)(int argc, char **argv); /* argv[0] the command's word (the program's) */
	/* a closed stderr (2>&1 | head -1) must not end a conversion before its output is
	 * renamed into place: writes fail with EPIPE instead */
	int ignore_sigpipe;
	/*
	 * One conversion, then exit: memory freed on the way is kept for what comes next
	 * rather than given back and asked for again. Each munmap, mremap (a vector grown
	 * past 128 KB) and the second thread's own arena (mapped, then trimmed) flushes
	 * the other core's TLB while the symbolizer's thread lives: an interrupt each, 5%
	 * of the CPU time of a --call-graph dwarf recording to pprof in a VM. Not for
	 * `upload --watch`, which runs for days.
	 */
	int batch_malloc;
};

static const struct command commands[] = {
	{ "upload", upload_main, 0, 0 },
	{ "info", info_main, 1, 0 },
	{ "diff", diff_main, 1, 1 },
	{ NULL, convert_main, 1, 1 },
};

int main(int argc, char **argv)
{
	const struct command *cmd = commands;

	while (cmd->name && !(argc > 1 && strcmp(argv[1], cmd->name) == 0))
		cmd++;
	if (cmd->ignore_sigpipe)
		signal(SIGPIPE, SIG_IGN);
	if (cmd->batch_malloc)
		mallopt(M_ARENA_MAX, 1);
	return cmd->name ? cmd->run(argc - 1, argv + 1) : cmd->run(argc, argv);
}
