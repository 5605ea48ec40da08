/* perfconv-jvmti: a JVMTI agent that writes HotSpot's JIT code to jit-PID.dump.
 *
 * Format: Linux's tools/perf/Documentation/jitdump-specification.txt (version 1).
 * Used as `java -agentpath:/path/libperfconv-jvmti.so[=dir=DIR] ...` under
 * `perf record -k 1`; the dump is DIR/jit-PID.dump (default: the working directory),
 * made new, never through a link, mode 0600 (see create_dump). When it cannot be
 * written the agent says why and the JVM runs on without it.
 *
 * What it writes, each record whole under one lock, times on CLOCK_MONOTONIC (perf -k 1):
 * - the header (the ELF machine of /proc/self/exe, the pid, the time the agent loaded);
 * - a mapping of the dump's first page, PROT_EXEC so that perf records an MMAP of it:
 *   that record is how perf inject and perfconv find the dump;
 * - CODE_LOAD for each compiled method (CompiledMethodLoad), named as the JVM spells
 *   it: class signature, method name, method signature ("LHot;fib(I)I"), and for each
 *   piece of generated code (DynamicCodeGenerated: the interpreter, stubs, adapters),
 *   with the code's bytes;
 * - before each compiled method's load, DEBUG_INFO from its PC descriptors (the
 *   compile_info's JVMTI_CMLR_INLINE_INFO) and its line number table;
 * - CODE_CLOSE when the VM dies.
 *
 * Entry addresses are true addresses, as perf's own agent writes them (not the 0x40
 * past them that V8 and LLVM write). A PC descriptor's pc is a return address or a
 * safepoint poll's, and HotSpot gives an address the descriptor of the first pc at
 * or above it (PcDescContainer's approximate lookup): so the code from a pc + 1 up to
 * the next pc is that next descriptor's bytecode, and the first entry is at the code's
 * start. Lines are those of the compiled method itself, the outermost frame of each
 * descriptor: a jitdump has no inlined frames, and a line of an inlined method (perf's
 * agent writes the innermost one) would be a line of another function, often in
 * another file, under this function's name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_VERSION 1
#define JIT_CODE_LOAD 0
#define JIT_CODE_DEBUG_INFO 2
#define JIT_CODE_CLOSE 3
#define HEADER_SIZE 40
#define PREFIX_SIZE 16           /* u32 id, u32 total_size, u64 timestamp */
#define LOAD_FIELDS 40           /* u32 pid, tid; u64 vma, code_addr, code_size, code_index */
#define DEBUG_FIELDS 16          /* u64 code_addr, nr_entry; then the entries */
#define NAME_MAX_LEN 65536       /* longer names are cut: no method needs more */
#define TAG "perfconv-jvmti"

struct agent {
	pthread_mutex_t lock;
	int fd;                  /* -1 once closed or after a failed write */
	void *marker;
	size_t marker_len;
	uint32_t pid;
	uint64_t code_index;
	char path[PATH_MAX];
};

/* A record being built: bytes in native order, as the dump's header says. */
struct rec {
	unsigned char *p;
	size_t len, cap;
	int failed;              /* out of memory or past the format's u32 sizes */
};

