/* check_symbolize: names, files, lines and inlined frames of native code, against
 * eu-addr2line -i (elfutils) on a C++ fixture compiled at test time. */
#include <check.h>
#include <gelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/demangle.h"
#include "symbolize/dwarfinfo.h"
#include "symbolize/symbolizer.h"
#include "tests/testutil.h"

static char dir[] = "/tmp/check_symbolize.XXXXXX";
static char bin[512];

static void build_fixture(void)
{
	char cmd[1024];
	const char *top = getenv("PERFCONV_TOP") ? getenv("PERFCONV_TOP") : ".";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/inline_cpp", dir);
	snprintf(cmd, sizeof(cmd), "g++ -O2 -g -fno-omit-frame-pointer -o %s %s/tests/fixtures/inline_cpp.cpp",
		 bin, top);
	ck_assert_int_eq(system(cmd), 0);
}

static void remove_fixture(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* Address and size of a symbol, from nm. */
static int nm_symbol(const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[600], line[1024];
	FILE *f;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "nm -S %s", bin);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char sym[512], type;
		unsigned long long a, s;

		if (sscanf(line, "%llx %llx %c %511s", &a, &s, &type, sym) == 4 && strcmp(sym, name) == 0) {
			*addr = a;
			*size = s;
			found = 1;
		}
	}
	if (f)
		pclose(f);
	return found;
}

/* vaddr -> file offset through the program headers, as the recording's pgoff would give. */
static uint64_t file_offset(uint64_t vaddr)
{
	int fd = open(bin, O_RDONLY);
	Elf *e;
	size_t n;
	uint64_t off = vaddr;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(e);
	close(fd);
	return off;
}

/* eu-addr2line -i -f: pairs of "name[ inlined at ...]" and "file:line[:col]" lines. */
static size_t addr2line(uint64_t addr, char names[][256], char locs[][512], size_t cap)
{
	char cmd[700], a[256], b[512];
	FILE *f;
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "eu-addr2line -i -f -e %s 0x%" PRIx64, bin, addr);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (n < cap && fgets(a, sizeof(a), f) && fgets(b, sizeof(b), f)) {
		char *cut = strstr(a, " inlined at ");

		if (cut)
			*cut = '\0';
		a[strcspn(a, "\n")] = '\0';
		b[strcspn(b, "\n")] = '\0';
		snprintf(names[n], 256, "%s", a);
		snprintf(locs[n], 512, "%s", b);
		n++;
	}
	pclose(f);
	return n;
}

static struct symbolizer *new_symbolizer(int demangle, int inl)
{
	static struct diag d;
	struct sym_options o;

	memset(&o, 0, sizeof(o));
	o.demangle = demangle;
	o.inline_frames = inl;
	diag_init(&d);
	return symbolizer_new(&o, &d);
}

START_TEST(lines_and_inlined_frames_match_eu_addr2line)
{
	struct symbolizer *s = new_symbolizer(1, 1);
	uint64_t start, size;
	size_t checked = 0, inlined_seen = 0;

	ck_assert(nm_symbol("hot_loop", &start, &size));
	for (uint64_t a = start; a < start + size; a += 3) {
		struct sym_frame f[16];
		char names[16][256], locs[16][512], loc[600];
		size_t n = symbolizer_native(s, 0, bin, NULL, 0, file_offset(a), 0, f, 16);
		size_t m = addr2line(a, names, locs, 16);

		ck_assert_uint_eq(n, m);
		for (size_t i = 0; i < n; i++) {
			if (f[i].column)
				snprintf(loc, sizeof(loc), "%s:%u:%u", f[i].file, f[i].line, f[i].column);
			else
				snprintf(loc, sizeof(loc), "%s:%u", f[i].file, f[i].line);
			ck_assert_str_eq(f[i].system_name, names[i]);
			ck_assert_str_eq(loc, locs[i]);
			ck_assert_int_eq(f[i].inlined, i + 1 < n);
		}
		if (n > 1) {
			inlined_seen++;
			ck_assert_str_eq(f[0].name, "mix"); /* DWARF names a static function without its parameters */
			ck_assert_str_eq(f[n - 1].name, "hot_loop");
			ck_assert_ptr_nonnull(strstr(f[0].file, "inline_cpp.cpp"));
			ck_assert_uint_ge(f[0].line, 28); /* mix's body */
			ck_assert_uint_le(f[0].line, 30);
			ck_assert_uint_eq(f[n - 1].line, 37); /* the call of mix in hot_loop */
		}
		checked++;
	}
	ck_assert_uint_gt(checked, 5);
	ck_assert_uint_gt(inlined_seen, 0); /* mix was inlined, and we saw it */
	symbolizer_free(s);
}
END_TEST

