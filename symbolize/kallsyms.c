/* kallsyms: kernel symbols from /proc/kallsyms or a saved copy, kept as perf 6.1 keeps them. */
/*
 * File format: one symbol a line, `ADDR TYPE NAME` or `ADDR TYPE NAME\t[MODULE]`,
 * ADDR in hex (all zeros when kernel.kptr_restrict hides it). Not sorted: module
 * symbols follow the kernel's.
 *
 * The rules are perf 6.1's (tools/perf/util/symbol.c: map__process_kallsym_symbol,
 * __dso__load_kallsyms, symbols__fixup_end, symbols__fixup_duplicate):
 *  - types T, W, D and B of either case are kept, names starting with '$' are not;
 *  - a symbol ends where the next one starts, except that the last symbol before
 *    a change between kernel and module ends one page after its start (rounded up
 *    to a page), and the last one of all ends a page after its page;
 *  - of symbols at one address perf's choose_best_symbol keeps one: because ends are
 *    set first, the earlier ones have size 0 and the last one in the file wins.
 */
#include "symbolize/kallsyms.h"

#include "common/util.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define NO_MODULE UINT32_MAX
#define BIND_LOCAL 0
#define BIND_GLOBAL 1
#define BIND_WEAK 2

struct kallsyms {
	struct ksym *syms;
	size_t n;
	/* names of symbols dropped as duplicates, for kallsyms_addr_of */
	struct alias {
		uint64_t addr;
		uint32_t name;
	} *aliases;
	size_t naliases;
	char *arena;
};

struct kraw {
	uint64_t start, end;
	uint32_t name, module; /* arena offsets; module NO_MODULE for the kernel */
	uint32_t seq;
	uint8_t bind;
};

static int kraw_cmp(const void *pa, const void *pb)
{
	const struct kraw *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol: 1 when `a` stays. */
static int keep_first(const struct kraw *a, const struct kraw *b, const char *arena)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	const char *na = arena + a->name, *nb = arena + b->name;
	size_t ua, ub, ka, kb;

	if (lb == 0 && la > 0)
		return 1;
	if (la == 0 && lb > 0)
		return 0;
	if ((b->bind == BIND_WEAK) != (a->bind == BIND_WEAK))
		return b->bind == BIND_WEAK;
	if ((a->bind == BIND_GLOBAL) != (b->bind == BIND_GLOBAL))
		return a->bind == BIND_GLOBAL;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ua < ub;
	ka = strlen(na);
	kb = strlen(nb);
	if (ka != kb)
		return ka > kb;
	return !(strncmp(na, "SyS", 3) == 0 || strncmp(na, "compat_SyS", 10) == 0);
}

static uint64_t page_up(uint64_t x)
{
	return (x + 4095) & ~(uint64_t)4095;
}

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen,
							  const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Parse one line; returns 1 and fills the fields, 0 for a line to skip. */
