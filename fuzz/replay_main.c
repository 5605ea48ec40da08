/* replay_main: run a fuzz target over files named on the command line, without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		uint8_t *buf;
		size_t len;
		FILE *f;

		if (stat(argv[i], &st) < 0 || !S_ISREG(st.st_mode))
			continue; /* directories of a --threads recording and such */
		f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		len = (size_t)st.st_size;
		buf = malloc(len ? len : 1);
		if (!buf || fread(buf, 1, len, f) != len) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			free(buf);
			fclose(f);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		n++;
	}
	printf("replayed %d inputs\n", n);
	return 0;
}
