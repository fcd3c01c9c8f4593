"""pipeline.testing, the helpers tests, the benchmark and users share, and where model paths lead."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from websockets.sync.client import connect

from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.base.config import Config
from pipeline.base.models import REPO_MODELS, model_file, models_dir
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing import (
    LONG_REPLY,
    NOISE_KINDS,
    Clip,
    ServerThread,
    Speaker,
    after_stage,
    call,
    chunks_b64,
    noise,
    pcm16_24k,
    silence,
    wer,
    with_stages,
)
from pipeline.turns import HeuristicCompleteness

ROOT = Path(__file__).resolve().parents[1]

# --- sounds -----------------------------------------------------------------------------------


def _band_energy(x: np.ndarray, lo_hz: float, hi_hz: float) -> float:
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    hz = np.fft.rfftfreq(len(x), 1 / INPUT_RATE_HZ)
    return float(spectrum[(hz >= lo_hz) & (hz < hi_hz)].sum())


@pytest.mark.parametrize("kind", NOISE_KINDS)
def test_noise_is_as_long_and_as_loud_as_asked_and_the_same_for_a_seed(kind):
    x = noise(kind, 0.5)
    assert x.dtype == np.float32 and len(x) == INPUT_RATE_HZ // 2
    assert dbfs(x) == pytest.approx(-20.0, abs=0.01)
    assert dbfs(noise(kind, 0.5, level_dbfs=-35.0)) == pytest.approx(-35.0, abs=0.01)
    assert np.array_equal(x, noise(kind, 0.5))
    if kind != "tones":  # a chord has no randomness in it
        assert not np.array_equal(x, noise(kind, 0.5, seed=4))


def test_each_noise_sounds_like_its_name():
    white, pink = noise("white", 2.0), noise("pink", 2.0)
    # white: as much energy per hertz low as high; pink: 1/f, so far more in the low octaves
    assert 0.5 < _band_energy(white, 100, 1100) / _band_energy(white, 6000, 7000) < 2
    assert _band_energy(pink, 100, 1100) / _band_energy(pink, 6000, 7000) > 5
    tones = np.abs(np.fft.rfft(noise("tones", 1.0)))
    assert sorted(np.argsort(tones)[-3:]) == [440, 660, 1320]  # 1 Hz bins over 1 s
    cough = noise("cough", 0.2)
    assert dbfs(cough[:800]) > dbfs(cough[-800:]) + 40  # a sharp attack, gone within 200 ms
    with pytest.raises(ValueError, match="white, pink, tones, cough"):
        noise("brown", 1.0)


def test_silence_and_wer():
    assert len(silence(250)) == 4000 and not silence(250).any()
    assert wer("ask not what your country", "Ask not what your country.") == 0.0
    assert wer("ask not what your country", "ask what your county") == pytest.approx(2 / 5)


def test_audio_for_the_wire_is_24k_pcm16_with_the_silence_around_it():
    tone = (0.5 * np.sin(2 * np.pi * 300 * np.arange(INPUT_RATE_HZ) / INPUT_RATE_HZ)).astype(np.float32)
    pcm = pcm16_24k(tone, lead_s=0.25, trailing_silence_s=2.0)
    samples = np.frombuffer(pcm, "<i2")
    assert len(samples) == int(3.25 * 24_000)
    assert not samples[:5000].any() and not samples[-47_000:].any()  # resampling rings at the edges
    assert abs(samples[6000:24_000]).max() > 0.4 * 32767
    chunks = list(chunks_b64(pcm, chunk_ms=100))
    assert len(chunks) == 33 and b"".join(base64.b64decode(c) for c in chunks) == pcm
    assert len(base64.b64decode(chunks[0])) == 4800  # 100 ms of 24 kHz, 2 bytes a sample


# --- a realtime server in a thread ------------------------------------------------------------


class _EnergyVAD:
    """Voice = loud enough, so a tone is a caller."""

    def probability(self, window: np.ndarray) -> float:
        return 0.95 if dbfs(window) > -35 else 0.02

    def fork(self) -> _EnergyVAD:
        return _EnergyVAD()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def test_a_client_in_this_thread_talks_to_the_server_in_its_own():
    stages = Stages(vad=_EnergyVAD(), stt=ScriptedSTT(transcripts=["Hello there."]),
                    completeness=HeuristicCompleteness(), llm=ScriptedLLM(replies=["Hi, how can I help?"]),
                    tts=ToneTTS(ms_per_char=10.0))
    tone = (0.3 * np.sin(2 * np.pi * 300 * np.arange(INPUT_RATE_HZ) / INPUT_RATE_HZ)).astype(np.float32)
    with ServerThread(stages) as server:
        assert server.url == f"ws://127.0.0.1:{server.port}/v1/realtime"
        with urllib.request.urlopen(server.page_url, timeout=10) as page:
            assert b"<html" in page.read().lower()
        with connect(server.url, proxy=None) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "session.created"
            for chunk in chunks_b64(pcm16_24k(tone)):
                ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
            seen, deadline = [], time.monotonic() + 30
            while "response.done" not in seen and time.monotonic() < deadline:
                event = json.loads(ws.recv(timeout=30))
                seen.append(event["type"])
                if event["type"] == "conversation.item.input_audio_transcription.completed":
                    assert event["transcript"] == "Hello there."
        assert "response.output_audio.delta" in seen and "response.done" in seen, seen
        port = server.port
    assert not _listening(port)  # stopped with the block, its loop closed
    assert server.loop.is_closed()


# --- a scripted call, as the user guide writes it ----------------------------------------------


@pytest.mark.models
def test_the_user_guide_call(real_stages, caller_voice):
    say = Speaker(caller_voice)
    assert say("What time is checkout?") is say("What time is checkout?")  # made once
    assert np.array_equal(say("What time is checkout?"), Speaker(caller_voice)("What time is checkout?"))
    record = call(with_stages(real_stages, llm=ScriptedLLM(replies=["Checkout is at eleven."])),
                  [silence(300), say("What time is checkout?"), silence(2000)])
    assert record.transcripts == ["What time is checkout?"], record.timeline()
    assert record.agent_lines == ["Checkout is at eleven."], record.timeline()
    assert "caller: What time is checkout?" in record.timeline()


@pytest.mark.models
def test_noise_over_the_long_reply_as_the_guide_says(real_stages, say):
    record = call(with_stages(real_stages, llm=ScriptedLLM(replies=[LONG_REPLY])),
                  [Clip(say("What time is checkout?"), 0.3),
                   Clip(noise("pink", 2.0), None, after=after_stage("first_audio_out"), delay_s=1.0)])
    assert record.caller.clips[1].started_s is not None  # it did play over the agent
    assert record.stages("barge_in") == [] and record.agent_lines == [LONG_REPLY], record.timeline()


# --- model paths: from the models directory, whatever the working directory --------------------


def test_relative_model_paths_are_under_the_models_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("MODELS_DIR", raising=False)
    assert models_dir() == REPO_MODELS == ROOT / "models"
    monkeypatch.chdir(tmp_path)
    assert model_file("vad/silero_vad.onnx") == ROOT / "models" / "vad" / "silero_vad.onnx"
    assert model_file(tmp_path / "mine.onnx") == tmp_path / "mine.onnx"  # absolute: as it is
    assert model_file("~/mine.onnx") == Path.home() / "mine.onnx"
    monkeypatch.setenv("MODELS_DIR", "elsewhere")  # relative: from where it was set, as the shell reads it
    assert models_dir() == tmp_path / "elsewhere"
    assert model_file("stt/whisper-base") == tmp_path / "elsewhere" / "stt" / "whisper-base"


def test_a_missing_model_names_the_models_directory(tmp_path):
    from pipeline.base.errors import ModelMissingError
    from pipeline.stages.vad import SileroVAD

    empty = tmp_path / "empty"
    empty.mkdir()
    proc = subprocess.run([sys.executable, "-c", "from pipeline.stages.vad import SileroVAD; SileroVAD()"],
                          cwd=tmp_path, env={**_env(), "MODELS_DIR": str(empty)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert f"{empty / 'vad' / 'silero_vad.onnx'}" in proc.stderr and "MODELS_DIR" in proc.stderr
    with pytest.raises(ModelMissingError, match="scripts/download_models.sh"):
        SileroVAD(model_path=empty / "vad.onnx")


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "MODELS_DIR"}


@pytest.mark.models
def test_the_default_stages_load_from_another_working_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no models/ here
    stages = Stages.load(Config.default())
    assert stages.vad.probability(np.zeros(512, np.float32)) < 0.5
    assert len(stages.tts.synthesize("Hello.")) > 0


def test_a_prefix_said_alone_is_found_where_it_ends_in_the_whole():
    from pipeline.testing.voices import prefix_end_s, trim

    def sweep(f0: float, f1: float, seconds: float) -> np.ndarray:  # a rising tone, never the same twice
        t = np.arange(int(seconds * INPUT_RATE_HZ)) / INPUT_RATE_HZ
        return (0.3 * np.sin(2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds)))).astype(np.float32)

    low = sweep(200, 1500, 0.5)
    whole = np.concatenate([low, sweep(3000, 6000, 0.5), noise("white", 0.5)])
    assert prefix_end_s(low, whole) == pytest.approx(0.5, abs=0.03)
    # said faster in the sentence (as a prefix said alone lingers): found where that ends
    assert prefix_end_s(low, np.concatenate([sweep(200, 1500, 0.35), whole[8000:]])) == pytest.approx(0.35, abs=0.04)
    padded = np.concatenate([silence(200), low, silence(300)])
    assert np.array_equal(trim(padded), low[np.nonzero(np.abs(low) > 0.005)[0][0]:][:len(trim(padded))])
    assert len(trim(padded)) == pytest.approx(len(low), abs=2)
