"""bench.conditions (room noise at an SNR, the phone line) and how bench.bargein_words puts its
items through them and reports the condition, the load average and the wall time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import bargein_words as bw
from bench.conditions import as_heard, condition_name, file_suffix, stretch, under_noise
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


def _items() -> list[bw.Item]:
    return [bw.Item("backchannel", "Mm-hmm.", "joe-1.0", _tone()),
            bw.Item("interruption", "Wait.", "joe-1.0", _tone(0.3))]


def test_items_in_noise_start_their_words_where_the_clean_ones_do():
    clean, noisy = bw.in_condition(_items()), bw.in_condition(_items(), noise_snr_db=10.0)
    assert [it.lead_s for it in clean] == [0.0, 0.0]
    assert all(np.array_equal(a.audio, b.audio) for a, b in zip(clean, _items(), strict=True))
    for it, orig in zip(noisy, _items(), strict=True):
        assert it.lead_s == bw.NOISE_LEAD_S  # run() starts the clip this much earlier
        assert len(it.audio) == len(orig.audio) + int(bw.NOISE_LEAD_S * INPUT_RATE_HZ) + int(
            bw.NOISE_TAIL_S * INPUT_RATE_HZ)
    leads = [it.audio[:1000] for it in noisy]
    assert not np.allclose(leads[0], leads[1])  # each item has its own noise
    on_phone = bw.in_condition(_items(), phone=True)
    assert [len(it.audio) for it in on_phone] == [len(it.audio) for it in _items()]


def _row(kind: str, *, fired: bool, cancelled: bool, voice: str = "joe-1.0") -> dict:
    return {"kind": kind, "text": "x", "voice": voice, "gate_fired": fired, "heard": True,
            "cancelled": cancelled, "decision": "cancel" if cancelled else "resume", "sim_ms": 10.0,
            "compute_ms": 5.0, "words": "x", "condition": "pink@10dB+phone"}


def test_the_report_names_the_condition_load_and_wall_time_and_survives_a_rewrite(tmp_path):
    rows = [_row("backchannel", fired=True, cancelled=True), _row("backchannel", fired=False, cancelled=False),
            _row("interruption", fired=True, cancelled=True),
            _row("interruption", fired=False, cancelled=False, voice="espeak-us")]
    info = {"condition": "pink@10dB+phone", "suffix": "-noise10dB-phone",
            "condition_text": bw.describe_condition(phone=True, noise_snr_db=10.0),
            "command": "python -m bench.bargein_words --phone --noise 10",
            "load_average": {"start": [3.5, 3.0, 2.5], "end": [4.0, 3.5, 3.0]}, "wall_s": 600.0}
    md = bw.write(bw.summarise(rows), rows, [], "CPU X, 2 of 2 cores", day="2026-01-02", run_info=info,
                  out=tmp_path)
    assert md.name == "2026-01-02-bargein-words-noise10dB-phone.md"
    text = md.read_text()
    assert "pink@10dB+phone" in text and "3.50 / 3.00 / 2.50" in text and "10.0 min wall" in text
    assert "pink noise 10 dB below the speech" in text and "mu-law" in text
    assert "| backchannels cancelled (false cancels) | 50% | 50% | 50% |" in text
    assert "| espeak-us | 0 | 0% / 0% / 0% | 1 | 100% / 100% / 100% |" in text  # by voice
    assert "| joe-1.0 | 2 | 50% / 50% / 50% | 1 | 0% / 0% / 0% |" in text
    saved = json.loads(md.with_suffix(".json").read_text())
    assert saved["load_average"] == info["load_average"] and saved["condition"] == "pink@10dB+phone"
    md.unlink()
    assert bw.main(["--report", str(md.with_suffix(".json"))]) == 0
    assert md.read_text() == text


def test_an_snr_out_of_range_is_refused_with_what_to_give(capsys):
    with pytest.raises(SystemExit):
        bw.main(["--noise", "200"])
    assert "give the SNR in dB" in capsys.readouterr().err


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_a_stretch_changes_the_length_and_keeps_the_pitch_and_the_level(factor):
    voice = _tone(1.0, hz=180.0) + 0.5 * _tone(1.0, hz=360.0)  # a low voice and its harmonic
    said = stretch(voice, factor)
    assert len(said) == round(len(voice) * factor) and said.dtype == np.float32
    inner = said[800:-800]
    spectrum = np.abs(np.fft.rfft(inner))
    peak_hz = np.fft.rfftfreq(len(inner), 1 / INPUT_RATE_HZ)[np.argmax(spectrum)]
    assert peak_hz == pytest.approx(180.0, abs=3.0)  # resampling would give 180 / factor
    assert dbfs(inner) == pytest.approx(dbfs(voice), abs=0.5)
    # the stretch comes first: the noise's lead and tail keep their lengths
    heard = as_heard(voice, noise_snr_db=10.0, lead_s=0.3, tail_s=0.5, speed=factor)
    assert len(heard) == len(said) + int(0.3 * INPUT_RATE_HZ) + int(0.5 * INPUT_RATE_HZ)


def test_a_stretch_past_half_or_double_is_refused_with_what_to_give():
    with pytest.raises(ValueError, match="0.8 is 25% faster"):
        stretch(_tone(), 3.0)


def test_a_stretched_condition_is_named_first_and_the_items_keep_their_labels():
    assert condition_name(speed=0.8) == "stretch0.8" and file_suffix(speed=0.8) == "-stretch80"
    assert condition_name(speed=1.25, noise_snr_db=10.0, phone=True) == "stretch1.25+pink@10dB+phone"
    assert file_suffix(speed=1.25, noise_snr_db=10.0, phone=True) == "-stretch125-noise10dB-phone"
    fast = bw.in_condition(_items(), speed=0.8)
    assert [(it.kind, it.text) for it in fast] == [(it.kind, it.text) for it in _items()]
    assert [len(it.audio) for it in fast] == [round(len(it.audio) * 0.8) for it in _items()]
    assert "time-stretched to 0.8" in bw.describe_condition(phone=False, noise_snr_db=None, speed=0.8)


def test_the_end_of_turn_set_reports_each_voice_and_refuses_a_stretch_out_of_range(capsys):
    from bench import eot

    row = {"finished": True, "kind": "finished", "source": "joe", "said": "x", "transcript": "x",
           "heuristic": {"p": 0.9, "ms": 0.1, "ended": "min_silence", "wait_ms": 600}}
    rows = [{**row, "name": "yes/whole/joe-fast/clean+stretch1.25", "condition": "stretch1.25+clean"},
            {**row, "name": "yes/whole/joe-slow/clean+stretch1.25", "condition": "stretch1.25+clean",
             "heuristic": {**row["heuristic"], "ended": "max_silence", "wait_ms": 1500}}]
    groups = eot.summarise(rows, ["heuristic"])["heuristic"]
    assert groups["voice=joe-fast"]["waited_max"] == 0.0 and groups["voice=joe-slow"]["waited_max"] == 1.0
    assert groups["condition=stretch1.25+clean"]["finished"] == 2
    with pytest.raises(SystemExit):
        eot.main(["--speed", "3"])
    assert "give the length factor" in capsys.readouterr().err
