# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree entry point for ib_cm.  Kbuild describes the module itself;
# this file only decides where and how kbuild runs.
#
# With a Linux 7.2 build tree at KDIR (the default is the running kernel's)
# the module is built right here.  Without one, as on a Debian 12 host, the
# build runs inside the cached Debian sid root (tools/testing/vm/mkroot.sh
# creates it on first use) against that root's 7.2 headers.

SHELL := /bin/bash

SRC := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
VM := $(SRC)/tools/testing/vm
ROOT_KVER := $(shell . $(VM)/config.sh && echo $$IBCM_KVER)
ROOT_DIR := $(shell . $(VM)/config.sh && echo $$IBCM_ROOT)

KDIR ?= /lib/modules/$(shell uname -r)/build
KDIR_REL := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)

# An explicit KDIR is always honoured; the default only if it is a 7.2 tree.
ifneq ($(filter command line environment,$(origin KDIR)),)
NATIVE := 1
else ifneq ($(filter 7.2.%,$(KDIR_REL)),)
NATIVE := 1
else
NATIVE :=
endif

ifeq ($(NATIVE),1)
KVER := $(KDIR_REL)
KMAKE = $(MAKE) -C $(KDIR) M=$(SRC)
else
KVER := $(ROOT_KVER)
KMAKE = $(VM)/mkroot.sh >&2 && $(VM)/inroot.sh make -C /lib/modules/$(KVER)/build M=$(SRC)
endif

# Extra kbuild arguments, e.g. "make KBUILD_ARGS='W=1 KCFLAGS=-Werror'".
KBUILD_ARGS ?=
SOURCES := cm.c cm_msgs.h cm_trace.h include/rdma/ib_cm.h include/core_priv.h
TOOL_SOURCES := tools/testing/fuzz/cm_fuzz.c tools/testing/fuzz/cm_peer.c \
	tools/testing/fuzz/cm_slow.c \
	$(sort $(wildcard $(SRC)/tools/testing/kunit/cm_kunit_*.c))

all: modules

modules:
	$(KMAKE) $(KBUILD_ARGS) modules

# The warning-clean build that "make check" insists on.
werror:
	$(KMAKE) W=1 KCFLAGS=-Werror modules

# kbuild does not fail on sparse warnings, so look for them in its output.
sparse:
	@set -o pipefail; log=$$(mktemp); \
	if ! { $(KMAKE) C=2 modules 2>&1 | tee $$log; }; then \
		rm -f $$log; exit 1; fi; \
	if grep -E '(warning|error):' $$log >/dev/null; then \
		rm -f $$log; echo "sparse: warnings found" >&2; exit 1; fi; \
	rm -f $$log

