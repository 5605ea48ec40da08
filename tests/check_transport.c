/* check_transport: what is loopback, which routes may carry a request in clear, and the
 * API key taken out of the environment. */
#include <check.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/un.h>

#include "upload/transport.h"
#include "tests/testutil.h"

START_TEST(hosts)
{
	/* addresses, read as addresses */
	ck_assert_int_eq(transport_host_is_loopback("127.0.0.1", 0), 1);
	ck_assert_int_eq(transport_host_is_loopback("127.255.255.254", 0), 1);
	ck_assert_int_eq(transport_host_is_loopback("[::1]", 0), 1);
	ck_assert_int_eq(transport_host_is_loopback("::1", 0), 1);
	ck_assert_int_eq(transport_host_is_loopback("[::ffff:127.0.0.1]", 0), 1);
	ck_assert_int_eq(transport_host_is_loopback("[0:0:0:0:0:0:0:1]", 0), 1);
	ck_assert_int_eq(transport_host_is_loopback("128.0.0.1", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("0.0.0.0", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("[::ffff:10.0.0.1]", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("[::127.0.0.1]", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("[::2]", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("[::1", 1), 0);
	/* names a resolver looks up, however they look */
	ck_assert_int_eq(transport_host_is_loopback("127.0.0.1.5", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("127.0.0.256", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("127.999.999.999", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("127.1", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("127.0.0.1.example.com", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("localhost.", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("localhost.example", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("notlocalhost", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback(".localhost", 1), 0);
	ck_assert_int_eq(transport_host_is_loopback("", 1), 0);
	/* the names libcurl resolves itself, only when libcurl is the one resolving */
	ck_assert_int_eq(transport_host_is_loopback("localhost", 1), 1);
	ck_assert_int_eq(transport_host_is_loopback("LocalHost", 1), 1);
	ck_assert_int_eq(transport_host_is_loopback("agent.localhost", 1), 1);
	ck_assert_int_eq(transport_host_is_loopback("localhost", 0), 0);
	ck_assert_int_eq(transport_host_is_loopback("agent.localhost", 0), 0);
}
END_TEST

START_TEST(addresses)
{
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
	struct sockaddr_un un;
	char buf[64];

	memset(&in4, 0, sizeof(in4));
	in4.sin_family = AF_INET;
	inet_pton(AF_INET, "127.3.4.5", &in4.sin_addr);
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in4, sizeof(in4)), 1);
	ck_assert_str_eq(transport_addr_text((struct sockaddr *)&in4, sizeof(in4), buf, sizeof(buf)),
			 "127.3.4.5");
	/* too short for its family */
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in4, 4), 0);
	inet_pton(AF_INET, "192.0.2.7", &in4.sin_addr);
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in4, sizeof(in4)), 0);
	ck_assert_str_eq(transport_addr_text((struct sockaddr *)&in4, sizeof(in4), buf, sizeof(buf)),
			 "192.0.2.7");

	memset(&in6, 0, sizeof(in6));
	in6.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in6, sizeof(in6)), 1);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in6, sizeof(in6)), 1);
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &in6.sin6_addr);
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in6, sizeof(in6)), 0);
	inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&in6, sizeof(in6)), 0);
	ck_assert_str_eq(transport_addr_text((struct sockaddr *)&in6, sizeof(in6), buf, sizeof(buf)),
			 "2001:db8::1");

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	ck_assert_int_eq(transport_addr_is_loopback((struct sockaddr *)&un, sizeof(un)), 0);
	ck_assert_str_eq(transport_addr_text((struct sockaddr *)&un, sizeof(un), buf, sizeof(buf)), "?");
}
END_TEST

/* route: the verdict, and *loopback_peer in `*peer` */
static int route(int https, const char *host, const char *proxy, int secret, int allow_http,
		 int *peer)
{
	struct transport_route rt = { https, host, proxy, secret, allow_http };

	return transport_route_check(&rt, peer);
}

