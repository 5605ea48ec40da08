/* uploadrun: perfconv upload's run, each input converted and sent to a backend, or a
 * --switch-output folder watched. */
#include "upload/uploadrun.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "upload/upload.h"
#include "upload/backend.h"
#include "upload/runtimeid.h"
#include "upload/uploadparts.h"
#include "upload/watch.h"
#include "upload/watchfile.h"
#include "upload/watchopts.h"
#include "symbolize/jit/jitstore.h"

/* What an upload of one input holds until it is sent. */
struct job {
	struct profile p;
	struct profile_meta m;
	struct write_options wo;   /* as its parts were written: for cutting one again */
	struct upload_cut cut;
	struct upload_writer wr;   /* the backend's format */
	struct upload_profile base; /* what every part's request says alike */
	struct upload_profile *ups;
	char name[128];
	char runtimes[128];
};

struct upload_ctx {
	struct conversion *cv;
	const char *dry_prefix;    /* --dry-run -o PREFIX, or NULL */
	struct uploader *u;
	const struct output_format *of;
	int backend;
	int trust_folder;
};

/* Parca's __name__ and the like: process_cpu for CPU time, else the event's name. */
static void profile_name(const struct profile *p, int event, char *buf, size_t cap)
{
	const struct pc_event *e = NULL;

	for (size_t i = 0; i < p->nevents && !e; i++)
		if (event >= 0 ? (size_t)event == i : p->events[i].nsamples > 0)
			e = &p->events[i];
	if (!e || e->is_clock) {
		snprintf(buf, cap, "process_cpu");
		return;
	}
	snprintf(buf, cap, "%s", profile_text(p, e->name));
	buf[strcspn(buf, ":")] = '\0';
	for (char *s = buf; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			*s = '_';
}

static void job_free(void *ctx, void *job)
{
	struct upload_ctx *x = ctx;
	struct job *j = job;

	if (!j)
		return;
	/* a watcher keeps nothing of a chunk once it is sent but its JIT dumps' tables */
	if (x && x->cv->co.jit_store)
		convert_done(&x->cv->later);
	upload_cut_release(&j->cut);
	free(j->ups);
	profile_meta_release(&j->m);
	profile_release(&j->p);
	free(j);
	/* a watcher runs for days: what a chunk freed goes back to the system, so that its
	 * size between chunks is what it keeps, not the largest chunk's */
	malloc_trim(0);
}

/* The runtimes the profile's code ran in, known by their objects: "java,node". */
static void runtimes_of(const struct profile *p, char *buf, size_t cap)
{
	static const struct {
		const char *runtime, *file; /* the object's name, or its start with a '*' */
	} known[] = {
		{ "dotnet", "libcoreclr.so" }, { "erlang", "beam.smp" },
		{ "java", "libjvm.so" }, { "julia", "libjulia-internal.so*" },
		{ "julia", "libjulia.so*" }, { "node", "node" }, { "node", "libnode.so*" },
	};
	enum { NKNOWN = sizeof(known) / sizeof(known[0]) };
	int seen[NKNOWN] = { 0 };
	size_t len = 0;

	for (size_t m = 1; m < p->nmappings; m++) {
		const char *f = profile_text(p, p->mappings[m].file), *base = strrchr(f, '/');

		base = base ? base + 1 : f;
		for (size_t k = 0; k < NKNOWN; k++) {
			size_t n = strlen(known[k].file);

			if (known[k].file[n - 1] == '*' ? strncmp(base, known[k].file, n - 1) == 0 :
							  strcmp(base, known[k].file) == 0)
				seen[k] = 1;
		}
	}
	buf[0] = '\0';
	for (size_t k = 0; k < NKNOWN; k++) {
		int dup = 0;

		for (size_t e = 0; e < k; e++)
			dup |= seen[e] && strcmp(known[e].runtime, known[k].runtime) == 0;
		if (seen[k] && !dup && len + strlen(known[k].runtime) + 2 < cap)
			len += (size_t)sprintf(buf + len, "%s%s", len ? "," : "", known[k].runtime);
	}
}

/* The job's parts as requests: each its span of time and its pprof. */
static void job_parts(struct job *j, struct upload_batch *b)
{
	free(j->ups);
	j->ups = xcalloc(j->cut.n, sizeof(*j->ups));
	for (size_t i = 0; i < j->cut.n; i++) {
		const struct upload_part *pt = &j->cut.parts[i];
		struct upload_profile *up = &j->ups[i];

		*up = j->base;
		up->pprof = (const uint8_t *)pt->buf;
		up->len = pt->len;
		if (j->cut.n > 1) {
			up->start_ns = pt->start_ns;
			up->duration_ns = pt->end_ns - pt->start_ns;
			up->part = (unsigned)i + 1;
			up->nparts = (unsigned)j->cut.n;
			up->window = 1; /* the parts tile its time: Pyroscope's seconds meet */
		}
	}
	b->parts = j->ups;
	b->n = j->cut.n;
}

/*
 * A watched chunk's window (watch_window_start): from the end of the chunk before it,
 * when it follows that one, to its own last sample. Written as the pprof's time_nanos
 * and duration_nanos, and sent as the request's start and end.
 */
static void chunk_window(struct upload_ctx *x, struct job *j, const struct watch_span *prev,
			 struct watch_span *span)
{
	const struct profile *p = &j->p;
	int64_t start;

	span->has_clock_ref = p->has_wall_clock;
	span->clock_ref_wall = p->has_wall_clock ? p->wall_ns : 0;
	span->clock_ref_clock = p->has_wall_clock ? p->clock_ns : 0;
	if (p->has_time && p->first_time_set) {
		span->first_clock = p->first_time;
		span->last_clock = p->last_time;
	}
	span->start_ns = j->m.start_ns;
	span->end_ns = j->m.start_ns + j->m.duration_ns;
	/* without CLOCK_DATA a chunk's wall clock is its file's time less its span: the
	 * run's offset, from its first chunk, keeps one clock for all its chunks */
	if (!p->has_wall_clock && span->first_clock && prev && prev->has_offset &&
	    watch_same_run(prev, span)) {
		int64_t shift = (int64_t)span->first_clock + prev->offset - j->m.start_ns;

		j->m.start_ns += shift;
		span->start_ns += shift;
		span->end_ns += shift;
		x->cv->wo.wall_offset += shift;
	}
	if (span->first_clock) {
		span->offset = span->start_ns - (int64_t)span->first_clock;
		span->has_offset = 1;
	}
	start = watch_window_start(prev, span);
	x->cv->wo.time_nanos = start;
	x->cv->wo.duration_nanos = span->end_ns - start;
}

/* Convert `input` into a job ready to send: 0, or -1 after saying why. A watched chunk
 * (span not NULL) gets its window, following `prev` (may be NULL). */
static int job_make_span(void *ctx, const char *input, const struct watch_input *in,
			 const struct watch_span *prev, struct watch_span *span,
			 struct upload_batch *b, void **out, struct diag *d)
{
	struct upload_ctx *x = ctx;
	struct job *j = xcalloc(1, sizeof(*j));
	struct upload_profile *up;
	struct upload_limits lim;
	uint64_t run = 0;
	int rc;

	*out = NULL;
	profile_init(&j->p);
	x->cv->co.input = input;
	if (in) {
		x->cv->co.input_mem = in->data;
		x->cv->co.input_len = in->len;
		x->cv->co.input_mtime_ns = in->mtime_ns;
		x->cv->co.jit_check_owner = !x->trust_folder;
		x->cv->co.jit_owner_uid = in->owner_uid;
	}
	rc = convert_one(x->cv, x->of, &j->p, &j->m, d);
	x->cv->co.input_mem = NULL;
	x->cv->co.input_len = 0;
	if (rc == 0 && !span) {
		/* which perf record wrote it, as the watcher tells for a chunk */
		struct stat st;
		int fd = open(input, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			run = chunk_run(fd, (uint64_t)st.st_size);
		if (fd >= 0)
			close(fd);
	}
	if (rc != 0) {
		job_free(NULL, j);
		return -1;
	}
	if (span)
		chunk_window(x, j, prev, span);
	/* a chunk of the watcher with nothing in it is sent (its window tiles time), and
	 * said: a backend shows an empty profile as a service that did nothing */
	if (span && j->p.nsamples == 0)
		diag_warn(d, input, DIAG_NO_OFFSET, "no samples in it: perf recorded nothing of "
			  "its target over the chunk (not running; or perf record -G left on a "
			  "control group that was deleted when its unit restarted: perfconv-record@ "
			  "follows the new one, a perf run by hand does not)");
	j->wo = x->cv->wo;
	j->wo.stats = NULL;
	profile_name(&j->p, j->wo.event, j->name, sizeof(j->name));
	runtimes_of(&j->p, j->runtimes, sizeof(j->runtimes));
	memset(&j->base, 0, sizeof(j->base));
	up = &j->base;
	up->input = input;
	up->start_ns = j->m.start_ns;
	up->duration_ns = j->m.duration_ns;
	if (span) {
		up->start_ns = x->cv->wo.time_nanos;
		up->duration_ns = span->end_ns - up->start_ns;
		up->window = 1;
	}
	up->service = x->cv->meta.service;
	up->labels = j->m.labels;
	up->nlabels = j->m.nlabels;
	up->host = j->m.host;
	up->kernel_release = j->m.kernel_release;
	up->name = j->name;
	up->runtimes = j->runtimes;
	up->arch = j->p.arch ? profile_text(&j->p, j->p.arch) : NULL;
	up->seq = -1;
	x->cv->wo.duration_nanos = 0;
	lim = *uploader_limits(x->u);
	j->wr.write = x->of->write;
	j->wr.gzip = !(x->of->flags & OF_GZIPPED);
	if (upload_cut_make(&j->p, &j->wo, &j->wr, &lim, up->start_ns,
			    up->start_ns + up->duration_ns, j->wo.wall_offset, &j->cut) != 0) {
		diag_error(d, input, DIAG_NO_OFFSET, "cannot write its profile: %s", strerror(errno));
		job_free(NULL, j);
		return -1;
	}
	memset(b, 0, sizeof(*b));
	job_parts(j, b);
	b->run = span ? span->run : run;
	b->boot_ns = j->p.has_time ? j->wo.wall_offset : 0;
	{
		size_t merged = 0, over = 0, len;
		const char *why = j->cut.why == 2 || (!j->cut.why && lim.samples &&
						      j->cut.whole_samples > lim.samples) ?
				  lim.samples_why : lim.bytes_why;

		for (size_t i = 0; i < j->cut.n; i++) {
			merged += j->cut.parts[i].merged_threads;
			over += j->cut.parts[i].over;
		}
		if (j->cut.n > 1 || merged || over)
			snprintf(b->said, sizeof(b->said), "its profile (%llu pprof samples, %.1f MiB) "
				 "is over the limit (%s): sent as %zu profile%s, each a span of its time",
				 (unsigned long long)j->cut.whole_samples,
				 (double)j->cut.whole_bytes / 1048576.0, why, j->cut.n,
				 j->cut.n > 1 ? "s" : "");
		len = strlen(b->said);
		if (merged || over)
			snprintf(b->said + len, sizeof(b->said) - len, "; one instant alone is over it "
				 "in %zu: %zu sent with their threads merged, %zu over it still%s",
				 merged > over ? merged : over, merged, over,
				 j->p.has_time ? "" : " (no sample times to cut it by)");
	}
	*out = j;
	return 0;
}

/* Part `i` of the job cut in two (the backend found it too large): 0, or -1. */
static int job_halve(void *ctx, void *job, size_t i, struct upload_batch *b)
{
	struct job *j = job;

	(void)ctx;
	if (upload_cut_halve(&j->p, &j->wo, &j->wr, j->wo.wall_offset, &j->cut, i) != 0)
		return -1;
	job_parts(j, b);
	return 0;
}

static int job_make(void *ctx, const char *input, struct upload_batch *b, void **out,
		    struct diag *d)
{
	return job_make_span(ctx, input, NULL, NULL, NULL, b, out, d);
}

/* A one-off upload's failed try, said (through diag: the answer printed escaped). */
struct retry_say {
	const struct upload_profile *up;
	struct diag *d;
};

static int say_retry(void *ctx, const struct upload_result *r, unsigned wait)
{
	const struct retry_say *s = ctx;

	diag_note(s->d, "%s: %s; trying again in %u s", s->up->input, r->what, wait);
	return 0;
}

/* " (part K of N)" for part `k` of `b` when it has several, else "". */
static void part_text(char *buf, size_t cap, const struct upload_batch *b, size_t k)
{
	buf[0] = '\0';
	if (b->n > 1)
		snprintf(buf, cap, " (part %zu of %zu)", k + 1, b->n);
}

/* --dry-run of one profile: what would be sent, and with -o its bodies in files named
 * after it (PREFIX, PREFIX.INPUT with several inputs, .partK for a part). 0, or -1. */
static int dry_run_one(struct uploader *u, const struct upload_profile *up, const char *output,
		       size_t input, size_t part, struct diag *d)
{
	char *prefix = NULL;
	int rc = 0;

	if (output) {
		prefix = xmalloc(strlen(output) + 48);
		strcpy(prefix, output);
		if (input)
			sprintf(prefix + strlen(prefix), ".%zu", input);
		if (part)
			sprintf(prefix + strlen(prefix), ".part%zu", part);
	}
	if (uploader_dry_run(u, up, stdout, prefix) != 0) {
		diag_error(d, prefix ? prefix : "standard output", DIAG_NO_OFFSET, "cannot write: %s",
			   strerror(errno));
		rc = -1;
	}
	free(prefix);
	return rc;
}

/* One input's parts as upload_send_batch() sends them (send_part, halve_part), or with
 * --dry-run writes them. */
struct input_send {
	struct upload_ctx *x;
	void *job;
	const char *input;
	size_t input_no;          /* of several inputs, its number from 1; 0: the only one */
	int dry_run;
	struct diag *d;
	int failed;               /* a --dry-run part could not be written */
};

static int send_part(void *ctx, struct upload_batch *b, size_t k, struct upload_result *r)
{
	struct input_send *s = ctx;
	struct upload_profile *up = &b->parts[k];
	struct retry_say rs = { up, s->d };
	int quiet = s->x->cv->co.quiet;
	char part[64];

	if (s->dry_run) {
		/* a part that cannot be written does not keep the next from being */
		if (dry_run_one(s->x->u, up, s->x->dry_prefix, s->input_no, b->n > 1 ? k + 1 : 0, s->d) != 0)
			s->failed = 1;
		return 0;
	}
	if (uploader_send_retrying(s->x->u, up, 4, NULL, quiet ? NULL : say_retry, &rs, r) !=
	    UPLOAD_SENT)
		return 1;
	part_text(part, sizeof(part), b, k);
	if (!quiet)
		diag_note(s->d, "%s%s: sent to %s (%s)", s->input, part, uploader_url(s->x->u),
			  r->what);
	return 0;
}

static int halve_part(void *ctx, struct upload_batch *b, size_t k, const struct upload_result *r)
{
	struct input_send *s = ctx;
	char part[64];

	part_text(part, sizeof(part), b, k); /* as it was sent, before the cut */
	if (job_halve(s->x, s->job, k, b) != 0)
		return -1;
	diag_warn(s->d, s->input, DIAG_NO_OFFSET, "%s refused it%s as too large (%s): sent again "
		  "in two parts", backend_name(s->x->backend), part, r->what);
	return 0;
}

/* --watch: each chunk the folder's perf record finishes, sent until a signal stops it. */
static int watch_folder(struct upload_ctx *x, const struct upload_options *uo,
			struct watch_options *wopt, struct diag *d)
{
	struct watch_jobs jobs = { job_make_span, job_halve, job_free, x };
	struct upload_stop stop;
	int rc;

	if (upload_stop_init(&stop) != 0) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "cannot take SIGINT and SIGTERM: %s",
			   strerror(errno));
		return 1;
	}
	wopt->quiet = x->cv->co.quiet;
	/* one summary a chunk would be noise: errors and warnings still print */
	x->cv->co.quiet = 1;
	/* the service's JIT dumps read on from chunk to chunk, not read whole each time */
	x->cv->co.jit_store = jit_store_new();
	/* nor one of kernel frames it could not name: said as a warning, with why */
	x->cv->co.warn_kernel_unnamed = 1;
	if (!uo->quiet)
		diag_note(d, "watching %s: each finished chunk to %s", wopt->dir, uploader_url(x->u));
	rc = watch_run(wopt, x->u, &jobs, &stop, d) ? 1 : 0;
	convert_done(&x->cv->later); /* before the tables it borrowed from the store go */
	jit_store_free(x->cv->co.jit_store);
	x->cv->co.jit_store = NULL;
	/* a hangup is not a reload: nothing is read again, so it is said what to do */
	if (stop.signo == SIGHUP)
		diag_note(d, "stopped watching %s on SIGHUP: perfconv re-reads no configuration; "
			  "start it again to change it (its systemd unit restarts it)", wopt->dir);
	else if (!uo->quiet)
		diag_note(d, "stopped watching %s", wopt->dir);
	upload_stop_release(&stop);
	return rc;
}

