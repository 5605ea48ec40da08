/* json: the pieces of a streamed JSON text (RFC 8259), written straight to a FILE.
 *
 * Spec: RFC 8259 sections 6 (numbers) and 7 (strings); ill-formed UTF-8 becomes U+FFFD
 * per maximal subpart (common/util.h utf8_seq_len).
 */
#include "formats/write/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static const char hex[] = "0123456789abcdef";

size_t json_string_mem(char *dst, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	char *d = dst;
	size_t i = 0;

	*d++ = '"';
	while (i < n) {
		unsigned char c = s[i];
		size_t len, bad, plain = i;

		/* a run of characters copied as they are, at once */
		while (plain < n && s[plain] >= 0x20 && s[plain] < 0x80 && s[plain] != '"' &&
		       s[plain] != '\\')
			plain++;
		if (plain > i) {
			memcpy(d, s + i, plain - i);
			d += plain - i;
			i = plain;
			continue;
		}
		if (c < 0x80) {
			*d++ = '\\';
			switch (c) {
			case '"': *d++ = '"'; break;
			case '\\': *d++ = '\\'; break;
			case '\b': *d++ = 'b'; break;
			case '\f': *d++ = 'f'; break;
			case '\n': *d++ = 'n'; break;
			case '\r': *d++ = 'r'; break;
			case '\t': *d++ = 't'; break;
			default: /* the other control bytes: everything else was plain */
				memcpy(d, "u00", 3);
				d += 3;
				*d++ = hex[c >> 4];
				*d++ = hex[c & 15];
			}
			i++;
			continue;
		}
		len = utf8_seq_len(s + i, n - i, &bad);
		if (len) {
			memcpy(d, s + i, len);
			d += len;
			i += len;
		} else {
			memcpy(d, "\xef\xbf\xbd", 3); /* U+FFFD */
			d += 3;
			i += bad;
		}
	}
	*d++ = '"';
	return (size_t)(d - dst);
}

/* Input taken at once by json_string_n(): a piece is cut before a byte that cannot
 * continue a UTF-8 sequence (at most 4 bytes later), so that each piece reads as it
 * would in the whole. */
#define JSON_PIECE 2048

void json_string_n(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	char buf[JSON_STRING_MAX(JSON_PIECE + 4)];
	size_t i = 0, len;

	if (n <= JSON_PIECE + 4) {
		len = json_string_mem(buf, str, n);
		fwrite(buf, 1, len, out);
		return;
	}
	putc('"', out);
	while (i < n) {
		size_t end = n - i > JSON_PIECE ? i + JSON_PIECE : n;

		/* past continuation bytes: after four in a row, each next one is a stray
		 * byte of its own, as no sequence is longer */
		for (int k = 0; k < 4 && end < n && (s[end] & 0xc0) == 0x80; k++)
			end++;
		len = json_string_mem(buf, str + i, end - i);
		fwrite(buf + 1, 1, len - 2, out); /* without its quotes */
		i = end;
	}
	putc('"', out);
}

void json_string(FILE *out, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	json_string_n(out, s, n);
}

void json_u64(FILE *out, uint64_t v)
{
	fprintf(out, "%" PRIu64, v);
}