START_TEST(routes)
{
	int peer;

	/* https://: always, through any proxy, and nothing to check on connecting */
	ck_assert_int_eq(route(1, "intake.example", NULL, 1, 0, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 0);
	ck_assert_int_eq(route(1, "intake.example", "10.0.0.1", 1, 0, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 0);
	/* http:// to loopback, checked again on connecting */
	ck_assert_int_eq(route(0, "127.0.0.1", NULL, 1, 0, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 1);
	ck_assert_int_eq(route(0, "localhost", NULL, 0, 0, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 1);
	/* ... unless --allow-http would allow it anyway (no key) */
	ck_assert_int_eq(route(0, "localhost", NULL, 0, 1, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 0);
	/* http:// elsewhere: the key never, the profile with --allow-http */
	ck_assert_int_eq(route(0, "127.0.0.1.5", NULL, 1, 1, &peer), TRANSPORT_SECRET_IN_CLEAR);
	ck_assert_int_eq(route(0, "192.0.2.7", NULL, 0, 0, &peer), TRANSPORT_PLAIN);
	ck_assert_int_eq(route(0, "192.0.2.7", NULL, 0, 1, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 0);
	/* http:// through a proxy: both on loopback, the host an address (the proxy resolves
	 * a name); the proxy is what is connected to, and checked */
	ck_assert_int_eq(route(0, "127.0.0.1", "127.0.0.1", 1, 0, &peer), TRANSPORT_OK);
	ck_assert_int_eq(peer, 1);
	ck_assert_int_eq(route(0, "127.0.0.1", "localhost", 1, 0, &peer), TRANSPORT_OK);
	ck_assert_int_eq(route(0, "localhost", "127.0.0.1", 1, 0, &peer), TRANSPORT_SECRET_IN_CLEAR);
	ck_assert_int_eq(route(0, "127.0.0.1", "10.0.0.1", 1, 1, &peer), TRANSPORT_SECRET_IN_CLEAR);
	ck_assert_int_eq(route(0, "127.0.0.1", "10.0.0.1", 0, 0, &peer), TRANSPORT_PLAIN);
	ck_assert_int_eq(route(0, "192.0.2.7", "127.0.0.1", 0, 0, &peer), TRANSPORT_PLAIN);
	ck_assert_int_eq(route(0, "192.0.2.7", "10.0.0.1", 0, 1, &peer), TRANSPORT_OK);
}
END_TEST

START_TEST(env_take)
{
	/* putenv: the entry is this buffer, as the block a process starts with is */
	static char entry[] = "PERFCONV_CHECK_SECRET=s3cret-value";
	const size_t name = strlen("PERFCONV_CHECK_SECRET=");
	char *v;

	ck_assert_int_eq(putenv(entry), 0);
	v = transport_env_take("PERFCONV_CHECK_SECRET");
	ck_assert_str_eq(v, "s3cret-value");
	free(v);
	ck_assert_ptr_null(getenv("PERFCONV_CHECK_SECRET"));
	ck_assert_int_eq(memcmp(entry, "PERFCONV_CHECK_SECRET=", name), 0);
	for (size_t i = name; i < sizeof(entry) - 1; i++)
		ck_assert_int_eq(entry[i], 0);
	/* unset or empty: NULL */
	ck_assert_ptr_null(transport_env_take("PERFCONV_CHECK_SECRET"));
	ck_assert_int_eq(setenv("PERFCONV_CHECK_SECRET", "", 1), 0);
	ck_assert_ptr_null(transport_env_take("PERFCONV_CHECK_SECRET"));
	ck_assert_ptr_null(getenv("PERFCONV_CHECK_SECRET"));
}
END_TEST

START_TEST(hide)
{
	ck_assert_int_eq(transport_hide_process(), 0);
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, hosts);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, routes);
	tcase_add_test(tc, env_take);
	tcase_add_test(tc, hide);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
