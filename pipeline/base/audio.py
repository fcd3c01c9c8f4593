"""Audio plumbing: frames, resampling, dBFS, G.711, WAV I/O, the pickup ring buffer.

Inside the pipeline audio is mono float32 in [-1, 1]; input runs at 16 kHz (what Silero VAD and
Whisper take) in 20 ms frames, output at the TTS voice's own rate.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

INPUT_RATE_HZ = 16_000
FRAME_MS = 20  # the hosted realtime APIs and most telephony stacks move audio in 20 ms frames
FRAME_SAMPLES = INPUT_RATE_HZ * FRAME_MS // 1000
# The VAD window, in which turn detection and the barge-in gate count time: Silero v5+ at 16 kHz
# takes exactly 512-sample windows (32 ms). Here, below the stages, so that what counts in it
# need not import the VAD stage.
WINDOW_SAMPLES = 512
WINDOW_MS = WINDOW_SAMPLES * 1000 / INPUT_RATE_HZ


class AudioFormatError(ValueError):
    """Audio that cannot be read; the message says what to do."""


def dbfs(samples: np.ndarray) -> float:
    """RMS level in dB relative to full scale; digital silence is -inf."""
    if samples.size == 0:
        return -math.inf
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return 20.0 * math.log10(rms) if rms > 0 else -math.inf


def frame_levels_db(samples: np.ndarray, frame: int, *, from_end: bool = False) -> np.ndarray:
    """Each whole frame's RMS level in dB (digital silence at -120), the frames counted from
    the start, or back from the end with `from_end` (the part frame left over is dropped)."""
    n = len(samples) // frame
    cut = samples[len(samples) - n * frame:] if from_end else samples[:n * frame]
    frames = np.asarray(cut, dtype=np.float64).reshape(n, frame)
    return 10.0 * np.log10(np.mean(frames * frames, axis=1) + 1e-12)


def ms_to_samples(ms: float, rate_hz: int) -> int:
    return int(round(ms * rate_hz / 1000.0))


def samples_to_ms(n: int, rate_hz: int) -> float:
    return n * 1000.0 / rate_hz


# --- resampling ------------------------------------------------------------------------------


def _lowpass_taps(cutoff: float, taps: int = 63) -> np.ndarray:
    """Windowed-sinc low-pass; cutoff as a fraction of the sample rate (0..0.5)."""
    n = np.arange(taps) - (taps - 1) / 2
    h = 2 * cutoff * np.sinc(2 * cutoff * n) * np.blackman(taps)
    return (h / h.sum()).astype(np.float32)


class StreamResampler:
    """Streaming sample-rate conversion: anti-alias FIR (when going down), then interpolation.

    State carries across calls, so feeding a signal in any split gives the same output as feeding
    it whole (up to float rounding). Quality is ample for speech recognition and playback.

    Linear interpolation alone leaves images of the source band above its Nyquist when going up
    (a 3 kHz tone at 8 kHz comes back from 16 kHz with a 5 kHz image only 13 dB down) and dulls
    the top of the band (3 kHz: -3 dB). `filter_up` upsamples by a whole ratio (8 -> 16 kHz) the
    textbook way instead, zeros stuffed between samples and the same windowed-sinc low-pass
    (another ratio: that low-pass after interpolation); `taps` sets the filters' length (more
    taps: a sharper edge, `taps // 2` samples more delay). The telephony path uses both
    (`PHONE_TAPS`); the defaults keep what every other path always had.
    """

    def __init__(self, src_hz: int, dst_hz: int, *, taps: int = 63,
                 filter_up: bool = False) -> None:
        if src_hz <= 0 or dst_hz <= 0:
            raise AudioFormatError(f"sample rates must be positive, got {src_hz} -> {dst_hz}")
        self.src_hz, self.dst_hz = src_hz, dst_hz
        self._step = src_hz / dst_hz  # input samples per output sample
        self._taps = _lowpass_taps(0.45 * dst_hz / src_hz, taps) if dst_hz < src_hz else None
        self._fir_tail = np.zeros(0 if self._taps is None else len(self._taps) - 1, np.float32)
        self._up_taps = (_lowpass_taps(0.45 * src_hz / dst_hz, taps)
                         if filter_up and dst_hz > src_hz else None)
        self._ratio = dst_hz // src_hz if self._up_taps is not None and dst_hz % src_hz == 0 else 0
        self._up_tail = np.zeros(0 if self._up_taps is None else len(self._up_taps) - 1,
                                 np.float32)
        self._pos = 0.0  # next output position, in input samples relative to `_prev`
        self._prev = np.zeros(1, np.float32)  # last input sample of the previous call

    def process(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32).reshape(-1)
        if self.src_hz == self.dst_hz:
            return x.copy()
        if self._taps is not None:
            padded = np.concatenate([self._fir_tail, x])
            self._fir_tail = padded[len(padded) - (len(self._taps) - 1) :]
            x = np.convolve(padded, self._taps, mode="valid").astype(np.float32)
        if self._ratio:
            stuffed = np.zeros(len(x) * self._ratio, np.float32)
            stuffed[::self._ratio] = x * self._ratio
            return self._filter_up(stuffed)
        buf = np.concatenate([self._prev, x])  # index 0 is the previous call's last sample
        last = len(buf) - 1
        if last < 1 and self._pos >= last:
            return np.zeros(0, np.float32)
        positions = np.arange(self._pos, last, self._step)
        out = np.interp(positions, np.arange(len(buf)), buf).astype(np.float32)
        self._pos = (positions[-1] + self._step - last) if len(positions) else self._pos - len(x)
        self._prev = buf[-1:].copy()
        return out if self._up_taps is None else self._filter_up(out)

    def _filter_up(self, x: np.ndarray) -> np.ndarray:
        assert self._up_taps is not None
        padded = np.concatenate([self._up_tail, x])
        self._up_tail = padded[len(padded) - (len(self._up_taps) - 1) :]
        return np.convolve(padded, self._up_taps, mode="valid").astype(np.float32)


PHONE_TAPS = 127  # phone band filters: flat to about 3.1 kHz, images and aliases 60 dB down by 4.1


def resample(x: np.ndarray, src_hz: int, dst_hz: int) -> np.ndarray:
    if src_hz == dst_hz:
        return np.asarray(x, dtype=np.float32)
    return StreamResampler(src_hz, dst_hz).process(x)


def to_int16(x: np.ndarray) -> np.ndarray:
    return (np.clip(x, -1.0, 1.0) * 32767.0).astype(np.int16)


def from_int16(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, dtype=np.int16).astype(np.float32)) / 32768.0


# --- G.711 (telephony, 8 kHz) -----------------------------------------------------------------
#
# Bit for bit the ITU-T G.191 reference coder (its g711.c): 16-bit linear in, a negative sample
# quantized by its one's complement, so -1 codes as negative zero; decoding is the G.711 table.


def _g711_linear(x: np.ndarray) -> np.ndarray:
    """Float samples as 16-bit integers (int32), floored, saturated."""
    return np.clip(np.floor(np.asarray(x, dtype=np.float64) * 32768.0), -32768, 32767).astype(np.int32)


def mulaw_decode(data: bytes) -> np.ndarray:
    u = ~np.frombuffer(data, dtype=np.uint8)
    sign = (u & 0x80) != 0
    exponent = (u >> 4) & 0x07
    mantissa = u & 0x0F
    magnitude = ((mantissa.astype(np.int32) << 3) + 0x84) << exponent
    pcm = np.where(sign, 0x84 - magnitude, magnitude - 0x84)
    return (pcm / 32768.0).astype(np.float32)


def mulaw_encode(x: np.ndarray) -> bytes:
    pcm = _g711_linear(x)
    magnitude = np.minimum((np.where(pcm < 0, ~pcm, pcm) >> 2) + 33, 0x1FFF)  # 14-bit, biased
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 5, 0, 7)
    mantissa = (magnitude >> (exponent + 1)) & 0x0F
    sign = np.where(pcm < 0, 0x00, 0x80)
    return ((sign | ((7 - exponent) << 4) | (15 - mantissa)) & 0xFF).astype(np.uint8).tobytes()


def alaw_decode(data: bytes) -> np.ndarray:
    a = np.frombuffer(data, dtype=np.uint8).astype(np.int32)
    ix = (a ^ 0x55) & 0x7F
    exponent = ix >> 4
    mantissa = (ix & 0x0F) + np.where(exponent > 0, 16, 0)
    magnitude = ((mantissa << 4) + 8) << np.maximum(exponent - 1, 0)
    return (np.where(a > 127, magnitude, -magnitude) / 32768.0).astype(np.float32)


def alaw_encode(x: np.ndarray) -> bytes:
    pcm = _g711_linear(x)
    m = np.where(pcm < 0, ~pcm, pcm) >> 4  # 12-bit magnitude
    exponent = np.where(m > 15, np.floor(np.log2(np.maximum(m, 1))).astype(np.int32) - 3, 0)
    code = np.where(exponent > 0, (exponent << 4) + (m >> np.maximum(exponent - 1, 0)) - 16, m)
    code = code | np.where(pcm >= 0, 0x80, 0)
    return ((code ^ 0x55) & 0xFF).astype(np.uint8).tobytes()


# --- WAV I/O ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WavAudio:
    samples: np.ndarray  # float32, shape (n,) mono or (n, channels)
    sample_rate_hz: int

    def mono(self) -> np.ndarray:
        return self.samples if self.samples.ndim == 1 else self.samples.mean(axis=1)


def read_wav(path: str | Path) -> WavAudio:
    """Read a RIFF/WAVE file: 8/16/24/32-bit integer PCM or 32/64-bit float, any channels."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AudioFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioFormatError(
            f"{path} is not a WAV file (no RIFF/WAVE header); convert it, e.g. "
            f"`ffmpeg -i {path.name} -ar 16000 caller.wav`"
        )
    fmt = None
    pcm = None
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos : pos + 4], struct.unpack("<I", data[pos + 4 : pos + 8])[0]
        body = data[pos + 8 : pos + 8 + size]
        if cid == b"fmt ":
            if len(body) < 16:
                raise AudioFormatError(f"{path}: the WAV fmt chunk is truncated")
            fmt = struct.unpack("<HHIIHH", body[:16])
            if fmt[0] == 0xFFFE and len(body) >= 26:  # WAVE_FORMAT_EXTENSIBLE: real tag in GUID
                fmt = (struct.unpack("<H", body[24:26])[0],) + fmt[1:]
        elif cid == b"data":
            pcm = body
        pos += 8 + size + (size & 1)
    if fmt is None or pcm is None:
        raise AudioFormatError(f"{path}: the WAV file has no {'fmt' if fmt is None else 'data'} chunk")
    tag, channels, rate, _, _, bits = fmt
    if channels < 1 or rate < 1000:
        raise AudioFormatError(f"{path}: implausible WAV header ({channels} ch, {rate} Hz)")
    width = bits // 8
    usable = len(pcm) - len(pcm) % (width * channels) if width else 0
    raw = pcm[:usable]
    if tag == 1 and bits == 8:
        x = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif tag == 1 and bits == 16:
        x = np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0
    elif tag == 1 and bits == 24:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        x = (np.where(v & 0x800000, v - 0x1000000, v) / 8388608.0).astype(np.float32)
    elif tag == 1 and bits == 32:
        x = (np.frombuffer(raw, "<i4").astype(np.float64) / 2147483648.0).astype(np.float32)
    elif tag == 3 and bits in (32, 64):
        x = np.frombuffer(raw, "<f4" if bits == 32 else "<f8").astype(np.float32)
    else:
        raise AudioFormatError(
            f"{path}: unsupported WAV encoding (format tag {tag}, {bits} bits); "
            "use 8/16/24/32-bit PCM or 32/64-bit float"
        )
    x = np.nan_to_num(x)
    if channels > 1:
        x = x.reshape(-1, channels)
    return WavAudio(x, rate)


