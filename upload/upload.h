/* upload: a converted profile sent to Datadog (agent or intake), Pyroscope or Parca,
 * over libcurl, with the request each backend takes (docs/BACKENDS.md). */
#ifndef PERFCONV_UPLOAD_H
#define PERFCONV_UPLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/diag.h"
#include "formats/write/writer.h"

enum backend {
	BACKEND_DATADOG = 1,
	BACKEND_PYROSCOPE,
	BACKEND_PARCA,
	BACKEND_OTLP,
};

struct upload_options {
	int backend;              /* enum backend */
	const char *url;          /* --url: where the backend is; NULL for its default */
	const char *tenant;       /* --tenant: Pyroscope's X-Scope-OrgID */
	const char *api_key_file; /* --api-key-file: Datadog's API key (else $DD_API_KEY) */
	int allow_http;           /* --allow-http: http:// to a host not on loopback */
	const char *proxy;        /* --proxy: the one proxy sent through, or NULL for none
				     (the environment's http_proxy, ALL_PROXY... never) */
	const char **headers;     /* --header NAME=VALUE (OTLP), in order */
	size_t nheaders;
	long timeout_s;           /* one request's limit (default 60) */
	unsigned retry_cap_s;     /* the longest wait between tries (default 300) */
	int quiet;
};

/* One profile to send: the gzipped pprof and what the request says about it. */
struct upload_profile {
	const char *input;        /* the file it came from, for messages */
	const uint8_t *pprof;     /* gzipped perftools.profiles.Profile */
	size_t len;
	int64_t start_ns, duration_ns;
	const char *service;      /* NULL: the backend's default ("perfconv") */
	const struct write_label *labels; /* --label, host, kernel_release */
	size_t nlabels;
	const char *host, *kernel_release;
	const char *name;         /* Parca's __name__, Pyroscope's profile type hint */
	const char *runtime_id;   /* Datadog's runtime-id (a UUID for the run of perf record
				     the profile is of), NULL for none */
	int64_t seq;              /* Datadog's profile_seq (from 0, one more each profile of
				     that runtime-id sent), -1 for none */
	const char *runtimes;     /* the runtimes its code ran in, "java,node" (runtime: tags),
				     NULL or "" when none is known */
	const char *arch;         /* the recording's machine ("x86_64"), NULL when unknown */
	unsigned part, nparts;    /* part `part` (from 1) of `nparts` its input's profile was
				     cut into for the backend's limits; nparts 0 or 1: whole */
	int window;               /* start_ns and duration_ns are a watched chunk's window, one
				     of a series that tiles time: Pyroscope's whole seconds are
				     then rounded to the nearest at both ends, so that one's
				     until is the next one's from (else from is rounded down and
				     until up, as for a single file) */
};

enum upload_outcome {
	UPLOAD_SENT = 0,      /* a 2xx, even when the rest of the answer was then cut short */
	UPLOAD_RETRY,         /* 5xx, 408, 429, a reset, a timeout, refused connection */
	UPLOAD_REFUSED,       /* another answer, or an address the rules forbid: sending it
				 again would not help */
	UPLOAD_STOPPED,       /* *stop became nonzero: not sent */
	UPLOAD_ABANDONED,     /* the caller gave up between tries (on_retry): not sent */
	UPLOAD_DENIED,        /* the request itself turned down, whatever the profile: a
				 3xx (redirects are not followed), 401 or 403 (the key), 404
				 or 405 (the URL), 407 (the proxy): every profile would get
				 the same until that is mended, and then this one goes */
};

struct upload_result {
	int outcome;          /* enum upload_outcome */
	long status;          /* HTTP status, 0 when none came */
	long retry_after_s;   /* Retry-After of a 429/503, -1 when none */
	char what[512];       /* the answer: "HTTP 400: invalid labels ...", "connection reset" */
	int too_old;          /* refused for its age: the answer says so (Pyroscope: "outside of
				 ingestion window", for a profile that began before now) */
	int too_large;        /* refused for its size: a 413, or Pyroscope's size or sample
				 limits named: smaller parts of it would pass */
};

