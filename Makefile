# Two commands for a fresh clone (see README):
#   make check   set up, then check this machine's system interpreter
#   make test    set up, then lint and run the whole test suite
# While working: make test-fast (each test function once, see docs/development.md).
PYTHON ?= python3
VENV := .venv
TARGET_PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || command -v python3)

.PHONY: setup check test test-fast lint bench roots deb wheel vendor

$(VENV)/.installed: pyproject.toml bin/sitewarden
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

# Exit status 1 (not guarded, findings to look at) is an answer, not a failure: only a
# command that could not run (2 and above) fails `make check`.
check: setup
	$(VENV)/bin/sitewarden status --python $(TARGET_PYTHON) || [ $$? -eq 1 ]
	@echo
	$(VENV)/bin/sitewarden check --python $(TARGET_PYTHON) || [ $$? -eq 1 ]

# Debootstrapped Debian roots the tests run in (cached outside the clone, see README).
roots: setup
	cd tests && ../$(VENV)/bin/python -c 'import sys; from harness.roots import main; sys.exit(main())' ensure

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks packaging/build-deb packaging/vendor bin/sitewarden

test: lint
	$(VENV)/bin/python -m pytest -n auto --durations=25 $(PYTEST_ARGS)

# Each test function once, the interpreters in rotation (tests/harness/fast.py).
test-fast: lint
	$(VENV)/bin/python -m pytest -n auto --fast --durations=10 $(PYTEST_ARGS)

# dist/sitewarden_<version>_all.deb, offline, reproducible (see packaging/build-deb):
# python3 and dpkg-deb only (no .venv, no network; the vendored packaging is committed).
deb:
	$(PYTHON) -I packaging/build-deb

# dist/sitewarden-<version>-py3-none-any.whl, for `pipx install ./dist/sitewarden-*.whl` on
# another machine; built offline with the .venv's setuptools (no build isolation).
wheel: setup
	$(VENV)/bin/python -m build --wheel --no-isolation --outdir dist

# Regenerate src/sitewarden/_vendor/packaging from the version in its vendor.txt and
# the patches (downloads the wheel: the one step that needs the network).
vendor:
	$(PYTHON) packaging/vendor
