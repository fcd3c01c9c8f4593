"""Barge-in in a call: what the gate's decisions (`pipeline/bargein.py`) set off.

While the gate holds a candidate, playback pauses; when it fires, the response is stopped in all
four places (playback, synthesis, generation, stream state: `ReplyHandle.cancel`) and the open turn
becomes the interruption. Turn taking is read and told through `CallerTurns` alone: barge-in knows
a turn by its id, hears its words as `WordsHeard`, and never writes a turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from ..bargein import BargeInGate, WordsJudge
from ..base import events as ev
from ..base.config import BargeInPolicy
from ..base.listeners import Ordered
from ..stages.playback import Playback
from ..turns import WordsHeard
from .core import SessionCore
from .responder import Responder
from .states import BARGE_IN_MOVES, BargeInPhase
from .turn import WordsListener, WordsPhase


class CallerTurns(Protocol):
    """What barge-in reads of turn taking (`TurnTaking`), and the two things it tells it."""

    @property
    def words(self) -> Ordered[WordsListener]:
        """Told of a turn's words as they are recognised."""

    @property
    def open_turn_id(self) -> str | None: ...

    @property
    def caller_in_speech(self) -> bool: ...

    @property
    def over_agent(self) -> bool:
        """The open turn is talk over the agent's voice (it began while the agent spoke)."""

    def words_so_far(self) -> WordsHeard | None:
        """The open turn's latest words, as a partial; None while it has none."""

    def mark_loud(self) -> None:
        """The gate found the open turn loud and voiced: the caller, not the agent's echo."""

    def interrupted(self, turn_id: str, from_ms: float | None) -> None:
        """The caller really interrupted: the turn is the interruption, from `from_ms` on."""


