# rxe2 top-level Makefile: drives the module, the provider, the tests,
# the VM runner and installation.  `make help` lists the targets.

# DISTRO=trixie|sid: the tree's programs are built in that distribution's
# root with its compiler and libraries (URUN: tools/kroot in), and the
# guest boots that root with its kernel (KVER: its newest by default)
override KVER := $(shell KVER='$(KVER)' DISTRO='$(DISTRO)' tools/kver)
ifeq ($(KVER),)
$(error cannot resolve the kernel (tools/kver said why))
endif
# sub-makes get the resolved name, not the line given on the command line
MAKEOVERRIDES := $(filter-out KVER=%,$(MAKEOVERRIDES)) KVER=$(KVER)
KDIR ?= /lib/modules/$(KVER)/build
# kbuild runs where KVER's headers can be used: here for Debian 12's own
# kernels, in the build root of the kernel's suite otherwise (tools/kroot)
KRUN := $(CURDIR)/tools/kroot run $(KVER)
URUN := $(if $(DISTRO),$(CURDIR)/tools/kroot in $(DISTRO))
PREFIX ?= /usr
VM_TIMEOUT ?= 1500

export KVER KRUN DISTRO

.PHONY: all userland module provider selftests check check-debug check-poison bench bench-ab bench-loss ab-base siw-module fuzz demo deps install install-module install-user deb check-packages check-two-kernels rdma-core-intree check-rdma-core check-layout clean help lint

all: module provider selftests tools/rxe2fuzz tools/rxe2dump

module:
	$(KRUN) $(MAKE) -C $(KDIR) M=$(CURDIR)/rxe W=1 $(if $(C),C=$(C)) modules

# The tree holds one userland's programs at a time (a trixie build does
# not run on Debian 12's libc, nor the other way round): a change of
# DISTRO cleans them first.  A tree without the stamp was built here.
USERLAND := $(or $(DISTRO),bookworm)
PROGRAMS := tools/memcpy_bw tools/inline_bench tools/odp_bench tools/flush_bench \
	tools/rxe2fuzz tools/rxe2dump tools/raw_echo tools/scale_bench \
	tools/mpi_bench.openmpi tools/mpi_bench.mpich tools/udp_lat
userland:
	@was=$$(cat .build/userland 2>/dev/null || echo bookworm); \
	if [ "$$was" != $(USERLAND) ]; then \
		echo "  CLEAN   the programs built for $$was (now $(USERLAND))"; \
		$(MAKE) -C provider clean >/dev/null && \
		$(MAKE) -C selftests clean >/dev/null && rm -f $(PROGRAMS) || exit 1; \
	fi; mkdir -p .build && echo $(USERLAND) > .build/userland

provider: | userland
	$(URUN) $(MAKE) -C provider

selftests: provider
	$(URUN) $(MAKE) -C selftests

# The provider's ring unit test runs on the host; the kernel suite runs
# in one VM boot, except the tests in NUMA_TESTS, which need two NUMA
# nodes and run in a second, short boot (tools/vm --numa 2).  RXE2_TESTS
# picks tests as usual; a boot with nothing to run is left out.
NUMA_TESTS := test_ic test_odp_migrate

check: all
	$(URUN) $(MAKE) -C provider test
	tools/check $(VM_TIMEOUT) "$(NUMA_TESTS)"

# A benchmark, not a test: rxe2 and rdma_rxe side by side in one boot
# (tools/bench's sections, left out when RXE2_BENCH_ONLY names none of
# them), then (section "lat") latency under load in a boot of 4 vCPUs
# and MPI in one of 2,
# then (section "storage") NFS over RDMA and nvme-rdma with fio in a
# boot of its own (tools/bench-storage),
# then (section "loss") goodput over a lossy veth against siw in a boot
# of its own (tools/bench-loss without a base module; make bench-loss
# compares against AB_BASE's).  RXE2_BENCH_ONLY picks sections, e.g.
# RXE2_BENCH_ONLY=storage make bench boots once, for that section alone.
BENCH_MAIN = case " $$(echo "$${RXE2_BENCH_ONLY:-perftest}" | tr , ' ') " in \
	*" perftest "*|*" odp "*|*" capture "*|*" inline "*|*" flush "*|*" scale "*) \
	true ;; *) false ;; esac
BENCH_LOSS = case " $$(echo "$${RXE2_BENCH_ONLY:-loss}" | tr , ' ') " in \
	*" loss "*) true ;; *) false ;; esac
BENCH_LAT = case " $$(echo "$${RXE2_BENCH_ONLY:-lat}" | tr , ' ') " in \
	*" lat "*) true ;; *) false ;; esac
