/* transport: where an upload's request may travel in clear, and its secrets kept out of
 * the environment and core dumps. */
#include "upload/transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/util.h"

static int in6_is_loopback(const struct in6_addr *a)
{
	/* ::ffff:127.0.0.1 is 127.0.0.1 to a dual-stack socket; ::127.0.0.1 (the
	 * deprecated IPv4-compatible form) is not */
	return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int transport_host_is_loopback(const char *host, int names)
{
	struct in_addr a4;
	struct in6_addr a6;
	char buf[INET6_ADDRSTRLEN + 1];
	size_t n = strlen(host);

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		if (n - 2 >= sizeof(buf))
			return 0;
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		return inet_pton(AF_INET6, buf, &a6) == 1 && in6_is_loopback(&a6);
	}
	/* exactly four decimal parts: inet_aton's 127.1 and 0x7f.1 are not taken (libcurl's
	 * URL parser already writes those as 127.0.0.1) */
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return in6_is_loopback(&a6);
	if (!names)
		return 0;
	return strcasecmp(host, "localhost") == 0 ||
	       (n > 10 && strcasecmp(host + n - 10, ".localhost") == 0);
}

int transport_addr_is_loopback(const struct sockaddr *sa, size_t len)
{
	struct sockaddr_storage ss;

	/* copied: libcurl's address lies in a struct sockaddr whose storage is larger
	 * than its type says */
	if (len > sizeof(ss) || len < sizeof(sa_family_t))
		return 0;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, sa, len);
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in))
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
		return in6_is_loopback(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return 0;
}

const char *transport_addr_text(const struct sockaddr *sa, size_t len, char *buf, size_t cap)
{
	struct sockaddr_storage ss;
	const void *a = NULL;

	snprintf(buf, cap, "?");
	if (len > sizeof(ss) || len < sizeof(sa_family_t))
		return buf;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, sa, len);
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in))
		a = &((struct sockaddr_in *)&ss)->sin_addr;
	else if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
		a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	if (a && !inet_ntop(ss.ss_family, a, buf, (socklen_t)cap))
		snprintf(buf, cap, "?");
	return buf;
}

int transport_route_check(const struct transport_route *rt, int *loopback_peer)
{
	int local;

	*loopback_peer = 0;
	if (rt->https)
		return TRANSPORT_OK;
	if (rt->proxy_host)
		local = transport_host_is_loopback(rt->proxy_host, 1) &&
			transport_host_is_loopback(rt->host, 0);
	else
		local = transport_host_is_loopback(rt->host, 1);
	if (local) {
		/* allowed for being on loopback: what is connected is checked too, unless
		 * --allow-http would have allowed it anyway */
		*loopback_peer = rt->secret || !rt->allow_http;
		return TRANSPORT_OK;
	}
	/* --allow-http is for the profile: a secret read on the way is everyone's */
	if (rt->secret)
		return TRANSPORT_SECRET_IN_CLEAR;
	return rt->allow_http ? TRANSPORT_OK : TRANSPORT_PLAIN;
}

char *transport_env_take(const char *name)
{
	size_t n = strlen(name);
	const char *v = getenv(name);
	char *copy = v && v[0] ? xstrdup(v) : NULL;

	/* every entry of that name (an environment may hold one twice), in place */
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			explicit_bzero(*e + n + 1, strlen(*e + n + 1));
	unsetenv(name);
	return copy;
}

int transport_hide_process(void)
{
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
