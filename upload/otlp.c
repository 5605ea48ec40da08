/* otlp: OpenTelemetry's OTLP/HTTP for profiles (opentelemetry-proto's specification,
 * docs/BACKENDS.md "OTLP"): the gzipped ExportProfilesServiceRequest (formats/write/otlp.h)
 * POSTed to /v1development/profiles as application/x-protobuf, to an OpenTelemetry
 * Collector, Pyroscope or anything that takes the signal. The endpoint and headers as the
 * OpenTelemetry SDKs read them from the environment; an answer's partial success said;
 * only 429, 502, 503 and 504 retried, as the protocol says. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "formats/write/pprof.h"
#include "otlp_profiles.pb-c.h"
#include "rpc_status.pb-c.h"
#include "upload/backend.h"
#include "upload/transport.h"

#define OTLP_DEFAULT "http://localhost:4318"
#define OTLP_PATH "/v1development/profiles"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse
	ox_response;

/* The headers every request carries: --header's, then the environment's. */
struct otlp_state {
	char *headers[BACKEND_MAX_HEADERS - 2]; /* "Name: value" */
	size_t n;
	uint32_t secret;          /* bit i: headers[i] came from the environment */
	char endpoint[1024];      /* an OTEL_EXPORTER_OTLP_*ENDPOINT read at the start */
	char from[128];           /* where the headers came from: "--header and $OTEL_..." */
	char said[224];           /* otlp_secret's words */
};

/*
 * --url is the base (its path /v1development/profiles); else
 * OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT as it is (the SDKs' rule for a signal's own
 * endpoint), else OTEL_EXPORTER_OTLP_ENDPOINT as the base, else localhost:4318.
 */
static void otlp_endpoint(const struct upload_options *o, int key, char *buf, size_t cap,
			  const char **base, const char **path, int *intake)
{
	const char *own = getenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT");
	const char *all = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");

	(void)key;
	*intake = 0;
	*path = OTLP_PATH;
	if (o->url) {
		*base = o->url;
	} else if (own && own[0]) {
		snprintf(buf, cap, "%s", own);
		*base = buf;
		*path = "";
	} else if (all && all[0]) {
		snprintf(buf, cap, "%s", all);
		*base = buf;
	} else {
		*base = OTLP_DEFAULT;
	}
}

static int token_char(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* %XX decoded in place (the W3C Baggage form the SDKs read): 0, or -1 when malformed. */
static int percent_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '%') {
			if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
				return -1;
			*o++ = (char)strtol((char[]){ s[1], s[2], 0 }, NULL, 16);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return 0;
}

/* Trimmed of spaces at both ends, in place. */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * NAME=VALUE added to st (`from` names where it came from, for messages, which never
 * show the value): NAME an HTTP token, VALUE printable ASCII once %XX is decoded (when
 * `decode`). A name given again replaces the earlier value. 0, or -1 after saying why.
 */
static int add_header(struct otlp_state *st, char *kv, int decode, int secret, const char *from,
		      struct diag *d)
{
	char *eq = strchr(kv, '='), *name, *value;
	size_t i;

	if (!eq) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "%s: a header is NAME=VALUE", from);
		return -1;
	}
	*eq = '\0';
	name = trim(kv);
	value = trim(eq + 1);
	for (const char *c = name; *c; c++)
		if (!token_char((unsigned char)*c))
			name[0] = '\0';
	if (!name[0] || (decode && percent_decode(value) != 0)) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "%s: a header's name must be an HTTP token "
			   "and its value %%XX-encoded where it is not plain", from);
		return -1;
	}
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) {
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: header %s: its value holds a "
				   "character that is not printable ASCII", from, name);
			return -1;
		}
	if (!strcasecmp(name, "Content-Type") || !strcasecmp(name, "Content-Encoding") ||
	    !strcasecmp(name, "Content-Length") || !strcasecmp(name, "Host")) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "%s: header %s is perfconv's to set", from, name);
		return -1;
	}
	for (i = 0; i < st->n; i++)
		if (strncasecmp(st->headers[i], name, strlen(name)) == 0 &&
		    st->headers[i][strlen(name)] == ':')
			break;
	if (i == st->n) {
		if (st->n == sizeof(st->headers) / sizeof(st->headers[0])) {
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: too many headers", from);
			return -1;
		}
		st->n++;
	} else {
		explicit_bzero(st->headers[i], strlen(st->headers[i]));
		free(st->headers[i]);
	}
	st->headers[i] = upload_header(name, value);
	st->secret = secret ? st->secret | (1u << i) : st->secret & ~(1u << i);
	return 0;
}

static void otlp_release(void *state)
{
	struct otlp_state *st = state;

	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		explicit_bzero(st->headers[i], strlen(st->headers[i]));
		free(st->headers[i]);
	}
	free(st);
}

/* `from` added to st->from, the list of where headers came from. */
static void said_from(struct otlp_state *st, const char *from)
{
	size_t n = strlen(st->from);

	snprintf(st->from + n, sizeof(st->from) - n, "%s%s", n ? " and " : "", from);
}

/* A comma-separated list of NAME=VALUE from the environment, taken out of it (a token
 * there is a secret: not left for /proc/PID/environ or a child). 0, or -1. */
