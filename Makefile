# The README's two commands: `make study` (set up, run the default local scaling study and
# write its report) and `make test` (set up, run the tests; .ci/run calls this).
VENV ?= .venv
BIN := $(VENV)/bin
# pytest-xdist workers for the tests that judge no timing (a test module runs whole on
# one of them: --dist loadfile; tests/conftest.py orders the modules): one more than this 2-core machine's cores, to use what
# a test waiting on a timeout or a launch leaves idle; the tests marked `alone` judge a
# planted timing effect and run after them in a session of their own, alone on the
# machine: beside a second worker one of them failed in most full runs (docs/decisions.md)
TEST_WORKERS ?= 3
PYTEST := $(BIN)/python -m pytest -q

.PHONY: setup study test quick docs system-deps

# The accelerator's runtime comes from the project's pip extra of JAX's own (pyproject:
# tpu = jax[tpu], cuda12, cuda13, rocm; cpu: none), chosen from this machine's device nodes
# (/dev/accel* or /dev/vfio/N: tpu; /dev/nvidia*: cuda12; /dev/kfd: rocm) unless ACCEL
# names one; packages come from pip's own settings (PIP_INDEX_URL, PIP_FIND_LINKS: a
# mirror or a wheelhouse), and setup says in one line what it chose and why.
ifeq ($(origin ACCEL),undefined)
ACCEL_LINE := $(shell python3 -m podscale.core.machine || echo cpu: device nodes not read)
ACCEL := $(firstword $(ACCEL_LINE))
else
ACCEL_LINE := $(ACCEL) ACCEL=$(ACCEL) given
endif
ACCELS := cpu tpu cuda12 cuda13 rocm
ifneq ($(words $(ACCEL)),1)
$(error ACCEL='$(ACCEL)': use one of $(ACCELS))
endif
ifeq ($(filter $(ACCEL),$(ACCELS)),)
$(error ACCEL=$(ACCEL): use one of $(ACCELS))
endif
# one stamp per extra: `make setup ACCEL=tpu` after a CPU setup installs the runtime;
# `make test` adds the test tools (`make study` needs none of them)
STAMP := $(VENV)/.setup-$(ACCEL)
TEST_STAMP := $(VENV)/.setup-test-$(ACCEL)
PIP_INSTALL := $(BIN)/pip install -q --no-compile
# pip compiles what it installs one file at a time; compileall does it on every core
# (38 s against 46 s here, the same 8,364 files)
COMPILE := $(BIN)/python -m compileall -q -j 0 \
  "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null

$(STAMP): pyproject.toml
	@echo "make setup: ACCEL=$(ACCEL): $(wordlist 2,99,$(ACCEL_LINE))"
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(PIP_INSTALL) -e '.[$(ACCEL)]'
	$(COMPILE)
	touch $@

$(TEST_STAMP): pyproject.toml
	@echo "make setup: ACCEL=$(ACCEL): $(wordlist 2,99,$(ACCEL_LINE))"
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(PIP_INSTALL) -e '.[test,$(ACCEL)]'
	$(COMPILE)
	touch $(STAMP) $@

setup: $(STAMP)

study: setup
	$(BIN)/podscale study

# Debian packages the tests use for real: headless Chromium renders the HTML report;
# Open MPI (mpirun) and Slurm + munge run the cluster launchers on this machine.
DEBS := chromium openmpi-bin slurm-wlm munge
system-deps:
	@missing=""; for c in chromium mpirun slurmctld munged; do \
	  command -v $$c >/dev/null 2>&1 || missing=1; done; \
	if [ -n "$$missing" ]; then \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBS) \
	    >/dev/null; } || echo "could not install $(DEBS); the tests that need them will skip"; \
	fi

# the project's own modules compiled once: where PYTHONDONTWRITEBYTECODE is set (as here)
# every process the tests start would compile them again on import (a stale one is ignored)
test: $(TEST_STAMP) system-deps
	@$(BIN)/python -m compileall -q -j 0 podscale analysis suites tests >/dev/null
	@$(PYTEST) -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 -m "not alone"; shared=$$?; \
	echo "== the tests that judge timing, alone on the machine"; \
	$(PYTEST) --durations=5 -m alone; alone=$$?; \
	[ $$shared -eq 0 ] && [ $$alone -eq 0 ]

# The tests that start no worker processes: seconds, for development.
quick: $(TEST_STAMP)
	PODSCALE_QUICK=1 $(BIN)/python -m pytest -q -m "not slow and not cluster and not asv"

docs: $(TEST_STAMP)
	$(BIN)/mkdocs build --strict --site-dir site
