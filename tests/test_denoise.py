"""Noise suppression before the VAD, the gate and Whisper (`bargein.denoise`, the
`pipeline.denoise` plugin group): off by default; on, every caller frame passes the denoiser
before anything else of the session hears it, and each engine keeps the input's length in any
split (the input path's sample clock). Model-free: the engines' libraries ship in their wheels
(the `denoise` extra); one not installed is skipped. Their figures: `python -m bench.denoise`.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from pipeline.base import plugins
from pipeline.base.audio import dbfs
from pipeline.base.clock import SimClock
from pipeline.base.config import Config, apply
from pipeline.base.errors import ConfigError
from pipeline.call.session import Session, Stages
from pipeline.stages import denoise
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.sounds import noise
from pipeline.transports.scripted import ScriptedCaller
from pipeline.turns import HeuristicCompleteness

from .conftest import ROOT, in_ci

ENGINES = {"rnnoise": denoise.RNNoise, "deepfilternet": denoise.DeepFilterNet, "webrtc": denoise.WebRTCNoise}


class Halve:
    """A denoiser that halves the caller: what the VAD hears shows it ran first."""

    def process(self, frame: np.ndarray) -> np.ndarray:
        return frame * 0.5


class LevelVAD:
    def __init__(self) -> None:
        self.heard: list[float] = []

    def probability(self, window: np.ndarray) -> float:
        self.heard.append(float(np.max(np.abs(window))))
        return 0.0


def _engine(name: str) -> denoise.Denoiser:
    try:
        return ENGINES[name]()
    except ConfigError as exc:
        if in_ci():  # make test installs the denoise extra: there a missing engine is a failure
            pytest.fail(f"CI is set and a denoiser is missing: {exc}", pytrace=False)
        pytest.skip(str(exc))


def _session(config: Config, vad: LevelVAD) -> Session:
    stages = Stages(vad=vad, stt=ScriptedSTT(transcripts=[]), completeness=HeuristicCompleteness(),
                    llm=ScriptedLLM(), tts=ToneTTS())
    return Session(config, stages, clock=SimClock(), sink=ScriptedCaller([]))


def test_off_by_default_and_the_frames_pass_untouched() -> None:
    assert Config.default().bargein.denoise == ""
    vad = LevelVAD()
    session = _session(Config.default(), vad)
    assert session.input.denoise is None
    session.input._process_frame(np.full(512, 0.4, np.float32))
    assert vad.heard == [pytest.approx(0.4)]


def test_a_denoise_plugin_runs_before_the_vad(monkeypatch: pytest.MonkeyPatch) -> None:
    point = EntryPoint(name="halve", value="tests.test_denoise:Halve", group="pipeline.denoise")
    monkeypatch.setattr(plugins, "_entry_points", lambda group: [point] if group == "denoise" else [])
    vad = LevelVAD()
    session = _session(apply(Config.default(), {"bargein": {"denoise": "halve"}}), vad)
    assert isinstance(session.input.denoise, Halve)
    session.input._process_frame(np.full(512, 0.4, np.float32))
    assert vad.heard == [pytest.approx(0.2)]
    assert session.input.history_since(0)[0] == pytest.approx(0.2)  # Whisper's audio too
    with pytest.raises(ConfigError, match="no denoise stage named 'krisp'"):
        denoise.denoiser("krisp")


def test_the_three_engines_are_registered_in_the_plugin_group() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    points = project["entry-points"]["pipeline.denoise"]
    assert {name: target.split(":")[1] for name, target in points.items()} == {
        name: cls.__name__ for name, cls in ENGINES.items()}
    assert len(project["optional-dependencies"]["denoise"]) == 3


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_an_engine_keeps_the_length_in_any_split_and_lowers_steady_noise(name: str) -> None:
    hiss = noise("pink", 3.0, seed=5)
    engine = _engine(name)
    sizes = [320, 512, 7, 1000, 160, 321]
    out, at, k = [], 0, 0
    while at < len(hiss):
        n = sizes[k % len(sizes)]
        piece = engine.process(hiss[at:at + n])
        assert len(piece) == len(hiss[at:at + n]) and piece.dtype == np.float32
        out.append(piece)
        at, k = at + n, k + 1
    settled = np.concatenate(out)[16000:]  # past the engines' first second of adapting
    assert dbfs(settled) < dbfs(hiss) - 6  # steady pink noise alone: at least 6 dB quieter