/*
 * The DWARF of a file another user can write, cut to nothing by that user after it was
 * opened: read from a private copy (libdw maps what it is given; a mapped page past a
 * file's new end is SIGBUS), so every frame is still there.
 */
START_TEST(dwarf_of_a_file_cut_after_it_was_opened)
{
	char copy[600], cmd[2000];
	uint64_t start, size;
	struct dwarf_info *d;
	size_t inlined = 0, named = 0;

	snprintf(copy, sizeof(copy), "%s/others", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 666 %s", bin, copy, copy);
	ck_assert_int_eq(system(cmd), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(copy, 65534, 65534), 0);
	ck_assert(nm_symbol("hot_loop", &start, &size));
	d = dwarf_info_open(copy, NULL, NULL);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(truncate(copy, 0), 0);
	for (uint64_t a = start; a < start + size; a += 3) {
		struct dwarf_frame f[16];
		size_t n = dwarf_info_frames(d, a, f, 16);

		if (n && f[n - 1].name && strstr(f[n - 1].name, "hot_loop"))
			named++;
		if (n > 1 && f[0].name && !strcmp(f[0].name, "mix"))
			inlined++;
	}
	ck_assert_uint_gt(named, 5);
	ck_assert_uint_gt(inlined, 0);
	dwarf_info_free(d);
	unlink(copy);
}
END_TEST

START_TEST(cpp_names_demangled_system_name_kept)
{
	struct symbolizer *s = new_symbolizer(1, 1), *raw = new_symbolizer(0, 1);
	struct sym_frame f[16];
	uint64_t a, sz;
	size_t n;

	ck_assert(nm_symbol("_ZNK6shapes6Circle4areaEv", &a, &sz));
	n = symbolizer_native(s, 0, bin, NULL, 0, file_offset(a + 2), 0, f, 16);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(f[0].name, "shapes::Circle::area");
	ck_assert_str_eq(f[0].system_name, "_ZNK6shapes6Circle4areaEv");
	ck_assert_uint_eq(f[0].line, 14);
	n = symbolizer_native(raw, 0, bin, NULL, 0, file_offset(a + 2), 0, f, 16);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(f[0].name, "_ZNK6shapes6Circle4areaEv");
	ck_assert(nm_symbol("_ZN6shapes10accumulateIdEET_PKS1_i", &a, &sz));
	n = symbolizer_native(s, 0, bin, NULL, 0, file_offset(a + 1), 0, f, 16);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(f[n - 1].name, "shapes::accumulate<double>");
	ck_assert_str_eq(f[n - 1].system_name, "_ZN6shapes10accumulateIdEET_PKS1_i");
	symbolizer_free(s);
	symbolizer_free(raw);
}
END_TEST

/* GCC writes no linkage name for a lambda's operator(), a template instantiated with
 * its type, nor a member of a class in an anonymous namespace: each inlined frame is
 * named by its DW_AT_name after its declaration's scope, where eu-addr2line and
 * llvm-symbolizer say operator() and twist. */
START_TEST(inlined_names_without_linkage_name_have_their_scope)
{
	struct symbolizer *s = new_symbolizer(1, 1);
	uint64_t start, size;
	int seen_twist = 0, seen_lambda = 0, seen_apply = 0;

	ck_assert(nm_symbol("scoped_loop", &start, &size));
	for (uint64_t a = start; a < start + size; a++) {
		struct sym_frame f[16];
		size_t n = symbolizer_native(s, 0, bin, NULL, 0, file_offset(a), 0, f, 16);

		for (size_t i = 0; i < n; i++) {
			ck_assert_str_ne(f[i].name, "operator()");
			ck_assert_str_ne(f[i].name, "twist");
			seen_twist |= strcmp(f[i].name, "(anonymous namespace)::Outer::Inner::twist") == 0;
			/* the function a lambda is in spelt with its parameters, as in the
			 * template arguments of apply_all's name (issue 48) */
			seen_lambda |= strcmp(f[i].name, "scoped_loop(unsigned int)::"
							 "<lambda(unsigned int)>::operator()") == 0;
			/* a template in the global namespace has no scope to add */
			seen_apply |= strcmp(f[i].name, "apply_all<scoped_loop(unsigned int)::"
							"<lambda(unsigned int)> >") == 0;
		}
		if (n > 1)
			ck_assert_str_eq(f[n - 1].name, "scoped_loop");
	}
	ck_assert(seen_twist);
	ck_assert(seen_lambda);
	ck_assert(seen_apply);
	symbolizer_free(s);
}
END_TEST

START_TEST(no_inline_gives_the_call_line)
{
	struct symbolizer *s = new_symbolizer(1, 0);
	uint64_t start, size;
	size_t seen = 0;

	ck_assert(nm_symbol("hot_loop", &start, &size));
	for (uint64_t a = start; a < start + size; a++) {
		struct sym_frame f[16];
		size_t n = symbolizer_native(s, 0, bin, NULL, 0, file_offset(a), 0, f, 16);

		ck_assert_uint_eq(n, 1);
		ck_assert_str_eq(f[0].name, "hot_loop");
		ck_assert_int_eq(f[0].inlined, 0);
		seen += f[0].line == 37;
	}
	ck_assert_uint_gt(seen, 0);
	symbolizer_free(s);
}
END_TEST

START_TEST(cpp_and_rust_names_demangle_as_perf_shows_them)
{
	static const char *const cases[][2] = {
		{ "_ZNK6shapes6Circle4areaEv", "shapes::Circle::area" },
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" }, /* Rust legacy */
		{ "_RNvCskwGfYPst2Cb_3foo16example_function", "foo::example_function" }, /* v0 */
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h6bd5a2b8c3e4f5a6E",
		  "std::rt::lang_start::{{closure}}" },
		{ "_ZdlPv@plt", "operator delete@plt" }, /* a PLT entry, as perf names it */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = demangle_name(cases[i][0], NULL);

		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d, cases[i][1]);
		free(d);
	}
	ck_assert_ptr_null(demangle_name("main", NULL));
	ck_assert_ptr_null(demangle_name("_Zgarbage", NULL));
}
END_TEST

