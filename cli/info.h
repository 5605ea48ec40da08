/* info: perfconv info's command line. */
#ifndef PERFCONV_CLI_INFO_H
#define PERFCONV_CLI_INFO_H

/* perfconv info ARGS (argv[0] "info"): its exit code. */
int info_main(int argc, char **argv);

#endif