size_t json_u64_mem(char *dst, uint64_t v)
{
	char tmp[20];
	size_t k = 0, n = 0;

	do {
		tmp[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k)
		dst[n++] = tmp[--k];
	return n;
}

/* ns as microseconds in decimal, without trailing zeros of the fraction ("12",
 * "12.5", "12.345"); buf has room for 25 bytes. By hand: snprintf was a tenth of
 * -f chrome's time on a whole-machine recording. */
static void us_text(char *buf, size_t size, uint64_t ns)
{
	char tmp[24];
	uint64_t whole = ns / 1000;
	unsigned frac = (unsigned)(ns % 1000), digits = 3;
	size_t n = 0, k = 0;

	(void)size;
	do {
		tmp[k++] = (char)('0' + whole % 10);
		whole /= 10;
	} while (whole);
	while (k)
		buf[n++] = tmp[--k];
	if (frac) {
		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		buf[n++] = '.';
		for (unsigned d = digits; d--;) {
			buf[n + d] = (char)('0' + frac % 10);
			frac /= 10;
		}
		n += digits;
	}
	buf[n] = 0;
}

void json_ns_as_us(FILE *out, uint64_t ns)
{
	char buf[32];

	us_text(buf, sizeof(buf), ns);
	fputs(buf, out);
}

static double us_double(uint64_t ns)
{
	char buf[32];

	/* ns exact in a double: one correctly rounded division gives the double nearest
	 * to ns / 1000, which is what strtod gives for its decimal text */
	if (ns < (1ULL << 53))
		return (double)ns / 1000.0;

	us_text(buf, sizeof(buf), ns);
	return strtod(buf, NULL);
}

/* The durations rounded off their exact decimal (see json_ts_dur), by their bits: few
 * (652 distinct among 1.17 million on a whole-machine recording, 84% of its slices),
 * and snprintf and strtod on each were a half of -f chrome's time. Per thread, as
 * formatting may run on several. */
#define RT_CACHE_SIZE 1024
static _Thread_local struct rt_entry {
	uint64_t bits;
	char text[32];
} rt_cache[RT_CACHE_SIZE];

/* x with the fewest of 15, 16 or 17 significant digits that read back as x. */
static void round_trip_text(char *buf, size_t size, double x)
{
	struct rt_entry *c;
	uint64_t bits;

	memcpy(&bits, &x, sizeof(bits));
	c = &rt_cache[(bits ^ bits >> 29) * 0x9e3779b97f4a7c15ULL >> 54];
	/* bits 0 is +0.0, never looked up here (a slice has a duration); an empty
	 * text marks an unused entry anyway */
	if (c->text[0] && c->bits == bits && size >= sizeof(c->text)) {
		memcpy(buf, c->text, sizeof(c->text));
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	if (size >= sizeof(c->text) && strlen(buf) < sizeof(c->text)) {
		c->bits = bits;
		memcpy(c->text, buf, strlen(buf) + 1);
	}
}

/* Does duration d end the slice at the end's double, from the thread's base, and
 * from the origin? Bit 1 and bit 0. volatile: the sums must be rounded to double. */
static int dur_fits(double a, double b, double e, double d)
{
	volatile double rel = a - b, rel_end = e - b, abs_end = a + d, rel_sum;

	rel_sum = rel + d;
	return (rel_sum == rel_end) << 1 | (abs_end == e);
}

size_t json_ts_dur(char *dst, uint64_t start_ns, uint64_t end_ns, uint64_t base_ns)
{
	char dur[40];
	size_t n;
	double a = us_double(start_ns), e = us_double(end_ns), b = us_double(base_ns);
	double d, best;
	int best_fit;

	us_text(dur, sizeof(dur), end_ns - start_ns);
	best = d = us_double(end_ns - start_ns); /* strtod(dur), without parsing it */
	best_fit = dur_fits(a, b, e, d);
	if (best_fit != 3) {
		/* the durations each way of computing the end needs, and their neighbours */
		volatile double rel = a - b, rel_end = e - b;
		double centre[2];

		centre[0] = rel_end - rel;
		centre[1] = e - a;
		for (int k = 0; k < 2 && best_fit != 3; k++)
			for (int dir = 0; dir < 2 && best_fit != 3; dir++) {
				double c = centre[k];

				for (int i = 0; i < 8 && best_fit != 3; i++) {
					int fit = dur_fits(a, b, e, c);

					if (fit > best_fit) {
						best_fit = fit;
						best = c;
					}
					c = nextafter(c, dir ? -INFINITY : INFINITY);
				}
			}
		if (best != d)
			round_trip_text(dur, sizeof(dur), best);
	}
	memcpy(dst, "\"ts\":", 5);
	us_text(dst + 5, JSON_TS_DUR_MAX - 5, start_ns);
	n = 5 + strlen(dst + 5);
	memcpy(dst + n, ",\"dur\":", 7);
	n += 7;
	memcpy(dst + n, dur, strlen(dur));
	return n + strlen(dur);
}