/*
 * An input's profile as sent: one profile, or several each a span of its time when the
 * whole would be over the backend's limits (upload/uploadparts.h). `run` and `boot_ns`
 * say which run of perf record it is of (Datadog's runtime-id: upload/runtimeid.h).
 */
struct upload_batch {
	struct upload_profile *parts;
	size_t n;
	uint64_t run;
	int64_t boot_ns;
	char said[320];           /* why it was cut, when it was: "over Pyroscope's ..." */
};

struct uploader;

/*
 * Being told to stop (SIGINT, SIGTERM, SIGHUP) without a handler or a global: the
 * signals are blocked and read through a signalfd when asked. 0, or -1 (errno set).
 */
struct upload_stop {
	int fd;
	int stopped;
	int signo;            /* the signal that stopped it, once stopped */
};
int upload_stop_init(struct upload_stop *s);
/* Has a stop signal come (now or before)? 1 or 0. `s` may be NULL (never). */
int upload_stop_check(struct upload_stop *s);
void upload_stop_release(struct upload_stop *s);

/*
 * Where and how to send, decided once: the URL (the backend's default, --url, and
 * for Datadog $DD_TRACE_AGENT_URL or $DD_AGENT_HOST/$DD_TRACE_AGENT_PORT, or the
 * intake of $DD_SITE when an API key is given), the API key (environment or
 * file only), and the rules (transport_route_check): TLS verified; http:// only to
 * loopback unless allow_http, a secret (the key, the backend's: OTLP's headers) never
 * over http:// off loopback, allow_http or not; a proxy only
 * when o->proxy names one. Loopback is an address (127.0.0.1.5 is a name) and is
 * checked again on the address each request connects to.
 *
 * With a key (DD_API_KEY or the file) the process is made not dumpable, for good, and
 * DD_API_KEY leaves the environment, its bytes overwritten where they lie, whichever
 * backend is named (transport.h). NULL after saying why through `d`.
 */
struct uploader *uploader_new(const struct upload_options *o, struct diag *d);
void uploader_free(struct uploader *u);
/* The URL a request goes to (no key in it), for messages. */
const char *uploader_url(const struct uploader *u);

/*
 * Send `p` once. `stop` (may be NULL) is checked during the transfer: when a stop signal
 * comes the transfer is abandoned (UPLOAD_STOPPED). Returns r->outcome.
 */
int uploader_send(struct uploader *u, const struct upload_profile *p,
		  struct upload_stop *stop, struct upload_result *r);

/*
 * Send `p` until a 2xx, a refusal, `max_tries` tries (0: no limit) or a stop signal, waiting
 * between tries with capped exponential backoff (1 s, doubling, at most
 * retry_cap_s; a Retry-After is waited instead, at most retry_cap_s). `on_retry` (may be NULL) is
 * told of each failed try and the wait before the next, and returns nonzero to give up
 * (UPLOAD_ABANDONED: the watcher dropped the chunk). Returns r->outcome.
 */
typedef int (*upload_retry_fn)(void *ctx, const struct upload_result *r, unsigned wait_s);
int uploader_send_retrying(struct uploader *u, const struct upload_profile *p, int max_tries,
			   struct upload_stop *stop, upload_retry_fn on_retry, void *ctx,
			   struct upload_result *r);

/*
 * The age past which the backend refuses a profile, as its documentation and code state
 * it ("Pyroscope refuses a profile that began more than 1 hour ago (its default
 * -validation.reject-older-than=1h)"), or NULL where none is published (Datadog's
 * intake, Parca).
 */
const char *uploader_age_limit(const struct uploader *u);

/* The limits the backend holds a profile to (upload/uploadparts.h): an input's profile
 * over them is sent cut in time. */
struct upload_limits;
const struct upload_limits *uploader_limits(const struct uploader *u);

/*
 * What uploader_send would send, without sending: the request line and headers
 * (the API key shown as <redacted>) to `head`, and with `body_prefix` the body in
 * files named after it (PREFIX.event.json and PREFIX.profile.pprof for Datadog,
 * PREFIX.pprof for Pyroscope, PREFIX.json for Parca). 0, or -1 on a write error.
 */
int uploader_dry_run(struct uploader *u, const struct upload_profile *p, FILE *head,
		     const char *body_prefix);

#endif
