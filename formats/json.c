/* json: the pieces of a streamed JSON text (RFC 8259), written straight to a FILE.
 *
 * Spec: RFC 8259 sections 6 (numbers) and 7 (strings); ill-formed UTF-8 becomes U+FFFD
 * per maximal subpart (common/util.h utf8_seq_len).
 */
#include "formats/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static const char hex[] = "0123456789abcdef";

void json_string_n(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	putc('"', out);
	while (i < n) {
		unsigned char c = s[i];
		size_t len, bad, plain = i;

		/* a run of characters written as they are, at once: a character at a time
		 * was a sixth of -f chrome's time on a whole-machine recording */
		while (plain < n && s[plain] >= 0x20 && s[plain] < 0x80 && s[plain] != '"' &&
		       s[plain] != '\\')
			plain++;
		if (plain > i) {
			fwrite(s + i, 1, plain - i, out);
			i = plain;
			continue;
		}
		if (c < 0x80) {
			switch (c) {
			case '"': fputs("\\\"", out); break;
			case '\\': fputs("\\\\", out); break;
			case '\b': fputs("\\b", out); break;
			case '\f': fputs("\\f", out); break;
			case '\n': fputs("\\n", out); break;
			case '\r': fputs("\\r", out); break;
			case '\t': fputs("\\t", out); break;
			default:
				if (c < 0x20) {
					fputs("\\u00", out);
					putc(hex[c >> 4], out);
					putc(hex[c & 15], out);
				} else {
					putc(c, out);
				}
			}
			i++;
			continue;
		}
		len = utf8_seq_len(s + i, n - i, &bad);
		if (len) {
			fwrite(s + i, 1, len, out);
			i += len;
		} else {
			fputs("\xef\xbf\xbd", out); /* U+FFFD */
			i += bad;
		}
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

void json_ts_dur(FILE *out, uint64_t start_ns, uint64_t end_ns, uint64_t base_ns)
{
	char dur[40];
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
	fputs("\"ts\":", out);
	json_ns_as_us(out, start_ns);
	fputs(",\"dur\":", out);
	fputs(dur, out);
}
