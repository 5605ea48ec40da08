/* upload: a converted profile sent to Datadog, Pyroscope or Parca over libcurl.
 *
 * The requests are the backends' own (docs/BACKENDS.md names the code each shape was
 * read from): Datadog's multipart with an `event` part, Pyroscope's /ingest with the
 * labels in its `name`, Parca's /profiles/writeraw JSON with the profile in base64.
 */
#include "upload/upload.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "common/version.h"
#include "convert/labels.h"
#include "upload/backend.h"
#include "upload/transport.h"
#include "formats/write/pprof.h"

#define MAX_ANSWER 4096

/*
 * libcurl, opened by its soname when an uploader is made (the build has its headers
 * only): a conversion does not load it and the 27 libraries it needs (TLS, Kerberos,
 * LDAP, IDN, SSH...), whose loading and relocation took 4 ms of every run (16.5 M
 * instructions of `perfconv --version`, now 0.7 M). Its functions are called as
 * u->lc.NAME for curl_NAME.
 */
#define LIBCURL_SONAME "libcurl.so.4"
#define LIBCURL_FUNCS(X) \
	X(url) X(url_set) X(url_get) X(url_cleanup) X(free) X(easy_init) X(easy_cleanup) \
	X(easy_escape) X(easy_reset) X(easy_setopt) X(easy_perform) X(easy_getinfo) \
	X(easy_strerror) X(slist_append) X(slist_free_all) X(mime_init) X(mime_addpart) \
	X(mime_name) X(mime_filename) X(mime_type) X(mime_data) X(mime_free)
#define LC_MEMBER(f) __typeof__(&curl_##f) f;
struct libcurl {
	void *handle; /* dlopen's, kept open until the process ends */
	LIBCURL_FUNCS(LC_MEMBER)
};
#undef LC_MEMBER

/* Open libcurl into `lc`: 0, or -1 with the error said. */
static int libcurl_open(struct libcurl *lc, struct diag *d)
{
	const char *missing = NULL;
	void *f;

	lc->handle = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lc->handle) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "cannot upload: %s (Debian: apt install libcurl4)",
			   dlerror());
		return -1;
	}
#define LC_LOAD(name)                                \
	f = dlsym(lc->handle, "curl_" #name);        \
	if (f)                                       \
		memcpy(&lc->name, &f, sizeof(f));    \
	else if (!missing)                           \
		missing = "curl_" #name;
	LIBCURL_FUNCS(LC_LOAD)
#undef LC_LOAD
	if (missing) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "cannot upload: %s has no %s (too old a libcurl)",
			   LIBCURL_SONAME, missing);
		dlclose(lc->handle);
		lc->handle = NULL;
		return -1;
	}
	return 0;
}

struct uploader {
	struct upload_options o;
	const struct backend_ops *be;
	void *state;          /* the backend's (prepare) */
	struct libcurl lc;
	CURL *curl;
	char *url;            /* where requests go (http:// for a Unix socket) */
	char *unix_socket;    /* the agent's socket, or NULL */
	char *api_key;        /* Datadog intake, or NULL (the agent adds it) */
	int intake;           /* Datadog: straight to the intake */
	int loopback_peer;    /* each address connected must be loopback (transport.h) */
};

int upload_stop_init(struct upload_stop *s)
{
	sigset_t set;

	s->stopped = 0;
	s->signo = 0;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* a hangup (the terminal closed, or `systemctl reload`/`kill -HUP` of a service)
	 * ends the watcher as cleanly as SIGTERM: its default would kill it mid-rename */
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	s->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return s->fd < 0 ? -1 : 0;
}