BENCH_STORAGE = case " $$(echo "$${RXE2_BENCH_ONLY:-storage}" | tr , ' ') " in \
	*" storage "*) true ;; *) false ;; esac
bench: all tools/memcpy_bw tools/inline_bench tools/odp_bench tools/flush_bench \
		tools/scale_bench tools/mpi_bench.openmpi tools/mpi_bench.mpich \
		tools/udp_lat siw-module
	@mkdir -p .build
	@: >.build/bench.md
	@if $(BENCH_MAIN); then \
		tools/vm --timeout 3000 -- $(CURDIR)/tools/bench | tee .build/bench.md; \
	fi
	@if $(BENCH_LAT); then \
		echo; \
		tools/vm --smp 4 --timeout 3000 -- $(CURDIR)/tools/bench-lat \
			perftest | tee -a .build/bench.md; \
		tools/vm --timeout 3000 -- $(CURDIR)/tools/bench-lat mpi \
			| tee -a .build/bench.md; \
	fi
	@if $(BENCH_STORAGE); then \
		echo; \
		tools/vm --timeout 900 -- $(CURDIR)/tools/bench-storage \
			| tee -a .build/bench.md; \
	fi
	@if $(BENCH_LOSS); then \
		echo; \
		tools/vm --timeout 3000 -- $(CURDIR)/tools/bench-loss - \
			$(CURDIR)/.build/siw/siw.ko | tee -a .build/bench.md; \
	fi

# The Debian packages installed in the guest with dpkg -i, DKMS building
# the module there for the running kernel (and the newest installed one):
# selftests/packages/test_deb.sh.  Its own target: DKMS compiles the
# module under TCG, which takes longer than a test of make check may.
# On a kernel of another Debian suite the packages go into that suite's
# build root (DKMS with that suite's compiler; tools/kroot dkms-root);
# with DISTRO into the guest's own root, that distribution's.
check-packages: all deb
	lower=$$(tools/kroot dkms-root $(KVER)) || exit 1; \
	RXE2_DEB_LOWER=$$lower \
	RXE2_EXTRA_TESTS=$(CURDIR)/selftests/packages/test_deb.sh \
	RXE2_TESTS=test_deb.sh RXE2_TEST_TIMEOUT=3000 \
	tools/vm --timeout 3600 -- $(CURDIR)/selftests/run

# Two machines, two kernels: two guests at once (KVER_A, by default
# Debian 12's own, and KVER_B), one vCPU each, joined by QEMU socket
# netdevs (virtio-net) on 127.0.0.1; rxe2 <-> rxe2 and rxe2 <-> the
# other kernel's rdma_rxe (selftests/two/test_two_kernels.sh).
# tools/vm-pair builds rdma_rxe2 for each kernel under .build/pair/.
KVER_A ?= $(KVER)
KVER_B ?= 7.3
check-two-kernels: provider tools/rxe2dump
	tools/vm-pair --kver-a $(KVER_A) --kver-b $(KVER_B) -- \
		$(CURDIR)/selftests/two/test_two_kernels.sh

# librxe2 built inside rdma-core trees (docs/rdma-core.md), laid out and
# built on the host by tools/rdma-core-intree, then each build used
# uninstalled, with its own libibverbs, in one guest boot
# (selftests/rdma-core/test_intree.sh).  The trees: each release of
# RDMA_CORE_RELEASES from Debian's source archive (tools/rdma-core-src,
# reachable wherever Debian's packages are; the tree check-layout reads
# too, which the layout of providers/rxe2 in it leaves alone), built in
# .build/rdma-core/REL/build; each tag of RDMA_CORE_TAGS cloned from
# RDMA_CORE_GIT into .build/rdma-core/TAG/src; each tree of RDMA_CORE_SRC
# (changed in place, built in .build/rdma-core/src-NAME/build).
RDMA_CORE_RELEASES ?= 56.1 65.0
RDMA_CORE_GIT ?= https://github.com/linux-rdma/rdma-core.git
RDMA_CORE_TAGS ?=
RDMA_CORE_SRC ?=
RDMA_CORE_JOBS ?= $(shell nproc)
RDMA_CORE_BUILDS = $(foreach t,$(RDMA_CORE_RELEASES) $(RDMA_CORE_TAGS),\
	$(CURDIR)/.build/rdma-core/$(t)/build) \
	$(foreach t,$(RDMA_CORE_SRC),$(CURDIR)/.build/rdma-core/src-$(notdir $(t))/build)
