/* transport: where an upload's request may travel in clear, and its secrets kept out of
 * the environment and core dumps (the rules upload/upload.c applies to libcurl). */
#ifndef PERFCONV_TRANSPORT_H
#define PERFCONV_TRANSPORT_H

#include <stddef.h>
#include <sys/socket.h>

/*
 * Is `host`, a URL's host as libcurl gives it (a name, an IPv4 address, an IPv6
 * address in brackets or without), this machine's loopback? An address is read as an
 * address (inet_pton): IPv4 in dotted-quad exactly, 127.0.0.0/8; IPv6 ::1, or
 * ::ffff:127.x.y.z mapped. Any other text, 127.0.0.1.5 or 127.0.0.256 as well, is a
 * name that a resolver looks up (the hosts file, DNS and its search domains) and may
 * send anywhere: not loopback. With `names`, also "localhost" and names ending in
 * ".localhost" (not "localhost."), which libcurl resolves to 127.0.0.1 and ::1 itself
 * without asking the resolver (localhost since 7.78, *.localhost since 7.85); pass 0
 * where another program resolves the name (a proxy).
 */
int transport_host_is_loopback(const char *host, int names);

/* Is `sa` (`len` bytes) a loopback address: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104? */
int transport_addr_is_loopback(const struct sockaddr *sa, size_t len);

/* `sa` as text ("192.0.2.7", "2001:db8::1"), into `buf` of `cap` bytes; "?" when it is
 * neither IPv4 nor IPv6. Returns buf. */
const char *transport_addr_text(const struct sockaddr *sa, size_t len, char *buf, size_t cap);

/* A request's route: the URL's scheme and host, and the proxy's when there is one. */
struct transport_route {
	int https;                /* the URL is https:// */
	const char *host;         /* the URL's host (libcurl's CURLUPART_HOST) */
	const char *proxy_host;   /* --proxy's host, or NULL: no proxy */
	int secret;               /* the request carries a secret: Datadog's API key, OTLP's
				     headers (a token), whatever credential a backend sends */
	int allow_http;           /* --allow-http */
};

enum transport_verdict {
	TRANSPORT_OK = 0,
	TRANSPORT_SECRET_IN_CLEAR, /* a secret would travel unencrypted off this machine */
	TRANSPORT_PLAIN,          /* the profile would, and --allow-http was not said */
};

/*
 * May `rt` carry the request? An https:// URL always may: TLS verified end to end,
 * through a proxy too (an http:// proxy gets a CONNECT naming host and port and
 * relays bytes it cannot read; libcurl sends the request's own headers, the secrets
 * among them, inside the tunnel only). An http:// URL is read by every hop: without a
 * proxy it may go to a loopback host (names too: libcurl resolves localhost itself);
 * through a proxy, the proxy (http:// or https://: either reads the request) must be
 * on loopback and the host a loopback address (the proxy resolves a name, libcurl does
 * not). Else a secret never, allow_http or not, and the profile only with allow_http.
 *
 * *loopback_peer is set when the route was allowed for being on loopback (an http://
 * URL, with a secret or without allow_http): the caller must then check each address
 * it connects to (the proxy's, else the host's) with transport_addr_is_loopback
 * before a byte is sent, for the resolver has the last word on where a name goes.
 */
int transport_route_check(const struct transport_route *rt, int *loopback_peer);

/*
 * The value of the environment variable `name`, copied (the caller wipes and frees
 * it), or NULL when it is unset or empty. Either way the variable is gone from the
 * environment after, and its value's bytes are overwritten with zeros where they lie:
 * /proc/PID/environ shows the block the process started with, which unsetenv() alone
 * leaves as it was, and a child would inherit it.
 */
char *transport_env_take(const char *name);

/*
 * Make the process not dumpable (prctl PR_SET_DUMPABLE 0), because it holds a secret:
 * no core dump, and /proc/PID/environ, mem and the like are root's, not its user's.
 * 0, or -1 with errno set.
 */
int transport_hide_process(void);

#endif