int upload_stop_check(struct upload_stop *s)
{
	struct signalfd_siginfo si;

	if (!s)
		return 0;
	if (!s->stopped && s->fd >= 0 && read(s->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		s->stopped = 1;
		s->signo = (int)si.ssi_signo;
	}
	return s->stopped;
}

void upload_stop_release(struct upload_stop *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

const char *uploader_url(const struct uploader *u)
{
	return u->url;
}

/* The key's copy wiped before it is freed. NULL is fine. */
static void key_free(char *key)
{
	if (key) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
}

/*
 * --api-key-file, opened once without blocking (a FIFO would hang a service at its
 * start) and judged on that descriptor: a regular file, or NULL with errno set (EINVAL
 * for another kind). One others can read or write, or owned by another user than
 * perfconv's and root, is said: its key is not a secret any more, or not the
 * administrator's (ssh refuses such a key; a service that cannot start for it would
 * send nothing, so it is said and used).
 */
static FILE *open_key_file(const char *path, struct diag *d)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		diag_warn(d, NULL, DIAG_NO_OFFSET, "--api-key-file: the file is open to others "
			  "(mode %04o): the key should be its owner's alone (chmod 600)",
			  (unsigned)(st.st_mode & 07777));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		diag_warn(d, NULL, DIAG_NO_OFFSET, "--api-key-file: the file is owned by uid %u, "
			  "not by perfconv's user or root: whoever owns it chooses the key",
			  (unsigned)st.st_uid);
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/*
 * The key: $DD_API_KEY, or the first line of --api-key-file. NULL when none; -1 in
 * *bad (after saying why) when one is there but unusable. DD_API_KEY leaves the
 * environment whichever is used, its bytes overwritten (transport_env_take), and with a
 * key the process is made not dumpable before it is read: the key is kept out of core
 * dumps and of what its user reads in /proc/PID (environ, mem), and the copies libcurl
 * makes of the header, which perfconv cannot wipe, with it.
 */
static char *read_api_key(const struct upload_options *o, int *bad, struct diag *d)
{
	char *key = NULL, *env_key;

	*bad = 0;
	if ((o->api_key_file || (getenv("DD_API_KEY") && getenv("DD_API_KEY")[0])) &&
	    transport_hide_process() != 0) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "cannot keep the API key out of core dumps "
			   "(prctl PR_SET_DUMPABLE): %s", strerror(errno));
		*bad = 1;
		return NULL;
	}
	env_key = transport_env_take("DD_API_KEY");
	if (o->api_key_file) {
		FILE *f = open_key_file(o->api_key_file, d);
		char line[512];

		key_free(env_key);
		/* unbuffered: no copy of the key left in a stdio buffer freed unwiped */
		if (f)
			setvbuf(f, NULL, _IONBF, 0);
		if (!f || !fgets(line, sizeof(line), f)) {
			/* the path is not repeated: a key given in its place must not be shown */
			diag_error(d, NULL, DIAG_NO_OFFSET, "--api-key-file: cannot read the file: %s",
				   f ? "empty" : errno == EINVAL ? "not a regular file" : strerror(errno));
			if (f)
				fclose(f);
			*bad = 1;
			return NULL;
		}
		fclose(f);
		line[strcspn(line, "\r\n")] = '\0';
		key = xstrdup(line);
		explicit_bzero(line, sizeof(line));
	} else {
		key = env_key;
	}
	if (!key)
		return NULL;
	/* a header value: printable ASCII only, so nothing can be injected */
	for (const char *c = key; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f) {
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: the API key holds a character that is "
				   "not printable ASCII", o->api_key_file ? "--api-key-file" : "DD_API_KEY");
			key_free(key);
			*bad = 1;
			return NULL;
		}
	if (!key[0]) {
		free(key);
		return NULL;
	}
	return key;
}

/* base + path, without a doubled slash. */
static char *join_url(const char *base, const char *path)
{
	size_t n = strlen(base);
	char *s = xmalloc(n + strlen(path) + 1);

	while (n && base[n - 1] == '/')
		n--;
	memcpy(s, base, n);
	strcpy(s + n, path);
	return s;
}

/*
 * `text` read as an http:// or https:// URL without a user, a password or a query (a
 * secret in a URL ends up in logs and process lists): its scheme and host as libcurl
 * reads them (an IPv6 address in brackets), into *scheme and *host for lc.free. 0, or
 * -1 after saying why; `opt` is where the URL came from ("--url", "--proxy").
 */
