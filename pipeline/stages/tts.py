"""Piper TTS, chunk by chunk (piper-tts 1.x API)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..base.cpu import default_threads
from ..base.errors import ModelMissingError
from ..base.models import model_file
from ..base.onnx import cpu_session

if TYPE_CHECKING:  # piper is imported when a voice loads, not when this module does
    from piper import PiperVoice

_WARM_UP_TEXT = "Hello, one moment."  # a comma and a period: both of Piper's sentence paths


class PiperTTS:
    """A Piper ONNX voice. `synthesize` is blocking: run it off the event loop."""

    def __init__(self, *, model_path: str = "tts/en_US-joe-medium.onnx", use_cuda: bool = False,
                 length_scale: float | None = None, volume: float = 0.8,
                 noise_scale: float | None = None, noise_w_scale: float | None = None,
                 threads: int | None = None, warm_up: bool = True) -> None:
        """None takes the voice's own value. Piper samples noise: two syntheses of one text
        differ unless noise_scale and noise_w_scale are 0 (flatter, but repeatable).
        `threads`: onnxruntime intra-op threads on the CPU; None: pipeline.base.cpu's split (Piper's
        own loader leaves onnxruntime one thread per core, contending with the LLM's).
        `warm_up`: synthesize one short phrase at load, so the call's first reply does not pay
        onnxruntime's first-run allocations and espeak-ng's first phonemization."""
        from piper import PiperVoice, SynthesisConfig

        path = model_file(model_path)
        for needed in (path, Path(f"{path}.json")):
            if not needed.is_file():
                raise ModelMissingError(needed, "Piper voice")
        self.threads = threads if threads is not None else default_threads("tts")
        self._voice = PiperVoice.load(str(path), use_cuda=True) if use_cuda else _cpu_voice(path, self.threads)
        self._syn = SynthesisConfig(length_scale=length_scale, volume=volume, noise_scale=noise_scale,
                                    noise_w_scale=noise_w_scale)
        self.sample_rate_hz = int(self._voice.config.sample_rate)
        self._lock = threading.Lock()
        if warm_up:
            self.synthesize(_WARM_UP_TEXT)

    def synthesize(self, text: str, *, speed: float | None = None) -> np.ndarray:
        """Mono float32 audio at `sample_rate_hz` for one chunk of text; `speed` (1.0: the
        voice's own rate) divides its length scale."""
        syn = self._syn
        if speed is not None and speed != 1.0:
            scale = syn.length_scale if syn.length_scale is not None else self._voice.config.length_scale
            syn = replace(syn, length_scale=scale / speed)
        with self._lock:
            parts = [c.audio_float_array for c in self._voice.synthesize(text, syn_config=syn)]
        return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


def _cpu_voice(path: Path, threads: int) -> PiperVoice:
    """`PiperVoice.load` on the CPU, with our thread count (its loader takes no session options)."""
    import json

    from piper import PiperConfig, PiperVoice

    config = PiperConfig.from_dict(json.loads(Path(f"{path}.json").read_text(encoding="utf-8")))
    # no arena: a sentence's length sets the buffers' sizes, and the arena would keep the largest
    # ever synthesised for the life of the worker (bench/soak.py measures it)
    session = cpu_session(path, "Piper voice", threads=threads, arena=False)
    return PiperVoice(session=session, config=config)
