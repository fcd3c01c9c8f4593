# Two entry points for a fresh machine: `make demo` installs what running needs (the package,
# llama-cpp-python built once, the models) and makes a call; `make test` adds what the tests need
# (the clients, the browser, the proxy, Prometheus, their Debian packages) and runs the quick tier
# (no model file opened) and the model tier (`make test-slow`: the tests marked slow; docs/testing.md).
# Each does every install step itself and is safe to re-run.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: demo test test-quick test-models test-slow test-fuzz test-shake install setup models \
	run-system-deps system-deps lint bench clean llama-for-this-cpu

demo: install models
	mkdir -p out
	$(BIN)/pipeline call --realtime --caller models/audio/jfk.wav --out out/call.wav --events out/events.jsonl

# A tier is the tests of one marker expression ($(1)), with the tier's own options ($(2));
# PYTEST_ARGS come after them (a `-m` or `-n 0` there wins).
# pytest exits 5 when it collected nothing: a tier with no tests in it has not failed.
define pytest_tier
$(BIN)/python -m pytest -q -m "$(1)" $(2) $(PYTEST_ARGS) || { rc=$$?; [ $$rc -eq 5 ] || exit $$rc; }
endef

# The quick tier waits on real time more than it computes (telephony streamed at the carrier's
# pace, servers on sockets, CLI processes: 72 s of CPU in 3 min 34 s in one process), so it runs
# on more workers than a 2-core machine has cores (docs/testing.md has the times). pytest-xdist
# keeps each test file on one worker, in order: a file's module fixtures (servers, the null sound
# device) are set up once, as in one process.
QUICK_WORKERS ?= 3

# the README's test command: the quick tier, then the model tier (.ci/run adds the slow tier)
test: test-quick test-models

# the quick tier: fakes and the simulated clock, no model file opened. PIPELINE_NO_MODELS points
# the models directory at an empty one (tests/conftest.py): a test that opens a model unmarked fails
test-quick: setup
	PIPELINE_NO_MODELS=1 $(call pytest_tier,not models and not slow,-n $(QUICK_WORKERS) --dist loadfile)

# the model tier: the tests that open a model file (marked models, or taking a model fixture)
test-models: setup models
	$(call pytest_tier,models and not slow)

# the slow tier: the tests marked slow (.ci/run runs it after `make test`), the long protocol fuzz among them
test-slow: setup models
	$(call pytest_tier,slow)

# the long protocol fuzz (400 sequences) alone, as the slow tier runs it; see tests/test_realtime_fuzz.py
test-fuzz: setup models
	$(call pytest_tier,fuzz_long)

# The test command under 1 and 2 threads per model, a busy second core, and AVX2-only kernels
# (what most AMD EPYC machines run); out/shake/summary.md says which variation failed what.
test-shake: setup models
	bash scripts/test_shake.sh

# what running needs: the venv, llama-cpp-python, the package and libportaudio2 (sounddevice
# loads it at import: `pipeline live`)
install: run-system-deps $(RUN_STAMP) llama-for-this-cpu

# The venv's llama.cpp build is this CPU's (its AVX-512 sets): a venv made on another kind of CPU
# gets this one's build, from the wheel cache or built once; a quick no-op when it is already in.
llama-for-this-cpu: $(RUN_STAMP)
	@PYTHON=$(BIN)/python bash scripts/install_llama.sh

# what the tests, the benchmark and lint need on top
setup: install system-deps $(STAMP)

# Debian packages, installed (with sudo when not root) only when missing: $(1)
define apt_install
@missing=""; \
for pkg in $(1); do \
  dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; \
done; \
if [ -n "$$missing" ]; then \
  echo "installing Debian packages:$$missing"; \
  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $$missing; \
fi
endef

run-system-deps:
	$(call apt_install,libportaudio2)

# pulseaudio makes a real (null-sink) sound device for the tests;
# chromium runs the browser page's tests (Playwright drives it; no browser is downloaded);
# espeak-ng voices the unseen speakers of the end-of-turn and barge-in sets (bench/).
# haproxy fronts two serve workers in the drain and proxy test (tests/test_ops_proxy.py, docs/deploy.md);
# prometheus scrapes a server's /metrics in tests/test_ops_prometheus.py.
system-deps: run-system-deps
	$(call apt_install,pulseaudio chromium espeak-ng haproxy prometheus)

# llama-cpp-python compiles from source on first install (about 5 minutes on 2 cores) with CPU
# flags named one by one (scripts/install_llama.sh says which and why), and the wheel is kept for
# the next venv on the same kind of CPU.
$(RUN_STAMP): pyproject.toml scripts/install_llama.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --upgrade pip
	PYTHON=$(BIN)/python bash scripts/install_llama.sh
	$(BIN)/python -m pip install --disable-pip-version-check -e .
	touch $(RUN_STAMP)

# The clients extra (openai, openai-agents, pipecat-ai, livekit-agents) adds about 3.5 minutes.
$(STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -m pip install --disable-pip-version-check -e '.[dev,bench,server,clients,ops,denoise]'
	touch $(STAMP)

models: install
	PYTHON=$(BIN)/python bash scripts/download_models.sh

# ruff, then mypy over the package (pyproject.toml's [tool.mypy]: strict on the call layer)
lint: setup
	$(BIN)/ruff check pipeline tests bench examples
	$(BIN)/mypy

bench: setup models
	$(BIN)/python -m bench.ttfa

clean:
	rm -rf $(VENV) out