static int url_parts(struct uploader *u, const char *text, const char *opt, char **scheme,
		     char **host, struct diag *d)
{
	CURLU *cu = u->lc.url();
	char *user = NULL, *query = NULL;
	int ok = cu && u->lc.url_set(cu, CURLUPART_URL, text, 0) == CURLUE_OK &&
		 u->lc.url_get(cu, CURLUPART_SCHEME, scheme, 0) == CURLUE_OK &&
		 u->lc.url_get(cu, CURLUPART_HOST, host, 0) == CURLUE_OK;
	int has_user = ok && u->lc.url_get(cu, CURLUPART_USER, &user, 0) == CURLUE_OK;
	int has_query = ok && u->lc.url_get(cu, CURLUPART_QUERY, &query, 0) == CURLUE_OK;

	u->lc.free(user);
	u->lc.free(query);
	if (cu)
		u->lc.url_cleanup(cu);
	if (!ok)
		diag_error(d, NULL, DIAG_NO_OFFSET, "%s: not a URL (http://HOST:PORT, https://HOST)",
			   text);
	else if (has_user || has_query)
		diag_error(d, NULL, DIAG_NO_OFFSET, "%s: no user, password or query in the URL "
			   "(API keys come from DD_API_KEY or --api-key-file)", opt);
	else if (strcmp(*scheme, "https") != 0 && strcmp(*scheme, "http") != 0)
		diag_error(d, NULL, DIAG_NO_OFFSET, "%s: the URL must be http:// or https://", text);
	else
		return 0;
	return -1;
}

/* Why `host` is not loopback when it looks like an address and is not one, between `pre`
 * and `post` ("127.0.0.1.5 is not an address but a name to look up"), else "" (192.0.2.1
 * is an address, just not loopback's). */
static const char *name_hint(const char *host, const char *pre, const char *post, char *buf,
			     size_t cap)
{
	struct in_addr a;

	buf[0] = '\0';
	if (host[0] && strspn(host, "0123456789.") == strlen(host) && inet_pton(AF_INET, host, &a) != 1)
		snprintf(buf, cap, "%s%s is not an address but a name to look up%s", pre, host, post);
	return buf;
}

struct uploader *uploader_new(const struct upload_options *o, struct diag *d)
{
	struct uploader *u = xcalloc(1, sizeof(*u));
	char buf[512], hint[300];
	const char *base, *path = "";
	char *scheme = NULL, *host = NULL, *pscheme = NULL, *phost = NULL;
	struct transport_route rt;
	const char *secret;
	int bad;