/* Each input converted and sent (or with --dry-run, written): 0, or 1 when one failed. */
static int send_inputs(struct upload_ctx *x, const struct upload_run_options *ro,
		       struct diag *d)
{
	struct runtime_ids rids;
	int rc = 0;

	runtime_ids_init(&rids, -1);
	for (size_t i = 0; i < ro->ninputs; i++) {
		struct upload_batch b;
		struct upload_result r;
		struct input_send s = { x, NULL, ro->inputs[i], ro->ninputs > 1 ? i + 1 : 0,
					ro->dry_run, d, 0 };
		const struct upload_batch_ops ops = { send_part, halve_part, &s };
		size_t last = 0;

		if (job_make(x, ro->inputs[i], &b, &s.job, d) != 0) {
			rc = 1;
			continue;
		}
		if (b.said[0])
			diag_warn(d, ro->inputs[i], DIAG_NO_OFFSET, "%s", b.said);
		if (upload_send_batch(&b, &rids, &ops, NULL, &last, &r) != 0) {
			char part[64];

			part_text(part, sizeof(part), &b, last);
			diag_error(d, ro->inputs[i], DIAG_NO_OFFSET, "%s %s%s: %s",
				   backend_name(x->backend),
				   r.outcome == UPLOAD_REFUSED ? "refused the profile" :
				   r.outcome == UPLOAD_DENIED ? "turned the request down" :
				   "could not be reached", part, r.what);
			rc = 1;
		}
		if (s.failed)
			rc = 1;
		job_free(NULL, s.job);
	}
	return rc;
}

int upload_run(struct conversion *cv, const struct upload_run_options *ro, struct diag *d)
{
	struct upload_ctx x;
	struct uploader *u = uploader_new(ro->uo, d);
	int rc;

	if (!u)
		return 1;
	x.cv = cv;
	x.dry_prefix = ro->dry_prefix;
	x.u = u;
	x.of = output_by_name(backend_of(ro->uo->backend)->format);
	x.backend = ro->uo->backend;
	x.trust_folder = ro->wopt->trust_folder;
	ro->wopt->retry_cap_s = ro->uo->retry_cap_s;
	rc = ro->wopt->dir ? watch_folder(&x, ro->uo, ro->wopt, d) : send_inputs(&x, ro, d);
	uploader_free(u);
	return rc;
}