rdma-core-intree:
	@set -e; \
	for r in $(RDMA_CORE_RELEASES); do \
		src=$$(tools/rdma-core-src $$r); \
		tools/rdma-core-intree --jobs $(RDMA_CORE_JOBS) $$src \
			.build/rdma-core/$$r/build; \
	done; \
	for t in $(RDMA_CORE_TAGS); do \
		d=.build/rdma-core/$$t; \
		if [ ! -d $$d/src ]; then \
			rm -rf $$d/src.tmp; \
			git -c advice.detachedHead=false clone -q --depth 1 \
				--branch $$t $(RDMA_CORE_GIT) $$d/src.tmp; \
			mv $$d/src.tmp $$d/src; \
		fi; \
		tools/rdma-core-intree --jobs $(RDMA_CORE_JOBS) $$d/src $$d/build; \
	done; \
	for t in $(RDMA_CORE_SRC); do \
		tools/rdma-core-intree --jobs $(RDMA_CORE_JOBS) $$t \
			.build/rdma-core/src-$$(basename $$t)/build; \
	done

# Guard 3 of provider/ibverbs_private.h: its declarations and pins for
# each release against that release's own headers (provider/check-layout),
# for the releases Debian's source archive serves (v44.0's tarball is not
# served: RDMA_CORE_SRC= a v44.0 tree checks it).
LAYOUT_RELEASES ?= 56.1 65.0
check-layout:
	@set -e; \
	for r in $(LAYOUT_RELEASES); do \
		provider/check-layout $$(tools/rdma-core-src $$r); \
	done; \
	for t in $(RDMA_CORE_SRC); do provider/check-layout $$t; done

check-rdma-core: all rdma-core-intree
	RXE2_RDMA_CORE_BUILDS="$(RDMA_CORE_BUILDS)" \
	RXE2_EXTRA_TESTS=$(CURDIR)/selftests/rdma-core/test_intree.sh \
	RXE2_TESTS=test_intree.sh RXE2_TEST_TIMEOUT=1200 \
	tools/vm --timeout 1800 -- $(CURDIR)/selftests/run

# A change's cost on the data path: the module built from AB_BASE (a
# git revision) against the build tree's, swapped round by round in one
# boot (tools/bench-ab; the build tree's also with a fault rule on).
AB_BASE ?= HEAD~1
bench-ab: all ab-base
	tools/vm --timeout 3000 -- $(CURDIR)/tools/bench-ab \
		$(CURDIR)/.build/ab/rxe/rdma_rxe2.ko | tee .build/bench-ab.md

# AB_BASE's module, built in .build/ab: the base of bench-ab and bench-loss
ab-base:
	rm -rf .build/ab && mkdir -p .build/ab
	git archive $(AB_BASE) rxe uapi | tar -x -C .build/ab
	$(KRUN) $(MAKE) -C $(KDIR) M=$(CURDIR)/.build/ab/rxe modules

# Goodput over a veth with netem loss, duplication, reordering and
# corruption between two namespaces: AB_BASE's module against the build
# tree's, and siw over the same link as the reference, in one boot
# (tools/bench-loss).
bench-loss: all ab-base siw-module
	tools/vm --timeout 3000 -- $(CURDIR)/tools/bench-loss \
		$(CURDIR)/.build/ab/rxe/rdma_rxe2.ko \
		$(CURDIR)/.build/siw/siw.ko | tee .build/bench-loss.md

# siw, the kernel's software iWARP device (RDMA over the kernel's TCP),
# in .build/siw/siw.ko: Debian does not build it (CONFIG_RDMA_SIW is
# off).  Only its directory is taken from the linux-source tarball of
# KVER's line (linux-source-6.1 comes with make deps) and built out of
# tree against KDIR by its own Makefile, CONFIG_RDMA_SIW=m given on the
# command line; nothing else of the kernel's configuration is needed.
# Extracted again only when the tarball changes; kbuild rebuilds when
# KDIR does.
SIW_LINE = $(shell echo $(KVER) | cut -d. -f1,2)
SIW_SRC ?= /usr/src/linux-source-$(SIW_LINE).tar.xz
siw-module:
	@test -f $(SIW_SRC) || { echo "siw-module: no $(SIW_SRC)" \
		"(apt-get install linux-source-$(SIW_LINE))" >&2; exit 1; }
	@if [ "$$(cat .build/siw/.source 2>/dev/null)" != "$(SIW_SRC)" ]; then \
		echo "  TAR     $(SIW_SRC): drivers/infiniband/sw/siw"; \
		rm -rf .build/siw && mkdir -p .build/siw && \
		tar -xf $(SIW_SRC) -C .build/siw --strip-components=5 \
			linux-source-$(SIW_LINE)/drivers/infiniband/sw/siw/ && \
		echo "$(SIW_SRC)" >.build/siw/.source; \
	fi
	$(KRUN) $(MAKE) -C $(KDIR) M=$(CURDIR)/.build/siw CONFIG_RDMA_SIW=m modules

