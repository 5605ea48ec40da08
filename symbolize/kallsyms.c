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

#include "common/inflate.h"
#include "common/later.h"
#include "common/mapfile.h"
#include "common/util.h"
#include "symbolize/locate.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_MODULE UINT32_MAX
#define BIND_LOCAL 0
#define BIND_GLOBAL 1
#define BIND_WEAK 2

/* A symbol: names are offsets into the table's strings. */
struct kentry {
	uint64_t start, end;
	uint32_t name, module; /* module NO_MODULE for the core kernel */
};

/* The name of a symbol dropped as a duplicate, for kallsyms_addr_of. */
struct kalias {
	uint64_t addr;
	uint32_t name, pad;
};

struct kallsyms {
	const struct kentry *syms;
	size_t n;
	const struct kalias *aliases;
	size_t naliases;
	const char *names;       /* NUL-terminated strings; the last byte is a NUL */
	size_t names_len;
	/* a parsed file owns these; a cache file is mapped instead */
	void *own_syms, *own_aliases, *own_names;
	struct mapped_file mf;
	/* the running kernel's core part from the cache: the rest parsed on demand */
	struct kallsyms_lazy *live;
	struct later *writer; /* where a cache entry is being written from it, or NULL */
};

struct kallsyms_lazy {
	uint64_t lo, hi; /* the core range the table answers for: first and last start */
	char *path;      /* the live file, parsed on the first lookup outside it */
	pthread_mutex_t lock;
	int tried;
	struct kallsyms *full;
};

/* The whole live table, parsed on first use (NULL when it cannot be). */
static struct kallsyms *live_full(struct kallsyms_lazy *z)
{
	struct kallsyms *full;

	pthread_mutex_lock(&z->lock);
	if (!z->tried) {
		z->tried = 1;
		z->full = kallsyms_load(z->path, NULL, 0);
	}
	full = z->full;
	pthread_mutex_unlock(&z->lock);
	return full;
}

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

/* A hex digit's value + 1, 0 for any other byte: a first run parses 122,000 lines. */
static const unsigned char hex_value1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* "ADDR TYPE NAME[\t[MODULE]]": NULs are written in place after the name and module.
 * Returns 1 and fills the fields (the lengths without the NULs), 0 for a line to skip. */
