# perfconv: build, test, demo, fuzz. `make V=1` shows the commands.
#
#   make                      build ./perfconv (installs Debian packages first if missing)
#   make check                build and run every test
#   make check-busy           the same with two busy CPU loops beside it
#   make SANITIZE=address,undefined check
#                             the same with sanitizers, in build-san/
#   make demo                 convert the bundled recording and say where the output is
#   make fuzz                 run each of the 14 fuzz targets (FUZZ_TARGETS: perf.data,
#                             tracepoint formats, jitdump, perf map, unwinder, the whole
#                             pipeline, kallsyms, ELF symbols, the cache's entries of
#                             both and the frame cache's, a debug file's inflated copy,
#                             the cache entries of a jitdump's and a perf map's tables,
#                             the saved runtime-ids, an OTLP backend's answer) for
#                             FUZZ_SECONDS (60) each, with ASan and UBSan, seeded from
#                             tests/corpus and the real recordings
#   make fuzz-keep            merge the campaign's small finds into tests/corpus
#   make bench                run bench/run.sh
#   make jvmti                build/libperfconv-jvmti.so, the JVMTI agent that makes
#                             HotSpot write jit-PID.dump (java -agentpath:...)
#   make man                  the man pages (man/*.scd, by scdoc) in build/man/
#   make install              perfconv, its man pages, bash completion, the systemd
#                             units and their scripts, the JVMTI agent when built,
#                             under DESTDIR and PREFIX (/usr/local); make uninstall
#   make deb                  the Debian package, in build/deb/ (debian/, dpkg-buildpackage,
#                             lintian); DEB_ARCH=arm64 cross-builds it (scripts/arm64-ci.sh)
#   make check-booted         that package in a Debian 12 booted under systemd (root:
#                             mmdebstrap, systemd-nspawn): the README's fleet recipe
#                             and the units' checks (tests/booted.sh, a few minutes)

CC ?= cc
# a cross build names its tools (scripts/arm64-ci.sh: aarch64-linux-gnu-pkg-config; AR,
# CC as make knows them)
PKG_CONFIG ?= pkg-config
SANITIZE ?=
FUZZ_SECONDS ?= 60

ifeq ($(SANITIZE),)
BUILD := build
BIN := perfconv
SANFLAGS :=
else
BUILD := build-san
BIN := $(BUILD)/perfconv
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

# The JVMTI agent (jvmti/), built without sanitizers in every build: see its rule.
JVMTI_LIB := build/libperfconv-jvmti.so

# libcurl's headers only: upload/upload.c opens the library when an upload starts, so
# that a conversion does not load it and its 27 libraries (TLS, Kerberos, LDAP...).
# The libraries of STATIC_PKGS (and those they need: lzma, bz2) are linked from their
# Debian archives, libc and cJSON from their shared objects: a run maps and relocates
# 4 objects instead of 13 (perfconv --version: 2.4 -> 1.8 ms of CPU time; a rebuild
# takes a Debian update of those libraries).
STATIC_PKGS := libdw libelf zlib libzstd libprotobuf-c libdeflate liblzma
PKGS := $(STATIC_PKGS) libcjson
HEADER_PKGS := libcurl

# What the Debian packages give the compiler and the linker, asked of pkg-config once
# they are installed. make builds this file first (scripts/install-deps.sh installs
# what is missing) and then reads the Makefile again with it: pkg-config run while
# make parses would answer nothing on a fresh machine, and the first build would not
# link.
DEPS_MK := build/deps.mk
ifeq ($(filter clean,$(MAKECMDGOALS)),)
-include $(DEPS_MK)
endif
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter -Wformat=2 -Wvla
CFLAGS ?= -O2 -g
# CPPFLAGS and LDFLAGS: empty here; a package build gives its own (dpkg-buildflags:
# _FORTIFY_SOURCE, relro, now)
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -MMD -MP \
	-I. -I$(BUILD)/gen $(PKG_CFLAGS)
# STATIC=no links them as shared objects, as Debian's package does (its policy: one copy
# of zlib on the system, updated with it); libiberty has only an archive.
STATIC ?= yes
ifeq ($(STATIC),no)
LDLIBS := $(PKG_DYNAMIC_LIBS) -Wl,-Bstatic -liberty -Wl,-Bdynamic $(PKG_LIBS) -lm -lpthread
else
LDLIBS := -Wl,-Bstatic $(PKG_STATIC_LIBS) -liberty -Wl,-Bdynamic $(PKG_LIBS) -lm -lpthread
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The library: every source of the five layers below the command line (cli/), so that
# tests and fuzzers link the same code (tests/check_layers.py holds each file to its
# folder's layer). formats/ and symbolize/ have folders by role (formats/read, model,
# write; symbolize/jit): a layer's sources are those of its folder and of its folders'.
MAIN_SRCS := $(wildcard cli/*.c)
LIB_SRCS := $(foreach d,common formats symbolize convert upload,$(wildcard $(d)/*.c $(d)/*/*.c))

