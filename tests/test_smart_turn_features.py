"""Smart Turn's input features match the reference feature extractor (transformers'
WhisperFeatureExtractor, which Smart Turn was trained on and Pipecat calls) to 1e-6: the
spectrogram and the mel projection in float64, cast to float32 at the end.

Model-free: no model file is opened. The reference comes from the test extra (`transformers`);
without it the test is skipped, except under CI.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.stages.log_mel import mel_filters, whisper_log_mel
from pipeline.stages.smart_turn import turn_features

from .conftest import in_ci


@pytest.fixture(scope="module")
def reference():
    try:
        from transformers import WhisperFeatureExtractor
    except ImportError as exc:
        if in_ci():
            pytest.fail(f"CI is set and the reference extractor is missing: {exc} (pip install -e .[dev])")
        pytest.skip(f"transformers is not installed: {exc}")
    extractor = WhisperFeatureExtractor(chunk_length=8)

    def features(audio: np.ndarray) -> np.ndarray:
        # as Smart Turn's reference caller does: the last 8 s, zeros in front, then the extractor
        x = np.asarray(audio, dtype=np.float32)[-8 * INPUT_RATE_HZ:]
        x = np.pad(x, (8 * INPUT_RATE_HZ - len(x), 0))
        return extractor(x, sampling_rate=INPUT_RATE_HZ, return_tensors="np", padding="max_length",
                         max_length=8 * INPUT_RATE_HZ, truncation=True, do_normalize=True).input_features

    return features


def _signals() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    t = np.arange(int(3.3 * INPUT_RATE_HZ)) / INPUT_RATE_HZ
    voiced = (0.3 * np.sin(2 * np.pi * (120 + 40 * t) * t) * (1 + np.sin(2 * np.pi * 3 * t))).astype(np.float32)
    return {
        "a falling voiced sweep, 3.3 s": voiced,
        "noise at speech level, 8 s": (0.05 * rng.standard_normal(8 * INPUT_RATE_HZ)).astype(np.float32),
        "a quiet hiss, 10 s (the last 8 kept)": (1e-3 * rng.standard_normal(10 * INPUT_RATE_HZ)).astype(np.float32),
        "a click in silence, 0.5 s": np.r_[np.zeros(4000), [0.9], np.zeros(3999)].astype(np.float32),
    }


@pytest.mark.parametrize("name", list(_signals()))
def test_features_match_the_reference_extractor(reference, name):
    audio = _signals()[name]
    ours, theirs = turn_features(audio), reference(audio)
    assert ours.shape == theirs.shape == (1, 80, 800) and ours.dtype == np.float32
    assert np.max(np.abs(ours - theirs)) <= 1e-6, name


def test_a_float32_spectrogram_is_not_the_reference(reference):
    """The check can fail: the same steps in float32 differ from the reference by far more."""
    audio = _signals()["a falling voiced sweep, 3.3 s"]
    x = turn_features(audio)  # the float64 path
    samples = np.pad(audio, (8 * INPUT_RATE_HZ - len(audio), 0))
    samples = (samples - samples.mean()) / np.sqrt(samples.var() + 1e-7)
    padded = np.pad(samples, 200, mode="reflect").astype(np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(padded, 400)[::160]
    window = np.hanning(401)[:-1].astype(np.float32)
    power = (np.abs(np.fft.rfft(frames * window, axis=-1)).astype(np.float32) ** 2)
    log_spec = np.log10(np.maximum(np.float32(1e-10), mel_filters(80, INPUT_RATE_HZ).astype(np.float32) @ power.T))
    log_spec = log_spec[:, :-1]
    float32_path = (np.maximum(log_spec, log_spec.max() - 8) + 4) / 4
    assert np.max(np.abs(float32_path - reference(audio)[0])) > 1e-5
    assert np.max(np.abs(x - reference(audio))) <= 1e-6


def test_the_filters_are_unit_area_triangles_over_0_to_8_khz():
    filters = mel_filters(80, INPUT_RATE_HZ)
    assert filters.shape == (80, 201) and filters.min() == 0.0
    assert all(np.count_nonzero(row) > 0 for row in filters)
    assert whisper_log_mel(np.zeros(1600, np.float32)).shape == (80, 10)