static int parse_line(char *line, uint64_t *addr, char *type, char **name, size_t *name_len,
		      char **module, size_t *module_len)
{
	char *p = line;
	uint64_t v = 0;
	int digits = 0, d;

	while ((d = hex_value1[(unsigned char)*p]) != 0) {
		v = v * 16 + (uint64_t)(d - 1);
		digits++;
		p++;
	}
	if (digits == 0 || digits > 16 || p[0] != ' ' || !p[1] || p[2] != ' ' || !p[3])
		return 0;
	*addr = v;
	*type = p[1];
	*name = p + 3;
	*module = NULL;
	*module_len = 0;
	p = *name + strcspn(*name, "\t\r");
	*name_len = (size_t)(p - *name);
	if (*p == '\t') {
		*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[')
			p++;
		*module = p;
		while (*p && *p != ']' && *p != '\r')
			p++;
		*module_len = (size_t)(p - *module);
	}
	*p = 0;
	return (*name)[0] != 0;
}

/* A kallsyms line is an address, a type, a name of at most 512 bytes (KSYM_NAME_LEN)
 * and a module: what has no newline for this long is not kallsyms (--kallsyms /dev/zero
 * grew memory without bound). */
#define MAX_LINE 4096
/* The plain file is read this much at a time: the names kept are copied out of it
 * (half its bytes), so that a first run makes 5 MB less of new memory (on some
 * machines 15 us a page) than with the whole file read at once. */
#define READ_CHUNK ((size_t)256 << 10)

/* The symbols kept so far, their names (and modules, once per run of a module's
 * lines) copied into `arena`. */
struct kparse {
	struct kraw *v;
	size_t n, cap, nonzero;
	char *arena;
	size_t alen, acap;
	uint32_t last_module; /* arena offset of the last module's name, or NO_MODULE */
	size_t last_module_len;
	int too_large;
};

static uint32_t arena_add(struct kparse *kp, const char *s, size_t len)
{
	uint32_t at = (uint32_t)kp->alen;

	if (kp->alen + len + 1 > UINT32_MAX - 1) {
		kp->too_large = 1;
		return 0;
	}
	if (kp->alen + len + 1 > kp->acap)
		kp->arena = xgrow(kp->arena, &kp->acap, kp->alen + len + 1, 1);
	memcpy(kp->arena + kp->alen, s, len);
	kp->arena[kp->alen + len] = 0;
	kp->alen += len + 1;
	return at;
}

/* The whole lines in b[0, len) (each ending in a newline, or the last at len; b[len]
 * may be written). */
static void parse_lines(struct kparse *kp, char *b, size_t len)
{
	for (char *line = b, *eol; line < b + len && !kp->too_large; line = eol + 1) {
		uint64_t addr;
		char type, *name, *module;
		size_t name_len, module_len;
		int up;

		eol = memchr(line, '\n', (size_t)(b + len - line));
		if (!eol)
			eol = b + len;
		*eol = 0;
		if (!parse_line(line, &addr, &type, &name, &name_len, &module, &module_len))
			continue;
		up = toupper((unsigned char)type);
		if ((up != 'T' && up != 'W' && up != 'D' && up != 'B') || name[0] == '$')
			continue;
		if (kp->n >= kp->cap)
			kp->v = xgrow(kp->v, &kp->cap, kp->n + 1, sizeof(*kp->v));
		kp->v[kp->n] = (struct kraw){ .start = addr, .end = addr, .seq = (uint32_t)kp->n,
					      .bind = type == 'W' ? BIND_WEAK
						      : isupper((unsigned char)type) ? BIND_GLOBAL
										     : BIND_LOCAL };
		kp->v[kp->n].name = arena_add(kp, name, name_len);
		if (!module) {
			kp->v[kp->n].module = NO_MODULE;
		} else {
			if (kp->last_module == NO_MODULE || kp->last_module_len != module_len ||
			    memcmp(kp->arena + kp->last_module, module, module_len) != 0) {
				kp->last_module = arena_add(kp, module, module_len);
				kp->last_module_len = module_len;
			}
			kp->v[kp->n].module = kp->last_module;
		}
		if (addr)
			kp->nonzero++;
		kp->n++;
	}
}

/*
 * The lines of `path` into `kp`: a plain file in chunks, a gzipped one (magic 1f 8b)
 * inflated whole. 0, or -1 with `err` filled.
 */
static int read_lines(const char *path, struct kparse *kp, char *err, size_t errlen)
{
	size_t cap = READ_CHUNK + 1, got = 0, base = 0;
	char *b;
	ssize_t r;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), gz = -1;

	if (fd < 0) {
		set_err(err, errlen, "cannot open \"%s\": %s", path, strerror(errno));
		return -1;
	}
	/* a line is 40 to 50 bytes, and the names kept (with their NULs) 57% of a
	 * file's bytes: one allocation each for most files, written whole, so made
	 * present at once (/proc/kallsyms says size 0: they grow) */
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 2) {
		kp->cap = (size_t)st.st_size / 40 + 16;
		kp->acap = (size_t)st.st_size / 8 * 5 + 16;
	} else {
		kp->cap = 1 << 16;
		kp->acap = 1 << 21;
	}
	kp->v = xmalloc_written(kp->cap * sizeof(*kp->v));
	kp->arena = xmalloc_written(kp->acap);
	b = xmalloc(cap);
	while ((r = read(fd, b + got, cap - 1 - got)) > 0) {
		char *nl;

		got += (size_t)r;
		if (gz < 0 && got >= 2)
			gz = (unsigned char)b[0] == 0x1f && (unsigned char)b[1] == 0x8b;
		if (gz == 1) { /* whole, then inflated */
			if (got == cap - 1)
				b = xgrow(b, &cap, cap + 1, 1);
			continue;
		}
		nl = memrchr(b, '\n', got);
		if (!nl) {
			if (got > MAX_LINE)
				goto too_long;
			continue;
		}
		parse_lines(kp, b, (size_t)(nl - b));
		/* the partial line after the last newline to the front */
		base += (size_t)(nl + 1 - b);
		got -= (size_t)(nl + 1 - b);
		memmove(b, nl + 1, got);
		if (got > MAX_LINE)
			goto too_long;
	}
	if (r < 0) {
		set_err(err, errlen, "cannot read \"%s\": %s", path, strerror(errno));
		close(fd);
		free(b);
		return -1;
	}
	close(fd);
	if (gz == 1) {
		/* the whole file at once (5 MB for a distribution kernel), then lines in
		 * place: line-by-line gzgets was most of the cost, and libdeflate inflates
		 * a whole buffer in a third of zlib's time */
		uint8_t *z; /* with a NUL after its bytes: parse_lines may write b[got] */
		size_t zn;
		const char *nl;

		if (inflate_gzip((const uint8_t *)b, got, &z, &zn) < 0) {
			set_err(err, errlen, "cannot read \"%s\": damaged gzip data", path);
			free(b);
			return -1;
		}
		free(b);
		b = (char *)z;
		got = zn;
		for (const char *line = b; line < b + got; line = nl + 1) {
			nl = memchr(line, '\n', (size_t)(b + got - line));
			if (!nl)
				nl = b + got;
			if ((size_t)(nl - line) > MAX_LINE) {
				base = (size_t)(line - b);
				fd = -1;
				goto too_long;
			}
		}
	}
	parse_lines(kp, b, got);
	free(b);
	return 0;
