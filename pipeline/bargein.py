"""Barge-in: the gate (energy, voice probability and duration, all three) and the words verdict.

A cough is loud but short and not voice; a fan is long but not voice; a "mm-hmm" is voice but
short. Only speech that is loud enough, voiced enough and long enough interrupts the agent. Once
the gate has fired, the caller's words decide: only backchannels ("mm-hmm", "yeah") let the agent
go on; other words interrupt it, unless nothing says they were spoken.

This module decides and does nothing: it reads numbers and words and knows no session. What the
decisions set off in a call (playback paused and resumed, the reply stopped, the open turn made
the interruption) is `pipeline/call/interruption.py`, which the session wires in.
"""

from __future__ import annotations

import numpy as np

from .base.audio import WINDOW_MS, dbfs
from .base.config import BargeInPolicy
from .stages.backchannel import Backchannels, Verdict, unspoken
from .turns import WordsHeard

__all__ = ["BargeInGate", "Verdict", "WordsJudge"]


class BargeInGate:
    """Feed every input window while the agent is speaking; `update` returns True once, on firing.

    Both signals must hold continuously for `min_duration_ms`; a window that fails either resets
    the window, so separate bursts never add up.
    """

    def __init__(self, policy: BargeInPolicy) -> None:
        self.policy = policy
        self.reset()

    def reset(self) -> None:
        self.held_ms = 0.0
        self.window_start_ms: float | None = None
        self.fired = False

    @property
    def candidate(self) -> bool:
        """Speech-like input is being held but has not yet fired."""
        return self.window_start_ms is not None and not self.fired

    def update(self, *, level_dbfs: float, voice_prob: float, window_ms: float, end_ms: float) -> bool:
        ok = level_dbfs >= self.policy.energy_threshold_dbfs and voice_prob >= self.policy.voice_threshold
        if not ok:
            self.held_ms = 0.0
            self.window_start_ms = None
            return False
        if self.window_start_ms is None:
            self.window_start_ms = end_ms - window_ms
        self.held_ms += window_ms
        if not self.fired and self.held_ms >= self.policy.min_duration_ms:
            self.fired = True
            return True
        return False

    def window(self, window: np.ndarray, prob: float, end_ms: float) -> bool:
        """`update` with one VAD window of input audio as it comes."""
        return self.update(level_dbfs=dbfs(window), voice_prob=prob, window_ms=WINDOW_MS, end_ms=end_ms)


class WordsJudge:
    """What the caller's words over the agent are: a backchannel, words, silence, or "unsure"
    (words Whisper doubts, or more words than the speech heard could hold: they decide nothing)."""

    def __init__(self, policy: BargeInPolicy) -> None:
        self.policy = policy
        self._backchannels = Backchannels(policy.backchannels)

    def update_options(self, policy: BargeInPolicy) -> None:
        if policy.backchannels is not self.policy.backchannels:
            self._backchannels = Backchannels(policy.backchannels)
        self.policy = policy

    def verdict(self, words: WordsHeard, now_ms: float) -> Verdict:
        """The verdict on `words` at input-audio time `now_ms` (what the speech heard holds)."""
        verdict = self._backchannels.judge(words.text)
        min_logprob = self.policy.min_word_logprob
        if verdict == "words" and (words.logprob < min_logprob or unspoken(
                words.text, words.confidence, words.voiced_at(now_ms), min_logprob=min_logprob) is not None):
            return "unsure"
        return verdict