# Found by their names: tests/e2e*.sh (e2e_lib.sh is what they share) and one Check
# suite per module, tests/check_NAME.c.
E2E_TESTS := $(filter-out tests/e2e_lib.sh,$(wildcard tests/e2e*.sh))
CHECK_SUITES := $(patsubst tests/check_%.c,%,$(wildcard tests/check_*.c))

# Code protoc-c generates from formats/proto/profile.proto: in the build directory, not committed.
# and from formats/proto/otlp_*.proto (OpenTelemetry's profiles, one file per package) and
# formats/proto/rpc_status.proto (an OTLP server's error)
OTLP_PROTOS := otlp_common otlp_resource otlp_profiles_data otlp_profiles rpc_status
GEN_SRCS := $(BUILD)/gen/profile.pb-c.c $(OTLP_PROTOS:%=$(BUILD)/gen/%.pb-c.c)
GEN_HDR := $(BUILD)/gen/profile.pb-c.h
OTLP_HDRS := $(OTLP_PROTOS:%=$(BUILD)/gen/%.pb-c.h)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(GEN_SRCS:%.c=%.o)
LIB := $(BUILD)/libperfconv.a

.PHONY: outputs-update all check check-build check-busy check-booted demo fuzz fuzz-seeds fuzz-keep bench clean deps unit e2e corpus layers jvmti \
	man install uninstall deb

all: $(BIN)

# Install missing Debian packages, then record what pkg-config says about them.
# A package build has its Build-Depends installed and installs nothing: INSTALL_DEPS=true.
INSTALL_DEPS ?= ./scripts/install-deps.sh
$(DEPS_MK): scripts/install-deps.sh Makefile
	@mkdir -p $(dir $@)
	$(Q)$(INSTALL_DEPS)
	$(Q)cflags=$$($(PKG_CONFIG) --cflags $(PKGS) $(HEADER_PKGS)) && \
		static=$$($(PKG_CONFIG) --static --libs-only-l $(STATIC_PKGS) | \
			tr ' ' '\n' | grep -v -x -e -lpthread -e -lm -e -ldl | tr '\n' ' ') && \
		libs=$$($(PKG_CONFIG) --libs libcjson) && \
		dynamic=$$($(PKG_CONFIG) --libs $(STATIC_PKGS)) && \
		check=$$($(PKG_CONFIG) --libs check libcjson) && \
		printf 'PKG_CFLAGS := %s\nPKG_STATIC_LIBS := %s\nPKG_LIBS := %s\nPKG_DYNAMIC_LIBS := %s\nCHECK_LIBS := %s\n' \
			"$$cflags" "$$static" "$$libs" "$$dynamic" "$$check" >$@.tmp && mv $@.tmp $@

deps: $(DEPS_MK)

$(BUILD)/%.o: %.c | $(DEPS_MK)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# One rule a .proto makes both its files (a grouped pattern rule); the tree's build dirs
# each get theirs.
define PROTO_RULE
%/gen/$(1).pb-c.c %/gen/$(1).pb-c.h: formats/proto/$(1).proto | $$(DEPS_MK)
	@mkdir -p $$(dir $$@)
	@echo "  PROTOC-C $$<"
	$$(Q)protoc-c --c_out=$$(dir $$@) --proto_path=formats/proto $$<
endef
$(foreach f,profile $(OTLP_PROTOS),$(eval $(call PROTO_RULE,$(f))))

# a generated file includes the headers of the files its .proto imports
$(BUILD)/gen/otlp_resource.pb-c.o: $(BUILD)/gen/otlp_common.pb-c.h
$(BUILD)/gen/otlp_profiles_data.pb-c.o: $(BUILD)/gen/otlp_common.pb-c.h $(BUILD)/gen/otlp_resource.pb-c.h
$(BUILD)/gen/otlp_profiles.pb-c.o: $(OTLP_HDRS)

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	@echo "  CC $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# Whatever includes the generated header is compiled after it exists.
$(BUILD)/formats/write/pprof.o $(BUILD)/formats/write/pprof_sample.o $(BUILD)/tests/check_pprof.o \
	$(BUILD)/tests/check_uploadparts.o: $(GEN_HDR)
