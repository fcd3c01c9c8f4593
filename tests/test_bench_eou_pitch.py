"""bench.eou_pitch reads the melody's end: the pitch of a voiced sound, a fall told from a rise, and
the area under the curve it reports (no model runs here)."""

from __future__ import annotations

import numpy as np
import pytest

from bench import eou_pitch
from pipeline.base.audio import INPUT_RATE_HZ


def _glide(f_start: float, f_end: float, seconds: float = 1.0) -> np.ndarray:
    """A voiced sound (a pulse train's first harmonics) gliding from one pitch to another."""
    f = np.linspace(f_start, f_end, int(seconds * INPUT_RATE_HZ))
    phase = 2 * np.pi * np.cumsum(f) / INPUT_RATE_HZ
    return sum(0.2 / k * np.sin(k * phase) for k in range(1, 6)).astype(np.float32)


def test_the_pitch_of_a_steady_voice_is_found() -> None:
    f0, _ = eou_pitch.pitch_track(_glide(150, 150))
    assert np.nanmedian(f0) == pytest.approx(150, rel=0.03)


def test_a_fall_ends_lower_than_a_rise() -> None:
    lead = np.zeros(int(0.3 * INPUT_RATE_HZ), np.float32)
    fall = eou_pitch.features(np.concatenate([lead, _glide(180, 110)]), 0.3, 1.3)
    rise = eou_pitch.features(np.concatenate([lead, _glide(130, 190)]), 0.3, 1.3)
    assert fall is not None and rise is not None
    assert fall["end"] < 0 < rise["end"] and fall["slope"] < 0 < rise["slope"] and fall["low"] < rise["low"]
    assert eou_pitch.features(np.zeros(INPUT_RATE_HZ, np.float32), 0.0, 1.0) is None  # nothing voiced


def test_the_area_under_the_curve() -> None:
    assert eou_pitch.auc([-3, -2], [1, 2]) == 1.0  # every finished turn lower
    assert eou_pitch.auc([1, 2], [-3, -2]) == 0.0
    assert eou_pitch.auc([0, 0], [0, 0]) == 0.5
    assert eou_pitch.auc([], [1]) is None
