/* tracefmt: the trace-event formats of a recording's tracing data, and tracepoint
 * samples' RAW bytes decoded by them. See formats/read/tracefmt.h for where the format is
 * specified. */
#include "formats/read/tracefmt.h"

#include "common/bytes.h"
#include "common/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct tracefmt {
	char *version;
	int be;                 /* the tracing data's numbers are big-endian */
	int swap;               /* ... and this machine's are not, or the other way */
	struct strtab strs;     /* every name, type and label */
	struct tracefmt_event *ev;
	size_t nev, cap;
};

/* Bytes being read: every take checks what is left first. */
struct cur {
	const uint8_t *p;
	size_t len, pos;
	int swap;
};

static const uint8_t *take(struct cur *c, size_t n)
{
	const uint8_t *p;

	if (n > c->len - c->pos)
		return NULL;
	p = c->p + c->pos;
	c->pos += n;
	return p;
}

static int take_u32(struct cur *c, uint32_t *v)
{
	const uint8_t *p = take(c, 4);

	if (p)
		*v = ld32(p, c->swap);
	return p ? 0 : -1;
}

static int take_u64(struct cur *c, uint64_t *v)
{
	const uint8_t *p = take(c, 8);

	if (p)
		*v = ld64(p, c->swap);
	return p ? 0 : -1;
}

/* A NUL-terminated string inside the bytes left; NULL when it has no NUL there. */
static const char *take_cstr(struct cur *c)
{
	const uint8_t *s = c->p + c->pos, *nul = memchr(s, 0, c->len - c->pos);

	if (!nul)
		return NULL;
	c->pos += (size_t)(nul - s) + 1;
	return (const char *)s;
}

/* ---- the print fmt's __print_flags() and __print_symbolic() tables ---- */

/* The end of the argument at s (a top-level comma or the closing parenthesis),
 * stepping over nested parentheses, braces and string literals; NULL when the text
 * ends first. */
static const char *arg_end(const char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '"') {
			for (s++; *s && *s != '"'; s++)
				if (*s == '\\' && s[1])
					s++;
			if (!*s)
				return NULL;
		} else if (*s == '(' || *s == '{' || *s == '[') {
			depth++;
		} else if (*s == ')' || *s == '}' || *s == ']') {
			if (depth-- == 0)
				return s;
		} else if (*s == ',' && depth == 0) {
			return s;
		}
	}
	return NULL;
}

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* A string literal at s (after spaces) interned, its end in *end; NULL when there is
 * none. Escapes are kept as written but for \" and \\. */
static const char *str_lit(struct tracefmt *t, const char *s, const char **end)
{
	char buf[256];
	size_t n = 0;

	s = skip_space(s);
	if (*s != '"')
		return NULL;
	for (s++; *s && *s != '"'; s++) {
		if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
			s++;
		if (n + 1 < sizeof(buf))
			buf[n++] = *s;
	}
	if (!*s)
		return NULL;
	buf[n] = 0;
	*end = s + 1;
	return strtab_str(&t->strs, strtab_intern(&t->strs, buf));
}

/* The field of the event whose name follows the first REC-> in [s, end). */
static struct tracefmt_field *rec_field(struct tracefmt_event *e, const char *s, const char *end)
{
	const char *r;
	size_t i, n;

	for (r = s; (r = strstr(r, "REC->")) && r < end; r += 5) {
		r += 5;
		for (n = 0; r + n < end && (isalnum((unsigned char)r[n]) || r[n] == '_'); n++)
			;
		for (i = 0; i < e->nfields; i++)
			if (strlen(e->fields[i].name) == n && !memcmp(e->fields[i].name, r, n))
				return (struct tracefmt_field *)&e->fields[i];
		r -= 5;
	}
	return NULL;
}

/*
 * File format (a table of the print fmt, after the kernel's macros expanded):
 *	__print_flags(VALUE, "DELIM", { V, "LABEL" }, ...)
 *	__print_symbolic(VALUE, { V, "LABEL" }, ...)
 * optionally followed by `: "ZERO"` when it is the middle of `VALUE ? ... : "ZERO"`.
 * Returns where to go on scanning.
 */