$(BUILD)/formats/write/otlp.o $(BUILD)/upload/otlp.o: $(OTLP_HDRS)

$(LIB): $(LIB_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BIN): $(MAIN_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	@echo "  LD $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests: one Check suite per module.
CHECK_BINS := $(CHECK_SUITES:%=$(BUILD)/tests/check_%)
$(BUILD)/tests/check_%: $(BUILD)/tests/check_%.o $(BUILD)/tests/testutil.o $(LIB)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS) $(CHECK_LIBS)

# The corpus replayers: run each reader over every committed bad input.
FUZZ_TARGETS := perfdata tracefmt jitdump perfmap unwind pipeline kallsyms frames debugcopy elfsyms jitcache mapcache runtimeids otlpanswer
REPLAY_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay_%)
$(BUILD)/fuzz/replay_%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/replay_main.o $(LIB)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# UNIT_RUN: what runs each suite (an emulator for a cross build: qemu-aarch64-static);
# UNIT_SUITES: which (default all)
UNIT_RUN ?=
UNIT_SUITES ?= $(CHECK_SUITES)
unit: $(UNIT_SUITES:%=$(BUILD)/tests/check_%)
	$(Q)fail=0; for t in $^; do \
		CK_DEFAULT_TIMEOUT=120 PERFCONV_TOP=$(CURDIR) $(UNIT_RUN) $$t || fail=1; done; exit $$fail

