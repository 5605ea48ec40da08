/* mapfile: a whole regular file mapped read-only, for the readers of formats/. */
#ifndef PERFCONV_MAPFILE_H
#define PERFCONV_MAPFILE_H

#include <stddef.h>

#include "diag.h"

struct mapped_file {
	void *map;   /* NULL for an empty file */
	size_t len;
};

/* Map `path`. Returns 0, or -1 after one error line through `d` (cannot open, not a
 * regular file, cannot map). */
int mapped_file_open(struct mapped_file *f, const char *path, struct diag *d);
/* NULL-safe for an unmapped or empty file. */
void mapped_file_close(struct mapped_file *f);

#endif
