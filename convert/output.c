/* output: the table of output formats, and writing a file safely. */
#include "convert/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/gzout.h"
#include "common/mapfile.h"
#include "formats/write/chrome.h"
#include "formats/write/difftop.h"
#include "formats/write/firefox.h"
#include "formats/write/folded.h"
#include "formats/write/otlp.h"
#include "formats/write/pprof.h"
#include "formats/write/samples.h"
#include "formats/write/speedscope.h"
#include "formats/write/svg.h"

static const struct output_format folded = {
	"folded", { ".folded", ".collapsed", ".txt", NULL }, folded_write,
	"collapsed stacks, one line per unique stack (stackcollapse-perf.pl)", 0, 1, 1, 0,
	OF_DIFF | OF_NO_THREADS,
};
/* a differential profile's text: perfconv diff's alone */
static const struct output_format top = {
	"top", { ".top", ".top.txt", NULL }, difftop_write,
	"the functions whose self and total shares changed most, as text", 0, 1, 1, 0,
	OF_DIFF | OF_DIFF_ONLY,
};
static const struct output_format samples = {
	"samples", { ".samples", NULL }, samples_write,
	"one line per sample in time order: comm, pid/tid, cpu, time, event, period, stack",
	0, 0, 0, 0, 0,
};
/* ".json" alone names neither: speedscope and Chrome traces are both JSON */
static const struct output_format speedscope = {
	"speedscope", { ".speedscope.json", ".speedscope", NULL }, speedscope_write,
	"speedscope JSON, one sampled profile per thread, weights in periods", 1, 1, 0, 1, 0,
};
static const struct output_format chrome = {
	"chrome", { ".trace.json", ".chrome.json", NULL }, chrome_write,
	"Chrome Trace Event JSON (Perfetto UI, chrome://tracing), per-thread timelines",
	1, 1, 0, 1, 0,
};

/* ".json" alone names none of the JSON formats */
static const struct output_format firefox = {
	"firefox", { ".firefox.json", ".firefox.json.gz", NULL }, firefox_write,
	"Firefox Profiler processed profile: a track per thread, CPU graphs, markers",
	1, 0, 0, 1, OF_MARKS | OF_GZ_PATH,
};

static const struct output_format pprof = {
	"pprof", { ".pb.gz", ".pprof", NULL }, pprof_write,
	"gzipped profile.proto for go tool pprof, Datadog, Parca, Pyroscope", 0, 0, 1, 0,
	OF_PROTOBUF | OF_SHAPED | OF_META | OF_DIFF | OF_GZIPPED | OF_ADDRESSES,
};

static const struct output_format otlp = {
	"otlp", { ".otlp.pb", ".otlp", NULL }, otlp_write,
	"OpenTelemetry profiles: OTLP/HTTP's ExportProfilesServiceRequest, protobuf (alpha)",
	0, 0, 1, 0, OF_PROTOBUF | OF_META | OF_OWN_META | OF_SAMPLE_TIMES | OF_ADDRESSES,
};

static const struct output_format svg = {
	"svg", { ".svg", NULL }, svg_write,
	"interactive flame graph, one self-contained SVG file (zoom, search)", 0, 1, 1, 0,
	OF_DIFF | OF_NO_THREADS,
};

/* top after folded: perfconv diff names its formats in this order */
const struct output_format *const output_formats[] = { &folded, &top, &samples, &pprof,
						       &speedscope, &firefox, &chrome, &svg,
						       &otlp, NULL };

void output_shape_profile(const struct output_format *f, struct profile *p)
{
	p->aggregate = f->totals_only;
	p->frames_by_object = !(f->flags & OF_ADDRESSES);
	p->keep_marks = (f->flags & OF_MARKS) != 0;
	if (f->timeline)
		profile_keep_timeline(p);
}

const struct output_format *output_by_name(const char *name)
{
	for (size_t i = 0; output_formats[i]; i++)
		if (!(output_formats[i]->flags & OF_DIFF_ONLY) &&
		    strcmp(output_formats[i]->name, name) == 0)
			return output_formats[i];
	return NULL;
}

const struct output_format *output_by_path(const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; output_formats[i]; i++)
		for (size_t j = 0; !(output_formats[i]->flags & OF_DIFF_ONLY) &&
				   output_formats[i]->suffixes[j]; j++) {
			const char *suf = output_formats[i]->suffixes[j];
			size_t sl = strlen(suf);

			if (len > sl && strcmp(path + len - sl, suf) == 0)
				return output_formats[i];
		}
	return NULL;
}

static ssize_t gz_cookie_write(void *cookie, const char *buf, size_t n)
{
	gzout_write(cookie, buf, n);
	return (ssize_t)n;
}

/*
 * f->write, its bytes gzipped into `out` when the format takes a gzip suffix and
 * `path` ends in ".gz" (through a FILE of glibc's fopencookie). 0, or -1 with errno.
 */
