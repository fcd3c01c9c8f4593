"""Silence waits learned per caller, as LiveKit's dynamic endpointing does.

A caller who pauses long in the middle of a turn should be given a longer wait before the turn
ends; one who pauses briefly, a shorter one. `LearnedPauses` keeps an exponential moving average
of the mid-turn pauses seen so far in a call (silences after which the caller went on, so the
turn did not end) and scales both waits by how far that average is from the prior, each within
its bounds. It starts at the configured waits, so a call with no mid-turn pause behaves as before.

With `turn.learn_pauses` on, turn taking (`call/turn_taking.py`) keeps one per call, calls
`observed_pause(ms)` when speech resumes inside an open turn after a speech-stop (the silence
between them, not in talk over the agent), and applies `policy(base)` with
`TurnDetector.set_policy` at the start of each caller turn. Whether it is on by default: the
replay in `python -m bench.eou_pauses_eval` (bench/results/).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..base.config import TurnPolicy

__all__ = ["LearnedPauses"]


@dataclass
class LearnedPauses:
    """min/max silence waits from the mid-turn pauses seen in one call.

    The average starts at `prior_pause_ms` (a pause that leaves the configured waits as they
    are); each observed pause moves it by `alpha`. Both waits scale by average / prior, then are
    bounded; the max wait stays at least `gap_ms` above the min.
    """

    min_silence_ms: float = 600.0  # the configured waits (turn.min_silence_ms, max_silence_ms)
    max_silence_ms: float = 1500.0
    prior_pause_ms: float = 400.0  # the mid-turn pause the configured waits are made for
    alpha: float = 0.3  # weight of the newest pause in the average
    min_bounds_ms: tuple[float, float] = (400.0, 1200.0)
    max_bounds_ms: tuple[float, float] = (1000.0, 3000.0)
    gap_ms: float = 300.0
    average_ms: float = field(init=False)
    seen: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha <= 1.0:
            raise ValueError(f"alpha = {self.alpha}: give a weight in (0, 1]")
        if self.prior_pause_ms <= 0:
            raise ValueError(f"prior_pause_ms = {self.prior_pause_ms}: give a positive pause")
        self.average_ms = self.prior_pause_ms

    @classmethod
    def for_policy(cls, policy: TurnPolicy, **kwargs: Any) -> LearnedPauses:
        """Starting from a policy's waits."""
        return cls(min_silence_ms=policy.min_silence_ms, max_silence_ms=policy.max_silence_ms, **kwargs)

    def observed_pause(self, pause_ms: float) -> None:
        """A silence inside a turn after which the caller spoke again."""
        if pause_ms <= 0:
            return
        self.average_ms += self.alpha * (pause_ms - self.average_ms)
        self.seen += 1

    @property
    def ratio(self) -> float:
        return self.average_ms / self.prior_pause_ms

    def waits(self) -> tuple[float, float]:
        """(min, max) silence waits for the caller's next turn, in ms."""
        lo, hi = self.min_bounds_ms
        short = min(hi, max(lo, self.min_silence_ms * self.ratio))
        lo, hi = self.max_bounds_ms
        long = min(hi, max(lo, self.max_silence_ms * self.ratio))
        return short, max(long, short + self.gap_ms)

    def policy(self, base: TurnPolicy) -> TurnPolicy:
        """`base` with the learned waits."""
        short, long = self.waits()
        return replace(base, min_silence_ms=round(short), max_silence_ms=round(long))