def write_wav(path: str | Path, samples: np.ndarray, sample_rate_hz: int) -> None:
    """Write 16-bit PCM; `samples` is (n,) or (n, channels) float in [-1, 1]."""
    x = np.asarray(samples, dtype=np.float32)
    channels = 1 if x.ndim == 1 else x.shape[1]
    pcm = to_int16(x).tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE"
    header += b"fmt " + struct.pack(
        "<IHHIIHH", 16, 1, channels, sample_rate_hz, sample_rate_hz * channels * 2, channels * 2, 16
    )
    header += b"data" + struct.pack("<I", len(pcm))
    Path(path).write_bytes(header + pcm)


# --- pickup ----------------------------------------------------------------------------------


class PickupBuffer:
    """Holds the caller's first frames while the session gets ready; keeps the newest `cap_ms`.

    A caller often speaks the instant the line opens, before models or the client handshake are
    ready. Frames are held in order and flushed before live audio, so the first words survive.
    """

    def __init__(self, *, cap_ms: float) -> None:  # the session's is `CallPolicy.pickup_cap_ms`
        self.cap_ms = cap_ms
        self._frames: deque[np.ndarray] = deque()
        self._held_samples = 0
        self.dropped_samples = 0
        self.total_held_samples = 0

    def hold(self, frame: np.ndarray) -> None:
        self._frames.append(frame)
        self._held_samples += len(frame)
        self.total_held_samples += len(frame)
        cap = ms_to_samples(self.cap_ms, INPUT_RATE_HZ)
        while self._held_samples - len(self._frames[0]) >= cap:
            old = self._frames.popleft()
            self._held_samples -= len(old)
            self.dropped_samples += len(old)

    def drain(self) -> list[np.ndarray]:
        frames = list(self._frames)
        self._frames.clear()
        self._held_samples = 0
        return frames

    @property
    def held_ms(self) -> float:
        return samples_to_ms(self._held_samples, INPUT_RATE_HZ)
