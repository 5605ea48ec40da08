/* backend: one backend's part of an upload, behind one interface (upload/datadog.c,
 * pyroscope.c, parca.c): where its requests go, the request a profile makes, what its
 * answers mean beyond their status, and the limits it holds a profile to. The transport
 * (upload/upload.c) sends what they make and retries; no backend knows another. */
#ifndef PERFCONV_BACKEND_H
#define PERFCONV_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "upload/upload.h"
#include "upload/uploadparts.h"

/* Headers a request has at most. */
#define BACKEND_MAX_HEADERS 24

/* A request as a backend makes it; the transport sends it as it is. */
struct backend_request {
	char *url;                 /* owned; NULL: the uploader's URL */
	char *headers[BACKEND_MAX_HEADERS]; /* "Name: value", owned */
	size_t nheaders;
	uint32_t secret;           /* bit i: headers[i] holds a secret (a key, a token): its
				      value shown as <redacted> by --dry-run (all are wiped) */
	/* the body: one (content_type set), or the parts of a multipart/form-data */
	const char *content_type;
	const void *body;
	size_t len;
	const char *body_what;     /* for --dry-run: "gzipped pprof", "JSON" */
	const char *body_suffix;   /* --dry-run -o PREFIX writes it to PREFIX.SUFFIX */
	struct backend_part {
		const char *name, *filename, *type; /* a part's file is PREFIX.FILENAME */
		const void *data;
		size_t len;
	} parts[2];
	size_t nparts;
	char *owned;               /* what the body or a part was made in: freed (cJSON_free) */
};

/* What a backend is told of the uploader it makes requests for. */
struct backend_ctx {
	const struct upload_options *o;
	const char *url;           /* where requests go: base and path */
	const char *api_key;       /* Datadog's intake's key, or NULL */
	int intake;                /* Datadog: straight to its intake */
	void *state;               /* what the backend's prepare made, or NULL */
};

struct backend_ops {
	int id;                    /* enum backend */
	const char *name;          /* --to's word */
	const char *default_url;   /* where its requests go without --url or the
				      environment's word */
	/* its paragraph of upload --help's --to (lines split by '\n', the default URL
	 * in it): where its requests go, from what */
	const char *usage;
	int pprof_for;             /* the pprof's shape (enum pprof_for, formats/write/pprof.h) */
	const char *format;        /* the output format its profiles are written in ("pprof",
				      "otlp"); gzipped either way */
	int keeps_key;             /* the API key is its own (Datadog's); else it is dropped */
	int unix_socket;           /* a unix:// URL is its (Datadog's agent) */
	/*
	 * Where requests go: the base (--url, else from the environment or its default,
	 * written into buf when made) and the path joined to it; *intake set when a key
	 * sends them elsewhere. `key`: one was given.
	 */
	void (*endpoint)(const struct upload_options *o, int key, char *buf, size_t cap,
			 const char **base, const char **path, int *intake);
	/* What the backend reads once, before any request (OTLP's headers): 0 with *state
	 * set (freed by release), or -1 after saying why. May be NULL. */
	int (*prepare)(const struct upload_options *o, void **state, struct diag *d);
	void (*release)(void *state);
	/*
	 * The secret every request carries besides Datadog's key (which the uploader
	 * counts itself), named for messages ("OTLP's headers (from
	 * $OTEL_EXPORTER_OTLP_HEADERS)"), or NULL for none: the transport's rules keep it
	 * off http:// to another host as they keep the key (transport_route_check). Read
	 * after prepare. May be NULL: the backend sends no secret.
	 */
	const char *(*secret)(const void *state);
	void (*request)(const struct backend_ctx *c, const struct upload_profile *p,
			struct backend_request *rq);
	/*
	 * An answer, read for what it means beyond its status (r->outcome and r->what set
	 * from the status): sets r->too_old or r->too_large (a 413 is too large whatever the
	 * backend), may make a retry a refusal (a status its protocol says not to retry) or
	 * add to r->what (a 2xx's partial success). `len` bytes of it (the transport keeps
	 * the first 4 KiB). May be NULL.
	 */
	void (*answer)(const struct backend_ctx *c, const struct upload_profile *p,
		       const char *body, size_t len, struct upload_result *r);
	struct upload_limits limits;
	const char *age_limit;     /* as backend.h's uploader_age_limit says it, or NULL */
	int headers;               /* its requests carry the user's headers (--header) */
};

extern const struct backend_ops backend_datadog, backend_pyroscope, backend_parca, backend_otlp;
/* Every backend, NULL-terminated: --to's words, in the order its help lists them. */
extern const struct backend_ops *const backends[];

/* The backend of id `backend` (enum backend), or NULL. */
const struct backend_ops *backend_of(int backend);
/* The backend `name` names ("datadog", "pyroscope", "parca"), or 0. */
int backend_by_name(const char *name);
const char *backend_name(int backend);
/* The names of the backends (those with `headers` set, when headers_only) into
 * buf[0..cap): "a, b or c" with `sep` ", " and `last` " or ", or "a|b|c". */
void backend_names(char *buf, size_t cap, const char *sep, const char *last, int headers_only);
/* The pprof flavour (enum pprof_for) an upload to `backend` is written in. */
int backend_pprof_for(int backend);


/* A value that came from the recording, made safe for a name or a tag list: a control
 * character, ',', '{' and '}' become '_'; cut to cap - 1 bytes. */
void upload_tag_value(char *dst, size_t cap, const char *v);
/* The profile's service, or the default one ("perfconv"). */
const char *upload_service(const struct upload_profile *p);
/* The machine perfconv was built for, as uname -m names it ("x86_64"). */
const char *upload_host_arch(void);
/* `s` percent-encoded for a URL's query (all but A-Z a-z 0-9 - . _ ~); freed with free. */
char *upload_url_escape(const char *s);
/* "Name: value" in a new string. */
char *upload_header(const char *name, const char *value);

#endif
