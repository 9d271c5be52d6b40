# The two commands of the README: `make app` and `make test`. Each installs what it needs first.
PYTHON ?= python3
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check

.PHONY: install install-dev browser app test bench

install:
	$(PIP) torch==2.13.0
	$(PIP) -r requirements.txt

install-dev: install
	$(PIP) -r requirements-dev.txt

# Debian's Chromium for the end-to-end tests (Playwright drives /usr/bin/chromium; no download),
# and fonts so screenshots show Chinese and emoji.
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver fonts-noto-cjk fonts-noto-color-emoji >/dev/null; fi

app: install
	$(PYTHON) -m streamlit run streamlit_app.py

test: install-dev browser
	$(PYTHON) -m pytest -q

bench: install-dev browser
	$(PYTHON) benchmarks/bench_core.py
