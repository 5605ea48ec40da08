/* check_jitcache: unit tests of the JIT tables kept between conversions: in the cache
 * (symbolize/jit/jitcache.h: the same dump read back in place, a grown dump read on, a
 * rewritten one read afresh, a damaged entry said and removed) and in a watcher's store
 * (symbolize/jit/jitstore.h: taken and given back, dropped when no conversion took it,
 * refused for a time before its prune or a dump that shrank). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/later.h"
#include "common/util.h"
#include "formats/read/jitdump.h"
#include "symbolize/jit/jitcache.h"
#include "symbolize/jit/jitstore.h"
#include "tests/jitdump_build.h"
#include "tests/testutil.h"

/* A dump of `n` loads at 0x1000 * (i + 1), each at time 100 * (i + 1), named f<i>. */
static void dump_of(struct jb *b, int first, int n)
{
	for (int i = first; i < first + n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		jb_load(b, 100 * (uint64_t)(i + 1), 7, 0x1000 * (uint64_t)(i + 1), 0x100,
			(uint64_t)i, name);
	}
}

struct fx {
	char dir[64], dump[96];
	struct cache_ctx cache;
	int damaged;
	char why[128];
};

static void on_damaged(void *arg, const char *entry, const char *why)
{
	struct fx *fx = arg;

	(void)entry;
	fx->damaged++;
	snprintf(fx->why, sizeof(fx->why), "%s", why);
}

static void fx_init(struct fx *fx)
{
	memset(fx, 0, sizeof(*fx));
	strcpy(fx->dir, "/tmp/check_jitcache.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx->dir));
	snprintf(fx->dump, sizeof(fx->dump), "%s/jit-7.dump", fx->dir);
	fx->cache.dir = fx->dir;
	fx->cache.damaged = on_damaged;
	fx->cache.arg = fx;
}

static void fx_release(struct fx *fx)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_dump(const char *path, const struct jb *b, const char *mode)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b->p, 1, b->len, f), b->len);
	fclose(f);
}

/* The dump at `path`, open, its key, and a reader from `from`. */
static struct jitdump_reader *open_dump(const char *path, int *fd, struct stat *st,
					struct jit_store_key *key, uint64_t from)
{
	struct jitdump_open o = { .from = from };
	struct jitdump_reader *r;
	struct diag d;

	diag_init(&d);
	*fd = open(path, O_RDONLY);
	ck_assert_int_ge(*fd, 0);
	ck_assert_int_eq(fstat(*fd, st), 0);
	r = jitdump_reader_open_fd(*fd, path, &o, &d);
	ck_assert_ptr_nonnull(r);
	memset(key, 0, sizeof(*key));
	key->dev = st->st_dev;
	key->ino = st->st_ino;
	key->hdr = *jitdump_reader_header(r);
	key->demangle = 1;
	return r;
}

static const char *name_at(const struct jitcode *jc, uint64_t t, uint64_t addr)
{
	struct jitcode_frame f;

	return jitcode_lookup(jc, t, addr, &f) ? f.name : "-";
}

/* Saved, read back in place; grown, read on from where it stopped; rewritten before
 * that point, or read as timeless, not used. */
START_TEST(test_cache_dump_states)
{
	struct fx fx;
	struct jb b, more;
	struct jit_store_key key;
	struct jitdump_reader *r;
	struct jitcode *jc;
	struct stat st;
	uint64_t resume, back;
	int fd;

	fx_init(&fx);
	jb_init(&b, 0, 7, 0);
	dump_of(&b, 0, 10);
	write_dump(fx.dump, &b, "wb");
	r = open_dump(fx.dump, &fd, &st, &key, 0);
	ck_assert_ptr_null(jitcache_open(&fx.cache, &key, fd, &st, &back)); /* none yet */
	jc = jitcode_new(1);
	jitcode_add_dump(jc, r, 7);
	resume = jitdump_reader_resume(r);
	ck_assert_uint_eq(resume, b.len);
	jitdump_reader_close(r);
	jitcache_save(&fx.cache, &key, fd, jc, resume);
	jitcode_free(jc);
	jc = jitcache_open(&fx.cache, &key, fd, &st, &back);
	ck_assert_ptr_nonnull(jc);
	ck_assert_uint_eq(back, resume);
	ck_assert_str_eq(name_at(jc, 1000, 0x3010), "f2");
	ck_assert_str_eq(name_at(jc, 250, 0x3010), "-"); /* loaded at 300 */
	ck_assert_uint_eq(jitcode_loads(jc), 10);
	jitcode_free(jc);
	close(fd);

	/* the runtime wrote more: read on from where the entry's read stopped */
	more.p = NULL;
	memset(&more, 0, sizeof(more));
	dump_of(&more, 10, 5);
	write_dump(fx.dump, &more, "ab");
	r = open_dump(fx.dump, &fd, &st, &key, 0);
	jc = jitcache_open(&fx.cache, &key, fd, &st, &back);
	ck_assert_ptr_nonnull(jc);
	ck_assert_uint_eq(back, resume);
	ck_assert_int_eq(jitdump_reader_go_on(r, back), 0);
	jitcode_add_dump(jc, r, 7);
	ck_assert_uint_eq(jitdump_reader_resume(r), b.len + more.len);
	jitdump_reader_close(r);
	jitcode_finish(jc);
	ck_assert_str_eq(name_at(jc, 5000, 0xd010), "f12");
	ck_assert_str_eq(name_at(jc, 5000, 0x2010), "f1");
	ck_assert_uint_eq(jitcode_loads(jc), 15);
	jitcache_save(&fx.cache, &key, fd, jc, b.len + more.len);
	jitcode_free(jc);
	/* read as timeless: another entry, none yet */
	key.timeless = 1;
	ck_assert_ptr_null(jitcache_open(&fx.cache, &key, fd, &st, &back));
	key.timeless = 0;
	close(fd);

	/* the same name, the same header, other code before that point: read afresh */
	b.p[b.len - 20] ^= 0x55;
	write_dump(fx.dump, &b, "r+b");
	r = open_dump(fx.dump, &fd, &st, &key, 0);
	ck_assert_ptr_null(jitcache_open(&fx.cache, &key, fd, &st, &back));
	ck_assert_int_eq(fx.damaged, 0);
	jitdump_reader_close(r);
	close(fd);
	free(b.p);
	free(more.p);
	fx_release(&fx);
}
END_TEST