static const char *parse_table(struct tracefmt *t, struct tracefmt_event *e, const char *s,
			       int flags)
{
	const char *a = s, *end = arg_end(s), *delim = NULL, *q;
	struct tracefmt_label *labels = NULL;
	struct tracefmt_field *f;
	size_t n = 0, cap = 0;

	if (!end || *end != ',')
		return end ? end : s + strlen(s);
	f = rec_field(e, a, end);
	a = end + 1;
	if (flags) {
		delim = str_lit(t, a, &q);
		if (!delim)
			return a;
		a = skip_space(q);
		if (*a != ',')
			return a;
		a++;
	}
	for (;;) {
		struct tracefmt_label l;
		const char *item = skip_space(a), *v;
		char *num_end;

		if (*item != '{')
			break;
		end = arg_end(item + 1);
		if (!end || *end != ',')
			break;
		v = skip_space(item + 1);
		l.value = *v == '-' ? (uint64_t)strtoll(v, &num_end, 0) : strtoull(v, &num_end, 0);
		l.label = str_lit(t, end + 1, &q);
		if (!l.label)
			break;
		q = skip_space(q);
		if (*q != '}')
			break;
		if (num_end != v && skip_space(num_end) == end) {
			labels = xgrow(labels, &cap, n + 1, sizeof(*labels));
			labels[n++] = l;
		}
		a = skip_space(q + 1);
		if (*a != ',')
			break;
		a++;
	}
	a = skip_space(a);
	if (f && !f->nlabels && n && *a == ')') {
		f->labels = labels;
		f->nlabels = n;
		f->labels_are_flags = !!flags;
		f->delim = delim;
		q = skip_space(a + 1);
		if (*q == ':')
			f->zero_label = str_lit(t, q + 1, &q);
		labels = NULL;
	}
	free(labels);
	return a;
}

static void parse_tables(struct tracefmt *t, struct tracefmt_event *e)
{
	const char *s = e->print_fmt;

	while (*s) {
		const char *fl = strstr(s, "__print_flags("), *sy = strstr(s, "__print_symbolic(");

		if (fl && (!sy || fl < sy))
			s = parse_table(t, e, fl + strlen("__print_flags("), 1);
		else if (sy)
			s = parse_table(t, e, sy + strlen("__print_symbolic("), 0);
		else
			break;
	}
}

/* ---- an event's format file ---- */

/* The declaration of a field, "unsigned short common_type" or "char prev_comm[16]" or
 * "__data_loc char[] name": its name and its type (the rest, with the brackets). */
static int split_decl(struct tracefmt *t, struct tracefmt_field *f, const char *decl, size_t len)
{
	char type[256];
	size_t end = len, name_end, name_start, brackets = 0;

	while (end && isspace((unsigned char)decl[end - 1]))
		end--;
	name_end = end;
	if (end && decl[end - 1] == ']') {
		while (name_end && decl[name_end - 1] != '[')
			name_end--;
		if (!name_end)
			return -1;
		name_end--;
		brackets = end - name_end;
	}
	name_start = name_end;
	while (name_start && (isalnum((unsigned char)decl[name_start - 1]) ||
			      decl[name_start - 1] == '_'))
		name_start--;
	if (name_start == name_end)
		return -1; /* no name */
	f->name = strtab_str(&t->strs, strtab_intern_n(&t->strs, decl + name_start,
						       name_end - name_start));
	while (name_start && isspace((unsigned char)decl[name_start - 1]))
		name_start--;
	if (name_start + brackets >= sizeof(type))
		return -1;
	memcpy(type, decl, name_start);
	memcpy(type + name_start, decl + name_end, brackets);
	type[name_start + brackets] = 0;
	f->type = strtab_str(&t->strs, strtab_intern(&t->strs, type));
	f->is_array = brackets > 0;
	f->is_dynamic = starts_with(type, "__data_loc");
	f->is_string = (f->is_array || f->is_dynamic) && strstr(type, "char") != NULL;
	return 0;
}