static int env_headers(struct otlp_state *st, const char *var, struct diag *d)
{
	char *list = getenv(var) && getenv(var)[0] ? transport_env_take(var) : NULL, *save = NULL;
	int rc = 0, added = 0;

	if (!list)
		return 0;
	if (transport_hide_process() != 0) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "cannot keep %s out of core dumps", var);
		rc = -1;
	}
	for (char *kv = strtok_r(list, ",", &save); kv && rc == 0; kv = strtok_r(NULL, ",", &save))
		if (trim(kv)[0]) {
			rc = add_header(st, kv, 1, 1, var, d);
			added++;
		}
	explicit_bzero(list, strlen(list));
	free(list);
	if (rc == 0 && added) {
		char from[64];

		snprintf(from, sizeof(from), "$%s", var);
		said_from(st, from);
	}
	return rc;
}

static int otlp_prepare(const struct upload_options *o, void **state, struct diag *d)
{
	struct otlp_state *st = xcalloc(1, sizeof(*st));

	for (size_t i = 0; i < o->nheaders; i++) {
		char *kv = xstrdup(o->headers[i]);
		int rc = add_header(st, kv, 0, 0, "--header", d);

		free(kv);
		if (rc != 0) {
			otlp_release(st);
			return -1;
		}
	}
	if (st->n)
		said_from(st, "--header");
	/* the signal's own after the general ones, so that it wins a name both give */
	if (env_headers(st, "OTEL_EXPORTER_OTLP_HEADERS", d) != 0 ||
	    env_headers(st, "OTEL_EXPORTER_OTLP_PROFILES_HEADERS", d) != 0) {
		otlp_release(st);
		return -1;
	}
	snprintf(st->said, sizeof(st->said), "a secret (the OTLP headers, from %s, each of "
		 "which may hold a token)", st->from);
	*state = st;
	return 0;
}

/*
 * Every header counts as a secret, --header's too: the SDKs' headers variables are
 * where OTLP backends take their tokens, and those are named as each vendor likes
 * (Authorization, x-honeycomb-team, lightstep-access-token, X-SF-Token, api-key...):
 * no rule tells a credential from a routing header by its name. --header is for what
 * is not secret (the command line is in ps), but a token put there by mistake is still
 * kept off a network that would show it to everyone on the way.
 */
static const char *otlp_secret(const void *state)
{
	const struct otlp_state *st = state;

	return st && st->n ? st->said : NULL;
}

static void otlp_request(const struct backend_ctx *c, const struct upload_profile *p,
			 struct backend_request *rq)
{
	const struct otlp_state *st = c->state;

	rq->content_type = "application/x-protobuf";
	rq->body = p->pprof;
	rq->len = p->len;
	rq->body_what = "gzipped OTLP protobuf (ExportProfilesServiceRequest)";
	rq->body_suffix = "otlp.pb.gz";
	rq->headers[rq->nheaders++] = upload_header("Content-Encoding", "gzip");
	for (size_t i = 0; st && i < st->n; i++) {
		if (st->secret & (1u << i))
			rq->secret |= 1u << rq->nheaders;
		rq->headers[rq->nheaders++] = xstrdup(st->headers[i]);
	}
}

/* A 2xx's partial success, or a failure's google.rpc.Status, into r->what. */
static void otlp_answer(const struct backend_ctx *c, const struct upload_profile *p,
			const char *body, size_t len, struct upload_result *r)
{
	size_t n;

	(void)c, (void)p;
	if (r->outcome == UPLOAD_SENT) {
		/* a protobuf answer: not text to quote */
		snprintf(r->what, sizeof(r->what), "HTTP %ld", r->status);
		n = strlen(r->what);
		ox_response *a = len ? opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
					       NULL, len, (const uint8_t *)body) : NULL;

		if (a && a->partial_success &&
		    (a->partial_success->rejected_profiles || a->partial_success->error_message[0]))
			snprintf(r->what + n, sizeof(r->what) - n, "; partial success: %lld profiles "
				 "rejected%s%.300s", (long long)a->partial_success->rejected_profiles,
				 a->partial_success->error_message[0] ? ": " : "",
				 a->partial_success->error_message);
		if (a)
			opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(a, NULL);
		return;
	}
	/* the protocol retries 429, 502, 503 and 504 only (and what never answered) */
	if (r->outcome == UPLOAD_RETRY && r->status >= 500 && r->status != 502 &&
	    r->status != 503 && r->status != 504)
		r->outcome = UPLOAD_REFUSED;
	if (len) {
		Google__Rpc__Status *s = google__rpc__status__unpack(NULL, len, (const uint8_t *)body);

		if (s && s->message[0])
			snprintf(r->what, sizeof(r->what), "HTTP %ld: %.400s", r->status, s->message);
		if (s)
			google__rpc__status__free_unpacked(s, NULL);
	}
}

const struct backend_ops backend_otlp = {
	.id = BACKEND_OTLP,
	.name = "otlp",
	.default_url = OTLP_DEFAULT,
	.usage = "otlp: OpenTelemetry profiles, OTLP/HTTP protobuf to\n"
		 "/v1development/profiles (default " OTLP_DEFAULT ",\n"
		 "$OTEL_EXPORTER_OTLP_ENDPOINT, or as it is\n"
		 "$OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT): a Collector,\n"
		 "Pyroscope...",
	.format = "otlp",
	.pprof_for = PPROF_FOR_NONE,
	.endpoint = otlp_endpoint,
	.prepare = otlp_prepare,
	.release = otlp_release,
	.secret = otlp_secret,
	.request = otlp_request,
	.answer = otlp_answer,
	/* the protocol: a client SHOULD hold a request to 64 MiB before compression */
	.limits = { 64ULL << 20, 0, "OTLP's 64 MiB a request", NULL },
	.headers = 1,
};