/* An entry altered after it was sealed: said damaged, removed, the dump read afresh. */
START_TEST(test_cache_damaged)
{
	struct fx fx;
	struct jb b;
	struct jit_store_key key;
	struct jitdump_reader *r;
	struct jitcode *jc;
	struct stat st;
	uint64_t back;
	char cmd[256];
	int fd;

	fx_init(&fx);
	jb_init(&b, 0, 7, 0);
	dump_of(&b, 0, 4);
	write_dump(fx.dump, &b, "wb");
	r = open_dump(fx.dump, &fd, &st, &key, 0);
	jc = jitcode_new(1);
	jitcode_add_dump(jc, r, 7);
	jitcache_save(&fx.cache, &key, fd, jc, jitdump_reader_resume(r));
	jitdump_reader_close(r);
	jitcode_free(jc);
	/* a byte of the table flipped: the checksum no longer holds */
	snprintf(cmd, sizeof(cmd), "f=$(ls %s/jit/* | grep -v '\\.ok$'); "
		 "printf '\\377' | dd of=$f bs=1 seek=300 conv=notrunc 2>/dev/null; rm -f $f.ok",
		 fx.dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_ptr_null(jitcache_open(&fx.cache, &key, fd, &st, &back));
	ck_assert_int_eq(fx.damaged, 1);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls %s/jit | grep -v '\\.ok$')\"", fx.dir);
	ck_assert_int_eq(system(cmd), 0); /* removed, to be made again */
	close(fd);
	free(b.p);
	fx_release(&fx);
}
END_TEST

/* The store: a table taken and given back; dropped when a conversion did not take it;
 * not given for a time before its prune, nor for a file shorter than what was read. */
START_TEST(test_store)
{
	struct jit_store *s = jit_store_new();
	struct jit_store_key k, other;
	struct jitcode *jc = jitcode_new(1), *got;
	uint64_t resume;

	memset(&k, 0, sizeof(k));
	k.dev = 1;
	k.ino = 2;
	k.hdr.pid = 7;
	other = k;
	other.hdr.timestamp = 99; /* the same file, another dump written into it */
	jit_store_begin(s);
	ck_assert_ptr_null(jit_store_take(s, &k, 100, 0, &resume, NULL));
	jitcode_add_load(jc, 10, 0x1000, 0x10, "f");
	jitcode_prune(jc, 50); /* answers from 50 on */
	jitcode_finish(jc);
	ck_assert_uint_eq(jitcode_exact_from(jc), 50);
	jit_store_put(s, &k, jc, 100, 0);
	ck_assert_uint_eq(jit_store_count(s), 1);
	jit_store_begin(s); /* the next conversion */
	got = jit_store_take(s, &k, 150, 60, &resume, NULL);
	ck_assert_ptr_eq(got, jc);
	ck_assert_uint_eq(resume, 100);
	jit_store_put(s, &k, got, 120, 0);
	jit_store_begin(s);
	ck_assert_ptr_null(jit_store_take(s, &k, 150, 40, &resume, NULL)); /* before the prune */
	ck_assert_uint_eq(jit_store_count(s), 0);
	jc = jitcode_new(1);
	jit_store_put(s, &k, jc, 100, 0);
	jit_store_begin(s);
	ck_assert_ptr_null(jit_store_take(s, &k, 99, 0, &resume, NULL)); /* the file shrank */
	jc = jitcode_new(1);
	jit_store_put(s, &k, jc, 100, 0);
	jit_store_begin(s);
	ck_assert_ptr_null(jit_store_take(s, &other, 200, 0, &resume, NULL)); /* another header */
	jc = jitcode_new(1);
	jit_store_put(s, &k, jc, 100, 0);
	jit_store_begin(s); /* taken by no conversion: */
	jit_store_begin(s); /* dropped */
	ck_assert_uint_eq(jit_store_count(s), 0);
	jit_store_free(s);
}
END_TEST

static Suite *jitcache_suite(void)
{
	Suite *s = suite_create("jitcache");
	TCase *tc = tcase_create("jitcache");

	tcase_add_test(tc, test_cache_dump_states);
	tcase_add_test(tc, test_cache_damaged);
	tcase_add_test(tc, test_store);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(jitcache_suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
