# Two entry points for a fresh machine: `make demo` (a scripted call on the embedded models) and
# `make test` (the quick tier; `make test-slow` runs the tests marked slow). Each does every
# install step itself and is safe to re-run.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-quick test-models test-slow test-shake setup models system-deps lint bench clean

demo: setup models
	mkdir -p out
	$(BIN)/python -m pipeline call --realtime --caller models/audio/jfk.wav --out out/call.wav --events out/events.jsonl

# A tier is the tests of one marker expression; PYTEST_ARGS come after it (a `-m` there wins).
# pytest exits 5 when it collected nothing: a tier with no tests in it has not failed.
define pytest_tier
$(BIN)/python -m pytest -q -m "$(1)" $(PYTEST_ARGS) || { rc=$$?; [ $$rc -eq 5 ] || exit $$rc; }
endef

# the README's test command: the quick tier, then the model tier (.ci/run adds the slow tier)
test: test-quick test-models

# the quick tier: fakes and the simulated clock, no model file opened. PIPELINE_NO_MODELS points
# the models directory at an empty one (tests/conftest.py): a test that opens a model unmarked fails
test-quick: setup
	PIPELINE_NO_MODELS=1 $(call pytest_tier,not models and not slow)

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

setup: system-deps $(STAMP)

# libportaudio2 for sounddevice; pulseaudio makes a real (null-sink) sound device for the tests;
# chromium runs the browser page's tests (Playwright drives it; no browser is downloaded);
# espeak-ng voices the unseen speakers of the end-of-turn and barge-in sets (bench/).
# haproxy fronts two serve workers in the drain and proxy test (tests/test_ops_proxy.py, docs/deploy.md);
# prometheus scrapes a server's /metrics in tests/test_ops_prometheus.py.
system-deps:
	@missing=""; \
	for pkg in libportaudio2 pulseaudio chromium espeak-ng haproxy prometheus; do \
	  dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# llama-cpp-python compiles from source on first install (about 5 minutes on 2 cores) with portable
# CPU flags (scripts/install_llama.sh says why), and the wheel is kept for the next venv.
# The clients extra (openai, openai-agents, pipecat-ai, livekit-agents) adds about 3.5 minutes.
$(STAMP): pyproject.toml scripts/install_llama.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	PYTHON=$(BIN)/python bash scripts/install_llama.sh
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev,bench,server,clients,ops]'
	touch $(STAMP)

models:
	PYTHON=$(BIN)/python bash scripts/download_models.sh

# ruff, then mypy over the package (pyproject.toml's [tool.mypy]: strict on the call layer)
lint: setup
	$(BIN)/ruff check pipeline tests bench examples
	$(BIN)/mypy

bench: setup models
	$(BIN)/python -m bench.ttfa

clean:
	rm -rf $(VENV) out
