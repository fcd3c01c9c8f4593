"""Audio I/O and DSP: every WAV encoding we promise, resampling, levels, pickup."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from pipeline.base.audio import (
    AudioFormatError,
    PickupBuffer,
    StreamResampler,
    dbfs,
    mulaw_decode,
    mulaw_encode,
    read_wav,
    resample,
    write_wav,
)


def _wav_bytes(pcm: bytes, *, tag: int, channels: int, rate: int, bits: int) -> bytes:
    fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * channels * bits // 8, channels * bits // 8, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
    return b"RIFF" + struct.pack("<I", len(body)) + body


TONE = (0.5 * np.sin(2 * np.pi * 440 * np.arange(4410) / 44100)).astype(np.float32)


@pytest.mark.parametrize("bits, tag, encode", [
    (8, 1, lambda x: (np.round(x * 127) + 128).astype(np.uint8).tobytes()),
    (16, 1, lambda x: (x * 32767).astype("<i2").tobytes()),
    (24, 1, lambda x: b"".join(int(v).to_bytes(3, "little", signed=True) for v in (x * 8388607).astype(np.int32))),
    (32, 1, lambda x: (x.astype(np.float64) * 2147483647).astype("<i4").tobytes()),
    (32, 3, lambda x: x.astype("<f4").tobytes()),
    (64, 3, lambda x: x.astype("<f8").tobytes()),
])
def test_read_every_promised_encoding(tmp_path, bits, tag, encode):
    path = tmp_path / "x.wav"
    path.write_bytes(_wav_bytes(encode(TONE), tag=tag, channels=1, rate=44100, bits=bits))
    wav = read_wav(path)
    assert wav.sample_rate_hz == 44100 and wav.samples.shape == TONE.shape
    assert np.abs(wav.samples - TONE).max() < (0.02 if bits == 8 else 1e-3)


def test_stereo_is_read_as_two_channels_and_mixed_to_mono(tmp_path):
    stereo = np.stack([TONE, -TONE * 0], axis=1)
    path = tmp_path / "s.wav"
    write_wav(path, stereo, 44100)
    wav = read_wav(path)
    assert wav.samples.shape == (len(TONE), 2)
    assert np.allclose(wav.mono(), TONE / 2, atol=1e-3)


@pytest.mark.parametrize("content, words", [
    (b"", "not a WAV"),
    (b"ID3\x03\x00 mp3 data", "not a WAV"),
    (b"RIFF\x04\x00\x00\x00WAVE", "no fmt"),
])
def test_malformed_files_raise_clear_errors(tmp_path, content, words):
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(AudioFormatError, match=words):
        read_wav(path)


def test_unsupported_encoding_says_what_is_supported(tmp_path):
    path = tmp_path / "alaw.wav"
    path.write_bytes(_wav_bytes(b"\x00" * 100, tag=6, channels=1, rate=8000, bits=8))
    with pytest.raises(AudioFormatError, match="use 8/16/24/32-bit PCM"):
        read_wav(path)


@pytest.mark.parametrize("src, dst", [(44100, 16000), (24000, 16000), (8000, 16000), (22050, 24000)])
def test_streaming_resampler_matches_one_shot_and_keeps_pitch(src, dst):
    t = np.arange(src) / src
    x = np.sin(2 * np.pi * 300 * t).astype(np.float32)
    r = StreamResampler(src, dst)
    pieces = np.concatenate([r.process(x[i:i + 333]) for i in range(0, len(x), 333)])
    whole = resample(x, src, dst)
    assert abs(len(whole) - dst) <= 1 and abs(len(pieces) - len(whole)) <= 1
    n = min(len(whole), len(pieces))
    assert np.abs(pieces[:n] - whole[:n]).max() < 1e-4
    spectrum = np.abs(np.fft.rfft(whole[: dst // 2 * 2]))
    assert abs(spectrum.argmax() * dst / (dst // 2 * 2) - 300) < 3


def test_downsampling_removes_content_above_the_new_nyquist():
    src = 48000
    x = np.sin(2 * np.pi * 15000 * np.arange(src) / src).astype(np.float32)  # above 8 kHz
    assert dbfs(resample(x, src, 16000)[100:-100]) < -30


def test_dbfs():
    assert dbfs(np.zeros(10, np.float32)) == -np.inf
    assert abs(dbfs(np.ones(100, np.float32)) - 0.0) < 1e-6
    assert abs(dbfs(np.full(100, 0.01, np.float32)) + 40.0) < 1e-3


def test_mulaw_round_trip_is_close():
    x = (0.3 * np.sin(np.arange(800) / 5)).astype(np.float32)
    y = mulaw_decode(mulaw_encode(x))
    assert np.abs(x - y).max() < 0.02


def test_pickup_keeps_the_newest_frames_in_order_up_to_the_cap():
    buf = PickupBuffer(cap_ms=100)
    frames = [np.full(320, i, np.float32) for i in range(10)]  # 10 x 20 ms
    for f in frames:
        buf.hold(f)
    out = buf.drain()
    assert [int(f[0]) for f in out] == [5, 6, 7, 8, 9]
    assert buf.dropped_samples == 5 * 320