struct line_desc {
	uint64_t pc;
	jint bci;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void rec_put(struct rec *r, const void *bytes, size_t n)
{
	if (r->failed)
		return;
	if (n > UINT32_MAX - r->len) {
		r->failed = 1;
		return;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 256;
		unsigned char *p;

		while (cap < r->len + n)
			cap *= 2;
		p = realloc(r->p, cap);
		if (!p) {
			r->failed = 1;
			return;
		}
		r->p = p;
		r->cap = cap;
	}
	memcpy(r->p + r->len, bytes, n);
	r->len += n;
}

static void rec_u32(struct rec *r, uint32_t v)
{
	rec_put(r, &v, sizeof(v));
}

static void rec_u64(struct rec *r, uint64_t v)
{
	rec_put(r, &v, sizeof(v));
}

/* The prefix, with the size and time filled in by agent_write. */
static void rec_begin(struct rec *r, uint32_t id)
{
	r->len = 0;
	r->failed = 0;
	rec_u32(r, id);
	rec_u32(r, 0);
	rec_u64(r, 0);
}

static void rec_free(struct rec *r)
{
	free(r->p);
	r->p = NULL;
	r->len = r->cap = 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes records whole and together (a DEBUG_INFO and the load it is for: no other
 * thread's record may come between them), their times taken under the lock so that
 * the file is in time order; a load takes its code index there too. After a failed
 * write the dump ends: a record half written is the last one a reader sees. */
static void agent_write(struct agent *a, struct rec *const *recs, size_t n)
{
	uint32_t size, id;
	uint64_t t;
	size_t i;

	for (i = 0; i < n; i++)
		if (recs[i]->failed) {
			fprintf(stderr, TAG ": %s: a record of over 4 GiB, or out of memory: "
				"left out\n", a->path);
			return;
		}
	pthread_mutex_lock(&a->lock);
	t = now_ns();
	for (i = 0; i < n && a->fd >= 0; i++) {
		struct rec *r = recs[i];

		size = (uint32_t)r->len;
		memcpy(r->p + 4, &size, 4);
		memcpy(r->p + 8, &t, 8);
		memcpy(&id, r->p, 4);
		if (id == JIT_CODE_LOAD) {
			/* code_index, the last field before the name */
			memcpy(r->p + PREFIX_SIZE + LOAD_FIELDS - 8, &a->code_index, 8);
			a->code_index++;
		}
		if (write_all(a->fd, r->p, r->len) != 0) {
			fprintf(stderr, TAG ": %s: %s: the dump ends here\n", a->path, strerror(errno));
			close(a->fd);
			a->fd = -1;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

static struct agent *agent_of(jvmtiEnv *jvmti)
{
	void *p = NULL;

	if ((*jvmti)->GetEnvironmentLocalStorage(jvmti, &p) != JVMTI_ERROR_NONE)
		return NULL;
	return p;
}

/* A CODE_LOAD of `code_size` bytes at `code`, built in `r`; 0 when there is nothing. */
static int build_load(struct rec *r, const struct agent *a, const char *name,
		      const void *code, jint code_size)
{
	if (code_size <= 0 || !code)
		return 0;
	rec_begin(r, JIT_CODE_LOAD);
	rec_u32(r, a->pid);
	rec_u32(r, (uint32_t)gettid());
	rec_u64(r, (uint64_t)(uintptr_t)code);       /* vma */
	rec_u64(r, (uint64_t)(uintptr_t)code);       /* code_addr */
	rec_u64(r, (uint64_t)code_size);
	rec_u64(r, 0);                               /* code_index, set under the lock */
	rec_put(r, name, strnlen(name, NAME_MAX_LEN));
	rec_put(r, "", 1);
	rec_put(r, code, (size_t)code_size);
	return 1;
}

static void deallocate(jvmtiEnv *jvmti, void *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, p);
}

/* "pkg/dir/" of a class signature "Lpkg/dir/Name;" and the class's source file, as
 * perf's agent names files; NULL when the class has no SourceFile attribute. */
static char *source_path(jvmtiEnv *jvmti, jclass klass, const char *class_sig)
{
	char *file = NULL, *out = NULL;
	const char *slash;
	size_t dir_len = 0;

	if ((*jvmti)->GetSourceFileName(jvmti, klass, &file) != JVMTI_ERROR_NONE || !file)
		return NULL;
	slash = class_sig[0] == 'L' ? strrchr(class_sig, '/') : NULL;
	if (slash)
		dir_len = (size_t)(slash - class_sig);   /* with the '/', without the 'L' */
	if (dir_len + strlen(file) < PATH_MAX) {
		out = malloc(dir_len + strlen(file) + 1);
		if (out) {
			memcpy(out, class_sig + 1, dir_len);
			strcpy(out + dir_len, file);
		}
	}
	deallocate(jvmti, file);
	return out;
}

/* The line of a bytecode index: the table's entry starting last at or before it
 * (the table need not be sorted). 0: none. */
static jint line_of(const jvmtiLineNumberEntry *t, jint n, jint bci)
{
	jlocation best = -1;
	jint line = 0, i;

	for (i = 0; i < n; i++)
		if (t[i].start_location <= bci && t[i].start_location > best) {
			best = t[i].start_location;
			line = t[i].line_number;
		}
	return line;
}

static int by_pc(const void *x, const void *y)
{
	const struct line_desc *a = x, *b = y;

	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	return a->bci < b->bci ? -1 : a->bci > b->bci;
}

/* The compiled method's own frame of each PC descriptor inside the code, by pc. */
static size_t method_descs(jmethodID method, const void *compile_info, uint64_t start,
			   uint64_t end, struct line_desc **out)
{
	const jvmtiCompiledMethodLoadRecordHeader *h;
	struct line_desc *d = NULL;
	size_t n = 0, cap = 0;
	jint i;

	for (h = compile_info; h; h = h->next) {
		const jvmtiCompiledMethodLoadInlineRecord *ir = (const void *)h;

		if (h->kind != JVMTI_CMLR_INLINE_INFO || ir->numpcs <= 0 || !ir->pcinfo)
			continue;
		for (i = 0; i < ir->numpcs; i++) {
			const PCStackInfo *pi = &ir->pcinfo[i];
			uint64_t pc = (uint64_t)(uintptr_t)pi->pc;
			jint top = pi->numstackframes - 1;

			/* a negative index (the method's entry, an exception or deoptimization
			 * handler) names no statement: its code goes with the next pc's */
			if (top < 0 || !pi->methods || !pi->bcis || pi->methods[top] != method ||
			    pi->bcis[top] < 0 || pc < start || pc >= end)
				continue;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct line_desc *nd = realloc(d, ncap * sizeof(*d));

				if (!nd)
					break;
				d = nd;
				cap = ncap;
			}
			d[n].pc = pc;
			d[n].bci = pi->bcis[top];
			n++;
		}
	}
	if (n)
		qsort(d, n, sizeof(*d), by_pc);
	*out = d;
	return n;
}

/* DEBUG_INFO for a compiled method, built in `r`: one entry where its line changes.
 * 0 when it has no lines (no line number table, source file or PC descriptors). */
static int build_debug_info(struct rec *r, jvmtiEnv *jvmti, jmethodID method, jclass klass,
			    const char *class_sig, const void *code, jint code_size,
			    const void *compile_info)
{
	jvmtiLineNumberEntry *table = NULL;
	struct line_desc *d = NULL;
	uint64_t start = (uint64_t)(uintptr_t)code, nr = 0;
	size_t n, k, file_len;
	jint ntable = 0, last_line = -1;
	char *file = NULL;

	if (!compile_info ||
	    (*jvmti)->GetLineNumberTable(jvmti, method, &ntable, &table) != JVMTI_ERROR_NONE ||
	    ntable <= 0)
		goto out;
	file = source_path(jvmti, klass, class_sig);
	n = method_descs(method, compile_info, start, start + (uint64_t)code_size, &d);
	if (!file || n == 0)
		goto out;
	file_len = strlen(file) + 1;
	rec_begin(r, JIT_CODE_DEBUG_INFO);
	rec_u64(r, start);
	rec_u64(r, 0);                               /* nr_entry, below */
	for (k = 0; k < n; k++) {
		jint line;

		if (k > 0 && d[k].pc == d[k - 1].pc)
			continue;                    /* the first one holds the pc */
		line = line_of(table, ntable, d[k].bci);
		if (line <= 0 || line == last_line)
			continue;
		rec_u64(r, nr == 0 ? start : d[k - 1].pc + 1);
		rec_u32(r, (uint32_t)line);
		rec_u32(r, 0);
		/* the file each time: perf 6.1 reads the spec's "\xff" (same file as
		 * before) as a file of that name */
		rec_put(r, file, file_len);
		last_line = line;
		nr++;
	}
	if (nr && !r->failed)
		memcpy(r->p + PREFIX_SIZE + DEBUG_FIELDS - 8, &nr, 8);
out:
	free(d);
	free(file);
	deallocate(jvmti, table);
	return nr > 0;
}

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length,
					    const jvmtiAddrLocationMap *map,
					    const void *compile_info)
{
	struct agent *a = agent_of(jvmti);
	char *class_sig = NULL, *name = NULL, *sig = NULL, *full;
	struct rec debug = { 0 }, load = { 0 };
	struct rec *recs[2];
	jclass klass;
	size_t len;

	if (!a || code_size <= 0)
		return;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &class_sig, NULL) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		goto out;
	len = strlen(class_sig) + strlen(name) + strlen(sig) + 1;
	full = malloc(len);
	if (full) {
		snprintf(full, len, "%s%s%s", class_sig, name, sig);
		len = 0;
		if (build_debug_info(&debug, jvmti, method, klass, class_sig, code_addr,
				     code_size, compile_info))
			recs[len++] = &debug;
		if (build_load(&load, a, full, code_addr, code_size)) {
			recs[len++] = &load;
			agent_write(a, recs, len);
		}
		free(full);
	}
out:
	rec_free(&debug);
	rec_free(&load);
	deallocate(jvmti, class_sig);
	deallocate(jvmti, name);
	deallocate(jvmti, sig);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				    jint length)
{
	struct agent *a = agent_of(jvmti);
	struct rec load = { 0 }, *recs[1] = { &load };

	if (a && build_load(&load, a, name ? name : "", address, length))
		agent_write(a, recs, 1);
	rec_free(&load);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct agent *a = agent_of(jvmti);
	struct rec r = { 0 }, *recs[1] = { &r };

	if (!a)
		return;
	rec_begin(&r, JIT_CODE_CLOSE);
	agent_write(a, recs, 1);
	rec_free(&r);
	pthread_mutex_lock(&a->lock);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	pthread_mutex_unlock(&a->lock);
	/* the mapping stays: perf has recorded it, and unmapping would tell nothing */
}

/* e_machine of the running executable, as the header wants it. */
static int elf_machine(uint32_t *mach)
{
	unsigned char h[20];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4) != 0)
		return -1;
	/* e_machine, after e_ident[16] and e_type, in the byte order e_ident[5] gives */
	if (h[5] == 2)                               /* ELFDATA2MSB */
		*mach = (uint32_t)h[19] | (uint32_t)h[18] << 8;
	else
		*mach = (uint32_t)h[18] | (uint32_t)h[19] << 8;
	return 0;
}

