"""The fast caller's voice: each line is a tone of its own pitch, and a scripted STT that hears
the pitch and writes the line's words.

No model runs: the VAD hears loudness, the STT tells lines apart by their pitch and writes as
much of a line's words as its audio holds (a partial pass over half the tone gives half the
words), so turn taking, barge-in (backchannels included) and the completeness heuristic work on
the scripted words exactly as on transcribed ones.
"""

from __future__ import annotations

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs

BASE_HZ = 300.0
STEP_HZ = 80.0  # lines apart in pitch; a 40 ms block resolves 25 Hz
BLOCK = 640  # 40 ms at 16 kHz
MS_PER_CHAR = 60.0  # about a normal speaking rate
LEVEL = 0.3  # about -13 dBFS: speech level for the barge-in gate's -40 dBFS
MIN_DBFS = -35.0


class EnergyVAD:
    """Voice = loud enough: the tone caller's VAD."""

    def probability(self, window: np.ndarray) -> float:
        return 0.95 if dbfs(window) > MIN_DBFS else 0.02

    def fork(self) -> EnergyVAD:
        return EnergyVAD()


class LineVoice:
    """Tones for lines, and the STT that reads them back (`stt`)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.samples: list[int] = []

    def say(self, text: str, *, speed: float = 1.0) -> np.ndarray:
        """The tone for a line of words (its own pitch), as long as saying them takes
        (`speed` as Piper's length scale: 1.2 is 20% longer)."""
        index = len(self.texts)
        n = max(BLOCK * 4, int(len(text.strip()) * MS_PER_CHAR * speed * INPUT_RATE_HZ / 1000))
        n -= n % BLOCK
        self.texts.append(text)
        self.samples.append(n)
        t = np.arange(n) / INPUT_RATE_HZ
        tone = LEVEL * np.sin(2 * np.pi * self.pitch(index) * t)
        ramp = np.minimum(1.0, np.minimum(np.arange(n), np.arange(n)[::-1]) / 80.0)  # 5 ms, no clicks
        return (tone * ramp).astype(np.float32)

    @staticmethod
    def pitch(index: int) -> float:
        return BASE_HZ + STEP_HZ * index

    def heard(self, audio: np.ndarray) -> list[tuple[int, int]]:
        """(line, blocks of it) in the order the lines are heard in `audio`."""
        order: list[int] = []
        blocks: dict[int, int] = {}
        if not self.texts:
            return []
        t = np.arange(BLOCK) / INPUT_RATE_HZ
        basis = [(np.sin(2 * np.pi * self.pitch(i) * t), np.cos(2 * np.pi * self.pitch(i) * t))
                 for i in range(len(self.texts))]
        for start in range(0, len(audio) - BLOCK + 1, BLOCK):
            block = audio[start:start + BLOCK]
            if dbfs(block) <= MIN_DBFS:
                continue
            power = [float(block @ s) ** 2 + float(block @ c) ** 2 for s, c in basis]
            line = int(np.argmax(power))
            if line not in blocks:
                order.append(line)
                blocks[line] = 0
            blocks[line] += 1
        return [(i, blocks[i]) for i in order]

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        """The STT: each heard line's words, in full when all of it was heard (or on the final
        pass over most of it), else the share of its words its audio holds."""
        out = []
        for line, blocks in self.heard(audio):
            words = self.texts[line].split()
            share = blocks * BLOCK / self.samples[line]
            if share >= 0.9 or (final and share >= 0.6):
                out.append(self.texts[line])
            else:
                out.append(" ".join(words[: max(1, int(len(words) * share))]))
        return " ".join(out)
