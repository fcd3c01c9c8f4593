"""Shared fixtures: the real models (loaded once per run), speech clips, and call helpers.

The tiers (docs/testing.md): a test that opens a model file is in the model tier, marked `models`,
and the quick tier (`-m "not models and not slow"`) runs without one. A test that takes one of
MODEL_FIXTURES is marked here, so no marker is forgotten; a module that loads a model itself
says `pytestmark = pytest.mark.models`. Under PIPELINE_NO_MODELS (`make test-quick`) the models
directory is an empty one, so a test that opens a model unmarked fails instead of passing slowly.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import os
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from pipeline.base import config as cfg
from pipeline.base.models import ENV, models_dir
from pipeline.testing import Speaker, caller_tts, jfk

NO_MODELS = os.environ.get("PIPELINE_NO_MODELS", "").strip() not in ("", "0")
if NO_MODELS:
    os.environ[ENV] = tempfile.mkdtemp(prefix="no-models-")  # empty: the quick tier's proof

# Every test of the realtime client modules is marked models (and slow), so without models they
# are deselected anyway; not importing them spares each of the quick tier's workers the
# clients' own imports (openai, Pipecat, LiveKit, the Agents SDK: 3 of its 5 s of collection).
CLIENT_MODULES = "test_realtime_client_*.py"
collect_ignore_glob = [CLIENT_MODULES] if NO_MODELS else []

ROOT = Path(__file__).resolve().parents[1]
MODELS = models_dir()  # $MODELS_DIR, else the repository's models/
JFK = MODELS / "audio" / "jfk.wav"

MODEL_FILES = {
    "vad": MODELS / "vad" / "silero_vad.onnx",
    "stt": MODELS / "stt" / "whisper-tiny.en" / "model.bin",
    "stt_base": MODELS / "stt" / "whisper-base" / "model.bin",
    "llm": MODELS / "llm" / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "tts": MODELS / "tts" / "en_US-joe-medium.onnx",
    "jfk": JFK,
    "turn": MODELS / "turn" / "smart-turn-v3.2-cpu.onnx",
}


CLIENTS_EXTRA = "pip install -e .[clients]"


def in_ci() -> bool:
    """CI is set (CI=true): what a developer's machine may skip, CI must run."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def import_client(name: str) -> ModuleType:
    """A realtime client package, for the modules that drive one (tests/test_realtime_client_*.py).

    Without it the module is skipped, except under CI, where it fails to collect: a client that
    is missing there must not make its tests vanish silently."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    assert caller.rpartition(".")[2].startswith("test_realtime_client_"), (
        f"{caller} does not drive a realtime client: a missing package may not skip it")
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        message = f"{name} is not installed ({type(exc).__name__}: {exc}): {CLIENTS_EXTRA}"
    if in_ci():
        pytest.fail(f"CI is set and a realtime client is missing: {message}", pytrace=False)
    pytest.skip(message, allow_module_level=True)


@functools.cache
def _wire_checkable() -> bool:
    """The realtime wire check can run: it validates events against the openai SDK's models."""
    try:
        importlib.import_module("openai")
    except ImportError:
        return False
    return True


# the fixtures below that open a model file: a test that takes one (itself or through another
# fixture) needs the models
MODEL_FIXTURES = frozenset({"real_stages", "jfk_16k", "caller_voice", "say"})


def _needs_models(item: pytest.Item) -> bool:
    return item.get_closest_marker("models") is not None


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(config: pytest.Config,
                                   items: list[pytest.Item]) -> Generator[None, None, None]:
    # before `-m` selects: the marker a model fixture implies
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())) and not _needs_models(item):
            item.add_marker(pytest.mark.models)
    unmarked = [item.nodeid for item in items
                if item.path.match(CLIENT_MODULES) and not _needs_models(item)]
    if unmarked:  # the quick tier does not import these modules: it would never run them
        raise pytest.UsageError(f"not marked models, in a module the quick tier skips: {unmarked}")
    yield
    # after: what the selection needs
    realtime = any("realtime" in getattr(getattr(item, "module", None), "__name__", "") for item in items)
    if in_ci() and realtime and not _wire_checkable():
        raise pytest.UsageError("CI is set and the realtime wire check needs the openai package: "
                                f"{CLIENTS_EXTRA}")
    needing = [item for item in items if _needs_models(item)]
    if needing and NO_MODELS:
        items[:] = [item for item in items if not _needs_models(item)]
        config.hook.pytest_deselected(items=needing)  # the quick tier has no models to give them
        return
    missing = [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
               for p in MODEL_FILES.values() if not p.is_file()]
    if not missing or not needing:
        return
    if os.environ.get("PIPELINE_REQUIRE_MODELS"):
        raise pytest.UsageError(f"models missing ({', '.join(missing)}): run scripts/download_models.sh")
    skip = pytest.mark.skip(reason="models/ is incomplete: run scripts/download_models.sh")
    for item in needing:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def real_stages():
    """VAD, whisper tiny.en, the default LLM (Qwen2.5-Coder-0.5B), Piper and the default turn
    signal, loaded once."""
    from pipeline.call.session import Stages

    return Stages.load(cfg.Config.default())


