/* convert: perfconv's command line, a conversion.
 *
 * The command line is split by command, each file its options' meaning and its help:
 *	main.c		the one main(): which command argv[1] names
 *	options.c	the one table of options, the parser every command uses, and the
 *			options of a conversion (perfconv, diff and upload take them)
 *	convert.c	perfconv: a conversion
 *	info.c		perfconv info
 *	diff.c		perfconv diff: two recordings converted alike, one differential
 *			profile
 *	upload.c	perfconv upload: each input converted and sent, or a folder
 *			watched (upload/uploadrun.h runs it)
 */
#ifndef PERFCONV_CLI_CONVERT_H
#define PERFCONV_CLI_CONVERT_H

/* `perfconv ARGS` (argv[0] the program): its exit code. */
int convert_main(int argc, char **argv);

#endif