static int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20; /* lower case */
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "ADDR TYPE NAME[\t[MODULE]]": NULs are written in place after the name and module. */
static int parse_line(char *line, uint64_t *addr, char *type, char **name, char **module)
{
	char *p = line;
	uint64_t v = 0;
	int digits = 0, d;

	while ((d = hex_digit((unsigned char)*p)) >= 0) {
		v = v * 16 + (uint64_t)d;
		digits++;
		p++;
	}
	if (digits == 0 || digits > 16 || p[0] != ' ' || !p[1] || p[2] != ' ' || !p[3])
		return 0;
	*addr = v;
	*type = p[1];
	*name = p + 3;
	*module = NULL;
	for (p = *name; *p && *p != '\t' && *p != '\r'; p++)
		;
	if (*p == '\t') {
		*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[')
			p++;
		*module = p;
		while (*p && *p != ']' && *p != '\r')
			p++;
	}
	*p = 0;
	return (*name)[0] != 0;
}

struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen)
{
	gzFile gz;
	char *buf = NULL;
	size_t buflen = 0, bufcap = 0;
	struct kraw *v = NULL;
	size_t n = 0, cap = 0, i, w, nonzero = 0, nalias = 0, aliascap = 0;
	struct alias *aliases = NULL;
	struct kallsyms *k;

	if (err && errlen)
		err[0] = 0;
	gz = gzopen(path, "rb");
	if (!gz) {
		set_err(err, errlen, "cannot open \"%s\": %s", path,
			strerror(errno ? errno : ENOMEM));
		return NULL;
	}
	/* the whole file at once (5 MB for a distribution kernel), then lines in place:
	 * line-by-line gzgets was most of the cost */
	gzbuffer(gz, 1 << 20);
	for (;;) {
		int got;

		buf = xgrow(buf, &bufcap, buflen + (1 << 20) + 1, 1);
		got = gzread(gz, buf + buflen, 1 << 20);
		if (got <= 0)
			break;
		buflen += (size_t)got;
	}
	if (!gzeof(gz)) {
		int e;
		const char *msg = gzerror(gz, &e);

		set_err(err, errlen, "cannot read \"%s\": %s", path, msg ? msg : "read error");
		gzclose(gz);
		free(buf);
		return NULL;
	}
	buf[buflen] = 0;
	if (buflen > UINT32_MAX - 1) {
		set_err(err, errlen, "\"%s\": too large for a kallsyms file", path);
		gzclose(gz);
		free(buf);
		return NULL;
	}
	/* a line is 40 to 50 bytes: most files need one allocation */
	cap = buflen / 40 + 16;
	v = xmalloc(cap * sizeof(*v));
	for (char *line = buf, *eol; line < buf + buflen; line = eol + 1) {
		uint64_t addr;
		char type, *name, *module;
		int up;

		eol = memchr(line, '\n', (size_t)(buf + buflen - line));
		if (!eol)
			eol = buf + buflen;
		*eol = 0;
		if (!parse_line(line, &addr, &type, &name, &module))
			continue;
		up = toupper((unsigned char)type);
		if ((up != 'T' && up != 'W' && up != 'D' && up != 'B') || name[0] == '$')
			continue;
		if (n >= cap)
			v = xgrow(v, &cap, n + 1, sizeof(*v));
		v[n] = (struct kraw){ .start = addr, .end = addr, .seq = (uint32_t)n,
				      .bind = type == 'W' ? BIND_WEAK
					      : isupper((unsigned char)type) ? BIND_GLOBAL
									     : BIND_LOCAL };
		/* the file's own bytes are the names' storage: no copy */
		v[n].name = (uint32_t)(name - buf);
		v[n].module = module ? (uint32_t)(module - buf) : NO_MODULE;
		if (addr)
			nonzero++;
		n++;
	}
	gzclose(gz);
	if (nonzero == 0) {
		set_err(err, errlen, "\"%s\": %s", path,
			n ? "every symbol address is zero (kernel.kptr_restrict hides them)"
			  : "no kernel text symbols");
		free(v);
		free(buf);
		return NULL;
	}

	/* /proc/kallsyms is nearly always in address order already: sort only if not */
	for (i = 1; i < n; i++)
		if (kraw_cmp(&v[i - 1], &v[i]) > 0)
			break;
	if (i < n)
		qsort(v, n, sizeof(*v), kraw_cmp);
	for (i = 1; i < n; i++) {
		struct kraw *prev = &v[i - 1];

		if (prev->end != prev->start)
			continue;
		if ((prev->module == NO_MODULE) != (v[i].module == NO_MODULE))
			prev->end = page_up(prev->end + 4096);
		else
			prev->end = v[i].start;
	}
	if (v[n - 1].end == v[n - 1].start)
		v[n - 1].end = page_up(v[n - 1].start) + 4096;
	for (w = 0, i = 1; i < n; i++) {
		struct kraw *drop;

		if (v[i].start != v[w].start) {
			v[++w] = v[i];
			continue;
		}
		if (keep_first(&v[w], &v[i], buf)) {
			drop = &v[i];
		} else {
			struct kraw t = v[w];

			v[w] = v[i];
			v[i] = t;
			drop = &v[i];
		}
		aliases = xgrow(aliases, &aliascap, nalias + 1, sizeof(*aliases));
		aliases[nalias++] = (struct alias){ drop->start, drop->name };
	}
	n = n ? w + 1 : 0;

	k = calloc(1, sizeof(*k));
	if (!k)
		abort();
	/* the final table takes the raw one's place: same size, written at or below
	 * the entry being read */
	_Static_assert(sizeof(struct ksym) <= sizeof(struct kraw), "ksym fits in kraw");
	k->syms = (struct ksym *)(void *)v;
	k->arena = buf;
	for (i = 0, w = 0; i < n; i++) {
		struct kraw r = v[i];
		const char *name = buf + r.name;

		/* x86_64 entry trampolines are mapped separately; perf drops their symbol */
		if (r.module == NO_MODULE && !strcmp(name, "__entry_SYSCALL_64_trampoline"))
			continue;
		k->syms[w++] = (struct ksym){ r.start, r.end, name,
					      r.module == NO_MODULE ? NULL : buf + r.module };
	}
	k->n = w;
	k->aliases = aliases;
	k->naliases = nalias;
	return k;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!k || k->n == 0 || addr < k->syms[0].start)
		return NULL;
	hi = k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &k->syms[lo];
	if (addr < s->end || (addr == s->start && s->start == s->end))
		return s;
	return NULL;
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k ? k->n : 0;
}

uint64_t kallsyms_addr_of(const struct kallsyms *k, const char *name)
{
	size_t i;

	if (!k || !name)
		return 0;
	for (i = 0; i < k->n; i++)
		if (!k->syms[i].module && !strcmp(k->syms[i].name, name))
			return k->syms[i].start;
	for (i = 0; i < k->naliases; i++)
		if (!strcmp(k->arena + k->aliases[i].name, name))
			return k->aliases[i].addr;
	return 0;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->aliases);
	free(k->arena);
	free(k);
}

/*
 * File format: /sys/kernel/notes is the kernel's ELF note section: a sequence of
 * {u32 namesz, u32 descsz, u32 type}, then the name and the descriptor, each padded
 * to 4 bytes. The build id is type 3 (NT_GNU_BUILD_ID) named "GNU".
 */
size_t kernel_live_build_id(uint8_t *id, size_t cap)
{
	unsigned char buf[8192];
	size_t len = 0, off = 0;
	ssize_t r;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (len < sizeof(buf) && (r = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)r;
	close(fd);
	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t nameoff, descoff, next;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		nameoff = off + 12;
		if (namesz > len || descsz > len)
			break;
		descoff = nameoff + ((namesz + 3u) & ~3u);
		next = descoff + ((descsz + 3u) & ~3u);
		if (descoff > len || descoff + descsz > len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + nameoff, "GNU", 4) && descsz > 0) {
			size_t n = descsz < cap ? descsz : cap;

			memcpy(id, buf + descoff, n);
			return n;
		}
		if (next > len)
			break;
		off = next;
	}
	return 0;
}
