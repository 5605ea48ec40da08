/* writeend: how every writer of an output ends: 0, or -1 with errno saying why. */
#ifndef PERFCONV_WRITEEND_H
#define PERFCONV_WRITEEND_H

#include <stdio.h>

/*
 * A writer's result once it has written all to `out`: `ret` (its own 0 or -1) made -1
 * when the stream kept an error (a short write stdio remembers: a full disk, a closed
 * pipe), errno then the cause a second flush of what is left meets (ENOSPC, EPIPE),
 * not whatever a later call of the writer left there; and errno made EIO on -1 when
 * nothing had set it, so that the caller's message ("write failed: %s") never reads
 * "Success". errno is left as it is on 0. The stream is not closed: its owner does
 * that (convert/output.c).
 */
int write_end(FILE *out, int ret);

#endif
