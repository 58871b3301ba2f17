# The README's two commands: `make study` (set up, run the default local scaling study and
# write its report) and `make test` (set up, run the tests; .ci/run calls this).
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup study test chromium

$(BIN)/podscale: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

setup: $(BIN)/podscale

study: setup
	$(BIN)/podscale study

# Headless Chromium renders the generated HTML report in the tests (Debian's package).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium could not be installed; the report screenshot test will skip"

test: setup chromium
	$(BIN)/python -m pytest -q
