"""Harder conditions for the labelled sets, in one place: room noise under the caller at an SNR,
and the phone band (8 kHz G.711 mu-law and back, `pipeline.testing.sounds.phone_band`).

The order is the caller's: the room's noise reaches the handset's microphone with the speech, and
the line then carries both.
"""

from __future__ import annotations

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.testing import noise
from pipeline.testing.sounds import phone_band


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
                   noise_kind: str = "pink") -> str:
    """"clean", "pink@10dB", "phone" or "pink@10dB+phone": the sets' names for a condition."""
    parts = [] if noise_snr_db is None else [f"{noise_kind}@{noise_snr_db:g}dB"]
    parts += ["phone"] if phone else []
    return "+".join(parts) or "clean"


def file_suffix(*, phone: bool = False, noise_snr_db: float | None = None) -> str:
    """The results file's suffix for a condition: "", "-phone", "-noise10dB", "-noise10dB-phone"."""
    return ("" if noise_snr_db is None else f"-noise{noise_snr_db:g}dB") + ("-phone" if phone else "")


def as_heard(speech: np.ndarray, *, phone: bool = False, noise_snr_db: float | None = None,
             noise_kind: str = "pink", seed: int = 0, lead_s: float = 0.0,
             tail_s: float = 0.0) -> np.ndarray:
    """`speech` as the agent hears it in a condition: noise under it (with its lead and tail, which
    stay silent without noise), then the phone line."""
    x = under_noise(speech, noise_kind, noise_snr_db, seed=seed, lead_s=lead_s, tail_s=tail_s)
    return phone_band(x) if phone else x