/* Addresses prefetched on the second thread, the object preloaded by name, give the
 * frames symbolized on the spot; the one asked for twice, once. */
START_TEST(prefetched_frames_are_the_same)
{
	struct symbolizer *plain = new_symbolizer(1, 1), *ahead = new_symbolizer(1, 1);
	struct sym_object obj = { bin, NULL, 0 };
	uint64_t start, size;
	size_t checked = 0;

	ck_assert(nm_symbol("hot_loop", &start, &size));
	symbolizer_preload(ahead, &obj, 1);
	for (uint64_t a = start; a < start + size; a += 2)
		for (int ret = 0; ret < 2; ret++)
			symbolizer_prefetch(ahead, 7, bin, NULL, 0, file_offset(a), ret);
	for (uint64_t a = start; a < start + size; a += 1)
		for (int ret = 0; ret < 2; ret++) {
			struct sym_frame f[16], g[16];
			size_t n = symbolizer_native(plain, 3, bin, NULL, 0, file_offset(a), ret, f, 16);
			size_t m = symbolizer_native(ahead, 7, bin, NULL, 0, file_offset(a), ret, g, 16);

			if (a == start + size / 2)
				symbolizer_prefetch_stop(ahead); /* the rest on this thread */
			ck_assert_uint_eq(n, m);
			for (size_t i = 0; i < n; i++) {
				ck_assert_str_eq(f[i].name, g[i].name);
				ck_assert_str_eq(f[i].system_name, g[i].system_name);
				ck_assert_str_eq(f[i].file ? f[i].file : "-", g[i].file ? g[i].file : "-");
				ck_assert_uint_eq(f[i].line, g[i].line);
				ck_assert_uint_eq(f[i].column, g[i].column);
				ck_assert_int_eq(f[i].inlined, g[i].inlined);
			}
			checked += n > 0;
		}
	ck_assert_uint_gt(checked, 10);
	/* with room for fewer frames: the innermost inlined calls, then the function */
	for (uint64_t a = start; a < start + size; a++) {
		struct sym_frame f[16], g[1];
		size_t n = symbolizer_native(plain, 3, bin, NULL, 0, file_offset(a), 0, f, 16);

		if (n < 2)
			continue;
		ck_assert_uint_eq(symbolizer_native(ahead, 7, bin, NULL, 0, file_offset(a), 0, g, 1), 1);
		ck_assert_str_eq(g[0].name, f[n - 1].name);
		ck_assert_int_eq(g[0].inlined, 0);
	}
	symbolizer_free(plain);
	symbolizer_free(ahead);
}
END_TEST

