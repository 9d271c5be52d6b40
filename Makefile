# The two commands of the README: `make app` and `make test`. Each installs what it needs first, into
# a virtual environment (.venv) rather than the system's Python.
VENV ?= .venv
PYTHON = $(VENV)/bin/python
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check
# Where pip finds the CPU build of torch. Empty: pip's own configuration (PyPI's default torch is a
# CUDA build of several GB); TORCH_INDEX=https://download.pytorch.org/whl/cpu takes the CPU build.
TORCH_INDEX ?=
# Conference files the page builds in the background while it serves the seeds: by default whatever
# `python -m search fetch` wrote to data/; `make app DATA=papers.jsonl` names one.
DATA ?= $(wildcard data/*.jsonl)
# localhost: only this computer can open the page; ADDRESS=0.0.0.0 shares it on your network.
ADDRESS ?= localhost
# the page's port: PORT=8600 where another program holds 8501
PORT ?= 8501
empty :=
space := $(empty) $(empty)

.PHONY: install install-dev browser app test bench

$(PYTHON):
	python3 -m venv $(VENV)

# pip takes torch (it honours TORCH_INDEX and pip's own configuration) and uv, which installs the rest:
# it downloads and unpacks in parallel, 5 s here where pip took 52 s. torch, already there, stays.
TORCH = $(PIP) torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) && $(PIP) uv
UV = $(VENV)/bin/uv pip install --quiet --python $(PYTHON)

# Installed once per change of the requirements (a stamp file in the environment records it): a restart
# of `make app` with nothing changed starts the server at once instead of re-running pip and uv.
INSTALLED = $(VENV)/.installed
INSTALLED_DEV = $(VENV)/.installed-dev

install: $(INSTALLED)
install-dev: $(INSTALLED_DEV)

# `-e .`: the library itself (pyproject.toml), so every script imports `search` without path edits
$(INSTALLED): requirements.txt pyproject.toml | $(PYTHON)
	$(TORCH)
	$(UV) -r requirements.txt -e .
	touch $@

# requirements-dev.txt includes requirements.txt: one resolution instead of two
$(INSTALLED_DEV): requirements.txt requirements-dev.txt pyproject.toml | $(PYTHON)
	$(TORCH)
	$(UV) -r requirements-dev.txt -e .
	touch $@ $(INSTALLED)

# Debian's Chromium for the end-to-end tests (Playwright drives /usr/bin/chromium; no download),
# and fonts so screenshots show Chinese.
# Each is checked on its own: a machine that had Chromium but no CJK font drew Chinese as boxes.
browser:
	@if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver fonts-noto-cjk >/dev/null; fi

# The build starts with the server, not at the page's first visit: the whole conference answers by words
# within a minute of `make app` whether or not a browser is open yet.
app: install
	SEARCH_DATA="$(subst $(space),:,$(strip $(DATA)))" \
	  $(PYTHON) -m search.background --planned --out "$${SEARCH_INDEX:-index}"
	SEARCH_DATA="$(subst $(space),:,$(strip $(DATA)))" \
	  $(PYTHON) -m streamlit run streamlit_app.py --server.address $(ADDRESS) --server.port $(PORT)

# pytest.ini runs two workers (pytest-xdist)
test: install-dev browser
	$(PYTHON) -m pytest -q

bench: install-dev browser
	$(PYTHON) benchmarks/bench_core.py
