/* perf_abi: the numbers of perf's file format and of the kernel ABI it records, in one place.
 *
 * Named as the kernel (include/uapi/linux/perf_event.h) and perf (tools/perf/util/event.h,
 * header.h, tools/perf/Documentation/perf.data-file-format.txt) name them. Nothing outside
 * this header writes one of these numbers as a literal; docs/FORMATS.md says how the
 * records they name are laid out and where real files differ from the spec.
 */
#ifndef PERFCONV_PERF_ABI_H
#define PERFCONV_PERF_ABI_H

#include <stdint.h>

/* perf.data magic, read as a little-endian u64: "PERFILE2", and version 1's "PERFFILE". */
#define PERF_FILE_MAGIC2 0x32454c4946524550ULL
#define PERF_FILE_MAGIC1 0x454c494646524550ULL

/* The most bytes of a build id perf keeps (a SHA-1; perf's BUILD_ID_SIZE). */
#define PERF_BUILD_ID_MAX 20
/* Room for one as lower-case hex, with the NUL. */
#define PERF_BUILD_ID_HEX_SIZE (2 * PERF_BUILD_ID_MAX + 1)

/* PERF_RECORD_*: record types. Below 64 the kernel's, from 64 on perf's own (user) records. */
enum perf_record_type {
	PERF_RECORD_MMAP = 1,
	PERF_RECORD_LOST = 2,
	PERF_RECORD_COMM = 3,
	PERF_RECORD_EXIT = 4,
	PERF_RECORD_THROTTLE = 5,
	PERF_RECORD_UNTHROTTLE = 6,
	PERF_RECORD_FORK = 7,
	PERF_RECORD_READ = 8,
	PERF_RECORD_SAMPLE = 9,
	PERF_RECORD_MMAP2 = 10,
	PERF_RECORD_AUX = 11,
	PERF_RECORD_ITRACE_START = 12,
	PERF_RECORD_LOST_SAMPLES = 13,
	PERF_RECORD_SWITCH = 14,
	PERF_RECORD_SWITCH_CPU_WIDE = 15,
	PERF_RECORD_NAMESPACES = 16,
	PERF_RECORD_KSYMBOL = 17,
	PERF_RECORD_BPF_EVENT = 18,
	PERF_RECORD_CGROUP = 19,
	PERF_RECORD_TEXT_POKE = 20,
	PERF_RECORD_AUX_OUTPUT_HW_ID = 21,

	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_EVENT_TYPE = 65,
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_ID_INDEX = 69,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_AUXTRACE_ERROR = 72,
	PERF_RECORD_THREAD_MAP = 73,
	PERF_RECORD_CPU_MAP = 74,
	PERF_RECORD_STAT_CONFIG = 75,
	PERF_RECORD_STAT = 76,
	PERF_RECORD_STAT_ROUND = 77,
	PERF_RECORD_EVENT_UPDATE = 78,
	PERF_RECORD_TIME_CONV = 79,
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,
	PERF_RECORD_FINISHED_INIT = 82,
	PERF_RECORD_COMPRESSED2 = 83,
};
/* The kernel's and perf's types are below this: a table indexed by type has this many
 * rows (formats/read/perfdata_types.c, convert/dispatch.c). simpleperf's are 32768 and up. */
#define PERF_RECORD_TYPES (PERF_RECORD_COMPRESSED2 + 1)

/* perf_event_header.misc: the cpu mode in its low bits, then per-record flags. */
#define PERF_RECORD_MISC_CPUMODE_MASK 7u
enum perf_record_misc_cpumode {
	PERF_RECORD_MISC_CPUMODE_UNKNOWN = 0,
	PERF_RECORD_MISC_KERNEL = 1,
	PERF_RECORD_MISC_USER = 2,
	PERF_RECORD_MISC_HYPERVISOR = 3,
	PERF_RECORD_MISC_GUEST_KERNEL = 4,
	PERF_RECORD_MISC_GUEST_USER = 5,
};
#define PERF_RECORD_MISC_COMM_EXEC (1u << 13)      /* COMM: the process exec'd */
#define PERF_RECORD_MISC_FORK_EXEC (1u << 13)      /* FORK: perf made it from /proc */
#define PERF_RECORD_MISC_MMAP_DATA (1u << 13)      /* MMAP, MMAP2: not executable */
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1u << 14)  /* MMAP2: a build id, not maj/min/ino */
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1u << 15)  /* HEADER_BUILD_ID: `size` is valid */
#define PERF_RECORD_MISC_SWITCH_OUT (1u << 13)     /* SWITCH: out, not in */
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1u << 14) /* SWITCH out: preempted (runnable) */

/* Callchain context markers: entries at or above PERF_CONTEXT_MAX are not addresses. */
#define PERF_CONTEXT_HV ((uint64_t)-32)
#define PERF_CONTEXT_KERNEL ((uint64_t)-128)
#define PERF_CONTEXT_USER ((uint64_t)-512)
#define PERF_CONTEXT_GUEST ((uint64_t)-2048)
#define PERF_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define PERF_CONTEXT_GUEST_USER ((uint64_t)-2560)
#define PERF_CONTEXT_MAX ((uint64_t)-4095)

