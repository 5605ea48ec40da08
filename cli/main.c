/* main: perfconv's entry. `perfconv upload` is cli/upload.c's; everything else, a
 * conversion, `perfconv info` or `perfconv diff`, convert_main's. */
#include <string.h>

#include "cli/convert.h"
#include "cli/upload.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "upload") == 0)
		return upload_main(argc - 1, argv + 1);
	return convert_main(argc, argv);
}