/*
 * The dump's folder may be one other users can write (the working directory, /tmp, a
 * shared folder) and the JVM root's, so the dump is made as a careful runtime makes a
 * file there: new (O_EXCL), in the folder opened once (openat on its descriptor), never
 * through a link (O_NOFOLLOW: a planted link to a root-owned file was overwritten with
 * a jitdump), mode 0600 (root's perf and perfconv read it; its code and names are this
 * user's). One already there (a JVM before this one had the pid: containers give every
 * JVM the same) is taken again only when it is a regular file of this user's with one
 * name, judged on a descriptor opened without following a link or waiting on a FIFO,
 * and truncated after that judgement, never before. The fd, or -1 after saying why.
 */
static int create_dump(int dir_fd, const char *name, const char *path)
{
	int fd = openat(dir_fd, name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;

	if (fd >= 0 || errno != EEXIST) {
		if (fd < 0)
			fprintf(stderr, TAG ": %s: %s: no jitdump written; the JVM runs on without "
				"it\n", path, strerror(errno));
		return fd;
	}
	fd = openat(dir_fd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		fprintf(stderr, TAG ": %s: a symbolic link is there, not followed (another user's "
			"trap?): no jitdump written; the JVM runs on without it (remove it, or give "
			"dir= a folder only this user can write)\n", path);
		return -1;
	}
	/* judged on the descriptor; one this user cannot open for writing is not its own
	 * dump either, and is said as such */
	if (fd >= 0 ? fstat(fd, &st) != 0 : fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		fprintf(stderr, TAG ": %s: %s: no jitdump written; the JVM runs on without it\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		fprintf(stderr, TAG ": %s: already there and not a dump of this user's (%s of uid "
			"%u, %lu names): left alone, no jitdump written; the JVM runs on without it "
			"(remove it, or give dir= a folder only this user can write)\n", path,
			S_ISREG(st.st_mode) ? "a file" : "not a regular file", (unsigned)st.st_uid,
			(unsigned long)st.st_nlink);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (ftruncate(fd, 0) != 0 || fchmod(fd, 0600) != 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		fprintf(stderr, TAG ": %s: %s: no jitdump written; the JVM runs on without it\n",
			path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* 0 with the dump open, 1 when there is none (said; the JVM runs on), -1 when dir= is
 * not a folder (said; the JVM stops, as for any bad option). */
static int open_dump(struct agent *a, const char *dir)
{
	unsigned char h[HEADER_SIZE];
	char abs_dir[PATH_MAX], name[32];
	uint32_t u, mach;
	uint64_t t = now_ns(), zero = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	int n, dir_fd;

	if (elf_machine(&mach) != 0) {
		fprintf(stderr, TAG ": /proc/self/exe: cannot read its ELF header\n");
		return -1;
	}
	/* absolute, as perf records the mapping: the message names what perf will */
	if (!realpath(dir, abs_dir)) {
		fprintf(stderr, TAG ": dir=%s: %s\n", dir, strerror(errno));
		return -1;
	}
	a->pid = (uint32_t)getpid();
	snprintf(name, sizeof(name), "jit-%u.dump", a->pid);
	n = snprintf(a->path, sizeof(a->path), "%s/%s", abs_dir, name);
	if (n < 0 || (size_t)n >= sizeof(a->path)) {
		fprintf(stderr, TAG ": dir=%s: path too long\n", dir);
		return -1;
	}
	dir_fd = open(abs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		fprintf(stderr, TAG ": dir=%s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (fstat(dir_fd, &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		fprintf(stderr, TAG ": %s: any user can write this folder and it is not sticky: "
			"they can replace the dump perf reads (give dir= a folder of this user's)\n",
			abs_dir);
	a->fd = create_dump(dir_fd, name, a->path);
	close(dir_fd);
	if (a->fd < 0)
		return 1;
	u = JITDUMP_MAGIC;
	memcpy(h, &u, 4);
	u = JITDUMP_VERSION;
	memcpy(h + 4, &u, 4);
	u = HEADER_SIZE;
	memcpy(h + 8, &u, 4);
	memcpy(h + 12, &mach, 4);
	u = 0;
	memcpy(h + 16, &u, 4);                       /* pad1 */
	memcpy(h + 20, &a->pid, 4);
	memcpy(h + 24, &t, 8);
	memcpy(h + 32, &zero, 8);                    /* flags: times are CLOCK_MONOTONIC */
	if (write_all(a->fd, h, sizeof(h)) != 0) {
		fprintf(stderr, TAG ": %s: %s: no jitdump written; the JVM runs on without it\n",
			a->path, strerror(errno));
		close(a->fd);
		a->fd = -1;
		return 1;
	}
	a->marker_len = page > 0 ? (size_t)page : 4096;
	a->marker = mmap(NULL, a->marker_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, a->fd, 0);
	if (a->marker == MAP_FAILED) {
		a->marker = NULL;
		fprintf(stderr, TAG ": %s: cannot map it executable (%s): perf records no trace of "
			"the dump; name its folder to perfconv with --jit-dir\n", a->path,
			strerror(errno));
	}
	fprintf(stderr, TAG ": writing %s\n", a->path);
	return 0;
}

static jint start(JavaVM *vm, const char *options)
{
	jvmtiEnv *jvmti = NULL;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	struct agent *a;
	const char *dir = ".";
	jvmtiEvent events[] = { JVMTI_EVENT_COMPILED_METHOD_LOAD,
				JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_VM_DEATH };
	size_t i;
	int r;

	if (options && *options) {
		if (strncmp(options, "dir=", 4) != 0 || !options[4]) {
			fprintf(stderr, TAG ": unknown option '%s' (the one option is dir=DIR)\n",
				options);
			return JNI_ERR;
		}
		dir = options + 4;
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_0) != JNI_OK || !jvmti) {
		fprintf(stderr, TAG ": the VM offers no JVMTI 1.0 environment\n");
		return JNI_ERR;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		fprintf(stderr, TAG ": the VM does not report compiled methods\n");
		return JNI_ERR;
	}
	/* lines are optional: without them the dump has names only */
	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		fprintf(stderr, TAG ": no line numbers from this VM\n");

	a = calloc(1, sizeof(*a));
	if (!a || pthread_mutex_init(&a->lock, NULL) != 0) {
		free(a);
		return JNI_ERR;
	}
	a->code_index = 1;
	r = open_dump(a, dir);
	if (r != 0) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		if (r < 0)
			return JNI_ERR;
		/* no dump: the JVM runs on, unobserved and with its capabilities given
		 * back (a file another user put where the dump goes must not keep it from
		 * starting) */
		(*jvmti)->DisposeEnvironment(jvmti);
		return JNI_OK;
	}
	if ((*jvmti)->SetEnvironmentLocalStorage(jvmti, a) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = on_compiled_method_load;
	cb.DynamicCodeGenerated = on_dynamic_code;
	cb.VMDeath = on_vm_death;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) !=
		    JVMTI_ERROR_NONE) {
			fprintf(stderr, TAG ": cannot enable JVMTI event %d\n", (int)events[i]);
			return JNI_ERR;
		}
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options);
}
