/* check_elfsyms: the names elfsyms gives to addresses of real ELF files. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/demangle.h"
#include "symbolize/elfsyms.h"
#include "symbolize/elfsyms_internal.h"
#include "tests/testutil.h"

/* Built once before the suites run: the fixture, compiled several ways. */
static char tmpdir[] = "/tmp/check_elfsyms.XXXXXX";
static char bin[512], stripped[512], split[512], splitdir_bin[512], relobj[512], notelf[512];
static char aliases[512];

static int run(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "check_elfsyms: command failed (%d): %s\n", rc, cmd);
	return rc;
}

static int build_fixtures(void)
{
	const char *top = getenv("PERFCONV_TOP");
	char cmd[4096];
	FILE *f;

	if (!top)
		top = ".";
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(bin, sizeof(bin), "%s/fx", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/fx.stripped", tmpdir);
	snprintf(split, sizeof(split), "%s/fx.split", tmpdir);
	snprintf(splitdir_bin, sizeof(splitdir_bin), "%s/sub/fx.split2", tmpdir);
	snprintf(relobj, sizeof(relobj), "%s/fx.o", tmpdir);
	snprintf(notelf, sizeof(notelf), "%s/notelf", tmpdir);
	snprintf(aliases, sizeof(aliases), "%s/aliases.o", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; src=%s/tests/fixtures/elfsyms_fixture.c;"
		 "cc -O1 -g -rdynamic -o fx $src; cc -O1 -g -c -o fx.o $src;"
		 "cc -c -o aliases.o $(dirname $src)/elfsyms_aliases.s;"
		 "strip --strip-all -o fx.stripped fx;"
		 /* debug info split off, found through .gnu_debuglink next to the file */
		 "objcopy --only-keep-debug fx fx.split.debug;"
		 "objcopy --strip-all --add-gnu-debuglink=fx.split.debug fx fx.split;"
		 /* ... and in the .debug/ directory beside it */
		 "mkdir -p sub/.debug; objcopy --only-keep-debug fx sub/.debug/fx.split2.debug;"
		 "(cd sub/.debug && objcopy --strip-all --add-gnu-debuglink=fx.split2.debug ../../fx ../fx.split2)",
		 tmpdir, top);
	if (run(cmd))
		return -1;
	f = fopen(notelf, "w");
	if (!f)
		return -1;
	fputs("this is not an ELF file\n", f);
	fclose(f);
	return 0;
}

/* The value the last line of `cmd`'s output that `match` takes gives (0 when none). */
static uint64_t last_match(const char *cmd, int (*match)(const char *line, const void *arg,
							uint64_t *v),
			   const void *arg)
{
	char line[1024];
	uint64_t value = 0, v;
	FILE *p = popen(cmd, "r");

	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (match(line, arg, &v))
			value = v;
	pclose(p);
	return value;
}

static int nm_line(const char *line, const void *name, uint64_t *v)
{
	char sym[512], type;

	return sscanf(line, "%" SCNx64 " %c %511s", v, &type, sym) == 3 && !strcmp(sym, name);
}

/* The address of `name` in `path`, from nm (0 when absent). */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "nm %s", path);
	return last_match(cmd, nm_line, name);
}

static const char *name_at(const struct elf_obj *o, uint64_t vaddr)
{
	const struct elf_sym *s = elf_obj_lookup(o, vaddr);

	return s ? s->name : "(none)";
}

static const struct elf_sym *find_by_name(const struct elf_obj *o, const char *name)
{
	size_t i;

	for (i = 0; i < elf_obj_nsyms(o); i++) {
		const struct elf_sym *s = elf_obj_sym(o, i);

		if (!strcmp(s->name, name))
			return s;
	}
	return NULL;
}