too_long:
	set_err(err, errlen, "\"%s\": offset 0x%zx: a line longer than %d bytes: not a kallsyms "
		"file", path, base, MAX_LINE);
	if (fd >= 0)
		close(fd);
	free(b);
	return -1;
}

/* An integer from the first line of FILE, or -1. */
static long read_long(const char *file)
{
	FILE *f = fopen(file, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Whether this process has CAP_SYSLOG (34) in its effective set: -1 when unknown. */
static int have_cap_syslog(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff;
	int have = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			have = (eff >> 34) & 1;
	fclose(f);
	return have;
}

/*
 * Why `path`'s addresses all read as zero, or why it is empty: the kernel shows them
 * (kallsyms_show_value) to a reader with CAP_SYSLOG when kernel.kptr_restrict is 0 or
 * 1, to every reader when it is 0 and perf_event_paranoid is at most 1, and to none
 * when it is 2; systemd's ProtectKernelTunables= puts an empty file over it and
 * ProtectKernelLogs= takes CAP_SYSLOG away. Said of the running kernel's file only;
 * a saved copy was made by whoever saved it.
 */
static void zero_cause(const char *path, int empty, char *buf, size_t n)
{
	long kr, pp;
	int cap;

	if (strcmp(path, "/proc/kallsyms") != 0) {
		snprintf(buf, n, "%s", empty ? "no kernel text symbols"
				     : "every symbol address is zero (it was saved by a process "
				       "that could not read them: one without CAP_SYSLOG, or under "
				       "kernel.kptr_restrict=2)");
		return;
	}
	if (empty) {
		snprintf(buf, n, "empty: hidden from this process (a systemd unit's "
			 "ProtectKernelTunables=yes puts an empty file over it)");
		return;
	}
	kr = read_long("/proc/sys/kernel/kptr_restrict");
	pp = read_long("/proc/sys/kernel/perf_event_paranoid");
	cap = have_cap_syslog();
	if (kr >= 2)
		snprintf(buf, n, "every symbol address is zero: kernel.kptr_restrict is %ld, "
			 "which hides them from root too", kr);
	else if (cap == 0)
		snprintf(buf, n, "every symbol address is zero: this process lacks CAP_SYSLOG, "
			 "which kernel.kptr_restrict=%ld (perf_event_paranoid=%ld) requires to "
			 "read them (systemd's ProtectKernelLogs=yes, or a "
			 "CapabilityBoundingSet= without it, takes it away)", kr, pp);
	else
		snprintf(buf, n, "every symbol address is zero (kernel.kptr_restrict=%ld, "
			 "perf_event_paranoid=%ld, CAP_SYSLOG %s: in a user namespace?)", kr, pp,
			 cap == 1 ? "held" : "unknown");
}

struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen)
{
	struct kparse kp = { .last_module = NO_MODULE };
	struct kraw *v;
	size_t n, i, w, nalias = 0, aliascap = 0;
	struct kalias *aliases = NULL;
	struct kentry *out;
	struct kallsyms *k;
	char *buf;
	int rc;

	if (err && errlen)
		err[0] = 0;
	rc = read_lines(path, &kp, err, errlen);
	if (rc == 0 && kp.too_large)
		set_err(err, errlen, "\"%s\": too large for a kallsyms file", path);
	else if (rc == 0 && kp.nonzero == 0) {
		char why[400];

		zero_cause(path, kp.n == 0, why, sizeof(why));
		set_err(err, errlen, "\"%s\": %s", path, why);
	}
	if (rc != 0 || kp.too_large || kp.nonzero == 0) {
		free(kp.v);
		free(kp.arena);
		return NULL;
	}
	v = kp.v;
	n = kp.n;
	buf = kp.arena;

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
		aliases[nalias++] = (struct kalias){ drop->start, drop->name, 0 };
	}
	n = n ? w + 1 : 0;

	k = xcalloc(1, sizeof(*k));
	/* the final table takes the raw one's place: smaller, written at or below the
	 * entry being read */
	_Static_assert(sizeof(struct kentry) <= sizeof(struct kraw), "kentry fits in kraw");
	out = (struct kentry *)(void *)v;
	for (i = 0, w = 0; i < n; i++) {
		struct kraw r = v[i];

		/* x86_64 entry trampolines are mapped separately; perf drops their symbol */
		if (r.module == NO_MODULE && buf[r.name] == '_' &&
		    !strcmp(buf + r.name, "__entry_SYSCALL_64_trampoline"))
			continue;
		out[w++] = (struct kentry){ r.start, r.end, r.name, r.module };
	}
	k->syms = k->own_syms = out;
	k->n = w;
	k->aliases = k->own_aliases = aliases;
	k->naliases = nalias;
	k->names = k->own_names = buf;
	k->names_len = kp.alen;
	return k;
}