@pytest.fixture(scope="session")
def jfk_16k() -> np.ndarray:
    return jfk()


@pytest.fixture(scope="session")
def caller_voice():
    """Piper without sampling noise, so a caller's words are the same audio on every run."""
    return caller_tts()


@pytest.fixture(scope="session")
def say(caller_voice) -> Speaker:
    """Real speech made at test time with Piper, at 16 kHz (cached per text)."""
    return Speaker(caller_voice)


def run(coro):
    return asyncio.run(coro)


# --- every realtime server event, checked against the openai SDK's models --------------------

_WIRE_CHECK = None
_WIRE_UNCHECKED = 0  # realtime tests run without the wire check (no openai package)


def _wire_check():
    global _WIRE_CHECK
    if _WIRE_CHECK is None:
        from .wire_check import WireCheck

        _WIRE_CHECK = WireCheck()
    return _WIRE_CHECK


@pytest.fixture(autouse=True)
def _checked_wire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Validate every event a realtime connection sends; a test fails on any event that fails.

    Needs the `openai` package (the `clients` extra). Without it the tests still run, unchecked
    (the summary says so), and under CI collection stops with a usage error instead.
    """
    global _WIRE_UNCHECKED
    if "realtime" not in request.node.module.__name__:
        yield
        return
    if not _wire_checkable():
        _WIRE_UNCHECKED += 1
        yield
        return
    import json as _json

    from pipeline.transports.realtime_connection import Connection
    from pipeline.transports.realtime_protocol import jsonable

    check = _wire_check()
    failed_before = len(check.failures)
    send = Connection._send

    def checked_send(self, payload):
        send(self, payload)
        check.check(_json.dumps(payload, default=jsonable), self.encoder.dialect)

    monkeypatch.setattr(Connection, "_send", checked_send)
    yield
    new = check.failures[failed_before:]
    assert not new, f"{len(new)} server events failed the SDK's models:\n" + "\n".join(new[:10])


def _wire_counts() -> dict[str, int | list[str]]:
    """This process's share of the wire check, in a form an xdist worker can send back."""
    check = _WIRE_CHECK
    return {"unchecked": _WIRE_UNCHECKED,
            "validated": check.validated if check else 0,
            "failures": len(check.failures) if check else 0,
            "kinds": sorted(check.by_type) if check else []}


_WORKERS_WIRE: list[dict[str, int | list[str]]] = []  # under xdist: each worker's counts


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the summary
        workeroutput["wire_check"] = _wire_counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    counts = getattr(node, "workeroutput", {}).get("wire_check")
    if counts is not None:
        _WORKERS_WIRE.append(counts)


def pytest_terminal_summary(terminalreporter) -> None:
    shares = [_wire_counts(), *_WORKERS_WIRE]
    unchecked = sum(s["unchecked"] for s in shares)
    validated = sum(s["validated"] for s in shares)
    if unchecked:
        terminalreporter.write_line(f"realtime wire check: not run on {unchecked} tests, the openai "
                                    f"package is missing ({CLIENTS_EXTRA})")
    if validated:
        failures = sum(s["failures"] for s in shares)
        kinds = {k for s in shares for k in s["kinds"]}
        terminalreporter.write_line(
            f"realtime wire check: {validated} server events validated against the openai "
            f"SDK's models, {failures} failures, {len(kinds)} (dialect, type) kinds")


def pytest_configure(config: pytest.Config) -> None:
    """The scenario plugin (the package's `pytest11` entry point), for a tree not installed."""
    from pipeline.testing import scenario_plugin

    if not config.pluginmanager.is_registered(scenario_plugin):
        config.pluginmanager.register(scenario_plugin, "pipeline.testing.scenario_plugin")