/* perf_event_attr.sample_type bits: which fields a sample (and a sample_id trailer) holds. */
#define PERF_SAMPLE_IP (1ULL << 0)
#define PERF_SAMPLE_TID (1ULL << 1)
#define PERF_SAMPLE_TIME (1ULL << 2)
#define PERF_SAMPLE_ADDR (1ULL << 3)
#define PERF_SAMPLE_READ (1ULL << 4)
#define PERF_SAMPLE_CALLCHAIN (1ULL << 5)
#define PERF_SAMPLE_ID (1ULL << 6)
#define PERF_SAMPLE_CPU (1ULL << 7)
#define PERF_SAMPLE_PERIOD (1ULL << 8)
#define PERF_SAMPLE_STREAM_ID (1ULL << 9)
#define PERF_SAMPLE_RAW (1ULL << 10)
#define PERF_SAMPLE_BRANCH_STACK (1ULL << 11)
#define PERF_SAMPLE_REGS_USER (1ULL << 12)
#define PERF_SAMPLE_STACK_USER (1ULL << 13)
#define PERF_SAMPLE_WEIGHT (1ULL << 14)
#define PERF_SAMPLE_DATA_SRC (1ULL << 15)
#define PERF_SAMPLE_IDENTIFIER (1ULL << 16)
#define PERF_SAMPLE_TRANSACTION (1ULL << 17)
#define PERF_SAMPLE_REGS_INTR (1ULL << 18)
/* REGS_USER/REGS_INTR abi word: the registers of a 64-bit process */
#define PERF_SAMPLE_REGS_ABI_64 2
#define PERF_SAMPLE_PHYS_ADDR (1ULL << 19)
#define PERF_SAMPLE_AUX (1ULL << 20)
#define PERF_SAMPLE_CGROUP (1ULL << 21)
#define PERF_SAMPLE_DATA_PAGE_SIZE (1ULL << 22)
#define PERF_SAMPLE_CODE_PAGE_SIZE (1ULL << 23)
#define PERF_SAMPLE_WEIGHT_STRUCT (1ULL << 24)

/* perf_event_attr.read_format bits. */
#define PERF_FORMAT_TOTAL_TIME_ENABLED (1ULL << 0)
#define PERF_FORMAT_TOTAL_TIME_RUNNING (1ULL << 1)
#define PERF_FORMAT_ID (1ULL << 2)
#define PERF_FORMAT_GROUP (1ULL << 3)
#define PERF_FORMAT_LOST (1ULL << 4)

/* perf_event_attr.branch_sample_type bits that change a sample's layout. */
#define PERF_SAMPLE_BRANCH_HW_INDEX (1ULL << 17)
/* ... and the one that says what its entries are: the calls of the user call stack
 * (perf record --call-graph lbr, Intel's LBR in call-stack mode) */
#define PERF_SAMPLE_BRANCH_CALL_STACK (1ULL << 11)
#define PERF_SAMPLE_BRANCH_COUNTERS (1ULL << 19)

/*
 * The bit positions, in the u64 after perf_event_attr.read_format, of the one-bit
 * fields perfconv reads (the kernel declares them as bit-fields, in this order).
 */
enum perf_attr_flag_bit {
	PERF_ATTR_BIT_EXCLUDE_USER = 4,
	PERF_ATTR_BIT_EXCLUDE_KERNEL = 5,
	PERF_ATTR_BIT_EXCLUDE_HV = 6,
	PERF_ATTR_BIT_FREQ = 10,
	PERF_ATTR_BIT_PRECISE_IP = 15, /* two bits */
	PERF_ATTR_BIT_SAMPLE_ID_ALL = 18,
	PERF_ATTR_BIT_EXCLUDE_HOST = 19,
	PERF_ATTR_BIT_EXCLUDE_GUEST = 20,
	PERF_ATTR_BIT_USE_CLOCKID = 25,
	PERF_ATTR_BIT_CONTEXT_SWITCH = 26,
};

/* perf_event_attr.type, and the PERF_TYPE_SOFTWARE configs that count time. */
enum perf_type_id {
	PERF_TYPE_HARDWARE = 0,
	PERF_TYPE_SOFTWARE = 1,
	PERF_TYPE_TRACEPOINT = 2,
	PERF_TYPE_HW_CACHE = 3,
	PERF_TYPE_RAW = 4,
	PERF_TYPE_BREAKPOINT = 5,
};
enum perf_sw_ids {
	PERF_COUNT_SW_CPU_CLOCK = 0,
	PERF_COUNT_SW_TASK_CLOCK = 1,
	PERF_COUNT_SW_DUMMY = 9,  /* perf's placeholder for side-band records: no samples */
};

/* perf_event_attr.clockid (with use_clockid): Linux clock ids. */
#define PERF_CLOCKID_MONOTONIC 1 /* CLOCK_MONOTONIC, the clock jitdumps use (-k 1) */

/* PERF_RECORD_KSYMBOL: ksym_type and flags. */
enum perf_record_ksymbol_type {
	PERF_RECORD_KSYMBOL_TYPE_UNKNOWN = 0,
	PERF_RECORD_KSYMBOL_TYPE_BPF = 1,
	PERF_RECORD_KSYMBOL_TYPE_OOL = 2, /* out-of-line code: trampolines, ftrace */
};
#define PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER (1u << 0)
/* PERF_RECORD_NAMESPACES: the index of the pid namespace's { dev, ino } (PID_NS_INDEX) */
#define PERF_NS_PID_INDEX 3

/* perf.data feature sections (perf's HEADER_*), by their bit in the header's bitmap. */
enum perf_header_feature {
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID = 2,
	HEADER_HOSTNAME = 3,
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,
	HEADER_CPUDESC = 8,
	HEADER_CPUID = 9,
	HEADER_TOTAL_MEM = 10,
	HEADER_CMDLINE = 11,
	HEADER_EVENT_DESC = 12,
	HEADER_SAMPLE_TIME = 21,
	HEADER_CLOCKID = 23,
	HEADER_DIR_FORMAT = 24,
	HEADER_COMPRESSED = 27,
	HEADER_CLOCK_DATA = 29,
	HEADER_FEAT_BITS = 256,
};

/* x86-64: user space ends below this address; kernel addresses are at or above it. */
#define X86_64_KERNEL_START 0xffff800000000000ULL

#endif