corpus: $(REPLAY_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		printf '%s: ' $$t; $(BUILD)/fuzz/replay_$$t tests/corpus/$$t/* || exit 1; done

# Under the sanitizers two e2e scripts are left out, each said, and run by the plain
# build (CI's fresh root): e2e_install (where make install puts files; its C code is
# --version and --help) and e2e_watchattack (minutes of waiting on a watcher under
# attack; the watcher's C code runs under the sanitizers in e2e_watch, check_watch
# and e2e_upload's watch part). With them the sanitizer stage takes CI over its 40
# minutes.
SAN_E2E_SKIP := tests/e2e_install.sh tests/e2e_watchattack.sh
# Two scripts at a time (scripts/run-e2e.sh: their time is mostly other programs'),
# but those that load both CPUs for long (a watcher under attack, perf record of node
# or of the whole machine) or rebuild the tree, one at a time after them. Each waits on
# conditions, not times, and holds beside other work (make check-busy); running them
# alone keeps the run short. E2E_JOBS=1 runs every one alone.
E2E_JOBS ?= 2
# the longest first (minutes each, as make e2e says), so that the two lanes end together
E2E_LONG := tests/e2e_upload.sh tests/e2e_json.sh tests/e2e_otlp.sh tests/e2e_svg.sh \
	tests/e2e_backends.sh tests/e2e_symbols.sh tests/e2e_info.sh tests/e2e_diff.sh
E2E_ALONE := tests/e2e_watch.sh tests/e2e_watchattack.sh tests/e2e_jitlive.sh tests/e2e_install.sh \
	tests/e2e_containers.sh \
	tests/e2e_oldperf.sh
E2E_RUN := $(if $(SANITIZE),$(filter-out $(SAN_E2E_SKIP),$(E2E_TESTS)),$(E2E_TESTS))
e2e: $(BIN) $(JVMTI_LIB)
ifneq ($(SANITIZE),)
	@echo "e2e: under SANITIZE=$(SANITIZE) these are not run here (the plain build runs them): $(SAN_E2E_SKIP)"
endif
	$(Q)PERFCONV=$(CURDIR)/$(BIN) scripts/run-e2e.sh $(E2E_JOBS) $(BUILD)/e2e-logs \
		$(foreach t,$(E2E_LONG),$(filter $(t),$(E2E_RUN))) \
		$(filter-out $(E2E_LONG) $(E2E_ALONE),$(E2E_RUN)) \
		-- $(filter $(E2E_ALONE),$(E2E_RUN))

# The JVMTI agent: a shared library that HotSpot loads, built against the headers of
# the JDK that javac belongs to (else Debian's default-java; JDK_HOME=... chooses),
# never with the sanitizers (they would have to be loaded into java first).
JDK_HOME ?= $(firstword $(foreach d,$(shell j=$$(command -v javac 2>/dev/null) && \
	dirname "$$(dirname "$$(readlink -f "$$j")")") /usr/lib/jvm/default-java,\
	$(if $(wildcard $(d)/include/jvmti.h),$(d))))
jvmti: $(JVMTI_LIB)
$(JVMTI_LIB): jvmti/perfconv-jvmti.c | $(DEPS_MK)
	@test -f "$(JDK_HOME)/include/jvmti.h" || { echo "jvmti: no JDK headers found \
		(scripts/install-deps.sh installs default-jdk-headless; or set JDK_HOME)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	@echo "  CC $@"
	$(Q)$(CC) -std=c11 $(WARN) $(CFLAGS) -fPIC -shared -isystem "$(JDK_HOME)/include" \
		-isystem "$(JDK_HOME)/include/linux" -o $@ $< -lpthread

# The order of layers, one include style, perf's numbers in one header (and that the
# check catches each rule broken).
layers:
	$(Q)python3 tests/check_layers.py && python3 tests/check_layers.py --self-test

check: $(BIN) $(CHECK_BINS) $(REPLAY_BINS)
	$(Q)$(MAKE) --no-print-directory layers unit corpus e2e

# What make check runs, built (and nothing run).
check-build: $(BIN) $(CHECK_BINS) $(REPLAY_BINS) $(JVMTI_LIB)

# make check with two busy CPU loops beside it (scripts/busy.sh; BUSY_LOOPS=N for more),
# started once the build is done and always stopped after it: the tests wait on
# conditions with deadlines, never on a time or an idle CPU, and hold on a machine
# shared with other work (issue 45.1). With SANITIZE= as make check.
check-busy: check-build
	$(Q)scripts/busy.sh $(MAKE) --no-print-directory check

demo: $(BIN)
	$(Q)./$(BIN) -i testdata/mt-g.data -o build/demo.folded
	@echo "demo: wrote build/demo.folded ($$(wc -l < build/demo.folded) lines, one per thread name and stack); the hottest:"
	@sort -t' ' -k2 -nr build/demo.folded | head -5 | cut -c1-160

# libFuzzer targets, with ASan and UBSan, built with clang. The library's sources are
# compiled once (with the fuzzer's coverage but not its main) and linked into each
# target: six targets compiling every source each took four of CI's 40 minutes.
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -I. -Ibuild-fuzz/gen -fno-sanitize-recover=all \
	$(PKG_CFLAGS)
FUZZ_SAN := address,undefined
FUZZ_OBJS := $(LIB_SRCS:%.c=build-fuzz/obj/%.o) build-fuzz/obj/gen/profile.pb-c.o \
	$(OTLP_PROTOS:%=build-fuzz/obj/gen/%.pb-c.o)
build-fuzz/obj/%.o: %.c | $(DEPS_MK)
	@mkdir -p $(dir $@)
	@echo "  CC (fuzz) $<"
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -MMD -MP -c $< -o $@
build-fuzz/obj/gen/%.pb-c.o: build-fuzz/gen/%.pb-c.c $(OTLP_PROTOS:%=build-fuzz/gen/%.pb-c.h)
	@mkdir -p $(dir $@)
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@
build-fuzz/obj/formats/write/pprof.o build-fuzz/obj/formats/write/pprof_sample.o: build-fuzz/gen/profile.pb-c.h
build-fuzz/obj/formats/write/otlp.o build-fuzz/obj/upload/otlp.o: $(OTLP_PROTOS:%=build-fuzz/gen/%.pb-c.h)
# kept, not removed as intermediate files: the next build compiles only what changed
.SECONDARY: $(FUZZ_OBJS)
build-fuzz/fuzz_%: fuzz/fuzz_%.c $(FUZZ_OBJS) | $(DEPS_MK)
	@mkdir -p $(dir $@)
	@echo "  LD (fuzz) $@"
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $^ $(LDLIBS)

# Each target runs for FUZZ_SECONDS (CI gives each 60 s), from the committed corpus and
# the real recordings (the dumps and maps whole: megabytes, -max_len the largest of
# them; the perf.data recordings cut, FUZZ_MAX_LEN_CUT); what the campaign
# finds stays in build-fuzz/corpus-TARGET for the next run. `make fuzz-keep` merges its
# small finds (8 KB at most: tests/corpus stays a few MB) into tests/corpus to commit.
FUZZ_MAX_LEN := 8388608
# the targets seeded with cut recordings (tens of KB): inputs grow no larger than this
FUZZ_MAX_LEN_CUT := 262144
FUZZ_KEEP_MAX := 8192
# small programs and their debug files (10 to 27 KB): a debug copy is at most 256
# times its file
FUZZ_MAX_LEN_ELF := 65536
# simpleperf's ETM recording whole: fuzz/cut.py does not cut AUXTRACE data
FUZZ_SEEDS_perfdata := testdata/mt-threads.data/data tests/hostile/*.data \
	testdata/simpleperf/perf_etm.data
FUZZ_SEEDS_jitdump := testdata/jit/*.dump testdata/java/*.dump
FUZZ_SEEDS_perfmap := testdata/jit/*.map
# The recordings are seeds cut to their other records and 200 samples at most (40 KB:
# fuzz/cut.py), tens of KB: the targets run hundreds of inputs a second on them, where
# the whole recordings ran a few. The pipeline's: each JIT recording so cut, with the
# code loads of its dump that its samples are in (32 KB at most), one input each
# (fuzz/pair.py).
FUZZ_CUT := --samples 200
fuzz-seeds: | $(DEPS_MK)
	$(Q)for t in $(FUZZ_TARGETS); do mkdir -p build-fuzz/corpus-$$t; done
	$(Q)for t in perfdata jitdump perfmap; do \
		case $$t in perfdata) s="$(FUZZ_SEEDS_perfdata)";; jitdump) s="$(FUZZ_SEEDS_jitdump)";; \
			perfmap) s="$(FUZZ_SEEDS_perfmap)";; esac; \
		for f in $$s; do [ -f "$$f" ] && cp -n "$$f" build-fuzz/corpus-$$t/seed-$$(echo $$f | tr / _); done; \
	done; true
	$(Q)for f in testdata/*.data testdata/jit/*.data testdata/java/*.data testdata/lbr/*.data \
		$(filter-out %/perf_etm.data,$(wildcard testdata/simpleperf/*.data)); do [ -f "$$f" ] || continue; \
		python3 fuzz/cut.py $(FUZZ_CUT) $$f build-fuzz/corpus-perfdata/cut-$$(echo $$f | tr / _) || exit 1; \
	done
	$(Q)for d in testdata/jit testdata/java; do \
	while read name pid file; do case "$$name" in \#*|"") continue;; esac; \
		case "$$file" in *.dump) python3 fuzz/pair.py $(FUZZ_CUT) --dump-max 32768 \
			$$d/$$name.data $$d/$$file build-fuzz/corpus-pipeline/cut-$$name;; esac; \
	done < $$d/RECORDINGS; done

# One rule per target, so that `make -j2 fuzz` runs two at a time, each on a core; a
# target's output is shown whole when it ends (not interleaved with the other's).
FUZZ_RUNS := $(FUZZ_TARGETS:%=fuzz-run-%)
.PHONY: $(FUZZ_RUNS)
fuzz: $(FUZZ_RUNS)
$(FUZZ_RUNS): fuzz-run-%: build-fuzz/fuzz_% fuzz-seeds
	$(Q){ cp -n tests/corpus/$*/* build-fuzz/corpus-$*/ 2>/dev/null || true; } && \
	case $* in perfdata|pipeline|kallsyms|frames|jitcache) len=$(FUZZ_MAX_LEN_CUT);; \
		debugcopy|elfsyms) len=$(FUZZ_MAX_LEN_ELF);; *) len=$(FUZZ_MAX_LEN);; esac; \
	build-fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -max_len=$$len \
		-rss_limit_mb=4096 -timeout=25 -print_final_stats=1 \
		build-fuzz/corpus-$* tests/corpus/$* >build-fuzz/log-$* 2>&1; rc=$$?; \
	echo "=== fuzz target $* (exit $$rc)"; cat build-fuzz/log-$*; exit $$rc