/* The number after `key` in [s, end), into *v; -1 when it is not there. */
static int field_num(const char *s, const char *end, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	const char *p;
	char *num_end;

	for (p = s; p + kl <= end; p++)
		if (!memcmp(p, key, kl))
			break;
	if (p + kl > end)
		return -1;
	*v = strtoull(p + kl, &num_end, 10);
	return num_end == p + kl || num_end > end ? -1 : 0;
}

/*
 * File format (an event's format file, as in /sys/kernel/tracing/events/SYS/NAME/):
 *	name: sched_switch
 *	ID: 372
 *	format:
 *		field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *		...
 *
 *		field:char prev_comm[16];	offset:8;	size:16;	signed:0;
 *		...
 *
 *	print fmt: "prev_comm=%s ...", REC->prev_comm, ...
 * Returns 0, or -1 when it is not one (name or ID missing, a field that does not
 * parse).
 */
static int parse_event(struct tracefmt *t, const char *system, const uint8_t *buf, size_t len)
{
	struct tracefmt_event e;
	struct tracefmt_field *fields = NULL;
	size_t cap = 0, pos = 0;
	char *text = xmalloc(len + 1);
	int have_id = 0, ret = -1;

	memcpy(text, buf, len);
	text[len] = 0;
	memset(&e, 0, sizeof(e));
	e.system = strtab_str(&t->strs, strtab_intern(&t->strs, system));
	while (pos < len) {
		char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		const char *s;

		pos += ll + 1;
		line[ll] = 0;
		s = skip_space(line);
		if (starts_with(s, "name:")) {
			e.name = strtab_str(&t->strs, strtab_intern(&t->strs, skip_space(s + 5)));
		} else if (starts_with(s, "ID:")) {
			char *num_end;

			e.id = strtoull(skip_space(s + 3), &num_end, 10);
			have_id = num_end != skip_space(s + 3);
		} else if (starts_with(s, "field:")) {
			struct tracefmt_field f;
			const char *decl = s + 6, *semi = strchr(decl, ';'), *end = s + strlen(s);
			uint64_t off, size, sgn = 0;

			memset(&f, 0, sizeof(f));
			if (!semi || split_decl(t, &f, decl, (size_t)(semi - decl)) < 0 ||
			    field_num(semi, end, "offset:", &off) < 0 ||
			    field_num(semi, end, "size:", &size) < 0 || off > UINT32_MAX ||
			    size > UINT32_MAX)
				goto out;
			field_num(semi, end, "signed:", &sgn);
			f.offset = (uint32_t)off;
			f.size = (uint32_t)size;
			f.is_signed = sgn != 0;
			fields = xgrow(fields, &cap, e.nfields + 1, sizeof(*fields));
			fields[e.nfields++] = f;
		} else if (starts_with(s, "print fmt:")) {
			e.print_fmt = strtab_str(&t->strs, strtab_intern(&t->strs,
									  skip_space(s + 10)));
		}
	}
	if (!e.name || !have_id)
		goto out;
	if (!e.print_fmt)
		e.print_fmt = "";
	e.fields = fields;
	parse_tables(t, &e);
	t->ev = xgrow(t->ev, &t->cap, t->nev + 1, sizeof(*t->ev));
	t->ev[t->nev++] = e;
	fields = NULL;
	ret = 0;
out:
	if (fields) {
		size_t i;

		for (i = 0; i < e.nfields; i++)
			free((void *)fields[i].labels);
		free(fields);
	}
	free(text);
	return ret;
}

/* `n` format files of `system`, each a u64 size and its text. */
static int read_files(struct tracefmt *t, struct cur *c, const char *system, uint32_t n,
		      const char *name, struct diag *d)
{
	uint32_t i;

	if (n > (c->len - c->pos) / 8) {
		diag_error(d, name, c->pos, "TRACING_DATA: %u format files of %s do not fit in "
			   "the %zu bytes left", n, system, c->len - c->pos);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint64_t size;
		size_t at;
		const uint8_t *text;

		if (take_u64(c, &size) < 0 || size > c->len - c->pos) {
			diag_error(d, name, c->pos, "TRACING_DATA: format file %u of %s: size "
				   "does not fit in the %zu bytes left", i, system,
				   c->len - c->pos);
			return -1;
		}
		at = c->pos;
		text = take(c, (size_t)size);
		if (parse_event(t, system, text, (size_t)size) < 0)
			diag_warn(d, name, at, "TRACING_DATA: format file %u of %s does not "
				  "parse, skipped", i, system);
	}
	return 0;
}

