/* mapfile: a whole regular file mapped read-only, for the readers of formats/. */
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int mapped_file_open(struct mapped_file *f, const char *path, struct diag *d)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	f->map = NULL;
	f->len = 0;
	if (fd < 0) {
		diag_error(d, path, DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		diag_error(d, path, DIAG_NO_OFFSET, "not a regular file");
		close(fd);
		return -1;
	}
	f->len = (size_t)st.st_size;
	if (f->len) {
		f->map = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			f->len = 0;
			diag_error(d, path, DIAG_NO_OFFSET, "cannot map: %s", strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

void mapped_file_close(struct mapped_file *f)
{
	if (f->map)
		munmap(f->map, f->len);
	f->map = NULL;
	f->len = 0;
}