/* The threads of this process (a test runs in a process of its own). */
static size_t threads_now(void)
{
	char line[256];
	size_t n = 0;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %zu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Where the caches answer (a second run: the object's symbols and its DWARF answers
 * kept), a prefetched address is symbolized on the spot and no second thread starts;
 * an address the frame cache does not hold starts it. The frames are the same. */
START_TEST(cached_prefetch_needs_no_thread)
{
	char cache[] = "/tmp/check_symbolize_cache.XXXXXX", cmd[600];
	struct sym_options o;
	struct diag d;
	struct symbolizer *first, *second;
	uint64_t start, size, far, fsize;
	char *file, *debug;
	size_t checked = 0;
	/* the threads before: 1, or 2 under qemu-user, whose thread of its own is counted */
	size_t before = threads_now();

	ck_assert_ptr_nonnull(mkdtemp(cache));
	ck_assert(nm_symbol("hot_loop", &start, &size));
	ck_assert(nm_symbol("main", &far, &fsize));
	memset(&o, 0, sizeof(o));
	o.demangle = o.inline_frames = 1;
	o.cache_dir = cache;
	diag_init(&d);
	/* the first run: its lookups kept in the cache when it ends */
	first = symbolizer_new(&o, &d);
	for (uint64_t a = start; a < start + size; a += 2) {
		struct sym_frame f[16];

		symbolizer_native(first, 7, bin, NULL, 0, file_offset(a), 0, f, 16);
	}
	symbolizer_free(first);
	first = new_symbolizer(1, 1);
	second = symbolizer_new(&o, &d);
	ck_assert_uint_eq(threads_now(), before);
	/* the object found first, as the unwinder finds it for its CFI */
	ck_assert(symbolizer_object_files(second, 7, bin, NULL, 0, &file, &debug));
	free(file);
	free(debug);
	for (uint64_t a = start; a < start + size; a += 2)
		symbolizer_prefetch(second, 7, bin, NULL, 0, file_offset(a), 0);
	ck_assert_uint_eq(threads_now(), before);
	for (uint64_t a = start; a < start + size; a += 2) {
		struct sym_frame f[16], g[16];
		size_t n = symbolizer_native(first, 7, bin, NULL, 0, file_offset(a), 0, f, 16);
		size_t m = symbolizer_native(second, 7, bin, NULL, 0, file_offset(a), 0, g, 16);

		ck_assert_uint_eq(n, m);
		for (size_t i = 0; i < n; i++) {
			ck_assert_str_eq(f[i].name, g[i].name);
			ck_assert_str_eq(f[i].file ? f[i].file : "-", g[i].file ? g[i].file : "-");
			ck_assert_uint_eq(f[i].line, g[i].line);
			ck_assert_int_eq(f[i].inlined, g[i].inlined);
		}
		checked += n > 0;
	}
	ck_assert_uint_gt(checked, 10);
	/* an address no run asked for: its DWARF is to be read, on the helper thread */
	symbolizer_prefetch(second, 7, bin, NULL, 0, file_offset(far), 0);
	ck_assert_uint_eq(threads_now(), before + 1);
	symbolizer_free(second);
	symbolizer_free(first);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(missing_and_mismatched_files_are_reported)
{
	struct symbolizer *s = new_symbolizer(1, 1);
	struct sym_frame f[4];
	uint8_t wrong[20] = { 0xde, 0xad };

	ck_assert_uint_eq(symbolizer_native(s, 0, "/nonexistent/libnothing.so", NULL, 0, 0x1000, 0, f, 4), 0);
	ck_assert_int_eq(symbolizer_problem(s, 0), SYM_OBJ_MISSING);
	ck_assert_uint_eq(symbolizer_native(s, 1, bin, wrong, 20, 0x1000, 0, f, 4), 0);
	ck_assert_int_eq(symbolizer_problem(s, 1), SYM_OBJ_MISMATCH);
	ck_assert_uint_eq(symbolizer_native(s, 2, "[anon:x]", NULL, 0, 0x10, 0, f, 4), 0);
	ck_assert_int_eq(symbolizer_problem(s, 2), SYM_OBJ_NOT_ELF);
	symbolizer_free(s);
}
END_TEST

/* Issue 12 C1: the return address of a call to a noreturn function that is a function's
 * last instruction lies one byte past its symbol: it is looked up at address - 1, so
 * the frame is the caller, not object+0x... (88 GC-worker frames of libjvm.so were).
 * The fixture has no DWARF: only the symbol table can name it. */
/*
 * Without a build id in the recording, the file at the recorded path is held to the
 * MMAP2 record's device and inode on the host that made the recording; any other file
 * is used but said to be unverified. A mapping named "PATH (deleted)" is the file at
 * PATH (or one literally named so).
 */
START_TEST(files_without_build_id_are_verified_by_inode_or_said)
{
	struct symbolizer *s = new_symbolizer(1, 1);
	struct sym_location loc;
	struct sym_file_id id;
	struct stat st;
	char deleted[600], literal[600], cmd[1400];
	const char *file;
	struct sym_frame f[4];
	uint64_t start, size;

	ck_assert_int_eq(stat(bin, &st), 0);
	memset(&id, 0, sizeof(id));
	id.maj = major(st.st_dev);
	id.min = minor(st.st_dev);
	id.ino = st.st_ino;
	id.same_host = 1;
	/* object 0: the very file */
	symbolizer_object_file_id(s, 0, &id);
	symbolizer_locate_object(s, 0, bin, NULL, 0, &loc);
	ck_assert_str_eq(loc.found, bin);
	ck_assert_ptr_null(loc.unverified);
	/* object 1: another inode at that path: used, and said */
	id.ino++;
	symbolizer_object_file_id(s, 1, &id);
	symbolizer_locate_object(s, 1, bin, NULL, 0, &loc);
	ck_assert_str_eq(loc.found, bin);
	ck_assert_ptr_nonnull(loc.unverified);
	ck_assert_ptr_nonnull(strstr(loc.unverified, "another inode"));
	/* object 2: recorded elsewhere, nothing to compare with */
	id.ino--;
	id.same_host = 0;
	symbolizer_object_file_id(s, 2, &id);
	symbolizer_locate_object(s, 2, bin, NULL, 0, &loc);
	ck_assert_str_eq(loc.unverified, "not verified: no build id");
	/* symbolizing it says the same afterwards; the first object told wins */
	ck_assert(nm_symbol("hot_loop", &start, &size));
	ck_assert_uint_gt(symbolizer_native(s, 2, bin, NULL, 0, file_offset(start), 0, f, 4), 0);
	ck_assert_str_eq(symbolizer_unverified(s, 2, &file), "not verified: no build id");
	ck_assert_str_eq(file, bin);
	/* "PATH (deleted)": the file at PATH, never its inode (that one was removed) */
	snprintf(deleted, sizeof(deleted), "%s (deleted)", bin);
	symbolizer_locate(s, deleted, NULL, 0, &loc);
	ck_assert_int_eq(loc.problem, SYM_OBJ_FINE);
	ck_assert_str_eq(loc.found, bin);
	ck_assert_str_eq(loc.unverified, "not verified: no build id");
	ck_assert_uint_eq(loc.ntried, 2); /* as named, then as PATH */
	ck_assert_str_eq(loc.tried[0].path, deleted);
	ck_assert_str_eq(loc.tried[0].result, "file not found");
	/* a file really named "PATH (deleted)" is taken first */
	snprintf(literal, sizeof(literal), "%s (deleted)", bin);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", bin, literal);
	ck_assert_int_eq(system(cmd), 0);
	symbolizer_locate(s, deleted, NULL, 0, &loc);
	ck_assert_str_eq(loc.found, literal);
	unlink(literal);
	symbolizer_free(s);
}
END_TEST

START_TEST(return_address_past_a_noreturn_call)
{
	struct symbolizer *s = new_symbolizer(1, 1);
	struct sym_frame f[4];
	char cmd[1200], nr[256], line[512];
	const char *top = getenv("PERFCONV_TOP") ? getenv("PERFCONV_TOP") : ".";
	uint64_t addr = 0, size = 0, ret_addr;
	char saved[512];
	FILE *p;
	int last_is_call = 0;

	snprintf(nr, sizeof(nr), "%s/noreturn", dir);
	snprintf(cmd, sizeof(cmd), "cc -O2 -fno-omit-frame-pointer -o %s %s/tests/fixtures/noreturn.c",
		 nr, top);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(saved, sizeof(saved), "%s", bin);
	snprintf(bin, sizeof(bin), "%s", nr); /* nm_symbol and file_offset read `bin` */
	ck_assert(nm_symbol("worker", &addr, &size));
	ret_addr = addr + size;
	/* the precondition: worker's last instruction is the call */
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn --start-address=0x%" PRIx64
		 " --stop-address=0x%" PRIx64 " %s", addr, ret_addr, nr);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		if (strchr(line, ':') && strstr(line, "\t"))
			last_is_call = strstr(line, "call") != NULL;
	pclose(p);
	ck_assert_msg(last_is_call, "worker does not end in a call");
	ck_assert_uint_eq(symbolizer_native(s, 0, nr, NULL, 0, file_offset(ret_addr), 1, f, 4), 1);
	ck_assert_str_eq(f[0].name, "worker");
	snprintf(bin, sizeof(bin), "%s", saved);
	symbolizer_free(s);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("symbolize");
	TCase *tc = tcase_create("core");
	int failed;

	tcase_add_unchecked_fixture(tc, build_fixture, remove_fixture);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, lines_and_inlined_frames_match_eu_addr2line);
	tcase_add_test(tc, cpp_names_demangled_system_name_kept);
	tcase_add_test(tc, no_inline_gives_the_call_line);
	tcase_add_test(tc, inlined_names_without_linkage_name_have_their_scope);
	tcase_add_test(tc, missing_and_mismatched_files_are_reported);
	tcase_add_test(tc, return_address_past_a_noreturn_call);
	tcase_add_test(tc, files_without_build_id_are_verified_by_inode_or_said);
	tcase_add_test(tc, prefetched_frames_are_the_same);
	tcase_add_test(tc, cached_prefetch_needs_no_thread);
	tcase_add_test(tc, cpp_and_rust_names_demangle_as_perf_shows_them);
	tcase_add_test(tc, dwarf_of_a_file_cut_after_it_was_opened);
	suite_add_tcase(su, tc);
	failed = run_suite(su);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
