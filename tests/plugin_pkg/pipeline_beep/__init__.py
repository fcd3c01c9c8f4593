"""A third-party TTS stage: one 150 ms beep per word, at 16 kHz."""

import numpy as np


class BeepTTS:
    def __init__(self, *, pitch_hz: float = 880.0) -> None:
        self.sample_rate_hz = 16_000
        self.pitch_hz = pitch_hz

    def synthesize(self, text: str) -> np.ndarray:
        t = np.arange(int(0.15 * self.sample_rate_hz)) / self.sample_rate_hz
        beep = np.concatenate([0.4 * np.sin(2 * np.pi * self.pitch_hz * t), np.zeros(800)])
        return np.tile(beep, max(1, len(text.split()))).astype(np.float32)
