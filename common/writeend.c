/* writeend: how every writer of an output ends: 0, or -1 with errno saying why. */
#include "common/writeend.h"

#include <errno.h>

int write_end(FILE *out, int ret)
{
	if (ret == 0 && ferror(out)) {
		/* the errno of the write that failed is long gone (a writer goes on to
		 * the end, and its later calls set errno): what is left flushed once
		 * more says it again (a full disk, a closed pipe), or nothing does */
		errno = 0;
		fflush(out);
		ret = -1;
	}
	if (ret && !errno)
		errno = EIO;
	return ret;
}
