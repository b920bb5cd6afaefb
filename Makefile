# DaxFS top-level build.  `make` builds the user-space host: the core as a
# static and shared library (libdaxfs), the tools and the C test programs.
# The kernel module is built with `make module` (see kernel/Kbuild).

CC      ?= cc
BUILD   ?= build
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration \
	   -Werror=incompatible-pointer-types \
	   -fPIC -pthread -I. -Iinclude -MMD -MP $(EXTRA_CFLAGS)
LDLIBS  += -pthread $(EXTRA_LDLIBS)

CORE_SRC  := $(wildcard core/*.c)
LIB_SRC   := $(wildcard lib/*.c)
TOOL_SRC  := $(wildcard tools/*.c)
TEST_SRC  := $(wildcard tests/c/*.c)
# lc_guest.c: the guest client (static, build/vm-helpers/lc_guest)
LC_SRC    := $(filter-out tests/lincheck/lc_guest.c,$(wildcard tests/lincheck/*.c))

CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
# tools/NAME.c with a main(); tools/common-*.c are shared helpers
TOOL_COMMON := $(filter tools/common%,$(TOOL_SRC))
TOOL_MAINS  := $(filter-out tools/common%,$(TOOL_SRC))
TOOL_COMMON_OBJ := $(TOOL_COMMON:%.c=$(BUILD)/%.o)
TOOLS     := $(TOOL_MAINS:tools/%.c=$(BUILD)/bin/%)
TESTS     := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
# static helpers that run inside the QEMU guests (no libc there)
VM_HELPERS := $(patsubst vm/helpers/%.c,$(BUILD)/vm-helpers/%,$(wildcard vm/helpers/*.c)) \
	      $(BUILD)/vm-helpers/lc_guest

LC_RUN    := $(BUILD)/lincheck/lc_run

# The FUSE mount (tools/fuse, docs/fuse.md): built when libfuse3's headers
# are there (Debian libfuse3-dev, scripts/setup.sh installs it).
FUSE_SRC  := $(wildcard tools/fuse/*.c)
FUSE_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null)
DAXFS_FUSE := $(if $(FUSE_LIBS),$(BUILD)/bin/daxfs-fuse)

LIBA  := $(BUILD)/libdaxfs.a
LIBSO := $(BUILD)/libdaxfs.so

.PHONY: all clean test check module module-check kernels bench crash pmem race cluster cross-arm64 deb \
	lincheck lincheck-bugs lincheck-checker kfuzz
all: $(LIBA) $(LIBSO) $(TOOLS) $(TESTS) $(VM_HELPERS) $(LC_RUN) $(DAXFS_FUSE)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBA): $(CORE_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# soname libdaxfs.so.0: the Debian package installs it under that name
$(LIBSO): $(CORE_OBJ) $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libdaxfs.so.0 -o $@ $^ $(LDLIBS)

$(BUILD)/bin/%: $(BUILD)/tools/%.o $(TOOL_COMMON_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/tools/fuse/%.o: tools/fuse/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FUSE_CFLAGS) -c $< -o $@

$(BUILD)/bin/daxfs-fuse: $(FUSE_SRC:%.c=$(BUILD)/%.o) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(FUSE_LIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/c/%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/vm-helpers/%: vm/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -Wall -Wextra -Wno-unused-parameter -pthread -o $@ $<

# the lincheck client of guests (docs/lincheck.md "Guests"): no libdaxfs
$(BUILD)/vm-helpers/lc_guest: tests/lincheck/lc_guest.c tests/lincheck/lc_round.c \
		tests/lincheck/lc.h
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -Wall -Wextra -Wno-unused-parameter -I. -Iinclude -o $@ \
		tests/lincheck/lc_guest.c tests/lincheck/lc_round.c

$(LC_RUN): $(LC_SRC:%.c=$(BUILD)/%.o) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS)

# Crash-injection build (docs/recovery.md): the same library and tools
# with daxfs_crash_point() live (lib/crash.c), in their own object dir:
# build/crash/libdaxfs.so and build/crash/bin/*.  Load it from Python with
# DAXFS_LIB=build/crash/libdaxfs.so and pick the point with DAXFS_CRASH_AT.
# Its stores are counted for the point store:N (lib/crash-plain.c): GCC's
# outline sanitizer calls on every write (no reads, no shadow) and the
# block copies wrapped, so that DAXFS_CRASH_PLAIN=1 counts plain stores.
CRASH_PLAIN_FLAGS := -DDAXFS_CRASH_PLAIN -fsanitize=kernel-address \
	--param asan-instrumentation-with-call-threshold=0 \
	--param asan-instrument-reads=0 --param asan-stack=0 --param asan-globals=0
CRASH_PLAIN_LDLIBS := -Wl,--wrap=memcpy,--wrap=memset,--wrap=memmove
crash:
	$(MAKE) BUILD=$(BUILD)/crash \
		EXTRA_CFLAGS="-DDAXFS_CRASH_POINTS $(CRASH_PLAIN_FLAGS)" \
		EXTRA_LDLIBS="$(CRASH_PLAIN_LDLIBS)" \
		$(BUILD)/crash/libdaxfs.so $(BUILD)/crash/libdaxfs.a \
		$(TOOL_MAINS:tools/%.c=$(BUILD)/crash/bin/%) \
		$(BUILD)/crash/lincheck/lc_run

# Power-failure states (docs/testing.md): libdaxfs with its cache-line
# flushes and drains traced into a media copy (lib/pmem-trace.c):
# build/pmem/libdaxfs.so, loaded by tests/test_power_fail.py.
pmem:
	$(MAKE) BUILD=$(BUILD)/pmem EXTRA_CFLAGS=-DDAXFS_PMEM_TRACE \
		$(BUILD)/pmem/libdaxfs.so

# Linearizability check (docs/lincheck.md): workers in build/lincheck/,
# the porcupine-based checker (Go, tools/lincheck) in build/lincheck/.
# `make lincheck DURATION=600 WORKERS=8 [SAVE=FILE] [LCFLAGS=...]` runs
# long (SAVE keeps the histories); tests/test_lincheck.py
# runs a bounded check and the detection tests.
GO       ?= $(shell command -v go || echo /usr/local/go/bin/go)
DURATION ?= 60
WORKERS  ?= 8
LC_CHECK := $(BUILD)/lincheck/lincheck
lincheck-checker:
	@test -x "$(GO)" || { echo "Go not found (needed by tools/lincheck):" \
		"run scripts/setup.sh" >&2; exit 1; }
	@mkdir -p $(BUILD)/lincheck
	cd tools/lincheck && $(GO) build -o $(abspath $(LC_CHECK)) .

lincheck: $(LC_RUN) lincheck-checker
	LINCHECK=$(LC_CHECK) scripts/lincheck.sh -b $(BUILD) -t $(DURATION) \
		-w $(WORKERS) $(if $(SAVE),-o $(SAVE)) -- $(LCFLAGS)

# A worker build with one re-introduced defect (BUG=APPEND_TRUNCATE,
# SHORT_GIVEBACK or EXCHANGE_RECOVERY, the -DDAXFS_BUG_* flags) and crash
# points: build/bug-$(BUG)/lincheck/lc_run.
lincheck-bugs:
	$(MAKE) BUILD=$(BUILD)/bug-$(BUG) \
		EXTRA_CFLAGS="-DDAXFS_CRASH_POINTS -DDAXFS_BUG_$(BUG)" \
		$(BUILD)/bug-$(BUG)/lincheck/lc_run

# libdaxfs and the C test programs for arm64 (docs/design.md "Memory
# ordering"): Debian's cross compiler, static binaries in build/arm64/ that
# qemu-aarch64-static runs (tests/test_cross_arm64.py).  The core's weakly
# ordered side only shows on arm64 code: x86 would hide a missing barrier.
CROSS_ARM64 ?= aarch64-linux-gnu-
cross-arm64:
	$(MAKE) CC=$(CROSS_ARM64)gcc BUILD=$(BUILD)/arm64 LDLIBS="-static -pthread" \
		$(BUILD)/arm64/libdaxfs.a $(TESTS:$(BUILD)/tests/%=$(BUILD)/arm64/tests/%)

# Double-fetch tests (tests/race/*.c, docs/testing.md): the core with
# daxfs_race_point() live (each test program supplies the hook, which
# changes a region value between its validation and its use), under
# AddressSanitizer, in their own object dir: build/race/race/NAME.
RACE_SRC := $(wildcard tests/race/*.c)
race:
	$(MAKE) BUILD=$(BUILD)/race \
		EXTRA_CFLAGS="-DDAXFS_RACE_POINTS -fsanitize=address -fno-omit-frame-pointer" \
		LDLIBS="-pthread -fsanitize=address" \
		$(RACE_SRC:tests/race/%.c=$(BUILD)/race/race/%)

$(BUILD)/race/%: $(BUILD)/tests/race/%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS)

# The test command (README, .ci/run).  pytest exits 5 when it collects no
# test, which fails this target like any other failure.
# The suite runs in TEST_JOBS processes (pytest-xdist, default one per CPU and
# at least 2; docs/testing.md "Parallel runs"); the QEMU guest tests run one
# at a time in one of them.  TEST_JOBS=1: one process, in file order.
TEST_JOBS ?= $(shell n=$$(nproc); echo $$(( n < 2 ? 2 : n )))
check: all
	python3 -m pytest -q -p no:cacheprovider --durations=15 \
		$(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS)) tests

test: check

# The emulated cluster (README's main job): three QEMU guests mount one
# shared memory file with daxfs.ko while this host works on it too.
cluster:
	python3 vm/demo.py

# The kernel corrupt-image fuzz, long run (docs/testing.md "Kernel image
# fuzz"): N images mounted by daxfs.ko in J QEMU guests; results and any
# failing image in build/kfuzz/.  CI runs a few hundred (test_kernel_fuzz).
N ?= 10000
J ?= 1
kfuzz: all module
	python3 vm/kfuzz.py -n $(N) -j $(J) $(if $(SEED),--seed $(SEED)) \
		$(if $(RESUME),--resume --out $(RESUME))

# Benchmarks: programs in build/bench/; bench/run.sh builds and runs them
# (docs/benchmarks.md).
bench: $(LIBA)
	$(MAKE) -C bench

clean:
	rm -rf $(BUILD)

# daxfs.ko for the guest kernel of vm/ (Debian 12, 6.1): kernel/Makefile
# builds it in build/kmod/ from kernel/*.c and the same core/*.c sources,
# and copies it to kernel/daxfs.ko.  KDIR=... picks other kernel headers.
module:
	$(MAKE) -C kernel $(if $(KDIR),KDIR=$(KDIR))

# daxfs.ko with one re-introduced defect (BUG=KERNEL_WRITE_MOVES, the
# -DDAXFS_BUG_* flag): build/bug-$(BUG)/daxfs.ko, which a VM test loads to
# show that it catches the defect (tests/vm/test_kernel_xattr.py).
module-bug:
	@mkdir -p $(BUILD)/bug-$(BUG)
	$(MAKE) -C kernel $(if $(KDIR),KDIR=$(KDIR)) \
		KMOD_OUT=$(abspath $(BUILD))/kmod-bug-$(BUG) \
		KMOD_KO=$(abspath $(BUILD))/bug-$(BUG)/daxfs.ko \
		DAXFS_KCFLAGS=-DDAXFS_BUG_$(BUG)

# Debian packages daxfs-tools and daxfs-dkms (debian/, docs/packaging.md),
# built in a scratch copy of the tree; the .deb files land in build/deb/.
deb:
	scripts/make-deb.sh

# Optional, not part of check (it needs the Debian archive): daxfs.ko built
# against the kernels of newer Debian suites, headers unpacked under /tmp
# (scripts/kernel-compat.sh, docs/kernel.md "Supported kernels").
SUITES ?= bookworm-backports
module-check:
	scripts/kernel-compat.sh $(if $(BOOT),-i) $(SUITES)

# The supported kernels (docs/kernel.md "Supported kernels"): daxfs.ko for 6.1 and for
# KERNEL_SUITES' kernels (a debootstrapped root where this gcc is too old), each booted
# in the guests with tests/vm/test_kernel_cluster.py and test_kernel_vfs.py; build/kernels/summary.
KERNEL_SUITES ?= bookworm-backports trixie-backports
kernels:
	scripts/kernels.sh $(KERNEL_SUITES)

# (not inside the debootstrapped Debian roots of build/roots/, whose etc/
# holds directories named *.d: scripts/debroot.sh)
-include $(shell find $(BUILD) -path $(BUILD)/roots -prune -o -path $(BUILD)/debroot -prune \
	-o -name '*.d' -type f -print 2>/dev/null)

# LD_PRELOAD data path (docs/preload.md): lib/preload/*.c over libdaxfs.a,
# which stays hidden inside (only the interposed calls are exported).
# -Bsymbolic-functions: the preload's calls of its own interposed calls
# stay its own, never a program's function of the same name (patch's own
# renameat2 calls syscall(), which the preload routes to renameat2: bound
# to the program's, it recursed until the stack ran out).
PRELOAD_SRC := $(wildcard lib/preload/*.c)
PRELOAD_SO  := $(BUILD)/libdaxfs-preload.so
# the list of sources, rewritten when it changes: a file removed from
# lib/preload/ relinks the library without it
PRELOAD_LIST := $(BUILD)/lib/preload/sources
$(PRELOAD_LIST): FORCE
	@mkdir -p $(dir $@)
	@echo '$(PRELOAD_SRC)' | cmp -s - $@ || echo '$(PRELOAD_SRC)' > $@
FORCE:
all: $(PRELOAD_SO)
$(PRELOAD_SO): $(PRELOAD_SRC:%.c=$(BUILD)/%.o) $(LIBA) $(PRELOAD_LIST)
	$(CC) -shared -o $@ $(filter %.o,$^) -Wl,--exclude-libs,ALL $(LIBA) \
		-Wl,-Bsymbolic-functions -ldl $(LDLIBS)
$(BUILD)/lib/preload/%.o: lib/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -Ilib/preload -c $< -o $@
# tests/preload/*.c: programs that tests/test_preload.py runs under the
# preload and natively (plain libc programs, no libdaxfs).
PRELOAD_TESTS := $(patsubst tests/preload/%.c,$(BUILD)/tests/preload/%,$(wildcard tests/preload/*.c))
# pl_calls again with _FORTIFY_SOURCE: the __*_chk and __open_2 entry points
all: $(PRELOAD_TESTS) $(BUILD)/tests/preload/pl_calls_fortify
$(BUILD)/tests/preload/%: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Wno-unused-result -o $@ $< -pthread
# the guests' userfaultfd helper, dynamic: under the preload natively
all: $(BUILD)/tests/preload/uffd_stall
$(BUILD)/tests/preload/uffd_stall: vm/helpers/uffd_stall.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Wno-unused-result -o $@ $< -pthread
$(BUILD)/tests/preload/pl_calls_fortify: tests/preload/pl_calls.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -D_FORTIFY_SOURCE=2 -Wall -Wextra -Wno-unused-result -o $@ $< -pthread
