/* upload: perfconv upload's command line. */
#ifndef PERFCONV_CLI_UPLOAD_H
#define PERFCONV_CLI_UPLOAD_H

/* `perfconv upload ARGS` (argv[0] "upload"): the exit status. */
int upload_main(int argc, char **argv);

#endif