# The sources, and the patch series that make patch writes.
checkpatch: patch
	KDIR=$(KDIR) $(SRC)/tools/testing/checkpatch.sh $(SOURCES) $(TOOL_SOURCES) \
		$(SRC)/out/patch/*.patch

# This module as a git format-patch series against linux-source-7.2, in
# out/patch (tools/testing/patch/mkpatch.sh).
patch:
	$(SRC)/tools/testing/patch/mkpatch.sh $(SRC)/out/patch

install:
ifeq ($(NATIVE),1)
	install -D -m 644 $(SRC)/ib_cm.ko $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/updates/ib_cm.ko
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) -a $(KVER)
else
	@echo "install: no Linux 7.2 build tree at $(KDIR); this host does not run" >&2
	@echo "install: 7.2, so there is nothing to install into. Use 'make vm-test'." >&2
	@exit 1
endif

# The same as a DKMS package (tools/dkms/dkms.sh): sources in
# /usr/src/ib_cm-VERSION, built by DKMS for this kernel and again for every
# new 7.2 kernel, installed to updates/dkms.  VERSION is this base, plus the
# commit where the tree is a git checkout ("make version" prints it).
IBCM_VERSION_BASE := 0.1

version:
	@$(SRC)/tools/dkms/dkms.sh version $(IBCM_VERSION_BASE)

dkms-install:
ifeq ($(NATIVE),1)
	$(SRC)/tools/dkms/dkms.sh install $(IBCM_VERSION_BASE) $(KVER)
else
	@echo "dkms-install: no Linux 7.2 build tree at $(KDIR); DKMS would build" >&2
	@echo "dkms-install: for this host's kernel, which is not 7.2." >&2
	@exit 1
endif

dkms-remove:
	$(SRC)/tools/dkms/dkms.sh remove

# Without the sid root there is nothing kbuild could have built here.
clean:
ifeq ($(NATIVE),1)
	$(KMAKE) clean
	$(MAKE) -C $(KDIR) M=$(SRC)/tools/testing/fuzz clean
else ifneq ($(wildcard $(ROOT_DIR)/usr/bin/make),)
	$(VM)/inroot.sh make -C /lib/modules/$(KVER)/build M=$(SRC) clean
	$(VM)/inroot.sh make -C /lib/modules/$(KVER)/build \
		M=$(SRC)/tools/testing/fuzz clean
endif
	rm -rf $(SRC)/out

demo:
	$(VM)/run.sh --demo

# Ours against the stock module in one VM, by default on one vCPU under QEMU's
# instruction counting (BENCH_MODE=wall: two vCPUs, wall clock); settings in
# tools/testing/bench/config.sh.
bench:
	$(VM)/run.sh --bench

# KERNEL=NAME: the same on a sanitised kernel of our own build instead of
# the root's (tools/testing/vm/kernel.sh): debug (KASAN) or kcsan (KCSAN
# instead), our CM built in its tree; NAME-stock (or STOCK=1) is the
# baseline, the same configuration with the stock CM.  Not part of "make
# check".  "make vm-kernel KERNEL=NAME" only builds it.
VM_RUN = $(if $(KERNEL),$(VM)/kernel.sh --kernel $(KERNEL),$(VM)/run.sh)

vm-test:
	$(VM_RUN) $(if $(STOCK),--stock) $(T)

vm-kernel:
	$(VM)/kernel.sh --kernel $(or $(KERNEL),debug) $(if $(STOCK),--stock) --build-only

check:
	$(SRC)/tools/testing/check.sh

# The long runs: fuzzing (a million hostile MADs), loss (five rounds of
# lossy_wire) and an NVMe-oF target re-created under I/O (nvme_recreate),
# on our module and then on the stock one; not part of "make check".
# Results in out/vm/stress-MODE/.  STRESS_ARGS="IBCM_FUZZ_RATE=0
# IBCM_NETEM_ROUNDS=10 ..." sets the tests' parameters.  KERNEL=debug or
# kcsan: on that kernel and its stock baseline, in
# out/vm/stress-KERNEL-MODE/.
STRESS := $(SRC)/tools/testing/selftests/ib_cm/stress/fuzz_long.sh \
	$(SRC)/tools/testing/selftests/ib_cm/stress/lossy_long.sh \
	$(SRC)/tools/testing/selftests/ib_cm/stress/nvme_recreate.sh
STRESS_OUT = $(SRC)/out/vm/stress$(if $(KERNEL),-$(KERNEL))
stress:
	@rc=0; \
	IBCM_VM_TIMEOUT=3600 $(VM_RUN) --out $(STRESS_OUT)-ours $(STRESS) $(STRESS_ARGS) || rc=1; \
	IBCM_VM_TIMEOUT=3600 $(VM_RUN) --stock --out $(STRESS_OUT)-stock $(STRESS) $(STRESS_ARGS) || rc=1; \
	exit $$rc

.PHONY: all modules werror sparse checkpatch patch install version dkms-install \
	dkms-remove clean demo bench vm-test vm-kernel check stress

# Section 9 man pages of the API, into out/man/man9.
man:
	$(SRC)/tools/testing/man/mkman.sh

.PHONY: man

# KUnit suites in a Linux 7.2 kernel built from source (tools/testing/kunit).
# "make kunit KUNIT_DEBUG=1" runs them under KASAN, lockdep and kmemleak.
kunit:
	$(SRC)/tools/testing/kunit/run.sh $(if $(KUNIT_DEBUG),--debug)

.PHONY: kunit