START_TEST(test_fixture_names)
{
	struct elf_obj *o = elf_obj_load(bin, NULL, 0, NULL);

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	ck_assert_str_eq(elf_obj_file(o), bin);
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_global_work")), "fx_global_work");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_global_work") + 3), "fx_global_work");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_static_helper") + 1), "fx_static_helper");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "main")), "main");
	/* a global beats a weak and a local alias at the same address */
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_weak_alias")), "fx_strong");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_local_alias")), "fx_strong");
	/* fewer leading underscores win */
	ck_assert_str_eq(name_at(o, nm_addr(bin, "__fx_under")), "fx_under");
	/* then the longer name */
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_ab")), "fx_abcd");
	/* the IFUNC symbol (global) wins over its local resolver at the same address */
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_ifunc")), "fx_ifunc");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_ifunc_impl")), "fx_ifunc_impl");
	elf_obj_free(o);
}
END_TEST

START_TEST(test_zero_size_symbol_extends)
{
	struct elf_obj *o = elf_obj_load(bin, NULL, 0, NULL);
	uint64_t a = nm_addr(bin, "fx_asm_nosize");
	const struct elf_sym *s = elf_obj_lookup(o, a + 5);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "fx_asm_nosize");
	ck_assert_uint_eq(s->start, a);
	/* it ends where the next symbol begins */
	ck_assert_uint_gt(s->end, a + 5);
	ck_assert_str_ne(name_at(o, s->end), "fx_asm_nosize");
	elf_obj_free(o);
}
END_TEST

START_TEST(test_sorted_and_bounded)
{
	struct elf_obj *o = elf_obj_load(bin, NULL, 0, NULL);
	size_t i;

	ck_assert_uint_gt(elf_obj_nsyms(o), 10);
	for (i = 1; i < elf_obj_nsyms(o); i++) {
		ck_assert_uint_lt(elf_obj_sym(o, i - 1)->start, elf_obj_sym(o, i)->start);
		ck_assert_uint_gt(elf_obj_sym(o, i)->end, elf_obj_sym(o, i)->start);
	}
	ck_assert_ptr_null(elf_obj_lookup(o, 0));
	ck_assert_ptr_null(elf_obj_lookup(o, UINT64_MAX));
	elf_obj_free(o);
}
END_TEST

START_TEST(test_stripped_uses_dynsym)
{
	struct elf_obj *o = elf_obj_load(stripped, NULL, 0, NULL);

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	ck_assert_str_eq(elf_obj_symbol_file(o), stripped);
	/* exported (-rdynamic) functions are in .dynsym, with the same addresses */
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_global_work") + 1), "fx_global_work");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_under")), "fx_under");
	/* the static helper is not: the address falls in the preceding symbol or nowhere */
	ck_assert_str_ne(name_at(o, nm_addr(bin, "fx_static_helper") + 1), "fx_static_helper");
	elf_obj_free(o);
}
END_TEST

START_TEST(test_debuglink_next_to_file)
{
	struct elf_obj *o = elf_obj_load(split, NULL, 0, NULL);
	char want[600];

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	snprintf(want, sizeof(want), "%s.debug", split);
	ck_assert_str_eq(elf_obj_symbol_file(o), want);
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_static_helper") + 1), "fx_static_helper");
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_weak_alias")), "fx_strong");
	elf_obj_free(o);
}
END_TEST

START_TEST(test_debuglink_in_debug_dir)
{
	struct elf_obj *o = elf_obj_load(splitdir_bin, NULL, 0, NULL);

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	ck_assert_ptr_nonnull(strstr(elf_obj_symbol_file(o), "/sub/.debug/fx.split2.debug"));
	ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_static_helper")), "fx_static_helper");
	elf_obj_free(o);
}
END_TEST

START_TEST(test_sysroot)
{
	/* with --symfs DIR, the recorded path is looked up under DIR */
	struct elf_obj *o = elf_obj_load("/fx", NULL, 0, tmpdir);

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	ck_assert_str_eq(elf_obj_file(o), bin);
	ck_assert_str_eq(name_at(o, nm_addr(bin, "main")), "main");
	elf_obj_free(o);
}
END_TEST

