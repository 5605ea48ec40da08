/* pyroscope: Pyroscope's /ingest?format=pprof request (the labels in its `name`, the
 * pprof as the body), and what its answers and default limits are
 * (grafana/pyroscope pkg/validation, docs/BACKENDS.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "formats/write/pprof.h"
#include "upload/backend.h"

#define PYROSCOPE_DEFAULT "http://localhost:4040"

static void py_endpoint(const struct upload_options *o, int key, char *buf, size_t cap,
			const char **base, const char **path, int *intake)
{
	(void)key, (void)buf, (void)cap;
	*intake = 0;
	*base = o->url ? o->url : PYROSCOPE_DEFAULT;
	*path = "/ingest";
}

/* Pyroscope's /ingest query: name=SERVICE{k=v,...}&from=&until=&format=pprof. */
static char *pyroscope_url(const struct backend_ctx *c, const struct upload_profile *p)
{
	struct strbuf name = STRBUF_INIT;
	char *esc, *url, val[256];
	int64_t end = p->start_ns + p->duration_ns;
	/* a window's ends rounded alike, so that the next window's from is this until (the
	 * handler reads both and checks neither: a window within one second has from ==
	 * until, pkg/og ingest_handler.go) */
	int64_t from = (p->start_ns + (p->window ? 500000000LL : 0)) / 1000000000LL;
	int64_t until = (end + (p->window ? 500000000LL : 999999999LL)) / 1000000000LL;

	strbuf_addf(&name, "%s{", upload_service(p));
	for (size_t i = 0; i < p->nlabels; i++) {
		if (strcmp(p->labels[i].key, "service") == 0)
			continue;
		upload_tag_value(val, sizeof(val), p->labels[i].value);
		strbuf_addf(&name, "%s%s=%s", name.s[name.len - 1] == '{' ? "" : ",",
			    p->labels[i].key, val);
	}
	strbuf_addch(&name, '}');
	esc = upload_url_escape(name.s);
	url = xmalloc(strlen(c->url) + strlen(esc) + 128);
	sprintf(url, "%s?name=%s&from=%lld&until=%lld&format=pprof&spyName=perfconv", c->url, esc,
		(long long)from, (long long)(until > from || p->window ? until : from + 1));
	free(esc);
	strbuf_release(&name);
	return url;
}

static void py_request(const struct backend_ctx *c, const struct upload_profile *p,
		       struct backend_request *rq)
{
	rq->url = pyroscope_url(c, p);
	rq->content_type = "application/octet-stream";
	rq->body = p->pprof;
	rq->len = p->len;
	rq->body_what = "gzipped pprof";
	rq->body_suffix = "pprof";
	if (c->o->tenant)
		rq->headers[rq->nheaders++] = upload_header("X-Scope-OrgID", c->o->tenant);
}

/*
 * Pyroscope's distributor refuses a profile whose time_nanos lies outside its
 * ingestion window (pkg/validation/validate.go ValidateProfile: "profile with labels
 * '...' is outside of ingestion window (profile timestamp: ..., the ingestion window
 * starts at ...)"), by default from an hour ago (-validation.reject-older-than) to 10
 * minutes ahead (-validation.reject-newer-than). The whole answer is read: the labels
 * come first and may push the words past the line a message keeps.
 */
static int refused_for_age(const struct upload_profile *p, const char *answer)
{
	struct timespec now;

	if (!strstr(answer, "outside of ingestion window"))
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	return p->start_ns < (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/*
 * Refused for its size: Pyroscope's answers for a profile over its size or sample limits
 * (docs/BACKENDS.md "For issue 32"): the same samples in smaller profiles would pass.
 */
static int refused_for_size(const char *answer)
{
	return strstr(answer, "decompressed size exceeds maximum allowed size") ||
	       strstr(answer, "exceeds the size limit (max_profile_size_byte") ||
	       strstr(answer, "exceeds the samples count limit") ||
	       strstr(answer, "uncompressed profile payload size exceeds limit");
}

static void py_answer(const struct backend_ctx *c, const struct upload_profile *p,
		      const char *body, size_t len, struct upload_result *r)
{
	(void)c, (void)len;
	if (r->outcome == UPLOAD_SENT)
		return;
	if ((r->too_old = refused_for_age(p, body)))
		return;
	if (refused_for_size(body))
		r->too_large = 1;
}

const struct backend_ops backend_pyroscope = {
	.id = BACKEND_PYROSCOPE,
	.name = "pyroscope",
	.default_url = PYROSCOPE_DEFAULT,
	.usage = "pyroscope: /ingest (default " PYROSCOPE_DEFAULT ");",
	.format = "pprof",
	.pprof_for = PPROF_FOR_PYROSCOPE,
	.endpoint = py_endpoint,
	.request = py_request,
	.answer = py_answer,
	/* pkg/validation/limits.go: 4 MiB (max_profile_size_bytes) and 16,000 samples
	 * (max_profile_stacktrace_samples); its ingestion rate limiter grants at most its
	 * 2 MiB burst at once, so a profile over 2 MiB is always 429 */
	.limits = { (2ULL << 20) - (64ULL << 10), 16000,
		    "Pyroscope takes at most 2 MiB at once (its rate limiter's burst; 4 MiB a "
		    "profile)", "Pyroscope refuses a profile of over 16,000 samples" },
	.age_limit = "Pyroscope refuses a profile that began more than 1 hour ago (its default "
		     "-validation.reject-older-than=1h)",
};
