"""Smart Turn v3.2: an audio end-of-turn model (Whisper-tiny encoder + classifier) on onnxruntime.

It hears what a transcript cannot: falling pitch, a drawn-out "and...", the breath before more.
Input is the last 8 s of the turn at 16 kHz (left-padded with zeros when shorter), normalised to
zero mean and unit variance, as Whisper log-mel features (80 bins x 800 frames); the output is the
probability that the speaker has finished.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.audio import INPUT_RATE_HZ
from ..base.cpu import default_threads
from ..base.onnx import cpu_session
from ..turns import HeuristicCompleteness
from .log_mel import whisper_log_mel

if TYPE_CHECKING:
    from .text_eot import TextEndOfTurn

WINDOW_S = 8  # the model was trained on the last 8 s of a turn (its input is 800 frames of 10 ms)
_N_MELS = 80  # the ONNX input is (batch, 80, 800): Whisper-tiny's mel bins
_NORM_EPS = 1e-7  # variance floor of the Whisper feature extractor's waveform normalisation


def turn_features(audio: np.ndarray) -> np.ndarray:
    """(1, 80, 800) log-mel features of the last 8 s of 16 kHz audio, as the model was trained on."""
    samples = WINDOW_S * INPUT_RATE_HZ
    x = np.asarray(audio, dtype=np.float32).reshape(-1)[-samples:]
    # the end of the turn is what matters, so padding goes in front
    x = np.pad(x, (samples - len(x), 0))
    x = (x - x.mean()) / np.sqrt(x.var() + _NORM_EPS)  # in float32, as the reference normalises
    # exactly 8 s gives 801 centred frames, and the last one is dropped: 800
    return whisper_log_mel(x, n_mels=_N_MELS, rate_hz=INPUT_RATE_HZ)[np.newaxis]


class SmartTurnCompleteness:
    """End-of-turn probability from the turn's audio; the transcript is not used.

    A call without audio returns 0.0: with no evidence the turn stays open until
    `max_silence_ms`, which never cuts a caller off.
    """

    def __init__(self, *, model_path: str | Path = "turn/smart-turn-v3.2-cpu.onnx",
                 threads: int | None = None) -> None:
        """`threads`: onnxruntime intra-op threads; None: pipeline.base.cpu's split, all the cores
        of a small machine. The score runs alone, after the final pass and before the reply
        begins: a call (the Whisper-tiny encoder over 8 s of audio) takes ~30 ms on 2 threads
        against ~50 on one, and at the wire the gap from the final pass to the first token was
        14-28 ms shorter per call in two runs, the same score either way (2-core EPYC:
        bench/README.md, "Smart Turn on both cores")."""
        threads = threads if threads is not None else default_threads("turns")
        self._session = cpu_session(model_path, "Smart Turn model", threads=threads)
        self._input = self._session.get_inputs()[0].name
        # the last audio scored and its score: a turn's words scored twice over the same audio
        # (`unvoiced.lower_of`) run the model once
        self._last: tuple[bytes, float] | None = None

    def features(self, audio: np.ndarray) -> np.ndarray:
        return turn_features(audio)

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        """How likely the caller has finished (0..1), from the turn's 16 kHz audio so far."""
        if audio is None or len(audio) == 0:
            return 0.0
        key = hashlib.blake2b(np.ascontiguousarray(audio, np.float32).tobytes(), digest_size=16).digest()
        if (last := self._last) is not None and last[0] == key:
            return last[1]
        out = self._session.run(None, {self._input: self.features(audio)})[0]
        p = float(np.asarray(out).reshape(-1)[0])
        self._last = (key, p)
        return p


class CombinedCompleteness:
    """A text signal, unless the audio model is sure the caller is mid-turn.

    Chosen by measurement on the end-of-turn set (bench/eot.py): Smart Turn alone separates
    finished from unfinished synthetic voices poorly, but below 0.1 it is right more often than
    the base rate (37 of 61 such clips were mid-turn, against 46% of the set: the rows of
    bench/results/2026-11-30-eot.json), and it hears what
    the transcript loses: a number being read out, an "um" Whisper drops. Averaging the two,
    their product, or letting either one end the turn all did worse.

    `text`: "heuristic" (the default), or "text-eot": the text end-of-turn model on an embedded
    LLM with the heuristic's veto (`text_eot.TextEndOfTurn`; `model` names the LLM). The audio
    veto did not help it: 48 errors in 100 with it, 39 without, for Qwen on all clips
    (bench/results/2026-12-01-eot-text.md).
    """

    def __init__(self, *, model_path: str | Path = "turn/smart-turn-v3.2-cpu.onnx",
                 threads: int | None = None, audio_veto: float = 0.1, text: str = "heuristic",
                 model: str = "qwen2.5-coder-0.5b", llm: Any = None) -> None:
        """`audio_veto`: below this audio probability the turn stays open whatever the text
        says (bench/eot.py's "combined" signal)."""
        if text not in ("heuristic", "text-eot"):
            raise ValueError(f"turns.text = {text!r}: use \"heuristic\" or \"text-eot\"")
        self.text = HeuristicCompleteness()
        self.text_model: TextEndOfTurn | None = None
        if text == "text-eot":
            from .text_eot import TextEndOfTurn

            self.text_model = TextEndOfTurn(model=model)
        self.audio = SmartTurnCompleteness(model_path=model_path, threads=threads)
        self.audio_veto = audio_veto

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        return self.probability_in(text, audio, ())

    def probability_in(self, text: str, audio: np.ndarray | None,
                       context: Sequence[tuple[str, str]]) -> float:
        p_text = (self.text.probability(text) if self.text_model is None
                  else self.text_model.probability_in(text, None, context))
        if audio is None:
            return p_text  # nothing to hear: the text alone, as the heuristic would say
        p_audio = self.audio.probability(text, audio)
        return min(p_text, p_audio) if p_audio < self.audio_veto else p_text
