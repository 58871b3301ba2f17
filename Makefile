# The README's two commands: `make study` (set up, run the default local scaling study and
# write its report) and `make test` (set up, run the tests; .ci/run calls this).
VENV ?= .venv
BIN := $(VENV)/bin
# pytest-xdist workers for the tests that judge no timing (a test module runs whole on
# one of them: tests/conftest.py): one more than this 2-core machine's cores, to use what
# a test waiting on a timeout or a launch leaves idle; the tests marked `alone` judge a
# planted timing effect and run after them in a session of their own, alone on the
# machine: beside a second worker one of them failed in most full runs (docs/decisions.md)
TEST_WORKERS ?= 3
PYTEST := $(BIN)/python -m pytest -q

.PHONY: setup study test quick docs system-deps

# pip compiles what it installs one file at a time; compileall does it on every core
# (38 s against 46 s here, the same 8,364 files)
$(BIN)/podscale: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --no-compile -e '.[test]'
	$(BIN)/python -m compileall -q -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null
	touch $@

setup: $(BIN)/podscale

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
test: setup system-deps
	@$(BIN)/python -m compileall -q -j 0 podscale analysis suites tests >/dev/null
	@$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup --durations=15 -m "not alone"; shared=$$?; \
	echo "== the tests that judge timing, alone on the machine"; \
	$(PYTEST) --durations=5 -m alone; alone=$$?; \
	[ $$shared -eq 0 ] && [ $$alone -eq 0 ]

# The tests that start no worker processes: seconds, for development.
quick: setup
	PODSCALE_QUICK=1 $(BIN)/python -m pytest -q -m "not slow and not cluster and not asv"

docs: setup
	$(BIN)/mkdocs build --strict --site-dir site