/*
 * File format (tracing data, trace-event-info.c's tracing_data_get):
 *	u8 magic[3] = { 23, 8, 68 }; char tag[7] = "tracing"; char version[] (NUL-ended);
 *	u8 big_endian; u8 long_size; u32 page_size;
 *	char "header_page\0"; u64 size; text		(the ring buffer page)
 *	char "header_event\0"; u64 size; text
 *	u32 count; { u64 size; text } [count]		(ftrace's own events)
 *	u32 systems; { char system[] (NUL-ended); u32 count; { u64 size; text } [count] }
 *	u32 size; kallsyms; u32 size; printk formats; u64 size; saved cmdlines (0.6)
 * Numbers after big_endian are in the byte order it says. The last three are not read.
 */
struct tracefmt *tracefmt_parse(const void *buf, size_t len, const char *name, struct diag *d)
{
	static const uint8_t magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct tracefmt *t = xcalloc(1, sizeof(*t));
	struct cur c = { buf, len, 0, 0 };
	const uint8_t *p;
	const char *s;
	uint32_t n, i, page;
	uint64_t size;

	strtab_init(&t->strs);
	p = take(&c, sizeof(magic));
	if (!p || memcmp(p, magic, sizeof(magic))) {
		diag_error(d, name, 0, "TRACING_DATA: no tracing data magic (23 8 68 \"tracing\")");
		goto fail;
	}
	s = take_cstr(&c);
	if (!s || !(p = take(&c, 2))) {
		diag_error(d, name, c.pos, "TRACING_DATA: header cut short");
		goto fail;
	}
	t->version = xstrdup(s);
	t->be = p[0] != 0;
	t->swap = c.swap = t->be != host_big_endian();
	if (take_u32(&c, &page) < 0) {
		diag_error(d, name, c.pos, "TRACING_DATA: header cut short");
		goto fail;
	}
	p = take(&c, 12);
	if (!p || memcmp(p, "header_page", 12) || take_u64(&c, &size) < 0 ||
	    !take(&c, size <= c.len - c.pos ? (size_t)size : SIZE_MAX)) {
		diag_error(d, name, c.pos, "TRACING_DATA: damaged header_page section");
		goto fail;
	}
	p = take(&c, 13);
	if (!p || memcmp(p, "header_event", 13) || take_u64(&c, &size) < 0 ||
	    !take(&c, size <= c.len - c.pos ? (size_t)size : SIZE_MAX)) {
		diag_error(d, name, c.pos, "TRACING_DATA: damaged header_event section");
		goto fail;
	}
	if (take_u32(&c, &n) < 0) {
		diag_error(d, name, c.pos, "TRACING_DATA: cut short before the ftrace formats");
		goto fail;
	}
	if (read_files(t, &c, "ftrace", n, name, d) < 0)
		goto fail;
	if (take_u32(&c, &n) < 0) {
		diag_error(d, name, c.pos, "TRACING_DATA: cut short before the event formats");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		uint32_t count;

		s = take_cstr(&c);
		if (!s || take_u32(&c, &count) < 0) {
			diag_error(d, name, c.pos, "TRACING_DATA: system %u of %u cut short", i, n);
			goto fail;
		}
		if (read_files(t, &c, s, count, name, d) < 0)
			goto fail;
	}
	return t;
fail:
	tracefmt_free(t);
	return NULL;
}