	/* libcurl would write each TLS session's keys to this file (vtls/keylog.c, read
	 * when it starts): whoever set it could read every request, the key's too */
	if (getenv("SSLKEYLOGFILE")) {
		diag_warn(d, NULL, DIAG_NO_OFFSET, "SSLKEYLOGFILE is set: not obeyed (libcurl "
			  "would write the TLS keys there, and with them every request)");
		unsetenv("SSLKEYLOGFILE");
	}
	if (libcurl_open(&u->lc, d) < 0) {
		free(u);
		return NULL;
	}
	u->o = *o;
	if (!u->o.timeout_s)
		u->o.timeout_s = 60;
	if (!u->o.retry_cap_s)
		u->o.retry_cap_s = 300;
	u->api_key = read_api_key(o, &bad, d);
	if (bad)
		goto fail;
	if (!(u->be = backend_of(o->backend))) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "no backend to upload to (--to)");
		goto fail;
	}
	u->be->endpoint(o, u->api_key != NULL, buf, sizeof(buf), &base, &path, &u->intake);
	if (u->be->prepare && u->be->prepare(o, &u->state, d) != 0)
		goto fail;
	if (!u->be->keeps_key) {
		/* the key is Datadog's: it must not travel to anyone else */
		key_free(u->api_key);
		u->api_key = NULL;
	}
	if (strncmp(base, "unix://", 7) == 0) {
		if (!u->be->unix_socket || !base[7]) {
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: a unix:// socket is the Datadog agent's only",
				   base);
			goto fail;
		}
		if (o->proxy) {
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: the agent's socket is reached without a "
				   "proxy: no --proxy", base);
			goto fail;
		}
		u->unix_socket = xstrdup(base + 7);
		u->url = join_url("http://localhost", path);
		return u;
	}
	if (url_parts(u, base, "--url", &scheme, &host, d) != 0 ||
	    (o->proxy && url_parts(u, o->proxy, "--proxy", &pscheme, &phost, d) != 0))
		goto fail;
	/* every secret the requests carry, not the key alone: a token is as readable on
	 * the way as the key is */
	secret = u->api_key ? "an API key" :
		 u->be->secret && u->state ? u->be->secret(u->state) : NULL;
	memset(&rt, 0, sizeof(rt));
	rt.https = strcmp(scheme, "https") == 0;
	rt.host = host;
	rt.proxy_host = phost;
	rt.secret = secret != NULL;
	rt.allow_http = o->allow_http;
	switch (transport_route_check(&rt, &u->loopback_peer)) {
	case TRANSPORT_OK:
		break;
	case TRANSPORT_SECRET_IN_CLEAR:
		if (o->proxy)
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s through --proxy %s: %s goes "
				   "through a proxy only to an https:// URL (the proxy reads an http:// "
				   "request), or with the proxy on loopback and the URL's host a loopback "
				   "address, --allow-http or not (it lets a profile go in clear, never a "
				   "secret): use https://", base, o->proxy, secret);
		else
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: %s is sent only over https:// "
				   "(or to loopback%s), --allow-http or not (it lets a profile go in "
				   "clear, never a secret): use https://, or a receiver on this "
				   "machine", base, secret, name_hint(host, ": ", "", hint, sizeof(hint)));
		goto fail;
	default:
		if (o->proxy)
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s through --proxy %s: http:// through a "
				   "proxy not on loopback, or to a host that is not a loopback address, "
				   "sends the profile unencrypted; use https:// or say --allow-http",
				   base, o->proxy);
		else
			diag_error(d, NULL, DIAG_NO_OFFSET, "%s: http:// to a host not on loopback sends "
				   "the profile unencrypted%s; use https:// or say --allow-http", base,
				   name_hint(host, " (", ")", hint, sizeof(hint)));
		goto fail;
	}
	u->url = join_url(base, path);
	u->lc.free(scheme);
	u->lc.free(host);
	u->lc.free(pscheme);
	u->lc.free(phost);
	return u;
fail:
	u->lc.free(scheme);
	u->lc.free(host);
	u->lc.free(pscheme);
	u->lc.free(phost);
	uploader_free(u);
	return NULL;
}

void uploader_free(struct uploader *u)
{
	if (!u)
		return;
	if (u->curl)
		u->lc.easy_cleanup(u->curl);
	/* libcurl stays loaded (no dlclose): its TLS library's exit handlers run at exit */
	if (u->state && u->be && u->be->release)
		u->be->release(u->state);
	key_free(u->api_key);
	free(u->unix_socket);
	free(u->url);
	free(u);
}

struct answer {
	char body[MAX_ANSWER];
	size_t len;
	long retry_after_s;
	char refused_peer[64];  /* an address not connected to for not being loopback */
	char location[200];     /* a 3xx's Location, printable */
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t len = size * n, room = sizeof(a->body) - 1 - a->len;

	memcpy(a->body + a->len, data, len < room ? len : room);
	a->len += len < room ? len : room;
	a->body[a->len] = '\0';
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t len = size * n;

	if (len > 12 && strncasecmp(data, "Retry-After:", 12) == 0) {
		char *end;
		long v = strtol(data + 12, &end, 10);

		if (end != data + 12 && v >= 0)
			a->retry_after_s = v;
	}
	if (len > 9 && strncasecmp(data, "Location:", 9) == 0) {
		size_t k = 0;

		for (const char *c = data + 9; c < data + len && k + 1 < sizeof(a->location); c++)
			if (*c != ' ' && *c != '\r' && *c != '\n')
				a->location[k++] = *c;
		a->location[k] = '\0';
	}
	return len;
}

/* What a status that turns the request down means, for the message; NULL for one that
 * judges the profile. */