START_TEST(test_build_id)
{
	struct elf_obj *o = elf_obj_load(bin, NULL, 0, NULL), *o2;
	const uint8_t *id;
	uint8_t wrong[20];
	size_t n = elf_obj_build_id(o, &id);

	ck_assert_uint_eq(n, 20);
	/* the right build id loads */
	o2 = elf_obj_load(split, id, n, NULL);
	ck_assert_int_eq(elf_obj_status(o2), ELF_OBJ_OK);
	ck_assert_str_eq(name_at(o2, nm_addr(bin, "fx_static_helper")), "fx_static_helper");
	elf_obj_free(o2);
	/* a wrong one gives no symbols */
	memcpy(wrong, id, n);
	wrong[0] ^= 0xff;
	o2 = elf_obj_load(bin, wrong, n, NULL);
	ck_assert_int_eq(elf_obj_status(o2), ELF_OBJ_MISMATCH);
	ck_assert_uint_eq(elf_obj_nsyms(o2), 0);
	ck_assert_ptr_null(elf_obj_lookup(o2, nm_addr(bin, "main")));
	ck_assert_str_eq(elf_obj_status_str(ELF_OBJ_MISMATCH), "build id differs from the recording's");
	elf_obj_free(o2);
	elf_obj_free(o);
}
END_TEST

START_TEST(test_offset_to_vaddr)
{
	struct elf_obj *o = elf_obj_load(bin, NULL, 0, NULL);
	char cmd[1024], line[1024];
	uint64_t v, off, va, fsz;
	int seen = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW %s", bin);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%*x 0x%" SCNx64, &off, &va,
			   &fsz) == 3) {
			ck_assert_int_eq(elf_obj_offset_to_vaddr(o, off, &v), 0);
			ck_assert_uint_eq(v, va);
			ck_assert_int_eq(elf_obj_offset_to_vaddr(o, off + fsz - 1, &v), 0);
			ck_assert_uint_eq(v, va + fsz - 1);
			seen++;
		}
	}
	pclose(p);
	ck_assert_int_ge(seen, 2);
	ck_assert_int_eq(elf_obj_offset_to_vaddr(o, UINT64_MAX / 2, &v), -1);
	elf_obj_free(o);
}
END_TEST

START_TEST(test_bad_inputs)
{
	struct elf_obj *o = elf_obj_load("/nonexistent/perfconv/libnothing.so", NULL, 0, NULL);

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_MISSING);
	ck_assert_ptr_null(elf_obj_lookup(o, 0x1000));
	elf_obj_free(o);
	o = elf_obj_load(notelf, NULL, 0, NULL);
	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_BAD_ELF);
	elf_obj_free(o);
	o = elf_obj_load(tmpdir, NULL, 0, NULL); /* a directory */
	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_MISSING);
	elf_obj_free(o);
	elf_obj_free(NULL);
	/* a relocatable object (like a .ko) loads without crashing */
	o = elf_obj_load(relobj, NULL, 0, NULL);
	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	ck_assert_ptr_nonnull(find_by_name(o, "fx_static_helper"));
	elf_obj_free(o);
}
END_TEST

START_TEST(test_strip_version)
{
	char a[] = "__libc_start_main@@GLIBC_2.34", b[] = "memcpy@GLIBC_2.2.5";
	char c[] = "plain", d[] = "memcpy@plt", e[] = "@plt";

	elf_strip_version(a);
	elf_strip_version(b);
	elf_strip_version(c);
	elf_strip_version(d);
	elf_strip_version(e);
	ck_assert_str_eq(a, "__libc_start_main");
	ck_assert_str_eq(b, "memcpy");
	ck_assert_str_eq(c, "plain");
	ck_assert_str_eq(d, "memcpy@plt");
	ck_assert_str_eq(e, "@plt");
}
END_TEST

