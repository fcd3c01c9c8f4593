"""Barge-in: the gate (energy, voice probability and duration, all three) and what it sets off.

A cough is loud but short and not voice; a fan is long but not voice; a "mm-hmm" is voice but
short. Only speech that is loud enough, voiced enough and long enough interrupts the agent. While
the gate holds a candidate, playback pauses; when it fires, the response is stopped in all four
places (playback, synthesis, generation, stream state: `Response.cancel`) and the open turn
becomes the interruption.
"""

from __future__ import annotations

import numpy as np

from . import events as ev
from .audio import dbfs
from .config import BargeInPolicy
from .core import SessionCore
from .playback import Playback
from .responder import Responder
from .turn_taking import TurnTaking
from .vad import WINDOW_MS


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


class BargeIn:
    """Reads every input window while the agent's audio sounds; pauses on a candidate, resumes
    after a false one, and interrupts when the gate fires."""

    def __init__(self, core: SessionCore, *, playback: Playback, turns: TurnTaking,
                 responder: Responder) -> None:
        self.core = core
        self.playback = playback
        self.turns = turns
        self.responder = responder
        self.gate = BargeInGate(core.config.bargein)
        self._paused_at_ms: float | None = None  # playback held on a candidate since then

    def on_window(self, window: np.ndarray, prob: float, end_ms: float) -> None:
        policy = self.gate.policy = self.core.config.bargein  # a session.update may change it
        if not (policy.enabled and self.playback.speaking):
            self.gate.reset()
            self._paused_at_ms = None
            return
        if self.gate.update(level_dbfs=dbfs(window), voice_prob=prob, window_ms=WINDOW_MS, end_ms=end_ms):
            self._paused_at_ms = None
            self._fire(end_ms)
        else:
            self._judge_candidate(end_ms)

    def _fire(self, fire_ms: float) -> None:
        """The caller talks over the agent: stop whatever is sounding and what is being made."""
        start = self.gate.window_start_ms
        # the interruption starts where the gate's window did (plus padding)
        self.turns.interrupted(None if start is None else max(0.0, start - self.core.config.turn.prefix_padding_ms))
        target = self.responder.barge_in_target()
        self.core.emit(ev.StageMark(stage="barge_in", response_id=target.id if target else None, detail={
            "fire_ms": fire_ms, "window_start_ms": start}))
        self.responder.interrupt()

    def _judge_candidate(self, end_ms: float) -> None:
        """Pause while a possible interruption is judged; resume where it stopped if it was not one.

        A "mm-hmm" or a door slam costs the caller a pause of its own length, never the reply.
        """
        policy = self.core.config.bargein
        if self.gate.candidate and policy.pause_on_candidate and self._paused_at_ms is None:
            self._paused_at_ms = end_ms
            self.playback.pause()
        elif self._paused_at_ms is not None and (
                not self.gate.candidate or end_ms - self._paused_at_ms >= policy.resume_after_false_ms):
            self.core.emit(ev.StageMark(stage="false_interruption", detail={
                "paused_ms": end_ms - self._paused_at_ms}))
            self._paused_at_ms = None
            self.playback.resume()
