"""bench.conditions: room noise at an SNR and the phone line, as the labelled sets use them."""

from __future__ import annotations

import numpy as np
import pytest

from bench.conditions import as_heard, condition_name, file_suffix, under_noise
from pipeline.base.audio import INPUT_RATE_HZ, dbfs


def _tone(seconds: float = 0.5, hz: float = 300.0) -> np.ndarray:
    t = np.arange(int(seconds * INPUT_RATE_HZ)) / INPUT_RATE_HZ
    return (0.2 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def _band_energy(x: np.ndarray, lo_hz: float, hi_hz: float) -> float:
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / INPUT_RATE_HZ)
    return float(spectrum[(freqs >= lo_hz) & (freqs < hi_hz)].sum())


@pytest.mark.parametrize("snr_db", [20.0, 10.0, 0.0])
def test_noise_sits_the_asked_snr_below_the_speech_and_runs_under_lead_and_tail(snr_db):
    speech = _tone()
    lead, tail = int(0.3 * INPUT_RATE_HZ), int(0.5 * INPUT_RATE_HZ)
    x = under_noise(speech, "pink", snr_db, seed=4, lead_s=0.3, tail_s=0.5)
    assert len(x) == lead + len(speech) + tail and x.dtype == np.float32
    added = x - np.concatenate([np.zeros(lead), speech, np.zeros(tail)])
    # the level is over the whole noise (pink noise wanders by a dB or so from window to window)
    assert dbfs(speech) - dbfs(added) == pytest.approx(snr_db, abs=0.1)
    assert dbfs(x[:lead]) == pytest.approx(dbfs(speech) - snr_db, abs=3)  # the room before the words
    assert dbfs(x[-tail:]) == pytest.approx(dbfs(speech) - snr_db, abs=3)  # and after them


def test_no_snr_is_the_speech_with_silent_lead_and_tail():
    speech = _tone()
    x = under_noise(speech, "pink", None, seed=4, lead_s=0.1, tail_s=0.2)
    lead = int(0.1 * INPUT_RATE_HZ)
    assert not x[:lead].any() and not x[lead + len(speech):].any()
    assert np.array_equal(x[lead:lead + len(speech)], speech)


def test_the_phone_line_carries_the_noise_too_and_cuts_the_band_above_4_khz():
    speech = _tone() + _tone(hz=6000.0)
    noisy = as_heard(speech, noise_snr_db=10.0, seed=2)
    on_phone = as_heard(speech, phone=True, noise_snr_db=10.0, seed=2)
    assert len(on_phone) == len(noisy) == len(speech)
    assert _band_energy(on_phone, 4200, 8000) < 1e-3 * _band_energy(noisy, 4200, 8000)
    # the voice band survives, and the noise in it: the line does not clean the room
    assert _band_energy(on_phone, 200, 3400) == pytest.approx(_band_energy(noisy, 200, 3400), rel=0.2)
    assert dbfs(on_phone[:2000] - as_heard(speech, phone=True)[:2000]) > -60


def test_condition_names_and_file_suffixes():
    assert condition_name() == "clean" and file_suffix() == ""
    assert condition_name(phone=True) == "phone" and file_suffix(phone=True) == "-phone"
    assert condition_name(noise_snr_db=10.0) == "pink@10dB"
    assert condition_name(phone=True, noise_snr_db=10.0) == "pink@10dB+phone"
    assert file_suffix(phone=True, noise_snr_db=10.0) == "-noise10dB-phone"
