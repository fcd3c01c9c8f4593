"""Whisper's log-mel features in float64, cast to float32 at the end.

Smart Turn (an audio end-of-turn model on the Whisper-tiny encoder) was trained on the features
of the Whisper feature extractor, which computes the spectrogram and the mel projection in
float64. The model is sensitive to its input: the same features in float32 moved one clip's score
from 0.68 to 0.47, so they are computed here as the reference computes them
(tests/test_smart_turn.py checks them against it to 1e-6).
"""

from __future__ import annotations

import functools

import numpy as np

N_FFT = 400  # 25 ms windows at 16 kHz
HOP = 160  # 10 ms frames
_MEL_FLOOR = 1e-10
_DYNAMIC_RANGE = 8.0  # log10 units kept below the loudest bin (80 dB)


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """The Slaney mel scale: linear to 1 kHz, logarithmic above."""
    hz = np.asarray(hz, dtype=np.float64)
    linear = hz * 3.0 / 200.0
    return np.where(hz >= 1000.0, 15.0 + np.log(np.maximum(hz, 1e-12) / 1000.0) * 27.0 / np.log(6.4), linear)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    return np.where(mel >= 15.0, 1000.0 * np.exp((mel - 15.0) * np.log(6.4) / 27.0), mel * 200.0 / 3.0)


@functools.cache
def mel_filters(n_mels: int, rate_hz: int) -> np.ndarray:
    """(n_mels, N_FFT // 2 + 1) triangular filters, each scaled to unit area (Slaney)."""
    edges = _mel_to_hz(np.linspace(0.0, float(_hz_to_mel(np.array(rate_hz / 2))), n_mels + 2))
    bins = np.linspace(0.0, rate_hz // 2, N_FFT // 2 + 1)
    rising = (bins[None, :] - edges[:-2, None]) / np.diff(edges)[:-1, None]
    falling = (edges[2:, None] - bins[None, :]) / np.diff(edges)[1:, None]
    filters = np.maximum(0.0, np.minimum(rising, falling))
    filters *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    filters.setflags(write=False)
    return filters


@functools.cache
def _hann() -> np.ndarray:
    window = np.hanning(N_FFT + 1)[:-1]  # periodic, as the STFT of the reference
    window.setflags(write=False)
    return window


def whisper_log_mel(samples: np.ndarray, *, n_mels: int = 80, rate_hz: int = 16_000) -> np.ndarray:
    """(n_mels, len(samples) // HOP) float32 log-mel features of 16 kHz samples.

    Centred frames (reflect padding), the power spectrum, the mel projection and its log in
    float64; the last frame dropped, the range clamped to 8 log10 units below the peak and scaled
    to about [-1, 1], as Whisper's feature extractor does."""
    x = np.pad(np.asarray(samples, dtype=np.float64).reshape(-1), N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(x, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _hann(), axis=-1)) ** 2  # (frames, bins)
    log_spec = np.log10(np.maximum(_MEL_FLOOR, mel_filters(n_mels, rate_hz) @ power.T))[:, :-1]
    log_spec = np.maximum(log_spec, log_spec.max() - _DYNAMIC_RANGE)
    return ((log_spec + 4.0) / 4.0).astype(np.float32)