static const char *libc_path(void)
{
	static const char *const cands[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6",
					     "/lib64/libc.so.6" };
	size_t i;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], R_OK) == 0)
			return cands[i];
	return NULL;
}

START_TEST(test_real_libc)
{
	const char *libc = libc_path();
	struct elf_obj *o;
	const struct elf_sym *s;

	if (!libc)
		return;
	o = elf_obj_load(libc, NULL, 0, NULL);
	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	s = find_by_name(o, "__libc_start_call_main");
	if (!s) { /* no libc6-dbg: only .dynsym, where that local function is absent */
		ck_assert_ptr_nonnull(find_by_name(o, "malloc"));
		elf_obj_free(o);
		return;
	}
	ck_assert_ptr_nonnull(strstr(elf_obj_symbol_file(o), "/usr/lib/debug/"));
	ck_assert_str_eq(name_at(o, s->start + 0x10), "__libc_start_call_main");
	/* five aliases share its address; perf keeps the global versioned name */
	s = find_by_name(o, "__libc_start_main");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(elf_obj_raw_name(o, s), "__libc_start_main@@GLIBC_2.34");
	ck_assert_str_eq(name_at(o, s->start + 1), "__libc_start_main");
	s = find_by_name(o, "_int_malloc");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(name_at(o, s->start + 1), "_int_malloc");
	ck_assert_ptr_nonnull(find_by_name(o, "__memmove_avx_unaligned_erms"));
	/* PLT entries are named after their .dynsym symbol, as perf 6.1 does */
	ck_assert_ptr_nonnull(find_by_name(o, "calloc@plt"));
	elf_obj_free(o);
}
END_TEST

/*
 * The symbol perf keeps at an address is chosen when a lookup first needs it. Lookups
 * into a table nothing has listed give the symbol that a search of the whole listing
 * gives: the one starting last at or before the address whose range holds it (a
 * lookup past a symbol's end finds the one around it).
 */
static void lookups_match_listing(const char *path)
{
	struct elf_obj *listed = elf_obj_load(path, NULL, 0, NULL);
	struct elf_obj *fresh = elf_obj_load(path, NULL, 0, NULL);
	size_t n = elf_obj_nsyms(listed), found = 0;
	const struct elf_sym **all;

	ck_assert_uint_gt(n, 10);
	all = calloc(n, sizeof(*all));
	for (size_t i = 0; i < n; i++)
		all[i] = elf_obj_sym(listed, i);
	for (size_t i = 0; i < n; i++) {
		uint64_t at[] = { all[i]->start, all[i]->start + 1, all[i]->end - 1, all[i]->end };

		for (size_t k = 0; k < 4; k++) {
			const struct elf_sym *x = elf_obj_lookup(fresh, at[k]), *want = NULL;

			for (size_t j = n; j-- > 0 && !want;)
				if (all[j]->start <= at[k] && at[k] < all[j]->end)
					want = all[j];
			ck_assert_int_eq(x != NULL, want != NULL);
			if (!x)
				continue;
			found++;
			ck_assert_str_eq(x->name, want->name);
			ck_assert_str_eq(elf_obj_raw_name(fresh, x), elf_obj_raw_name(listed, want));
			ck_assert_uint_eq(x->start, want->start);
			ck_assert_uint_eq(x->end, want->end);
		}
	}
	ck_assert_uint_gt(found, 3 * n);
	free(all);
	elf_obj_free(fresh);
	elf_obj_free(listed);
}

START_TEST(test_chosen_at_lookup)
{
	const char *libc = libc_path();

	lookups_match_listing(bin);
	if (libc)
		lookups_match_listing(libc);
	/* the alias rule still holds when the first lookup is the alias's own address */
	{
		struct elf_obj *o = elf_obj_load(bin, NULL, 0, NULL);

		ck_assert_str_eq(name_at(o, nm_addr(bin, "fx_local_alias")), "fx_strong");
		ck_assert_str_eq(name_at(o, nm_addr(bin, "__fx_under") + 1), "fx_under");
		elf_obj_free(o);
	}
}
END_TEST

