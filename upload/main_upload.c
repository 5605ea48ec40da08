/* main_upload: perfconv upload, each input converted and sent to a backend. */
#include "upload/main_upload.h"

#include "convert/main_internal.h"

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
#include "symbolize/jitstore.h"
#include "formats/pprof.h"

static void upload_usage(FILE *f)
{
	fprintf(f,
		"usage: perfconv upload --to datadog|pyroscope|parca|otlp [--url URL] [-i FILE]...\n"
		"                       [--service NAME] [--label KEY=VALUE]... [options]\n"
		"       perfconv upload --to ... --watch DIR [--delete-sent] [--max-backlog N|SIZE]\n"
		"                       [--keep-sent SIZE|AGE]\n"
		"\n"
		"Convert each input to pprof shaped for the backend (--for) and send it: one\n"
		"profile per input. Takes every conversion option of perfconv (perfconv --help).\n"
		"\n"
		"      --to BACKEND      datadog: the agent's /profiling/v1/input (default\n"
		"                        http://localhost:8126, $DD_TRACE_AGENT_URL (unix:// too),\n"
		"                        $DD_AGENT_HOST and $DD_TRACE_AGENT_PORT), or with an API\n"
		"                        key the intake of $DD_SITE (default datadoghq.com);\n"
		"                        pyroscope: /ingest (default http://localhost:4040);\n"
		"                        parca: /profiles/writeraw (default http://localhost:7070);\n"
		"                        otlp: OpenTelemetry profiles, OTLP/HTTP protobuf to\n"
		"                        /v1development/profiles (default http://localhost:4318,\n"
		"                        $OTEL_EXPORTER_OTLP_ENDPOINT, or as it is\n"
		"                        $OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT): a Collector,\n"
		"                        Pyroscope...\n"
		"      --url URL         where the backend (or agent) is, without a path\n"
		"      --tenant ID       pyroscope: X-Scope-OrgID\n"
		"      --header NAME=VALUE  otlp: a header of every request (also\n"
		"                        $OTEL_EXPORTER_OTLP_HEADERS, ..._PROFILES_HEADERS: k=v,k=v;\n"
		"                        tokens go there, not on the command line)\n"
		"      --api-key-file FILE  datadog intake: the API key, its first line (else\n"
		"                        $DD_API_KEY; never on the command line)\n"
		"      --allow-http      send over http:// to a host not on loopback (never\n"
		"                        with a secret: an API key, OTLP headers)\n"
		"      --proxy URL       send through this proxy (http:// or https://, no user or\n"
		"                        password): an https:// URL through a CONNECT tunnel;\n"
		"                        an http:// URL only with both on loopback, or with\n"
		"                        --allow-http and no secret. No other proxy is used:\n"
		"                        http_proxy, HTTPS_PROXY, ALL_PROXY are not read\n"
		"      --dry-run         say what would be sent, send nothing; with -o PREFIX\n"
		"                        also write the bodies to PREFIX.* files\n"
		"      --timeout SECONDS one request's limit (default 60)\n"
		"      --retry-cap SECONDS  the longest wait between tries (default 300)\n"
		"      --watch DIR       send each chunk `perf record --switch-output` finishes\n"
		"                        in DIR, oldest first, until SIGINT or SIGTERM; a chunk\n"
		"                        sent (a 2xx) is moved to DIR/sent/, one refused to\n"
		"                        DIR/refused/; each profile spans its chunk's window,\n"
		"                        from the end of the chunk before it to its own\n"
		"      --delete-sent     with --watch: delete a sent chunk instead, and a\n"
		"                        dropped one\n"
		"      --max-backlog N|SIZE  with --watch: past N unsent chunks (500) or SIZE of\n"
		"                        them (512M, 1G: K, M, G, T), the oldest are moved to\n"
		"                        DIR/dropped/, each said (default 1G; 0: no limit)\n"
		"      --keep-sent SIZE|AGE  with --watch: sent/, refused/ and dropped/ each\n"
		"                        pruned, oldest first, past SIZE (1G) or AGE (90s, 30m,\n"
		"                        12h, 7d, 2w); give it twice for both; `all` keeps\n"
		"                        every chunk (default 1G)\n"
		"      --trust-folder    with --watch: send chunks of any owner, mode or number\n"
		"                        of links, and use JIT files beside them of any owner\n"
		"                        (by default: perfconv's user's or root's, writable by\n"
		"                        no one else; docs/UPLOADING.md: Security)\n"
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0 every profile sent (or watching stopped), 1 one was refused or\n"
		"could not be sent, or an input is bad, 2 usage.\n");
}

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
	struct cli *c;
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
	if (x && x->c->co.jit_store)
		convert_done(&x->c->later);
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
		x->c->wo.wall_offset += shift;
	}
	if (span->first_clock) {
		span->offset = span->start_ns - (int64_t)span->first_clock;
		span->has_offset = 1;
	}
	start = watch_window_start(prev, span);
	x->c->wo.time_nanos = start;
	x->c->wo.duration_nanos = span->end_ns - start;
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
	x->c->co.input = input;
	if (in) {
		x->c->co.input_mem = in->data;
		x->c->co.input_len = in->len;
		x->c->co.input_mtime_ns = in->mtime_ns;
		x->c->co.jit_check_owner = !x->trust_folder;
		x->c->co.jit_owner_uid = in->owner_uid;
	}
	rc = convert_one(x->c, x->of, &j->p, &j->m, d);
	x->c->co.input_mem = NULL;
	x->c->co.input_len = 0;
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
	j->wo = x->c->wo;
	j->wo.stats = NULL;
	profile_name(&j->p, j->wo.event, j->name, sizeof(j->name));
	runtimes_of(&j->p, j->runtimes, sizeof(j->runtimes));
	memset(&j->base, 0, sizeof(j->base));
	up = &j->base;
	up->input = input;
	up->start_ns = j->m.start_ns;
	up->duration_ns = j->m.duration_ns;
	if (span) {
		up->start_ns = x->c->wo.time_nanos;
		up->duration_ns = span->end_ns - up->start_ns;
		up->window = 1;
	}
	up->service = x->c->meta.service;
	up->labels = j->m.labels;
	up->nlabels = j->m.nlabels;
	up->host = j->m.host;
	up->kernel_release = j->m.kernel_release;
	up->name = j->name;
	up->runtimes = j->runtimes;
	up->arch = j->p.arch ? profile_text(&j->p, j->p.arch) : NULL;
	up->seq = -1;
	x->c->wo.duration_nanos = 0;
	lim = *uploader_limits(x->u);
	j->wr.write = x->of->write == pprof_write ? NULL : x->of->write;
	j->wr.gzip = j->wr.write != NULL;
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
static int dry_run_one(struct uploader *u, const struct upload_profile *up, const struct cli *c,
		       size_t input, size_t part, struct diag *d)
{
	char *prefix = NULL;
	int rc = 0;

	if (c->output) {
		prefix = xmalloc(strlen(c->output) + 48);
		strcpy(prefix, c->output);
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
	int quiet = s->x->c->co.quiet;
	char part[64];

	if (s->dry_run) {
		/* a part that cannot be written does not keep the next from being */
		if (dry_run_one(s->x->u, up, s->x->c, s->input_no, b->n > 1 ? k + 1 : 0, s->d) != 0)
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

int upload_main(int argc, char **argv)
{
	static const struct option own[] = {
		{ "to", required_argument, NULL, OPT_TO },
		{ "url", required_argument, NULL, OPT_URL },
		{ "tenant", required_argument, NULL, OPT_TENANT },
		{ "api-key-file", required_argument, NULL, OPT_API_KEY_FILE },
		{ "allow-http", no_argument, NULL, OPT_ALLOW_HTTP },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "delete-sent", no_argument, NULL, OPT_DELETE_SENT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "retry-cap", required_argument, NULL, OPT_RETRY_CAP },
		{ "max-backlog", required_argument, NULL, OPT_MAX_BACKLOG },
		{ "keep-sent", required_argument, NULL, OPT_KEEP_SENT },
		{ "trust-folder", no_argument, NULL, OPT_TRUST_FOLDER },
		{ "proxy", required_argument, NULL, OPT_PROXY },
		{ "header", required_argument, NULL, OPT_HEADER },
	};
	static const struct option conv[] = { CONVERT_OPTIONS };
	struct option opts[sizeof(own) / sizeof(own[0]) + sizeof(conv) / sizeof(conv[0]) + 1];
	struct upload_options uo;
	struct watch_options wopt;
	struct upload_ctx x;
	struct cli c;
	struct diag d;
	struct uploader *u = NULL;
	struct runtime_ids rids;
	const char **inputs = NULL, **headers = NULL;
	size_t ninputs = 0, inputs_cap = 0, headers_cap = 0;
	int opt, w, rc = 0, dry_run = 0, backlog_set = 0, keep_set = 0;

	memcpy(opts, own, sizeof(own));
	memcpy(opts + sizeof(own) / sizeof(own[0]), conv, sizeof(conv));
	memset(&opts[sizeof(opts) / sizeof(opts[0]) - 1], 0, sizeof(opts[0]));
	memset(&uo, 0, sizeof(uo));
	memset(&wopt, 0, sizeof(wopt));
	wopt.max_bytes = WATCH_MAX_BACKLOG_DEFAULT;
	wopt.keep_bytes = WATCH_KEEP_DEFAULT;
	cli_init(&c);
	c.output = NULL;
	diag_init(&d);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:o:f:qh", opts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (opt) {
		case '?':
		case ':':
			rc = getopt_error(opt, argv);
			goto out;
		case 'h':
			upload_usage(stdout);
			goto out;
		case 'i': VEC_PUSH(inputs, ninputs, inputs_cap, optarg); continue;
		case 'f':
			rc = bad_usage("perfconv upload sends pprof: no -f", optarg);
			goto out;
		case OPT_FOR:
			rc = bad_usage("perfconv upload shapes the pprof for --to's backend: no --for", NULL);
			goto out;
		case OPT_TO:
			uo.backend = backend_by_name(optarg);
			if (!uo.backend) {
				rc = bad_usage("--to takes datadog, pyroscope, parca or otlp", optarg);
				goto out;
			}
			continue;
		case OPT_URL: uo.url = optarg; continue;
		case OPT_PROXY: uo.proxy = optarg; continue;
		case OPT_HEADER: VEC_PUSH(headers, uo.nheaders, headers_cap, optarg); continue;
		case OPT_TENANT: uo.tenant = optarg; continue;
		case OPT_API_KEY_FILE:
			/* getopt takes a prefix: "--api-key KEY" must not pass for a file name
			 * (the key would then be shown in an error) */
			if (strncmp(argv[optind - 1], "--api-key-file", 14) != 0 &&
			    strncmp(argv[optind - 2 >= 0 ? optind - 2 : 0], "--api-key-file", 14) != 0) {
				rc = bad_usage("the API key comes from DD_API_KEY or --api-key-file FILE, "
					       "never the command line", NULL);
				goto out;
			}
			uo.api_key_file = optarg;
			continue;
		case OPT_ALLOW_HTTP: uo.allow_http = 1; continue;
		case OPT_DRY_RUN: dry_run = 1; continue;
		case OPT_WATCH: wopt.dir = optarg; continue;
		case OPT_DELETE_SENT: wopt.delete_sent = 1; continue;
		case OPT_TRUST_FOLDER: wopt.trust_folder = 1; continue;
		case OPT_MAX_BACKLOG:
			if (watch_parse_backlog(optarg, &wopt.max_chunks, &wopt.max_bytes) != 0) {
				rc = bad_usage("--max-backlog takes a number of chunks (500), a size "
					       "(512M, 1G) or 0", optarg);
				goto out;
			}
			backlog_set = 1;
			continue;
		case OPT_KEEP_SENT: {
			uint64_t bytes = 0;
			int64_t age = 0;

			if (watch_parse_keep(optarg, &bytes, &age) != 0) {
				rc = bad_usage("--keep-sent takes a size (1G, 512M), an age (7d, 12h, "
					       "30m) or all", optarg);
				goto out;
			}
			/* given, it replaces the default; a size and an age both hold */
			if (!keep_set++)
				wopt.keep_bytes = 0;
			if (strcmp(optarg, "all") == 0) {
				wopt.keep_bytes = 0;
				wopt.keep_age_s = 0;
			} else if (bytes) {
				wopt.keep_bytes = bytes;
			} else {
				wopt.keep_age_s = age;
			}
			continue;
		}
		case OPT_TIMEOUT:
		case OPT_RETRY_CAP:
			v = strtoul(optarg, &end, 10);
			if (*end || end == optarg || v == 0 || v > 86400) {
				rc = bad_usage("takes a number of seconds, 1 to 86400", optarg);
				goto out;
			}
			if (opt == OPT_TIMEOUT)
				uo.timeout_s = (long)v;
			else
				uo.retry_cap_s = (unsigned)v;
			continue;
		}
		if ((w = convert_option(&c, opt, optarg)) != 0) {
			rc = w == 2 ? 2 : bad_usage("unknown option", NULL);
			goto out;
		}
	}
	if (optind < argc) {
		rc = bad_usage("unexpected argument", argv[optind]);
		goto out;
	}
	if (!uo.backend) {
		rc = bad_usage("perfconv upload needs --to datadog|pyroscope|parca|otlp", NULL);
		goto out;
	}
	if (uo.nheaders && uo.backend != BACKEND_OTLP) {
		rc = bad_usage("--header goes with --to otlp", NULL);
		goto out;
	}
	uo.headers = headers;
	if (wopt.dir && (ninputs || dry_run)) {
		rc = bad_usage("--watch takes its inputs from DIR: no -i or --dry-run", NULL);
		goto out;
	}
	if ((wopt.delete_sent || backlog_set || keep_set || wopt.trust_folder) && !wopt.dir) {
		rc = bad_usage("--delete-sent, --max-backlog, --keep-sent and --trust-folder go "
			       "with --watch", NULL);
		goto out;
	}
	if (wopt.dir && c.meta.start_time_set) {
		rc = bad_usage("--start-time is one recording's start: each chunk of --watch has "
			       "its own", NULL);
		goto out;
	}
	if (c.output && !dry_run) {
		rc = bad_usage("perfconv upload writes no file: -o goes with --dry-run", NULL);
		goto out;
	}
	if (!ninputs)
		VEC_PUSH(inputs, ninputs, inputs_cap, "perf.data");
	c.pprof_for = backend_pprof_for(uo.backend);
	c.upload = 1;
	uo.quiet = c.co.quiet;
	if (cli_finish(&c, &d) != 0 || !(u = uploader_new(&uo, &d))) {
		rc = 1;
		goto out;
	}
	x.c = &c;
	x.u = u;
	x.of = output_by_name(backend_of(uo.backend)->format);
	x.backend = uo.backend;
	x.trust_folder = wopt.trust_folder;
	wopt.retry_cap_s = uo.retry_cap_s;
	if (wopt.dir) {
		struct watch_jobs jobs = { job_make_span, job_halve, job_free, &x };
		struct upload_stop stop;

		if (upload_stop_init(&stop) != 0) {
			diag_error(&d, NULL, DIAG_NO_OFFSET, "cannot take SIGINT and SIGTERM: %s",
				   strerror(errno));
			rc = 1;
			goto out;
		}
		wopt.quiet = c.co.quiet;
		/* one summary a chunk would be noise: errors and warnings still print */
		c.co.quiet = 1;
		/* the service's JIT dumps read on from chunk to chunk, not read whole each time */
		c.co.jit_store = jit_store_new();
		/* nor one of kernel frames it could not name: said as a warning, with why */
		c.co.warn_kernel_unnamed = 1;
		if (!uo.quiet)
			diag_note(&d, "watching %s: each finished chunk to %s", wopt.dir, uploader_url(u));
		rc = watch_run(&wopt, u, &jobs, &stop, &d) ? 1 : 0;
		convert_done(&c.later); /* before the tables it borrowed from the store go */
		jit_store_free(c.co.jit_store);
		c.co.jit_store = NULL;
		/* a hangup is not a reload: nothing is read again, so it is said what to do */
		if (stop.signo == SIGHUP)
			diag_note(&d, "stopped watching %s on SIGHUP: perfconv re-reads no configuration; "
				  "start it again to change it (its systemd unit restarts it)", wopt.dir);
		else if (!uo.quiet)
			diag_note(&d, "stopped watching %s", wopt.dir);
		upload_stop_release(&stop);
		goto out;
	}
	runtime_ids_init(&rids, -1);
	for (size_t i = 0; i < ninputs; i++) {
		struct upload_batch b;
		struct upload_result r;
		struct input_send s = { &x, NULL, inputs[i], ninputs > 1 ? i + 1 : 0, dry_run, &d, 0 };
		const struct upload_batch_ops ops = { send_part, halve_part, &s };
		size_t last = 0;

		if (job_make(&x, inputs[i], &b, &s.job, &d) != 0) {
			rc = 1;
			continue;
		}
		if (b.said[0])
			diag_warn(&d, inputs[i], DIAG_NO_OFFSET, "%s", b.said);
		if (upload_send_batch(&b, &rids, &ops, NULL, &last, &r) != 0) {
			char part[64];

			part_text(part, sizeof(part), &b, last);
			diag_error(&d, inputs[i], DIAG_NO_OFFSET, "%s %s%s: %s",
				   backend_name(uo.backend),
				   r.outcome == UPLOAD_REFUSED ? "refused the profile" :
				   r.outcome == UPLOAD_DENIED ? "turned the request down" :
				   "could not be reached", part, r.what);
			rc = 1;
		}
		if (s.failed)
			rc = 1;
		job_free(NULL, s.job);
	}
out:
	diag_release(&d);
	uploader_free(u);
	free(inputs);
	free(headers);
	cli_release(&c);
	return rc;
}
