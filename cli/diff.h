/* diff: perfconv diff's command line. */
#ifndef PERFCONV_CLI_DIFF_H
#define PERFCONV_CLI_DIFF_H

/* perfconv diff ARGS (argv[0] "diff"): its exit code. */
int diff_main(int argc, char **argv);

#endif