void tracefmt_free(struct tracefmt *t)
{
	size_t i, j;

	if (!t)
		return;
	for (i = 0; i < t->nev; i++) {
		for (j = 0; j < t->ev[i].nfields; j++)
			free((void *)t->ev[i].fields[j].labels);
		free((void *)t->ev[i].fields);
	}
	free(t->ev);
	strtab_release(&t->strs);
	free(t->version);
	free(t);
}

const char *tracefmt_version(const struct tracefmt *t)
{
	return t->version;
}

int tracefmt_big_endian(const struct tracefmt *t)
{
	return t->be;
}

size_t tracefmt_nevents(const struct tracefmt *t)
{
	return t->nev;
}

const struct tracefmt_event *tracefmt_event(const struct tracefmt *t, size_t i)
{
	return i < t->nev ? &t->ev[i] : NULL;
}

const struct tracefmt_event *tracefmt_find(const struct tracefmt *t, uint64_t id)
{
	size_t i;

	for (i = 0; i < t->nev; i++)
		if (t->ev[i].id == id)
			return &t->ev[i];
	return NULL;
}

const struct tracefmt_field *tracefmt_field(const struct tracefmt_event *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nfields; i++)
		if (!strcmp(e->fields[i].name, name))
			return &e->fields[i];
	return NULL;
}

int tracefmt_read_int(const struct tracefmt *t, const struct tracefmt_field *f, const void *raw,
		      size_t raw_size, int64_t *v)
{
	const uint8_t *p = (const uint8_t *)raw + f->offset;

	if (f->is_array || f->is_dynamic || f->offset > raw_size || f->size > raw_size - f->offset)
		return 0;
	switch (f->size) {
	case 1: *v = f->is_signed ? (int8_t)p[0] : (int64_t)p[0]; return 1;
	case 2: *v = f->is_signed ? (int16_t)ld16(p, t->swap) : (int64_t)ld16(p, t->swap); return 1;
	case 4: *v = f->is_signed ? (int32_t)ld32(p, t->swap) : (int64_t)ld32(p, t->swap); return 1;
	case 8: *v = (int64_t)ld64(p, t->swap); return 1;
	default: return 0;
	}
}

long tracefmt_read_str(const struct tracefmt *t, const struct tracefmt_field *f, const void *raw,
		       size_t raw_size, char *buf, size_t cap)
{
	const uint8_t *base = raw, *p, *nul;
	size_t off = f->offset, n = f->size;

	if (!f->is_string || off > raw_size || n > raw_size - off || !cap)
		return -1;
	if (f->is_dynamic) {
		uint32_t loc;

		if (n < 4)
			return -1;
		loc = ld32(base + off, t->swap);
		off = loc & 0xffff;
		n = loc >> 16;
		if (off > raw_size || n > raw_size - off)
			return -1;
	}
	p = base + off;
	nul = memchr(p, 0, n);
	if (nul)
		n = (size_t)(nul - p);
	if (n > cap - 1)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return (long)n;
}

/* Append `s` (and the delimiter before it unless first) to buf. */
static void append(char *buf, size_t cap, size_t *len, const char *delim, const char *s)
{
	int n = snprintf(buf + *len, cap - *len, "%s%s", *len && delim ? delim : "", s);

	if (n > 0)
		*len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

size_t tracefmt_label(const struct tracefmt_field *f, uint64_t value, char *buf, size_t cap)
{
	uint64_t known = 0;
	size_t i, len = 0;

	if (!cap)
		return 0;
	buf[0] = 0;
	if (!f->labels_are_flags) {
		for (i = 0; i < f->nlabels; i++)
			if (f->labels[i].value == value) {
				append(buf, cap, &len, NULL, f->labels[i].label);
				break;
			}
		return len;
	}
	for (i = 0; i < f->nlabels; i++)
		known |= f->labels[i].value;
	if (!(value & known)) {
		if (f->zero_label)
			append(buf, cap, &len, NULL, f->zero_label);
		return len;
	}
	for (i = 0; i < f->nlabels; i++)
		if (f->labels[i].value && (value & f->labels[i].value) == f->labels[i].value) {
			append(buf, cap, &len, f->delim, f->labels[i].label);
			value &= ~f->labels[i].value;
		}
	return len;
}