int kallsyms_lookup(const struct kallsyms *k, uint64_t addr, struct ksym *out)
{
	size_t lo = 0, hi;
	const struct kentry *e;

	if (k && k->live && (addr < k->live->lo || addr > k->live->hi)) {
		struct kallsyms *full = live_full(k->live);

		return full ? kallsyms_lookup(full, addr, out) : 0;
	}
	if (!k || k->n == 0 || addr < k->syms[0].start)
		return 0;
	hi = k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	e = &k->syms[lo];
	if (!(addr < e->end || (addr == e->start && e->start == e->end)))
		return 0;
	/* a cache file's offsets are checked where they are used */
	if (e->name >= k->names_len || (e->module != NO_MODULE && e->module >= k->names_len))
		return 0;
	out->start = e->start;
	out->end = e->end;
	out->name = k->names + e->name;
	out->module = e->module == NO_MODULE ? NULL : k->names + e->module;
	return 1;
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
		if (k->syms[i].module == NO_MODULE && k->syms[i].name < k->names_len &&
		    !strcmp(k->names + k->syms[i].name, name))
			return k->syms[i].start;
	for (i = 0; i < k->naliases; i++)
		if (k->aliases[i].name < k->names_len && !strcmp(k->names + k->aliases[i].name, name))
			return k->aliases[i].addr;
	return 0;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	/* a cache entry being written from it reads it until done */
	later_wait(k->writer);
	free(k->own_syms);
	free(k->own_aliases);
	free(k->own_names);
	mapped_file_close(&k->mf);
	if (k->live) {
		kallsyms_free(k->live->full);
		free(k->live->path);
		pthread_mutex_destroy(&k->live->lock);
		free(k->live);
	}
	free(k);
}