static int write_format(const struct output_format *f, const struct profile *p,
			const struct write_options *o, const char *path, FILE *out)
{
	static const cookie_io_functions_t gz_io = { NULL, gz_cookie_write, NULL, NULL };
	size_t len = strlen(path);
	struct gzout *g;
	FILE *z;
	int rc, err;

	if (!(f->flags & OF_GZ_PATH) || len < 3 || strcmp(path + len - 3, ".gz") != 0)
		return f->write(p, o, out);
	g = gzout_open(out, 6);
	z = fopencookie(g, "w", gz_io);
	if (!z) {
		err = errno;
		gzout_close(g);
		errno = err;
		return -1;
	}
	rc = f->write(p, o, z);
	err = errno;
	if (fclose(z) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (gzout_close(g) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	errno = err;
	return rc;
}

enum output_result output_write(const struct output_format *f, const struct profile *p,
				const struct write_options *o, const char *path, struct diag *d)
{
	struct atomic_file af;
	struct stat st;
	FILE *out;
	int fd, err;

	if (strcmp(path, "-") == 0) {
		if (write_format(f, p, o, path, stdout) != 0 || fflush(stdout) != 0) {
			if (errno == EPIPE)
				return OUTPUT_BROKEN_PIPE;
			diag_error(d, "standard output", DIAG_NO_OFFSET, "write failed: %s",
				   strerror(errno));
			return OUTPUT_FAILED;
		}
		return OUTPUT_WRITTEN;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/*
		 * /dev/null, a FIFO, a terminal: written in place. Renaming a temporary
		 * file over it would replace the device with a regular file.
		 */
		out = fopen(path, "w");
		if (!out || write_format(f, p, o, path, out) != 0) {
			err = errno;
			if (out)
				fclose(out);
			if (err == EPIPE)
				return OUTPUT_BROKEN_PIPE;
			diag_error(d, path, DIAG_NO_OFFSET, "cannot write output: %s", strerror(err));
			return OUTPUT_FAILED;
		}
		if (fclose(out) != 0) {
			diag_error(d, path, DIAG_NO_OFFSET, "cannot write output: %s",
				   strerror(errno));
			return OUTPUT_FAILED;
		}
		return OUTPUT_WRITTEN;
	}
	{
		/* an output file is as readable as any other the user makes */
		mode_t mask = umask(0);

		umask(mask);
		if (atomic_file_open(&af, path, 0666 & ~mask, ATOMIC_FOLLOW_LINKS) != 0) {
			diag_error(d, path, DIAG_NO_OFFSET, "cannot create output: %s",
				   strerror(errno));
			return OUTPUT_FAILED;
		}
	}
	fd = dup(af.fd);
	out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		err = errno;
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (write_format(f, p, o, path, out) != 0) {
		err = errno;
		fclose(out);
		goto fail;
	}
	if (fclose(out) != 0) {
		err = errno;
		goto fail;
	}
	if (atomic_file_commit(&af) != 0) {
		err = errno;
		goto fail;
	}
	return OUTPUT_WRITTEN;
fail:
	atomic_file_abort(&af);
	diag_error(d, path, DIAG_NO_OFFSET, "cannot write output: %s", strerror(err));
	return OUTPUT_FAILED;
}

int output_check_writable(const char *path, struct diag *d)
{
	struct stat st;
	char *dir;
	const char *slash;
	int ok;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			diag_error(d, path, DIAG_NO_OFFSET, "-o names a directory: give a file name");
			return -1;
		}
		if (access(path, W_OK) != 0 && errno != EROFS) {
			diag_error(d, path, DIAG_NO_OFFSET, "cannot write the output: %s",
				   strerror(errno));
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			return 0; /* a device or FIFO, written in place */
	}
	/* a regular file is written under a temporary name beside it, then renamed */
	slash = strrchr(path, '/');
	dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	ok = access(dir, W_OK | X_OK) == 0;
	if (!ok)
		diag_error(d, path, DIAG_NO_OFFSET, "cannot create the output in %s: %s", dir,
			   strerror(errno));
	free(dir);
	return ok ? 0 : -1;
}

void output_format_names(char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; output_formats[i] && n < size; i++)
		if (!(output_formats[i]->flags & OF_DIFF_ONLY))
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
					      output_formats[i]->name);
}

int output_check_not_input(const char *path, const char *input, struct diag *d)
{
	struct stat out, in;
	DIR *dir;
	struct dirent *e;
	int same = 0;

	if (strcmp(path, "-") == 0 || strcmp(input, "-") == 0 || stat(path, &out) != 0 ||
	    !S_ISREG(out.st_mode) || stat(input, &in) != 0)
		return 0; /* nothing there to destroy, or written in place (a device) */
	if (S_ISREG(in.st_mode)) {
		same = in.st_dev == out.st_dev && in.st_ino == out.st_ino;
	} else if (S_ISDIR(in.st_mode) && (dir = opendir(input)) != NULL) {
		/* a --threads directory: each of its files */
		while (!same && (e = readdir(dir)) != NULL) {
			struct stat f;

			same = fstatat(dirfd(dir), e->d_name, &f, 0) == 0 && S_ISREG(f.st_mode) &&
			       f.st_dev == out.st_dev && f.st_ino == out.st_ino;
		}
		closedir(dir);
	}
	if (!same)
		return 0;
	diag_error(d, path, DIAG_NO_OFFSET, "-o names %s (%s): refused, the recording would be lost",
		   S_ISDIR(in.st_mode) ? "a file of the input" : "the input", input);
	return -1;
}
