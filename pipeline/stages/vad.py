"""Silero VAD over onnxruntime: the ONNX model only, no torch at run time."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..base.audio import INPUT_RATE_HZ, WINDOW_SAMPLES
from ..base.onnx import cpu_session

_CONTEXT_SAMPLES = 64  # the model expects the previous window's last 64 samples prepended


class SileroVAD:
    """Voice probability per 32 ms window; keeps the recurrent state between calls.

    One window is one small ONNX run, cheaper than handing it to a thread, so the session
    calls it inline on the event loop (see docs/architecture.md).
    """

    window_samples = WINDOW_SAMPLES

    def __init__(self, *, model_path: str | Path = "vad/silero_vad.onnx", threads: int = 1) -> None:
        self._session = cpu_session(model_path, "Silero VAD model", threads=threads)
        self._sr = np.array(INPUT_RATE_HZ, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros((2, 1, 128), dtype=np.float32)
        self._context = np.zeros((1, _CONTEXT_SAMPLES), dtype=np.float32)

    def fork(self) -> SileroVAD:
        """A second detector sharing the loaded model but with its own state (barge-in gate)."""
        twin = object.__new__(SileroVAD)
        twin._session, twin._sr = self._session, self._sr
        twin.reset()
        return twin

    def probability(self, window: np.ndarray) -> float:
        """Voice probability of one 512-sample 16 kHz window."""
        x = np.asarray(window, dtype=np.float32).reshape(1, -1)
        if x.shape[1] != WINDOW_SAMPLES:
            raise ValueError(f"Silero VAD takes {WINDOW_SAMPLES}-sample windows, got {x.shape[1]}")
        inp = np.concatenate([self._context, x], axis=1)
        out, self._state = self._session.run(None, {"input": inp, "state": self._state, "sr": self._sr})
        self._context = x[:, -_CONTEXT_SAMPLES:]
        return float(out[0, 0])