static int text_line(const char *line, const void *unused, uint64_t *v)
{
	const char *t = strstr(line, " .text ");
	uint64_t addr;

	return t && sscanf(t, " .text PROGBITS %" SCNx64 " %" SCNx64, &addr, v) == 2;
}

/* The file offset of the .text of relocatable object `path`, from readelf (0 when absent):
 * a .o's symbols are at their section's offset plus their value, as perf keeps them. */
static uint64_t text_offset(const char *path)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "readelf -SW %s", path);
	return last_match(cmd, text_line, NULL);
}

/* tests/fixtures/elfsyms_aliases.s: each group's offset in .text and the symbol kept */
static const struct {
	uint64_t off;
	const char *kept;
} alias_groups[] = {
	{ 0x00, "sys_fxread" }, /* not SyS_fxread, the first of a tie */
	{ 0x10, "_Z3fooi" },    /* "foo" beats "ba"; raw, "_Z3fooi" has an underscore */
	{ 0x20, "barbaz" },     /* Rust's "foo" is shorter; C++'s "foo::h0123...": longer */
	{ 0x30, "quux" },
	{ 0x40, "zsw" },        /* zs_global_longer has no size */
	{ 0x50, "lw" },         /* lw_weak_longer is weak */
	{ 0x60, "gl" },         /* gl_local_longer is local */
	{ 0x70, "three" },      /* __three, _three_longest have underscores */
	{ 0x80, "ln_longer" },  /* not ln, the first of the two */
	{ 0x90, "gw" },         /* gw_weak_longer is weak */
};

/*
 * Each group's symbol, asked of a table that has chosen none yet: the first lookup of
 * a group is at its start or within it (odd groups), the second at the other place.
 */
static void check_alias_groups(const struct elf_obj *o, uint64_t text)
{
	size_t n = sizeof(alias_groups) / sizeof(alias_groups[0]);

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			uint64_t at = text + alias_groups[i].off + ((i + pass) % 2 ? 9 : 0);
			const struct elf_sym *s = elf_obj_lookup(o, at);

			ck_assert_msg(s != NULL, "no symbol at +0x%" PRIx64, at - text);
			ck_assert_msg(!strcmp(s->name, alias_groups[i].kept),
				      "+0x%" PRIx64 ": %s, not %s", at - text, s->name,
				      alias_groups[i].kept);
			ck_assert_uint_eq(s->start, text + alias_groups[i].off);
			ck_assert_uint_eq(s->end, text + alias_groups[i].off + 16);
		}
}

/* perf's choice among symbols at one address, made when a lookup first lands there;
 * the listing (elf_obj_sym) gives the same symbols, one an address. */
START_TEST(test_alias_rules)
{
	struct elf_obj *o = elf_obj_load(aliases, NULL, 0, NULL);
	uint64_t text = text_offset(aliases);
	size_t n = sizeof(alias_groups) / sizeof(alias_groups[0]);

	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	ck_assert_uint_gt(text, 0);
	check_alias_groups(o, text);
	elf_obj_free(o);
	o = elf_obj_load(aliases, NULL, 0, NULL);
	ck_assert_uint_eq(elf_obj_nsyms(o), n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(elf_obj_sym(o, i)->name, alias_groups[i].kept);
		ck_assert_str_eq(elf_obj_raw_name(o, elf_obj_sym(o, i)), alias_groups[i].kept);
	}
	check_alias_groups(o, text);
	elf_obj_free(o);
}
END_TEST

