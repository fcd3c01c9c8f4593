"""Barge-in gate: energy, voice probability and duration, all three, before the agent stops.

A cough is loud but short and not voice; a fan is long but not voice; a "mm-hmm" is voice but
short. Only speech that is loud enough, voiced enough and long enough interrupts the agent.
"""

from __future__ import annotations

from .config import BargeInPolicy


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