# The wire fuzzer's long run, in a boot of its own: 10^6 frames at the
# live QPs of rxe2 traffic, then a verified transfer, rping -V and rmmod.
# FUZZ_SECONDS bounds the fuzzer itself; the test and the boot get
# room for the traffic and checks around it.
FUZZ_FRAMES ?= 1000000
FUZZ_PPS ?= 2500
FUZZ_SECONDS ?= 3000
fuzz: all
	RXE2_TESTS=test_fuzz.sh RXE2_FUZZ_FRAMES=$(FUZZ_FRAMES) \
	RXE2_FUZZ_PPS=$(FUZZ_PPS) RXE2_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	RXE2_TEST_TIMEOUT=$$(($(FUZZ_SECONDS) + 2400)) \
	tools/vm --timeout $$(($(FUZZ_SECONDS) + 3000)) -- \
		$(CURDIR)/selftests/run

# The sanitizer kernel (KASAN, UBSAN, lockdep, DEBUG_LIST, KMEMLEAK...):
# tools/debug-kernel builds it once from linux-source-6.1 into a cache
# outside the tree (about an hour on two cores, see docs/robustness.md)
# and installs it; then the whole suite and the
# fuzzer's long run boot it.  Any sanitizer report fails the boot
# (tools/vm), a kmemleak object of rxe2 fails selftests/run.
check-debug: deps
	kver=$$(tools/debug-kernel) && \
	RXE2_TEST_TIMEOUT=1200 $(MAKE) check KVER=$$kver VM_TIMEOUT=7200 && \
	$(MAKE) fuzz KVER=$$kver FUZZ_PPS=1500 FUZZ_SECONDS=9000

# The suite on Debian's own kernel with the allocator's own checks on:
# slub_debug (red zones and poison around every slab object, owners
# tracked), page_poison (a freed page is filled, and checked when it is
# handed out again), and no init_on_alloc, which would hide a missed
# write behind zeros.  Nothing to build; a report fails the boot
# (tools/vm).  Found the byte written past the tap ring
# (docs/robustness.md).
POISON_CMDLINE := slub_debug=FZPU page_poison=1 init_on_alloc=0
check-poison: all
	RXE2_VM_CMDLINE="$(POISON_CMDLINE)" $(MAKE) check

# the raw packet QP example make demo runs (docs/architecture.md)
tools/raw_echo: tools/raw_echo.c | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -o $@ $< -libverbs

# the wire fuzzer and the capture tool share the ICRC (tools/icrc.c)
tools/rxe2fuzz: tools/rxe2fuzz.c tools/icrc.c tools/icrc.h | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -o $@ \
		$(filter %.c,$^)

# the capture tool a user installs: libpcap
tools/rxe2dump: tools/rxe2dump.c tools/icrc.c tools/icrc.h | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -o $@ \
		$(filter %.c,$^) -lpcap

tools/memcpy_bw: tools/memcpy_bw.c | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -o $@ $<

# inline-receive latency and message rate: an rxe2dv application
tools/inline_bench: tools/inline_bench.c provider | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -Iprovider/include -o $@ $< \
		-Lprovider -lrxe2 -Wl,-rpath,$(CURDIR)/provider -libverbs

# the selftests' helpers (built by all) give it a loopback RC pair
tools/odp_bench: tools/odp_bench.c selftests | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iselftests \
		-o $@ $< selftests/tap.o selftests/util.o selftests/dp.o -libverbs

# ATOMIC WRITE and FLUSH round trips: the selftests' helpers and rxe2dv
tools/flush_bench: tools/flush_bench.c selftests | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iselftests \
		-Iprovider/include -o $@ $< selftests/tap.o selftests/util.o \
		selftests/dp.o -Lprovider -lrxe2 -Wl,-rpath,$(CURDIR)/provider \
		-libverbs

# the kernel's UDP round trip: bench-lat's floor for two devices
tools/udp_lat: tools/udp_lat.c | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -o $@ $<

# MPI ping-pong and streaming, once per MPI (make deps installs both)
tools/mpi_bench.%: tools/mpi_bench.c | userland
	$(URUN) mpicc.$* -O2 -Wall -Wextra -Werror -o $@ $<