/* ------------------------------------------------------------------ the cache */

/*
 * File format of a cache file (host byte order, written and read by this code only):
 *   struct kcache_header (its head: locate's cache_head, with the checksum); then the
 *   source's path (path_len bytes and a NUL);
 *   then at syms_off nsyms struct kentry, at aliases_off naliases struct kalias, at
 *   names_off names_len bytes of NUL-terminated names ending in a NUL; the three
 *   offsets are multiples of 8. The header names the source as it was when read.
 */
#define KCACHE_MAGIC "PCKSYMS1"
#define KCACHE_VERSION 2

struct kcache_header {
	struct cache_head head;
	struct file_id src;
	uint32_t build_id_size, path_len;
	uint8_t build_id[64];
	uint64_t nsyms, naliases, names_len;
	uint64_t syms_off, aliases_off, names_off;
};

static void fill_header(struct kcache_header *h, const char *path,
			const struct file_id *src, const uint8_t *build_id,
			size_t build_id_size)
{
	memset(h, 0, sizeof(*h));
	h->src = *src;
	h->build_id_size = (uint32_t)build_id_size;
	memcpy(h->build_id, build_id, build_id_size);
	h->path_len = (uint32_t)strlen(path);
}

struct kallsyms *kallsyms_cache_open(const char *file, const char *path,
				     const struct file_id *src, const uint8_t *build_id,
				     size_t build_id_size, const char **damage)
{
	struct kcache_header want, h;
	struct mapped_file mf;
	struct kallsyms *k;
	const char *m;

	*damage = NULL;
	if (build_id_size > sizeof(want.build_id))
		return NULL;
	if (cache_entry_open(file, KCACHE_MAGIC, KCACHE_VERSION, sizeof(h), &mf, damage) != CACHE_GOOD)
		return NULL;
	fill_header(&want, path, src, build_id, build_id_size);
	m = mf.map;
	memcpy(&h, m, sizeof(h));
	/* the same source, unchanged since it was read */
	if (memcmp(&h.src, &want.src, sizeof(h.src)) || h.build_id_size != want.build_id_size ||
	    memcmp(h.build_id, want.build_id, sizeof(h.build_id)) || h.path_len != want.path_len ||
	    h.path_len > mf.len - sizeof(h) || memcmp(m + sizeof(h), path, h.path_len) != 0) {
		mapped_file_close(&mf);
		return NULL;
	}
	/* what it holds within it: the checksum held, so only a bug (or damage it
	 * missed) gets here */
	if (h.names_len == 0 ||
	    !mapped_file_holds(&mf, h.syms_off, h.nsyms, sizeof(struct kentry)) ||
	    !mapped_file_holds(&mf, h.aliases_off, h.naliases, sizeof(struct kalias)) ||
	    !mapped_file_holds(&mf, h.names_off, h.names_len, 1) || m[h.names_off + h.names_len - 1]) {
		*damage = "inconsistent";
		mapped_file_close(&mf);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->mf = mf;
	k->syms = (const struct kentry *)(const void *)(m + h.syms_off);
	k->n = (size_t)h.nsyms;
	k->aliases = (const struct kalias *)(const void *)(m + h.aliases_off);
	k->naliases = (size_t)h.naliases;
	k->names = m + h.names_off;
	k->names_len = (size_t)h.names_len;
	return k;
}

/*
 * The entry of `view` (k itself, or a part of k's symbols with k's names) is written
 * from its arrays as they are (a parsed table's names are its arena: each kept name
 * once), on cache->later's thread: `own_syms` and `own_aliases` (view's arrays, or NULL)
 * are freed once written; k's stay until kallsyms_free(k), which waits for it.
 */
static int write_entry(struct kallsyms *k, const struct kallsyms *view, const char *file,
		       const char *path, const struct file_id *src, const uint8_t *build_id,
		       size_t build_id_size, void *own_syms, void *own_aliases,
		       const struct cache_ctx *cache)
{
	struct kcache_header h;
	struct cache_part parts[3];
	size_t head_len;
	char *head;

	if (build_id_size > sizeof(h.build_id) || view->names_len > UINT32_MAX || !view->names_len) {
		free(own_syms);
		free(own_aliases);
		return -1;
	}
	fill_header(&h, path, src, build_id, build_id_size);
	h.nsyms = view->n;
	h.naliases = view->naliases;
	h.names_len = view->names_len;
	head_len = sizeof(h) + h.path_len + 1;
	h.syms_off = align8(head_len);
	h.aliases_off = align8(h.syms_off + view->n * sizeof(struct kentry));
	h.names_off = align8(h.aliases_off + view->naliases * sizeof(struct kalias));
	head = xcalloc(1, head_len);
	memcpy(head, &h, sizeof(h));
	memcpy(head + sizeof(h), path, h.path_len);
	parts[0] = (struct cache_part){ h.syms_off, view->syms, view->n * sizeof(struct kentry), own_syms };
	parts[1] = (struct cache_part){ h.aliases_off, view->aliases,
					view->naliases * sizeof(struct kalias), own_aliases };
	parts[2] = (struct cache_part){ h.names_off, view->names, view->names_len, NULL };
	/* kallsyms_free(k) waits for it: the names are k's */
	k->writer = cache ? cache->later : NULL;
	cache_entry_write_parts_later(cache, xstrdup(file), head, head_len, parts, 3,
				      (size_t)(h.names_off + h.names_len), KCACHE_MAGIC,
				      KCACHE_VERSION, sizeof(h));
	return 0;
}

int kallsyms_cache_write(struct kallsyms *k, const char *file, const char *path,
			 const struct file_id *src, const uint8_t *build_id,
			 size_t build_id_size, const struct cache_ctx *cache)
{
	return write_entry(k, k, file, path, src, build_id, build_id_size, NULL, NULL, cache);
}

/*
 * File format: /sys/kernel/notes is the kernel's ELF note section: a sequence of
 * {u32 namesz, u32 descsz, u32 type}, then the name and the descriptor, each padded
 * to 4 bytes. The build id is type 3 (NT_GNU_BUILD_ID) named "GNU".
 */
static size_t build_id_from_notes(const char *notes, uint8_t *id, size_t cap)
{
	unsigned char buf[8192];
	size_t len = 0, off = 0;
	ssize_t r;
	int fd = open(notes, O_RDONLY | O_CLOEXEC);

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

size_t kallsyms_live_build_id(uint8_t *id, size_t cap)
{
	return build_id_from_notes("/sys/kernel/notes", id, cap);
}

/* Up to `cap` bytes from the start of `path` (a /proc file reads in pieces): the count,
 * -1 when it cannot be read. */
static ssize_t read_head(const char *path, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (got < cap && (r = read(fd, buf + got, cap - got)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	return (ssize_t)got;
}

/* 1 when a line of the `len` bytes at `b` has a nonzero address. */
static int shows_an_address(const char *b, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t j = i;
		int nonzero = 0;

		while (j < len && hex_value1[(unsigned char)b[j]] != 0)
			nonzero |= b[j++] != '0';
		if (j < len && b[j] == ' ' && j > i && nonzero)
			return 1;
		while (j < len && b[j] != '\n')
			j++;
		i = j + 1;
	}
	return 0;
}

int kallsyms_live_id(const struct kallsyms_live *src, struct kallsyms_live_id *id)
{
	char boot[64], head[4096];
	ssize_t nb, nh;
	size_t pl = strlen(src->kallsyms);

	memset(id, 0, sizeof(*id));
	id->build_id_size = build_id_from_notes(src->notes, id->build_id, sizeof(id->build_id));
	nb = read_head(src->boot_id, boot, sizeof(boot));
	nh = read_head(src->kallsyms, head, sizeof(head));
	if (!id->build_id_size || nb <= 0 || nh <= 0 || !shows_an_address(head, (size_t)nh) ||
	    memchr(boot, 0, (size_t)nb) || memchr(head, 0, (size_t)nh) ||
	    pl + 2 + (size_t)nb + (size_t)nh >= sizeof(id->ident))
		return -1;
	memcpy(id->ident, src->kallsyms, pl);
	id->ident[pl] = '\n';
	memcpy(id->ident + pl + 1, boot, (size_t)nb);
	id->ident[pl + 1 + (size_t)nb] = '\n';
	memcpy(id->ident + pl + 2 + (size_t)nb, head, (size_t)nh);
	id->ident_len = pl + 2 + (size_t)nb + (size_t)nh;
	id->ident[id->ident_len] = 0;
	return 0;
}

struct kallsyms *kallsyms_live_open(const char *file, const struct kallsyms_live *src,
				    const struct kallsyms_live_id *id, const char **damage)
{
	static const struct file_id none;
	struct kallsyms *k = kallsyms_cache_open(file, id->ident, &none, id->build_id,
						 id->build_id_size, damage);

	if (!k)
		return NULL;
	if (k->n == 0) {
		kallsyms_free(k);
		*damage = "inconsistent";
		return NULL;
	}
	k->live = xcalloc(1, sizeof(*k->live));
	k->live->lo = k->syms[0].start;
	k->live->hi = k->syms[k->n - 1].start;
	k->live->path = xstrdup(src->kallsyms);
	pthread_mutex_init(&k->live->lock, NULL);
	return k;
}

int kallsyms_live_write(struct kallsyms *k, const char *file, const struct kallsyms_live_id *id,
			const struct cache_ctx *cache)
{
	static const struct file_id none;
	struct kallsyms view = { 0 };
	struct kentry *syms;
	struct kalias *aliases;
	uint64_t lo = kallsyms_addr_of(k, "_text"), hi = 0;
	size_t first = k->n, last = 0, n = 0, na = 0;

	if (!lo)
		lo = kallsyms_addr_of(k, "_stext");
	if (!lo || k->live)
		return -1;
	for (size_t i = 0; i < k->n; i++)
		if (k->syms[i].module == NO_MODULE && k->syms[i].start >= lo) {
			if (first == k->n)
				first = i;
			last = i;
		}
	if (first == k->n)
		return -1;
	hi = k->syms[last].start;
	/* the range is the core kernel's alone, or no cache */
	for (size_t i = first; i <= last; i++)
		if (k->syms[i].module != NO_MODULE)
			return -1;
	syms = xmalloc((last - first + 1) * sizeof(*syms));
	aliases = xmalloc((k->naliases ? k->naliases : 1) * sizeof(*aliases));
	for (size_t i = first; i <= last; i++)
		syms[n++] = k->syms[i];
	for (size_t i = 0; i < k->naliases; i++)
		if (k->aliases[i].addr >= lo && k->aliases[i].addr <= hi)
			aliases[na++] = k->aliases[i];
	view.syms = syms;
	view.n = n;
	view.aliases = aliases;
	view.naliases = na;
	view.names = k->names;
	view.names_len = k->names_len;
	return write_entry(k, &view, file, id->ident, &none, id->build_id, id->build_id_size, syms,
			   aliases, cache);
}

int kallsyms_same_as_running(const char *path, const char *running)
{
	struct mapped_file f;
	char buf[1 << 16];
	size_t at = 0;
	ssize_t n;
	int fd, same = 1;

	if (mapped_file_try(&f, path) != 0)
		return 0;
	fd = open(running, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		mapped_file_close(&f);
		return 0;
	}
	while (same && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			same = 0;
			break;
		}
		if ((size_t)n > f.len - at || memcmp((const char *)f.map + at, buf, (size_t)n) != 0)
			same = 0;
		at += (size_t)n;
	}
	close(fd);
	same = same && at == f.len && at > 0;
	mapped_file_close(&f);
	return same;
}
