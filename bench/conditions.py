"""Harder conditions for the labelled sets, in one place: faster or slower speech (a
time-stretch that keeps the pitch), room noise under the caller at an SNR, and the phone band
(8 kHz G.711 mu-law and back, `pipeline.testing.sounds.phone_band`).

The order is the caller's: the caller speaks (at their own pace), the room's noise reaches the
handset's microphone with the speech, and the line then carries both.
"""

from __future__ import annotations

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.testing import noise
from pipeline.testing.sounds import phone_band

STRETCH_FRAME = 640  # 40 ms at 16 kHz: a few pitch periods of the lowest voices
STRETCH_SEEK = 160  # a frame may move 10 ms to line up with what came before it


def stretch(x: np.ndarray, factor: float) -> np.ndarray:
    """`x` (16 kHz) made `factor` times as long with its pitch kept: WSOLA (Verhelst and Roelands,
    ICASSP 1993). 40 ms Hann frames overlap by half in the output; each is read from around where
    the input has got to, moved by up to 10 ms to the offset most like the natural continuation
    of the frame before it, so pitch periods line up and no period is doubled or cut."""
    if not 0.5 <= factor <= 2.0:
        raise ValueError(f"stretch factor {factor:g}: give 0.5 to 2.0 (0.8 is 25% faster speech, "
                         "1.25 is 25% slower)")
    x = np.asarray(x, np.float32)
    n, hop = STRETCH_FRAME, STRETCH_FRAME // 2
    size = int(round(len(x) * factor))
    pad = np.concatenate([np.zeros(STRETCH_SEEK, np.float32), x, np.zeros(n + 2 * STRETCH_SEEK, np.float32)])
    window = np.hanning(n).astype(np.float32)
    out = np.zeros(size + n, np.float32)
    norm = np.zeros(size + n, np.float32)
    previous: int | None = None
    for k, at in enumerate(range(0, size, hop)):
        centre = int(round(k * hop / factor)) + STRETCH_SEEK  # where the input has got to
        centre = min(centre, len(pad) - n - STRETCH_SEEK)
        start = centre
        if previous is not None:
            natural = pad[previous + hop:previous + hop + n]  # what would follow the last frame
            lo = max(0, centre - STRETCH_SEEK)
            region = pad[lo:centre + STRETCH_SEEK + n]
            if len(region) >= n and np.any(natural):
                start = lo + int(np.argmax(np.correlate(region, natural, "valid")))
        out[at:at + n] += pad[start:start + n] * window
        norm[at:at + n] += window
        previous = start
    return (out[:size] / np.maximum(norm[:size], 1e-3)).astype(np.float32)


def under_noise(speech: np.ndarray, kind: str, snr_db: float | None, *, seed: int,
                lead_s: float = 0.0, tail_s: float = 0.0) -> np.ndarray:
    """`lead_s` of silence, `speech`, `tail_s` of silence, with `kind` noise under all of it at
    `snr_db` below the speech's level (RMS over `speech`); `snr_db=None`: no noise."""
    lead, tail = np.zeros(int(lead_s * INPUT_RATE_HZ)), np.zeros(int(tail_s * INPUT_RATE_HZ))
    x = np.concatenate([lead, speech, tail]).astype(np.float32)
    if snr_db is None:
        return x
    n = noise(kind, (len(x) + 1) / INPUT_RATE_HZ, seed=seed)[:len(x)]
    gain = 10 ** ((dbfs(speech) - snr_db - dbfs(n)) / 20)
    return np.clip(x + gain * n, -1.0, 1.0).astype(np.float32)


def condition_name(*, phone: bool = False, noise_snr_db: float | None = None,
                   noise_kind: str = "pink", speed: float | None = None) -> str:
    """"clean", "pink@10dB", "phone", "stretch0.8", or joined: "stretch1.25+pink@10dB+phone"."""
    parts = [] if speed is None else [f"stretch{speed:g}"]
    parts += [] if noise_snr_db is None else [f"{noise_kind}@{noise_snr_db:g}dB"]
    parts += ["phone"] if phone else []
    return "+".join(parts) or "clean"


def file_suffix(*, phone: bool = False, noise_snr_db: float | None = None,
                speed: float | None = None) -> str:
    """The results file's suffix for a condition: "", "-phone", "-noise10dB", "-stretch80" (the
    length in per cent: a dot would read as the file's extension), joined in that order:
    "-stretch80-noise10dB-phone"."""
    return (("" if speed is None else f"-stretch{round(speed * 100)}")
            + ("" if noise_snr_db is None else f"-noise{noise_snr_db:g}dB") + ("-phone" if phone else ""))


def as_heard(speech: np.ndarray, *, phone: bool = False, noise_snr_db: float | None = None,
             noise_kind: str = "pink", seed: int = 0, lead_s: float = 0.0,
             tail_s: float = 0.0, speed: float | None = None) -> np.ndarray:
    """`speech` as the agent hears it in a condition: said `speed` times as long (`stretch`),
    noise under it (with its lead and tail, which stay silent without noise), then the line."""
    said = speech if speed is None else stretch(speech, speed)
    x = under_noise(said, noise_kind, noise_snr_db, seed=seed, lead_s=lead_s, tail_s=tail_s)
    return phone_band(x) if phone else x
