"""Shared fixtures: the real models (loaded once per run), speech clips, and call helpers."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import numpy as np
import pytest

from pipeline import config as cfg
from pipeline.audio import INPUT_RATE_HZ, read_wav, resample

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
JFK = MODELS / "audio" / "jfk.wav"
JFK_TEXT = ("And so my fellow Americans, ask not what your country can do for you, "
            "ask what you can do for your country.")

MODEL_FILES = {
    "vad": MODELS / "vad" / "silero_vad.onnx",
    "stt": MODELS / "stt" / "whisper-tiny.en" / "model.bin",
    "stt_base": MODELS / "stt" / "whisper-base" / "model.bin",
    "llm": MODELS / "llm" / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "tts": MODELS / "tts" / "en_US-joe-medium.onnx",
    "jfk": JFK,
    "turn": MODELS / "turn" / "smart-turn-v3.2-cpu.onnx",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = [str(p.relative_to(ROOT)) for p in MODEL_FILES.values() if not p.is_file()]
    if not missing:
        return
    if os.environ.get("PIPELINE_REQUIRE_MODELS"):
        raise pytest.UsageError(f"models missing ({', '.join(missing)}): run scripts/download_models.sh")
    skip = pytest.mark.skip(reason="models/ is incomplete: run scripts/download_models.sh")
    for item in items:
        if "models" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage defaults name models/ relative to the repository root."""
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="session")
def real_stages():
    """VAD, whisper tiny.en, SmolLM2, Piper and the heuristic turn signal, loaded once."""
    os.chdir(ROOT)
    from pipeline.session import Stages

    return Stages.load(cfg.Config.default())


@pytest.fixture(scope="session")
def jfk_16k() -> np.ndarray:
    wav = read_wav(JFK)
    return resample(wav.mono(), wav.sample_rate_hz, INPUT_RATE_HZ)


_SPEECH_CACHE: dict[str, np.ndarray] = {}


@pytest.fixture(scope="session")
def caller_voice():
    """Piper without sampling noise, so a caller's words are the same audio on every run."""
    from pipeline.tts import PiperTTS

    return PiperTTS(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.05)


@pytest.fixture(scope="session")
def say(caller_voice):
    """Real speech made at test time with Piper, at 16 kHz (cached per text)."""

    def _say(text: str) -> np.ndarray:
        if text not in _SPEECH_CACHE:
            audio = caller_voice.synthesize(text)
            _SPEECH_CACHE[text] = resample(audio, caller_voice.sample_rate_hz, INPUT_RATE_HZ)
        return _SPEECH_CACHE[text]

    return _say


def silence(ms: float) -> np.ndarray:
    return np.zeros(int(ms * INPUT_RATE_HZ / 1000), np.float32)


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate: word-level edit distance over the reference length."""
    import re

    norm = lambda s: re.sub(r"[^a-z' ]+", " ", s.lower()).split()  # noqa: E731
    r, h = norm(reference), norm(hypothesis)
    d = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, d[0] = d[0], i
        for j, hw in enumerate(h, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (rw != hw))
    return d[len(h)] / max(1, len(r))


def run(coro):
    return asyncio.run(coro)


# --- every realtime server event, checked against the openai SDK's models --------------------

_WIRE_CHECK = None


def _wire_check():
    global _WIRE_CHECK
    if _WIRE_CHECK is None:
        from .wire_check import WireCheck

        _WIRE_CHECK = WireCheck()
    return _WIRE_CHECK


@pytest.fixture(autouse=True)
def _checked_wire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Validate every event a realtime connection sends; a test fails on any event that fails.

    Needs the `openai` package (the `clients` extra); without it the check is skipped.
    """
    if "realtime" not in request.node.module.__name__:
        yield
        return
    pytest.importorskip("openai", reason="the wire check needs `pip install -e .[clients]`")
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


def pytest_terminal_summary(terminalreporter) -> None:
    if _WIRE_CHECK is not None:
        check = _WIRE_CHECK
        terminalreporter.write_line(
            f"realtime wire check: {check.validated} server events validated against the openai "
            f"SDK's models, {len(check.failures)} failures, {len(check.by_type)} (dialect, type) kinds")