# many QPs and MRs in one process: rates and kernel memory per object
tools/scale_bench: tools/scale_bench.c | userland
	$(URUN) $(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -o $@ $< -libverbs

demo: deps all tools/odp_bench tools/raw_echo
	tools/vm --timeout 600 -- $(CURDIR)/tools/demo

deps:
	tools/deps

# DESTDIR stages everything under a directory (packaging, tests);
# PREFIX applies to librxe2 (the module goes where depmod looks).
install: install-module install-user

install-module: module
	$(KRUN) $(MAKE) -C $(KDIR) M=$(CURDIR)/rxe INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	depmod $(if $(DESTDIR),-b $(DESTDIR)) -a $(KVER)

# what the packages carry besides the module (DKMS builds that)
install-user: provider tools/rxe2fuzz tools/rxe2dump
	$(MAKE) -C provider install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	install -D -m 0755 tools/rxe2fuzz $(DESTDIR)$(PREFIX)/bin/rxe2fuzz
	install -D -m 0755 tools/rxe2dump $(DESTDIR)$(PREFIX)/bin/rxe2dump

# Debian packages (rxe2-dkms, librxe2-1, librxe2-dev, rxe2-tools) from a
# copy of the tree's files (committed or not; ignored ones left out) in
# .build/deb, where the .debs end up; with DISTRO built in its root, for
# that distribution's libibverbs
DEB_VERSION = $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
deb:
	rm -rf .build/deb && mkdir -p .build/deb/rxe2-$(DEB_VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		xargs -0 tar -c --ignore-failed-read | \
		tar -x -C .build/deb/rxe2-$(DEB_VERSION)
	cd .build/deb/rxe2-$(DEB_VERSION) && $(URUN) dpkg-buildpackage -us -uc -b
	@ls .build/deb/*.deb

# Kernel style and sparse over the module; the public header alone.
lint:
	tools/checkpatch
	$(KRUN) $(MAKE) -C $(KDIR) M=$(CURDIR)/rxe W=1 C=2 modules
	$(MAKE) -C provider lint

clean:
	$(KRUN) $(MAKE) -C $(KDIR) M=$(CURDIR)/rxe clean 2>/dev/null || true
	$(MAKE) -C provider clean
	$(MAKE) -C selftests clean
	rm -rf .build $(PROGRAMS)

help:
	@echo "make deps     install the Debian packages rxe2 needs (KVER=$(KVER))"
	@echo "make          build rxe/rdma_rxe2.ko, provider/librxe2, selftests"
	@echo "make check    run the selftests (one VM boot, a second with two NUMA nodes)"
	@echo "  DISTRO=trixie|sid  build in that distribution's root, boot it with its kernel (make deps DISTRO=... once)"
	@echo "make bench    perftest on rxe2 and rdma_rxe in one VM boot, with ratios; then latency, storage (NFS/RDMA, nvme-rdma) and loss boots (RXE2_BENCH_ONLY=SECTIONS)"
	@echo "make check-debug  build a KASAN/UBSAN/lockdep/kmemleak kernel once, run check and fuzz on it"
	@echo "make check-poison the suite on Debian's kernel with slub_debug and page_poison on (no build)"
	@echo "make bench-ab the data-path cost of a change: AB_BASE's module against the tree's, one boot"
	@echo "make bench-loss goodput over a lossy veth (netem, two namespaces): AB_BASE's module against the tree's, siw as reference"
	@echo "make siw-module  siw (software iWARP) from linux-source into .build/siw/siw.ko, bench-loss's reference"
	@echo "make fuzz     the wire fuzzer: FUZZ_FRAMES (10^6) frames at live QPs in one VM boot"
	@echo "make demo     boot a VM: create a link, ibv_devinfo, a ping-pong and its capture"
	@echo "make check-packages  make deb, then dpkg -i and DKMS in the guest (selftests/packages)"
	@echo "make check-two-kernels  two guests at once, KVER_A ($(KVER)) and KVER_B (7.3), rxe2 and rdma_rxe across a virtio link"
	@echo "make check-rdma-core  librxe2 built in rdma-core RDMA_CORE_RELEASES (56.1 65.0, Debian's sources), RDMA_CORE_TAGS, RDMA_CORE_SRC; used in the guest"
	@echo "make check-layout  provider/ibverbs_private.h against each release's own headers (LAYOUT_RELEASES, RDMA_CORE_SRC)"
	@echo "make deb      Debian packages rxe2-dkms, librxe2-1, librxe2-dev, rxe2-tools into .build/deb"
	@echo "make install  install the module, librxe2 (provider, rxe2dv header, librxe2.pc, man pages), rxe2fuzz, rxe2dump"
	@echo "make lint     checkpatch and sparse over the module, rxe2dv.h self-contained"