fuzz-keep: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
	$(Q)for t in $(FUZZ_TARGETS); do \
		rm -rf build-fuzz/small-$$t && mkdir -p build-fuzz/small-$$t && \
		find build-fuzz/corpus-$$t -type f -size -$$(($(FUZZ_KEEP_MAX) / 1024))k \
			-exec cp {} build-fuzz/small-$$t/ \; && \
		build-fuzz/fuzz_$$t -merge=1 tests/corpus/$$t build-fuzz/small-$$t || exit 1; \
	done; du -sh tests/corpus

# After a change meant to change outputs: record them (tests/e2e_outputs.sh holds CI
# to them), and say in the commit which changed and why.
outputs-update: $(BIN)
	$(Q)scripts/output-digests.sh $(CURDIR)/$(BIN) --update

bench: $(BIN)
	$(Q)./bench/run.sh

# Man pages: written in scdoc (man/*.1.scd), rendered here; tests/e2e_install.sh holds
# them to each command's --help and renders them with man --warnings.
MAN_PAGES := $(patsubst man/%.scd,build/man/%,$(wildcard man/*.1.scd))
man: $(MAN_PAGES)
build/man/%: man/%.scd | $(DEPS_MK)
	@mkdir -p $(dir $@)
	@echo "  SCDOC $<"
	$(Q)scdoc <$< >$@.tmp && mv $@.tmp $@

# Installation. The units run the scripts in LIBEXECDIR, which run BINDIR/perfconv:
# their paths are put in as they are installed. Debian's package sets PREFIX=/usr and
# SYSTEMDUNITDIR=/lib/systemd/system (bookworm's place for units).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/perfconv
LIBDIR ?= $(PREFIX)/lib/perfconv
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/perfconv
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
UNITS := perfconv-record@.service perfconv-upload@.service
UNIT_SCRIPTS := perfconv-record perfconv-upload
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g'
INSTALLED := $(BINDIR)/perfconv $(MAN_PAGES:build/man/%.1=$(MANDIR)/man1/%.1) \
	$(COMPLETIONDIR)/perfconv $(UNITS:%=$(SYSTEMDUNITDIR)/%) \
	$(UNIT_SCRIPTS:%=$(LIBEXECDIR)/%) $(DOCDIR)/examples/service.conf \
	$(LIBDIR)/libperfconv-jvmti.so

install: $(BIN) $(MAN_PAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPLETIONDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DOCDIR)/examples
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/perfconv
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 completion/perfconv.bash $(DESTDIR)$(COMPLETIONDIR)/perfconv
	for u in $(UNITS); do $(SUBST) dist/$$u.in >$(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; done
	for s in $(UNIT_SCRIPTS); do $(SUBST) dist/$$s >$(DESTDIR)$(LIBEXECDIR)/$$s && \
		chmod 0755 $(DESTDIR)$(LIBEXECDIR)/$$s || exit 1; done
	install -m 0644 dist/service.conf $(DESTDIR)$(DOCDIR)/examples/service.conf
	if [ -f $(JVMTI_LIB) ]; then install -d $(DESTDIR)$(LIBDIR) && \
		install -m 0644 $(JVMTI_LIB) $(DESTDIR)$(LIBDIR)/; fi

# The Debian package (debian/), built with Debian's tools from a copy of the tracked
# files in build/deb/ (dpkg-buildpackage writes beside the source tree): build/deb/*.deb,
# then lintian. Build-Depends are installed first (apt-get build-dep).
# DEB_ARCH=arm64 cross-builds for that architecture (its Build-Depends :arm64, the tools
# the build runs :native; scripts/arm64-ci.sh).
DEB_VERSION = $(shell dpkg-parsechangelog -S Version 2>/dev/null)
DEB_ARCH ?=
DEB_AFLAG := $(if $(DEB_ARCH),-a$(DEB_ARCH))
deb:
	$(Q)command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null || \
		./scripts/install-deps.sh
	$(Q)mkdir -p build && apt-get build-dep -y -q $(DEB_AFLAG) ./ >build/deb-build-dep.log 2>&1 || { cat build/deb-build-dep.log; exit 1; }
	$(Q)rm -rf build/deb && mkdir -p build/deb/src
	$(Q)git ls-files -z | grep -zv '^testdata/\|^tests/corpus/\|^bench/' | \
		xargs -0 tar -c | tar -x -C build/deb/src
	$(Q)cd build/deb/src && dpkg-buildpackage $(DEB_AFLAG) -us -uc -b >../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }
	$(Q)lintian --fail-on error build/deb/*.changes >build/deb/lintian.log 2>&1; rc=$$?; \
		cat build/deb/lintian.log; exit $$rc
	@echo "deb: $$(ls build/deb/*.deb)"

# The package in a Debian 12 root made for the run and booted under its own systemd, as
# CI's stage does after the fresh root's (tests/booted.sh; the root is removed after).
check-booted: deb
	$(Q)bash tests/booted.sh "$$(mktemp -d /var/tmp/perfconv-booted.XXXXXX)" "$$(ls build/deb/perfconv_*.deb)"

uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build build-san build-fuzz build-arm64 perfconv

-include $(shell find build build-san build-fuzz/obj -name '*.d' 2>/dev/null)