static const char *denied_why(long status)
{
	switch (status) {
	case 401:
	case 403: return "the API key or the tenant is refused: wrong, expired or without the right";
	case 404:
	case 405: return "no such endpoint: is --url the backend's base, and --to its kind?";
	case 407: return "the proxy asks for a login, which --proxy does not give";
	default: return status >= 300 && status < 400 ? "a redirect, not followed: give where it "
			 "leads as --url" : NULL;
	}
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)dt, (void)dn, (void)ut, (void)un;
	return upload_stop_check(ctx);
}

/*
 * libcurl's sockets, for a route allowed for being on loopback (u->loopback_peer): a
 * socket is opened only to a loopback address. The URL's text was judged, but the
 * resolver has the last word on where a name goes (a libcurl older than 7.78 asks it
 * even for localhost), so the address itself is judged, before connect(): nothing, not
 * even a SYN, goes to another host. libcurl then tries the name's next address, or
 * fails with CURLE_COULDNT_CONNECT, which uploader_send reports as a refusal.
 */
static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *addr)
{
	struct answer *a = ctx;

	(void)purpose;
	if (!transport_addr_is_loopback(&addr->addr, addr->addrlen)) {
		transport_addr_text(&addr->addr, addr->addrlen, a->refused_peer,
				    sizeof(a->refused_peer));
		return CURL_SOCKET_BAD;
	}
	return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* The answer's first line, printable, for a message. */
static void first_line(char *dst, size_t cap, const char *body)
{
	size_t n = 0;

	while (*body == ' ' || *body == '\n' || *body == '\r')
		body++;
	for (; *body && *body != '\n' && *body != '\r' && n + 1 < cap && n < 300; body++)
		dst[n++] = (unsigned char)*body < 0x20 ? ' ' : *body;
	dst[n] = '\0';
}

const char *uploader_age_limit(const struct uploader *u)
{
	return u->be->age_limit;
}

const struct upload_limits *uploader_limits(const struct uploader *u)
{
	return &u->be->limits;
}

/* What a backend made for a request freed, its key's header wiped first. */
static void request_release(struct backend_request *rq)
{
	for (size_t i = 0; i < rq->nheaders; i++) {
		explicit_bzero(rq->headers[i], strlen(rq->headers[i]));
		free(rq->headers[i]);
	}
	if (rq->owned)
		cJSON_free(rq->owned);
	free(rq->url);
	memset(rq, 0, sizeof(*rq));
}

/* The request `p` makes through the backend, on u->curl: its URL, headers (the key's
 * among them, wiped by the caller) and body, as a form or as one body. */
static struct curl_slist *set_request(struct uploader *u, const struct backend_ctx *ctx,
				      const struct upload_profile *p, struct backend_request *rq,
				      curl_mime **mime)
{
	struct curl_slist *hdr = NULL;
	char line[400];

	hdr = u->lc.slist_append(hdr, "Expect:");
	snprintf(line, sizeof(line), "User-Agent: perfconv/%s", PERFCONV_VERSION);
	hdr = u->lc.slist_append(hdr, line);
	memset(rq, 0, sizeof(*rq));
	u->be->request(ctx, p, rq);
	u->lc.easy_setopt(u->curl, CURLOPT_URL, rq->url ? rq->url : u->url);
	for (size_t i = 0; i < rq->nheaders; i++)
		hdr = u->lc.slist_append(hdr, rq->headers[i]);
	if (rq->nparts) {
		*mime = u->lc.mime_init(u->curl);
		for (size_t i = 0; i < rq->nparts; i++) {
			curl_mimepart *part = u->lc.mime_addpart(*mime);

			u->lc.mime_name(part, rq->parts[i].name);
			u->lc.mime_filename(part, rq->parts[i].filename);
			u->lc.mime_type(part, rq->parts[i].type);
			u->lc.mime_data(part, rq->parts[i].data, rq->parts[i].len);
		}
		u->lc.easy_setopt(u->curl, CURLOPT_MIMEPOST, *mime);
	} else {
		snprintf(line, sizeof(line), "Content-Type: %s", rq->content_type);
		hdr = u->lc.slist_append(hdr, line);
		u->lc.easy_setopt(u->curl, CURLOPT_POSTFIELDS, (const char *)rq->body);
		u->lc.easy_setopt(u->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	}
	if (u->unix_socket)
		u->lc.easy_setopt(u->curl, CURLOPT_UNIX_SOCKET_PATH, u->unix_socket);
	u->lc.easy_setopt(u->curl, CURLOPT_HTTPHEADER, hdr);
	return hdr;
}

/* Where the request may go and how: proxies, TLS, protocols, time limits, and the
 * callbacks that read the answer into `a` and stop at `stop`. */
static void set_transport(struct uploader *u, struct answer *a, struct upload_stop *stop)
{
	/* --proxy or no proxy: libcurl would otherwise obey http_proxy, ALL_PROXY and the
	 * like (and NO_PROXY's exceptions to --proxy), sending the request, key and all,
	 * where uploader_new's rules never looked. "" is libcurl's "none" for both. */
	u->lc.easy_setopt(u->curl, CURLOPT_PROXY, u->o.proxy ? u->o.proxy : "");
	u->lc.easy_setopt(u->curl, CURLOPT_NOPROXY, "");
	/* the request's headers (the key) go to the server only, never into a CONNECT to
	 * the proxy: libcurl's default since 7.42.1, stated */
	u->lc.easy_setopt(u->curl, CURLOPT_HEADEROPT, (long)CURLHEADER_SEPARATE);
	/* a libcurl without the option (none since 7.17.1, older than curl_url, which this
	 * needs) connects unchecked: the URL's text, judged by uploader_new, stands alone */
	if (u->loopback_peer) {
		u->lc.easy_setopt(u->curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
		u->lc.easy_setopt(u->curl, CURLOPT_OPENSOCKETDATA, a);
	}
	/* verified TLS, always, to the proxy too: libcurl's default, stated so that no
	 * later edit loses it */
	u->lc.easy_setopt(u->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	u->lc.easy_setopt(u->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	u->lc.easy_setopt(u->curl, CURLOPT_PROXY_SSL_VERIFYPEER, 1L);
	u->lc.easy_setopt(u->curl, CURLOPT_PROXY_SSL_VERIFYHOST, 2L);
	u->lc.easy_setopt(u->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	u->lc.easy_setopt(u->curl, CURLOPT_FOLLOWLOCATION, 0L);
	u->lc.easy_setopt(u->curl, CURLOPT_NOSIGNAL, 1L);
	u->lc.easy_setopt(u->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	u->lc.easy_setopt(u->curl, CURLOPT_TIMEOUT, u->o.timeout_s);
	u->lc.easy_setopt(u->curl, CURLOPT_WRITEFUNCTION, on_body);
	u->lc.easy_setopt(u->curl, CURLOPT_WRITEDATA, a);
	u->lc.easy_setopt(u->curl, CURLOPT_HEADERFUNCTION, on_header);
	u->lc.easy_setopt(u->curl, CURLOPT_HEADERDATA, a);
	u->lc.easy_setopt(u->curl, CURLOPT_NOPROGRESS, 0L);
	u->lc.easy_setopt(u->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	u->lc.easy_setopt(u->curl, CURLOPT_XFERINFODATA, stop);
}

/* A whole answer judged: its status, then what the backend says of the profile. */
static void judge_answer(struct uploader *u, const struct backend_ctx *ctx,
			 const struct upload_profile *p, const struct answer *a,
			 struct upload_result *r)
{
	char line[400];

	u->lc.easy_getinfo(u->curl, CURLINFO_RESPONSE_CODE, &r->status);
	r->retry_after_s = a->retry_after_s;
	first_line(line, sizeof(line), a->body);
	snprintf(r->what, sizeof(r->what), "HTTP %ld%s%s", r->status, line[0] ? ": " : "", line);
	if (r->status >= 200 && r->status < 300)
		r->outcome = UPLOAD_SENT;
	else if (r->status == 408 || r->status == 429 || r->status >= 500)
		r->outcome = UPLOAD_RETRY;
	else if (denied_why(r->status))
		r->outcome = UPLOAD_DENIED;
	else
		r->outcome = UPLOAD_REFUSED;
	if (r->outcome == UPLOAD_DENIED) {
		size_t n = strlen(r->what);

		snprintf(r->what + n, sizeof(r->what) - n, " (%s%s%s)", denied_why(r->status),
			 a->location[0] ? "; it leads to " : "", a->location);
	}
	/* what the backend's answer says of the profile: too old is too old whatever
	 * the status, never tried again; too large (a 413 from anyone) is not in
	 * smaller parts */
	if (u->be->answer)
		u->be->answer(ctx, p, a->body, a->len, r);
	if (r->outcome != UPLOAD_SENT) {
		r->too_large |= !r->too_old && r->status == 413;
		if (r->too_old || r->too_large)
			r->outcome = UPLOAD_REFUSED;
	}
}

/* No whole answer: libcurl's error `rc` judged. */
static void judge_failure(struct uploader *u, CURLcode rc, const struct answer *a,
			  struct upload_result *r)
{
	long status = 0;

	if (u->lc.easy_getinfo(u->curl, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK &&
	    status >= 200 && status < 300) {
		/* the backend took the profile and said so: the answer's body cut short
		 * (a reset, a Content-Length not kept, a timeout) does not undo that, and
		 * sending it again would file it twice */
		r->status = status;
		r->outcome = UPLOAD_SENT;
		snprintf(r->what, sizeof(r->what), "HTTP %ld (the answer was then cut short: %s)",
			 status, u->lc.easy_strerror(rc));
	} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
		r->outcome = UPLOAD_STOPPED;
		snprintf(r->what, sizeof(r->what), "stopped");
	} else if (rc == CURLE_COULDNT_CONNECT && a->refused_peer[0]) {
		/* no address was connected to, and one was refused for not being loopback:
		 * sending again would go where it went */
		r->outcome = UPLOAD_REFUSED;
		snprintf(r->what, sizeof(r->what), "%s led to %s, which is not loopback: nothing "
			 "sent (http:// goes only to loopback with a secret, an API key or OTLP "
			 "headers, or without --allow-http)", u->o.proxy ? u->o.proxy : u->url,
			 a->refused_peer);
	} else {
		switch (rc) {
		case CURLE_URL_MALFORMAT:
		case CURLE_UNSUPPORTED_PROTOCOL:
		case CURLE_PEER_FAILED_VERIFICATION:
		case CURLE_SSL_CERTPROBLEM:
		case CURLE_SSL_CACERT_BADFILE:
			/* sending it again would fail the same way */
			r->outcome = UPLOAD_REFUSED;
			break;
		default:
			r->outcome = UPLOAD_RETRY;
		}
		snprintf(r->what, sizeof(r->what), "%s", u->lc.easy_strerror(rc));
	}
}

int uploader_send(struct uploader *u, const struct upload_profile *p,
		  struct upload_stop *stop, struct upload_result *r)
{
	struct backend_ctx ctx = { &u->o, u->url, u->api_key, u->intake, u->state };
	struct backend_request rq;
	struct curl_slist *hdr;
	curl_mime *mime = NULL;
	struct answer a;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	memset(&a, 0, sizeof(a));
	a.retry_after_s = -1;
	if (!u->curl)
		u->curl = u->lc.easy_init();
	if (!u->curl) {
		r->outcome = UPLOAD_RETRY;
		snprintf(r->what, sizeof(r->what), "libcurl could not start");
		return r->outcome;
	}
	u->lc.easy_reset(u->curl);
	hdr = set_request(u, &ctx, p, &rq, &mime);
	set_transport(u, &a, stop);
	rc = u->lc.easy_perform(u->curl);
	if (rc == CURLE_OK)
		judge_answer(u, &ctx, p, &a, r);
	else
		judge_failure(u, rc, &a, r);
	/* the key's header wiped (libcurl's own copies go with the process's memory, which
	 * no one else reads: read_api_key) */
	for (struct curl_slist *h = hdr; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	u->lc.slist_free_all(hdr);
	u->lc.mime_free(mime);
	request_release(&rq);
	return r->outcome;
}

static void wait_s(unsigned s, struct upload_stop *stop)
{
	for (unsigned i = 0; i < s * 10 && !upload_stop_check(stop); i++) {
		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL);
	}
}

int uploader_send_retrying(struct uploader *u, const struct upload_profile *p, int max_tries,
			   struct upload_stop *stop, upload_retry_fn on_retry, void *ctx,
			   struct upload_result *r)
{
	unsigned backoff = 1;

	for (int tries = 1;; tries++) {
		unsigned wait;

		if (uploader_send(u, p, stop, r) != UPLOAD_RETRY)
			return r->outcome;
		if (max_tries && tries >= max_tries)
			return r->outcome;
		wait = backoff;
		/* the backend's Retry-After, but no longer than --retry-cap */
		if (r->retry_after_s >= 0)
			wait = r->retry_after_s > u->o.retry_cap_s ? u->o.retry_cap_s :
			       (unsigned)r->retry_after_s;
		if (on_retry && on_retry(ctx, r, wait)) {
			r->outcome = UPLOAD_ABANDONED;
			return r->outcome;
		}
		wait_s(wait, stop);
		if (upload_stop_check(stop)) {
			r->outcome = UPLOAD_STOPPED;
			return r->outcome;
		}
		backoff = backoff * 2 > u->o.retry_cap_s ? u->o.retry_cap_s : backoff * 2;
	}
}

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(data, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

int uploader_dry_run(struct uploader *u, const struct upload_profile *p, FILE *head,
		     const char *body_prefix)
{
	struct backend_ctx ctx = { &u->o, u->url, u->api_key, u->intake, u->state };
	struct backend_request rq;
	char *path = xmalloc((body_prefix ? strlen(body_prefix) : 0) + 300);
	int ret = 0;

	memset(&rq, 0, sizeof(rq));
	u->be->request(&ctx, p, &rq);
	fprintf(head, "POST %s%s%s\n", rq.url ? rq.url : u->url, u->unix_socket ? " via " : "",
		u->unix_socket ? u->unix_socket : "");
	if (!rq.nparts)
		fprintf(head, "Content-Type: %s\n", rq.content_type);
	for (size_t i = 0; i < rq.nheaders; i++) {
		if (rq.secret & (1u << i))
			fprintf(head, "%.*s: <redacted>\n", (int)strcspn(rq.headers[i], ":"),
				rq.headers[i]);
		else
			fprintf(head, "%s\n", rq.headers[i]);
	}
	if (rq.nparts)
		fprintf(head, "Content-Type: multipart/form-data\n");
	for (size_t i = 0; i < rq.nparts; i++) {
		const struct backend_part *pt = &rq.parts[i];

		/* a JSON part is shown (it holds no secret), others are sized */
		if (strcmp(pt->type, "application/json") == 0)
			fprintf(head, "part %s (%s, %s): %.*s\n", pt->name, pt->filename, pt->type,
				(int)pt->len, (const char *)pt->data);
		else
			fprintf(head, "part %s (%s, %s): %zu bytes\n", pt->name, pt->filename,
				pt->type, pt->len);
		if (body_prefix) {
			snprintf(path, strlen(body_prefix) + 300, "%s.%s", body_prefix, pt->filename);
			ret |= write_file(path, pt->data, pt->len);
		}
	}
	if (!rq.nparts) {
		fprintf(head, "body: %zu bytes of %s\n", rq.len, rq.body_what);
		if (body_prefix) {
			snprintf(path, strlen(body_prefix) + 300, "%s.%s", body_prefix, rq.body_suffix);
			ret |= write_file(path, rq.body, rq.len);
		}
	}
	if (u->o.proxy)
		fprintf(head, "proxy: %s (%s)\n", u->o.proxy,
			strncasecmp(u->url, "https://", 8) == 0 ?
			"a CONNECT tunnel: TLS to the target, which the proxy cannot read" :
			"http://: the proxy reads the request");
	request_release(&rq);
	free(path);
	if (fflush(head) != 0)
		ret = -1;
	return ret;
}