/*
 * Issue 42 item 1: 60 global aliases at one address, each a C++ name that demangles
 * to terabytes (f<B<B<...>>>, 40 levels, its innermost name made distinct). perf's
 * rule compares them demangled: a name kept mangled compares as it is, and past
 * DEMANGLE_KEPT_MAX kept the object's names are compared raw without a try (60 bounded
 * runs of the demangler would each take up to its bound). The longest raw name wins.
 */
START_TEST(test_alias_bombs)
{
	char path[600], obj[600], cmd[1400];
	struct elf_obj *o;
	const struct elf_sym *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/bombs.s", tmpdir);
	snprintf(obj, sizeof(obj), "%s/bombs.o", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("\t.text\n", f);
	for (int i = 0; i < 60; i++) {
		char ident[16], name[1024];
		int n = snprintf(ident, sizeof(ident), "A%d", i);

		/* S_ is f, S0_ B, S1_ the innermost name, S2_ B<it, it>, then each level
		 * B<the one before, twice>: S3_ ... S15_ (base 36) */
		snprintf(name, sizeof(name), "_Z1fI1BI");
		for (int l = 0; l < 40; l++)
			strcat(name, "S0_I");
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%d%sS1_E", n, ident);
		for (int l = 0; l < 40; l++) {
			static const char d36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
			int k = l + 2; /* level l closes over B<...> of level l - 1: S(l+2)_ */

			snprintf(name + strlen(name), sizeof(name) - strlen(name), "S%s%c_E",
				 k >= 36 ? "1" : "", d36[k % 36]);
		}
		strcat(name, "Evv");
		fprintf(f, "\t.globl %s\n\t.type %s, @function\n\t.size %s, 16\n%s:\n", name,
			name, name, name);
	}
	fputs("\t.fill 16, 1, 0x90\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -c -o %s %s", obj, path);
	ck_assert_int_eq(run(cmd), 0);
	o = elf_obj_load(obj, NULL, 0, NULL);
	ck_assert_int_eq(elf_obj_status(o), ELF_OBJ_OK);
	s = elf_obj_lookup(o, text_offset(obj));
	ck_assert_ptr_nonnull(s);
	/* A10 .. A59 are the longest; the first of them read wins the tie */
	ck_assert_msg(strstr(s->name, "3A10S1_E") != NULL, "chose %.40s...", s->name);
	/* the demangler ran for 8 of the 118 names compared, each stopped at its bound */
	ck_assert_uint_eq(*o->cmp_kept, DEMANGLE_KEPT_MAX);
	{
		struct demangle_budget b;

		memset(&b, 0, sizeof(b));
		ck_assert_ptr_null(demangle_auto(s->name, &b));
		ck_assert_uint_eq(b.too_long, 1);
	}
	elf_obj_free(o);
}
END_TEST

/* Two tables hold the same symbols, names, raw names and segments. */
static void same_tables(const struct elf_obj *a, const struct elf_obj *b)
{
	uint64_t va, vb;

	ck_assert_int_eq(elf_obj_status(a), elf_obj_status(b));
	ck_assert_uint_eq(elf_obj_nsyms(a), elf_obj_nsyms(b));
	ck_assert_str_eq(elf_obj_symbol_file(a), elf_obj_symbol_file(b));
	ck_assert_int_eq(elf_obj_has_symtab(a), elf_obj_has_symtab(b));
	for (size_t i = 0; i < elf_obj_nsyms(a); i++) {
		const struct elf_sym *x = elf_obj_sym(a, i), *y = elf_obj_sym(b, i);

		ck_assert_uint_eq(x->start, y->start);
		ck_assert_uint_eq(x->end, y->end);
		ck_assert_str_eq(x->name, y->name);
		ck_assert_str_eq(elf_obj_raw_name(a, x), elf_obj_raw_name(b, y));
		ck_assert_str_eq(name_at(a, x->start + 1), name_at(b, y->start + 1));
	}
	for (uint64_t off = 0; off < 0x3000; off += 0x100) {
		int ra = elf_obj_offset_to_vaddr(a, off, &va), rb = elf_obj_offset_to_vaddr(b, off, &vb);

		ck_assert_int_eq(ra, rb);
		if (ra == 0)
			ck_assert_uint_eq(va, vb);
	}
}

/*
 * Lookups in two tables that have chosen nothing yet give the same symbols: at the
 * start, the second byte and the last byte of every symbol `listed` holds.
 */
static void same_lookups(const struct elf_obj *a, const struct elf_obj *b,
			 const struct elf_obj *listed)
{
	for (size_t i = 0; i < elf_obj_nsyms(listed); i++) {
		const struct elf_sym *l = elf_obj_sym(listed, i);
		uint64_t at[] = { l->start, l->start + 1, l->end - 1 };

		for (size_t k = 0; k < 3; k++) {
			const struct elf_sym *x = elf_obj_lookup(a, at[k]), *y = elf_obj_lookup(b, at[k]);

			ck_assert_int_eq(x != NULL, y != NULL);
			if (!x)
				continue;
			ck_assert_str_eq(x->name, y->name);
			ck_assert_str_eq(elf_obj_raw_name(a, x), elf_obj_raw_name(b, y));
			ck_assert_uint_eq(x->start, y->start);
			ck_assert_uint_eq(x->end, y->end);
		}
	}
}

/* What a cache_ctx was told of damaged entries. */
struct told {
	int n;
	char why[256];
};

static void tell(void *arg, const char *entry, const char *why)
{
	struct told *t = arg;

	t->n++;
	snprintf(t->why, sizeof(t->why), "%s", why);
}

/* A loaded table kept in the cache gives the same table, and only while its files
 * are the ones it was made from; a damaged one is said and made again. */
START_TEST(test_cache)
{
	char dir[600], copy[600], cmd[3000];
	const char *libc = libc_path();
	struct elf_obj *plain, *first, *cached;
	struct told told = { 0, "" };
	struct cache_ctx cache = { dir, tell, &told, NULL, NULL, 0 };

	snprintf(dir, sizeof(dir), "%s/cache", tmpdir);
	snprintf(copy, sizeof(copy), "%s/copy", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", bin, copy);
	ck_assert_int_eq(system(cmd), 0);
	plain = elf_obj_load(copy, NULL, 0, NULL);
	first = elf_obj_load_cached(copy, NULL, 0, NULL, &cache);
	cached = elf_obj_load_cached(copy, NULL, 0, NULL, &cache);
	same_tables(plain, first);
	same_tables(plain, cached);
	snprintf(cmd, sizeof(cmd), "test $(ls %s/symbols | grep -vc '[.]ok$') = 1", dir);
	ck_assert_int_eq(system(cmd), 0);
	elf_obj_free(first);
	elf_obj_free(cached);
	/* another file at the same path: loaded afresh, no damage said */
	snprintf(cmd, sizeof(cmd), "cp %s %s.new && mv %s.new %s", stripped, copy, copy, copy);
	ck_assert_int_eq(system(cmd), 0);
	cached = elf_obj_load_cached(copy, NULL, 0, NULL, &cache);
	ck_assert_int_eq(elf_obj_has_symtab(cached), 0);
	elf_obj_free(cached);
	elf_obj_free(plain);
	ck_assert_int_eq(told.n, 0);
	/* a damaged cache file is not used, is said, and is made again */
	plain = elf_obj_load(bin, NULL, 0, NULL);
	elf_obj_free(elf_obj_load_cached(bin, NULL, 0, NULL, &cache));
	snprintf(cmd, sizeof(cmd), "for f in %s/symbols/*; do truncate -s 300 $f; done", dir);
	ck_assert_int_eq(system(cmd), 0);
	cached = elf_obj_load_cached(bin, NULL, 0, NULL, &cache);
	same_tables(plain, cached);
	elf_obj_free(cached);
	ck_assert_int_eq(told.n, 1);
	ck_assert_str_eq(told.why, "truncated");
	cached = elf_obj_load_cached(bin, NULL, 0, NULL, &cache);
	same_tables(plain, cached);
	elf_obj_free(cached);
	ck_assert_int_eq(told.n, 1); /* made again: good now */
	/* one byte of a name changed in place ("main" is in every table): not used */
	snprintf(cmd, sizeof(cmd), "for f in $(grep -l -a main %s/symbols/*); do "
		 "off=$(grep -a -b -o main $f | tail -1 | cut -d: -f1); "
		 "printf M | dd of=$f bs=1 seek=$off conv=notrunc status=none; done", dir);
	ck_assert_int_eq(system(cmd), 0);
	cached = elf_obj_load_cached(bin, NULL, 0, NULL, &cache);
	same_tables(plain, cached);
	elf_obj_free(cached);
	ck_assert_int_ge(told.n, 2);
	ck_assert_ptr_nonnull(strstr(told.why, "checksum differs"));
	elf_obj_free(plain);
	/* aliases: the cached table keeps every symbol of an address, and a lookup in it
	 * chooses as in a fresh one */
	elf_obj_free(elf_obj_load_cached(aliases, NULL, 0, NULL, &cache));
	cached = elf_obj_load_cached(aliases, NULL, 0, NULL, &cache);
	snprintf(cmd, sizeof(cmd), "grep -qa _ZN3foo17h0123456789abcdefE.llvm.1234 %s/symbols/*", dir);
	ck_assert_int_eq(system(cmd), 0);
	check_alias_groups(cached, text_offset(aliases));
	elf_obj_free(cached);
	/* libc, with its symbols in the debug file at its build-id path when installed */
	if (libc) {
		struct elf_obj *listed = elf_obj_load(libc, NULL, 0, NULL);

		plain = elf_obj_load(libc, NULL, 0, NULL);
		elf_obj_free(elf_obj_load_cached(libc, NULL, 0, NULL, &cache));
		cached = elf_obj_load_cached(libc, NULL, 0, NULL, &cache);
		same_lookups(plain, cached, listed);
		same_tables(plain, cached);
		elf_obj_free(listed);
		elf_obj_free(cached);
		elf_obj_free(plain);
	}
}
END_TEST

static Suite *elfsyms_suite(void)
{
	Suite *s = suite_create("elfsyms");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fixture_names);
	tcase_add_test(tc, test_zero_size_symbol_extends);
	tcase_add_test(tc, test_sorted_and_bounded);
	tcase_add_test(tc, test_stripped_uses_dynsym);
	tcase_add_test(tc, test_debuglink_next_to_file);
	tcase_add_test(tc, test_debuglink_in_debug_dir);
	tcase_add_test(tc, test_sysroot);
	tcase_add_test(tc, test_build_id);
	tcase_add_test(tc, test_offset_to_vaddr);
	tcase_add_test(tc, test_bad_inputs);
	tcase_add_test(tc, test_strip_version);
	tcase_add_test(tc, test_real_libc);
	tcase_add_test(tc, test_chosen_at_lookup);
	tcase_add_test(tc, test_alias_rules);
	tcase_add_test(tc, test_cache);
	suite_add_tcase(s, tc);
	/* an alias's name kept past the demangler's output bound, met before its 5 ms of
	 * CPU time as fast as a CPU runs libiberty (CK_EXCLUDE_TAGS=cputime under an
	 * emulator: scripts/arm64-ci.sh) */
	tc = tcase_create("alias_bombs");
	tcase_set_tags(tc, "cputime");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_alias_bombs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed;
	char cmd[600];

	if (build_fixtures() != 0) {
		fprintf(stderr, "check_elfsyms: cannot build the fixtures in %s\n", tmpdir);
		return 1;
	}
	failed = run_suite(elfsyms_suite());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "check_elfsyms: cannot remove %s\n", tmpdir);
	return failed ? 1 : 0;
}