class BargeIn:
    """Reads every input window while the agent's audio sounds.

    A candidate pauses playback; one that fades resumes it. When the gate fires, playback stays
    paused and the interrupting words are heard as they are recognised: only backchannels
    ("mm-hmm", "yeah") resume where playback stopped; any other word cancels the response in all
    four places, and so does a caller still talking `decide_within_ms` after the fire. The
    interruption keeps the caller's words from the first gate candidate of the turn on ("Wait,
    is the pool open?" keeps its "Wait").

    Its phase (`BargeInPhase`: listening, paused on a candidate, hearing the words) is one value
    carrying what that phase needs, moved only through `BARGE_IN_MOVES`. The gate keeps its own
    state (holding a candidate; fired, once, until re-armed by `gate.reset`).
    """

    def __init__(self, core: SessionCore, *, playback: Playback, turns: CallerTurns,
                 responder: Responder) -> None:
        self.core = core
        self.playback = playback
        self.turns = turns
        self.responder = responder
        self.policy = core.config.bargein
        self.prefix_padding_ms = core.config.turn.prefix_padding_ms
        self.gate = BargeInGate(self.policy)
        self._state: _Listening | _Paused | _Hearing = _LISTENING
        self._first_candidate_ms: float | None = None  # this turn's earliest gate candidate
        self._judge = WordsJudge(self.policy)
        self._window_s = core.clock.now()  # the session clock at the last input window
        turns.words.add(self._on_words, WordsPhase.BARGE_IN)

    def update_options(self, policy: BargeInPolicy, *, prefix_padding_ms: int) -> None:
        """New settings (a session.update), in effect from the next window."""
        self._judge.update_options(policy)
        self.policy = self.gate.policy = policy
        self.prefix_padding_ms = prefix_padding_ms

    def release(self) -> None:
        """The call is over: let go of the turn a pause was judging."""
        self._state = _LISTENING

    @property
    def phase(self) -> BargeInPhase:
        return self._state.phase

    def _to(self, state: _Listening | _Paused | _Hearing) -> None:
        BARGE_IN_MOVES(self._state.phase, state.phase)
        self._state = state
        if not isinstance(state, _Listening):
            self.core.spawn(self._when_input_stops(state))

    async def _when_input_stops(self, state: _Paused | _Hearing) -> None:
        """A pause is decided by the input windows that follow; a client that stops sending
        audio (a realtime client after one blip, a muted microphone) sends none, and the reply
        would stay paused for good. Input that stops counts as silence, over the same spans as
        in audio time: a candidate resumes after `resume_after_false_ms`, a fired gate whose
        words never come stops the reply after twice `decide_within_ms`."""
        clock = self.core.clock
        wait_ms = (self.policy.resume_after_false_ms if isinstance(state, _Paused)
                   else 2 * self.policy.decide_within_ms)
        while self._state is state:
            due_s = self._window_s + wait_ms / 1000
            if clock.now() < due_s:
                await clock.sleep_until(due_s)
                continue
            if isinstance(state, _Hearing):
                now_ms = state.fire_ms + (clock.now() - state.fired_s) * 1000
                self._interrupt(state.turn_id, now_ms, fire_ms=state.fire_ms, why="no_input")
            else:
                self.core.emit(ev.StageMark(stage=ev.Milestone.FALSE_INTERRUPTION, detail={
                    "paused_ms": (clock.now() - self._window_s) * 1000, "why": "no_input"}))
                self.gate.reset()
                self._to(_LISTENING)
                self.playback.resume()
            return

    def on_window(self, window: np.ndarray, prob: float, end_ms: float) -> None:
        self._window_s = self.core.clock.now()
        policy = self.policy
        if isinstance(self._state, _Hearing):
            self._keep_hearing(self._state, end_ms)
            return
        turn_id = self.turns.open_turn_id
        if not (policy.enabled and self.playback.speaking):
            self.gate.reset()
            if self._state is not _LISTENING:  # every window while the agent is quiet: no check
                self._to(_LISTENING)
                # the reply ended under the pause (its last frames were already out): the
                # pause must not outlive it, or the next reply waits behind it for good
                self.playback.resume()
            self._first_candidate_ms = None if turn_id is None else self._first_candidate_ms
            return
        fired = self.gate.window(window, prob, end_ms)
        if self.gate.window_start_ms is not None:
            self.turns.mark_loud()  # a candidate: the caller, not residue of the agent's echo
        if self.gate.window_start_ms is not None and self._first_candidate_ms is None:
            self._first_candidate_ms = self.gate.window_start_ms
        elif self.gate.window_start_ms is None and turn_id is None:
            self._first_candidate_ms = None
        if not fired:
            self._judge_candidate(end_ms)
        elif policy.hear_words and turn_id is not None:
            self._start_hearing(turn_id, end_ms, fired=True)
        else:
            self._interrupt(turn_id, end_ms, fire_ms=end_ms, why="gate")

    # --- after the gate fired --------------------------------------------------------------------

    def _start_hearing(self, turn_id: str, fire_ms: float, *, fired: bool) -> None:
        """Keep playback paused until the words decide. `fired`: the gate fired; else a short
        candidate ("Wait.") ended before the hold and its turn is still open."""
        paused = self._state
        paused_from_ms = paused.at_ms if isinstance(paused, _Paused) else fire_ms
        if not isinstance(paused, _Paused):
            self.playback.pause()
        self._to(_Hearing(turn_id=turn_id, fire_ms=fire_ms, paused_from_ms=paused_from_ms,
                          fired_s=self.core.clock.now()))
        self.core.emit(ev.StageMark(stage=ev.Milestone.BARGE_IN_GATE if fired else ev.Milestone.BARGE_IN_LISTEN, detail={
            "fire_ms": fire_ms, "window_start_ms": self._first_candidate_ms}))
        if (words := self.turns.words_so_far()) is not None:  # a partial may already have them
            self._on_words(words)

    def _keep_hearing(self, hearing: _Hearing, end_ms: float) -> None:
        if not self.playback.speaking:  # the agent stopped on its own: the caller has the floor
            self._to(_LISTENING)
            self.playback.resume()
            return
        waited_ms = end_ms - hearing.fire_ms
        limit_ms = self.policy.decide_within_ms
        if (self.turns.open_turn_id == hearing.turn_id and self.turns.caller_in_speech
                and waited_ms >= limit_ms):
            self._interrupt(hearing.turn_id, end_ms, fire_ms=hearing.fire_ms, why="still_talking")
        elif waited_ms >= 2 * limit_ms:  # the words never came back (a slow machine): stop
            self._interrupt(hearing.turn_id, end_ms, fire_ms=hearing.fire_ms, why="undecided")

    def _on_words(self, words: WordsHeard) -> None:
        hearing = self._state
        if isinstance(hearing, _Paused) and words.final and words.turn_id != self.turns.open_turn_id:
            self._to(_LISTENING)  # the turn ended while a candidate was judged: nothing to wait for
            self.playback.resume()
            return
        if not isinstance(hearing, _Hearing) or words.turn_id != hearing.turn_id:
            return
        now_ms = hearing.fire_ms + (self.core.clock.now() - hearing.fired_s) * 1000
        verdict = self._judge.verdict(words, now_ms)
        if verdict == "unsure" and not words.final:
            return  # words Whisper doubts decide nothing; talk that goes on still does
        if verdict == "words":
            self._interrupt(words.turn_id, now_ms, fire_ms=hearing.fire_ms, why="words", heard=words.text)
        elif words.final:  # only backchannels, or no words at all: the agent goes on where it stopped
            self._to(_LISTENING)
            # re-armed at the verdict, not when the agent stops: the caller who goes on talking
            # ("Okay, and how long does that take?") fires it again and is heard out
            self.gate.reset()
            self.core.emit(ev.StageMark(stage=ev.Milestone.FALSE_INTERRUPTION, detail={
                "paused_ms": now_ms - hearing.paused_from_ms, "fire_ms": hearing.fire_ms,
                "decision_ms": now_ms - hearing.fire_ms, "heard": words.text, "verdict": verdict}))
            self.core.log(f"backchannel over the agent, playback resumed: {words.text!r}")
            self.playback.resume()

    def _interrupt(self, turn_id: str | None, now_ms: float, *, fire_ms: float, why: str,
                   heard: str = "") -> None:
        """The caller talks over the agent: stop whatever is sounding and what is being made."""
        self._to(_LISTENING)
        first = self._first_candidate_ms
        if turn_id is not None:  # from the first candidate on, with padding: no first word is lost
            self.turns.interrupted(turn_id, None if first is None else max(0.0, first - self.prefix_padding_ms))
        target = self.responder.barge_in_target()
        self.core.emit(ev.StageMark(stage=ev.Milestone.BARGE_IN, response_id=target.id if target else None, detail={
            "fire_ms": fire_ms, "decision_ms": now_ms - fire_ms, "why": why, "heard": heard,
            "window_start_ms": first}))
        self.responder.interrupt()

    # --- before the gate fires ---------------------------------------------------------------

    def _judge_candidate(self, end_ms: float) -> None:
        """Pause while a possible interruption is judged; resume where it stopped if it was not one.

        A door slam or a breath costs the caller a pause of its own length, never the reply.
        """
        policy = self.policy
        paused = self._state
        if self.gate.candidate and policy.pause_on_candidate and not isinstance(paused, _Paused):
            self._to(_Paused(at_ms=end_ms))
            self.playback.pause()
            # when the agent went quiet, for a benchmark at the wire (bench/bargein_wire.py)
            self.core.emit(ev.StageMark(stage=ev.Milestone.BARGE_IN_PAUSE, detail={"at_ms": end_ms}))
        elif isinstance(paused, _Paused) and (
                not self.gate.candidate or end_ms - paused.at_ms >= policy.resume_after_false_ms):
            turn_id = self.turns.open_turn_id
            # too short for the gate: its words decide. Not with speakers (echo_guard): there a
            # short sound is mostly the agent's own echo left by the filter, and each would hold
            # the agent silent for a transcription pass
            if (policy.hear_words and policy.hear_short_words and not policy.echo_guard
                    and not self.gate.candidate and turn_id is not None and self.turns.over_agent):
                self._start_hearing(turn_id, end_ms, fired=False)
                return
            self.core.emit(ev.StageMark(stage=ev.Milestone.FALSE_INTERRUPTION, detail={
                "paused_ms": end_ms - paused.at_ms}))
            self._to(_LISTENING)
            self.playback.resume()


# --- the phases, each with what it needs --------------------------------------------------------

@dataclass(frozen=True)
class _Listening:
    phase: ClassVar[BargeInPhase] = BargeInPhase.LISTENING


_LISTENING = _Listening()


@dataclass(frozen=True)
class _Paused:
    phase: ClassVar[BargeInPhase] = BargeInPhase.PAUSED
    at_ms: float  # playback held on a candidate since then


@dataclass(frozen=True)
class _Hearing:
    phase: ClassVar[BargeInPhase] = BargeInPhase.HEARING
    turn_id: str
    fire_ms: float  # input-audio time the gate fired
    paused_from_ms: float  # when playback paused (the candidate's start, at the latest the fire)
    fired_s: float  # the session clock then
