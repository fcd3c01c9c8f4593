"""Turn taking: from speech start to a committed caller turn, and the reply it asks for.

Per window it reads the voice probability: speech start opens a turn (with prefix padding from
the input history) and its streaming transcription; speech stop starts the final pass at once,
so the transcript is ready when the turn ends; the dual-threshold detector (`turns.py`) ends the
turn, with the "looks complete" signal scored off the loop once per final transcript, after the
final pass has started a held reply (adopted at commit if the final says the same words:
`speculation.py`). Without server VAD the client commits turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import numpy as np

from ..base import events as ev
from ..base.audio import INPUT_RATE_HZ, WINDOW_MS
from ..base.config import TurnPolicy
from ..base.conversation import Item
from ..base.listeners import Ordered
from ..base.protocols import STT, Completeness
from ..stages.eou_pauses import LearnedPauses
from ..stages.playback import Playback
from ..stt import Partial, StreamingTranscriber, words_within
from ..turns import CommitReason, TurnDetector, VadEdge, WordsHeard, voice_end_ms
from .callctl import CallControl
from .core import SessionCore
from .responder import Responder
from .speculation import Speculation, TranscriptSource
from .states import TurnStanding
from .turn import Turn, WordsListener, WordsPhase
from .turn_signal import TurnSignal


class TurnTaking:
    scores_partials = False  # the final pass starts at speech-stop: a partial's score decides nothing

    def __init__(self, core: SessionCore, *, stt: STT, completeness: Completeness, playback: Playback,
                 responder: Responder, control: CallControl,
                 history_since: Callable[..., np.ndarray], now_ms: Callable[[], float]) -> None:
        self.core, self.stt = core, stt
        self.completeness = TurnSignal(core, completeness)
        self.playback, self.responder, self.control = playback, responder, control
        self.history_since, self.now_ms = history_since, now_ms
        self.policy = core.config.turn
        self.detector = TurnDetector(self.policy)
        # the caller's mid-turn pauses, learned over the call (turn.learn_pauses); None: off
        self.pauses: LearnedPauses | None = LearnedPauses.follow(None, self.policy)
        self.turn: Turn | None = None
        self.server_vad = True  # False: the client commits input itself (realtime API)
        self._talk_under_agent: Turn | None = None  # the last turn dropped as a backchannel
        self._finishing: dict[str, Turn] = {}  # committed or cleared, its words not yet decided
        # told of a turn's words as they are recognised (barge-in decides on them)
        self.words: Ordered[WordsListener] = Ordered(WordsPhase)
        self.speculation = Speculation(core, responder)
        self.context: Callable[[], str | None] = lambda: None  # the recogniser's (call/hearing.py)
        self.on_pause: Callable[[str, bool], None] | None = None  # the voice may be stopping (prefill.py)

    def update_options(self, policy: TurnPolicy) -> None:
        """New turn settings (a session.update), at once; an open turn keeps its speech state."""
        self.policy = policy
        self.pauses = LearnedPauses.follow(self.pauses, policy)  # what was learned stays
        self.detector.set_policy(LearnedPauses.policy_for(self.pauses, policy))

    @property
    def caller_speaking(self) -> bool:
        """The caller holds the floor: speaking, or paused in a turn not yet committed (without
        server VAD the open turn is only a buffer the client will commit: unknown)."""
        return self.turn is not None and self.server_vad

    def set_server_vad(self, on: bool) -> None:
        self.server_vad = on
        self.core.floor.pulse()

    def _open(self, turn: Turn) -> None:
        self.turn = turn
        self.core.floor.pulse()

    def _close(self) -> Turn | None:
        turn, self.turn = self.turn, None
        if turn is not None:
            self._finishing[turn.item_id] = turn
        self.detector.reset()
        self.core.floor.pulse()
        return turn

    # --- what barge-in reads and tells (`interruption.CallerTurns`) ------------------------------

    @property
    def open_turn_id(self) -> str | None:
        return None if self.turn is None else self.turn.item_id

    @property
    def caller_in_speech(self) -> bool:
        return self.detector.in_speech

    @property
    def over_agent(self) -> bool:
        """The open turn is talk over the agent's voice."""
        return self.turn is not None and self.turn.over_agent

    def words_so_far(self) -> WordsHeard | None:
        """The open turn's latest words, as a partial; None while it has none."""
        turn = self.turn
        return turn.heard(turn.stt.latest_text, final=False) if turn is not None and turn.stt.latest_text else None

    def mark_loud(self) -> None:
        """The barge-in gate found the open turn loud and voiced: the caller, not echo residue."""
        if self.turn is not None:
            self.turn.loud = True

    # --- input ---------------------------------------------------------------------------------

    def on_frame(self, frame: np.ndarray) -> None:
        turn = self.turn
        if turn is None:
            return
        turn.stt.append(frame)
        if turn.stt.audio.samples * 1000 > self.policy.max_turn_ms * INPUT_RATE_HZ:
            self.core.log(f"a turn reached turn.max_turn_ms ({self.policy.max_turn_ms} ms); committed as it stands", level="warning")
            turn.speech_end_ms = self.now_ms()  # mid-speech: the audio ends now
            self._commit(CommitReason.MAX_LENGTH)

    def on_window(self, _window: np.ndarray, prob: float, end_ms: float) -> None:
        if not self.server_vad:
            self._manual_turn_window(end_ms)
            return
        signal = self.detector.on_window(prob, end_ms)
        if signal is not None and signal.kind is VadEdge.SPEECH_STARTED:
            self._on_speech_started(signal.at_ms)
        elif signal is not None and signal.kind is VadEdge.SPEECH_STOPPED:
            self._on_speech_stopped(signal.at_ms)
        turn = self.turn
        if turn is None:
            return
        if self.detector.in_speech:
            if prob >= self.policy.vad_threshold:  # not in the trailing windows: a pass
                turn.stt.poll_partial()  # started there would hold up the final one
            elif self.detector.trailing_ms == WINDOW_MS and self.on_pause is not None:
                self.on_pause(turn.stt.latest_text, turn.stt.partial_running)
            self._early_pass(turn)
        else:
            self._check_end_of_turn(end_ms)

    def _new_turn(self, start_ms: float, *, over_agent: bool = False) -> Turn:
        # talk under the agent let go ("Wait.": too short to interrupt), more speech within max_silence_ms: one turn
        held, self._talk_under_agent = self._talk_under_agent, None
        joined = None
        if held is not None and held.speech_end_ms is not None and (
                start_ms + self.policy.prefix_padding_ms - held.speech_end_ms
                <= self.policy.max_silence_ms):
            joined = start_ms = min(start_ms, held.audio_start_ms)
        # under the agent's voice, no context: with it "Mm-hmm." was "in a month.", an interruption
        stt = StreamingTranscriber(self.stt, self.core.clock, prompt=None if over_agent else self.context())
        standing = TurnStanding.UNDER_AGENT if over_agent else TurnStanding.CALLER
        turn = Turn(item_id=ev.new_id("item"), audio_start_ms=start_ms, stt=stt, standing=standing,
                    joined_from_ms=joined, voiced_ms=held.voiced_ms if joined is not None and held else 0.0)
        stt.on_partial = lambda p, t=turn: self._on_partial(t, p)
        stt.append(self.history_since(start_ms))  # the padding and the confirmed onset
        if self.pauses is not None and self.server_vad:  # each turn waits as the caller's pauses say
            self.pauses.turn_began(start_ms + self.policy.prefix_padding_ms, over_agent=self.playback.speaking,
                                   replying=self.playback.speaking or self.responder.making is not None,
                                   joined=joined is not None)
            self.detector.set_policy(LearnedPauses.policy_for(self.pauses, self.policy))
        self._open(turn)
        return turn

    def _on_speech_started(self, onset_ms: float) -> None:
        start_ms = max(0.0, onset_ms - self.policy.prefix_padding_ms)
        turn = self.turn
        if turn is None:
            turn = self._new_turn(start_ms, over_agent=self.playback.speaking and self.core.config.bargein.enabled)
        else:  # the caller resumed: the pending final and any speculation are stale
            turn.stt.discard_final()
            self.speculation.drop(turn)
            if self.pauses is not None and turn.speech_end_ms is not None and not turn.over_agent:
                self.pauses.observed_pause(onset_ms - turn.speech_end_ms)  # a pause, not the end
        turn.segment_start_ms = start_ms
        turn.onset_ms = onset_ms
        turn.stt.mark_speech_end(None)
        self.responder.drop_unheard_reply()
        if not turn.over_agent:
            self.announce(turn)

    def announce(self, turn: Turn) -> None:
        """Tell clients speech started. Over the agent, only once it is a real interruption:
        clients stop their playback on this event, and a "mm-hmm" must not do that."""
        if not turn.announced:
            turn.announced = True
            self.core.emit(ev.SpeechStarted(item_id=turn.item_id, audio_start_ms=int(turn.segment_start_ms)))

    def _on_speech_stopped(self, vad_end_ms: float) -> None:
        turn = self.turn
        if turn is None:
            return
        # the silences count from here: where the voice ended (turn.voice_end_db) or, by default, Silero's end
        end_ms = vad_end_ms if turn.over_agent else voice_end_ms(
            self.history_since, turn.audio_start_ms, vad_end_ms, self.policy.voice_end_db)
        self.core.emit(ev.StageMark(stage=ev.Milestone.SPEECH_STOPPED, turn_id=turn.item_id, detail={"vad_end_ms": vad_end_ms, "voice_end_ms": end_ms}))
        turn.speech_end_ms, turn.heard_to_ms = end_ms, vad_end_ms
        self.detector.silence_from(end_ms)
        turn.voiced_ms += max(0.0, end_ms - (turn.onset_ms if turn.onset_ms is not None else end_ms))
        turn.onset_ms = None
        self._mark_speech_end(turn, vad_end_ms)
        if turn.over_agent and not self.playback.speaking:
            turn.outlasts_agent()  # the caller outlasted the agent: a real turn after all
            self.announce(turn)
        if turn.announced:
            self.core.emit(ev.SpeechStopped(item_id=turn.item_id, audio_end_ms=int(end_ms)))
        turn.early_end_ms = None
        self._begin_final(turn)

    def _early_pass(self, turn: Turn) -> None:
        """After `turn.early_pass_ms` of trailing windows, a pass as the final would read the speech
        then, for a speculation only; dropped, with its reply, if the speech goes on."""
        if turn.early_end_ms is not None and self.detector.trailing_ms == 0:
            turn.early_end_ms = None
            turn.stt.discard_final()
            self.speculation.drop(turn)
            turn.stt.mark_speech_end(None)
        elif self.detector.stopping and turn.early_end_ms is None and not turn.over_agent:
            turn.early_end_ms = self.detector.speech_end_so_far_ms
            self._mark_speech_end(turn, turn.early_end_ms)  # as the final pass would read it now
            early = turn.stt.settled_pass(turn.stt.start_early_pass())
            self.core.spawn(self._after_pass(turn, early, TranscriptSource.EARLY))

    def _begin_final(self, turn: Turn) -> None:
        """At speech-stop, not at commit: the final pass is ready when the turn ends, and a
        speculation may start from it, a quick pass or the last partial (bench/sequential.py's
        subclass skips this: the final at the commit)."""
        source = self.core.config.response.speculate_from
        if source == "quick" and turn.stt.quick:  # a sized pass over all the turn: ~0.1 s
            quick = turn.stt.settled_pass(turn.stt.start_quick_pass())
            self.core.spawn(self._after_pass(turn, quick, TranscriptSource.QUICK))
        elif source == "partial":  # (no quick pass: "quick" waits for the final)
            self.speculation.start(turn, turn.stt.latest_text, source=TranscriptSource.PARTIAL)
        final = turn.stt.start_final()  # at speech-stop, not at commit: ready when the turn ends
        self.core.spawn(self._after_final(turn, final))

    def _mark_speech_end(self, turn: Turn, end_ms: float) -> None:  # the final pass reads up to it
        turn.stt.mark_speech_end(int((end_ms - turn.audio_start_ms) * INPUT_RATE_HZ / 1000))

    def interrupted(self, turn_id: str, from_ms: float | None) -> None:
        """The caller really interrupted: the turn is the interruption, starting at `from_ms`; what
        an open turn picked up before that was under the agent's voice (echo residue, breath),
        unless it is earlier talk the turn was joined to. A turn whose words were decided is
        past interrupting."""
        turn = self.turn if self.turn is not None and self.turn.item_id == turn_id else self._finishing.get(turn_id)
        if turn is None:
            return
        if from_ms is not None and turn.joined_from_ms is not None:
            from_ms = min(from_ms, turn.joined_from_ms)
        if from_ms is not None and from_ms > turn.audio_start_ms and turn is self.turn:
            turn.stt.reset()
            turn.stt.append(self.history_since(from_ms))
            turn.audio_start_ms = turn.segment_start_ms = from_ms
            if turn.heard_to_ms is not None and turn.onset_ms is None:
                self._mark_speech_end(turn, turn.heard_to_ms)
        turn.barges_in()
        onset = None if from_ms is None else from_ms + self.policy.prefix_padding_ms  # the first candidate
        if self.pauses is not None and self.pauses.interrupted(onset):  # the caller went on, over the reply
            self.detector.set_policy(LearnedPauses.policy_for(self.pauses, self.policy))
        self.announce(turn)

    # --- transcripts and the end of the turn -----------------------------------------------------

    async def _after_final(self, turn: Turn, final: asyncio.Task[str]) -> None:
        if (text := await turn.stt.settled_final(final)) is None or self.turn is not turn:
            return
        self.core.emit(ev.StageMark(stage=ev.Milestone.FINAL_PASS, turn_id=turn.item_id))
        self._tell_words(turn, text, final=True)
        if self.pauses is not None and text and turn.unspoken(text, self.now_ms()) is None and self.pauses.heard_words():
            self.detector.set_policy(LearnedPauses.policy_for(self.pauses, self.policy))  # it went on
        if self.completeness.shares_llm:  # the held reply would hold the model the score needs
            await self._score(turn, text)
        await self.speculation.confirm(turn, text)  # begun from words the final did not say?
        if self.turn is turn and self.detector.stopping:  # the reply first: only the commit waits
            self.speculation.start(turn, text, source=TranscriptSource.FINAL)  # for the score
        await self._score(turn, text)  # (0.975 of the first audio per call: bench/README.md)
        if self.turn is turn and self.detector.stopping:
            self._check_end_of_turn(self.now_ms())

    async def _after_pass(self, turn: Turn, settled: Awaitable[str | None], source: TranscriptSource) -> None:
        """Speculate from a pass before the final's (the quick one at speech-stop, the early one
        before it), unless it declined, the caller went on or the final came first."""
        text = await settled
        if text is not None and self.turn is turn and self.detector.stopping and turn.stt.peek_final() is None:
            self.speculation.start(turn, text, source=source)

    def _on_partial(self, turn: Turn, partial: Partial) -> None:
        if turn is not self.turn:  # closed: a delta after its final would be shown after it
            return
        self.core.emit(ev.TranscriptionDelta(item_id=turn.item_id, delta=partial.delta, stable=partial.stable,
                                             tentative=partial.tentative))
        self._tell_words(turn, turn.stt.latest_text, final=False)
        if self.scores_partials:  # (Smart Turn's veto would run its pass on every one)
            self.core.spawn(self._score(turn, turn.stt.latest_text))

    def _tell_words(self, turn: Turn, text: str, *, final: bool) -> None:
        if self.words:
            heard = turn.heard(text, final=final)
            for listener in self.words:
                listener(heard)

    async def _score(self, turn: Turn, text: str) -> None:
        """Completeness of a transcript, computed once per distinct text, off the loop (0 for
        made-up words: they are no finished sentence)."""
        if text not in turn.texts_checked:
            turn.texts_checked[text] = (0.0 if turn.unspoken(text, self.now_ms()) is not None
                                        else await self.completeness.probability(turn, text))

    def _check_end_of_turn(self, now_ms: float) -> None:
        if (turn := self.turn) is None:
            return
        text = turn.stt.peek_final()
        if text is None and not turn.stt.final_running:
            text = turn.stt.latest_text
        # while the final pass runs, the last partial may lack the last words ("Oh, my fellow." for "Oh my
        # fellow America!" looks finished, split jfk.wav in the browser): the early end waits for the final
        complete = turn.texts_checked.get(text) if text is not None else None
        if (reason := self.detector.end_of_turn(now_ms, complete)) is not None:
            self._commit(reason)

    def _commit(self, reason: CommitReason) -> None:
        turn = self._close()
        assert turn is not None
        turn.commit_reason = reason
        if turn.speech_end_ms is None:
            turn.speech_end_ms = self.now_ms()
        if not turn.under_agent:  # talk under the agent is no turn
            self._announce_commit(turn)
            if self.pauses is not None:
                self.pauses.committed(turn.speech_end_ms, reason)
        self.core.spawn(self._finish(turn))

    def _announce_commit(self, turn: Turn) -> None:
        turn.commit_announced = True
        conversation = self.core.conversation
        self.core.emit(ev.InputCommitted(
            item_id=turn.item_id, audio_start_ms=int(turn.audio_start_ms),
            audio_end_ms=int(turn.speech_end_ms or 0), reason=turn.commit_reason or CommitReason.CLIENT,
            previous_item_id=conversation.items[-1].id if conversation.items else None))

    async def _finish(self, turn: Turn) -> None:
        try:
            await self._finish_turn(turn)
        finally:
            self._finishing.pop(turn.item_id, None)

    async def _finish_turn(self, turn: Turn) -> None:
        text = (await turn.stt.final()).strip()
        if (doubt := turn.unspoken(text, self.now_ms())) is not None:  # "in a minute." for a "mm"
            self.core.log(f"the turn's transcript {text!r} is not taken as said: {doubt}")
            text = ""
        self._tell_words(turn, text, final=True)  # a barge-in still listening decides now
        if turn.barged_in and not turn.commit_announced:
            self._announce_commit(turn)
        stats = turn.stt.stats
        if turn.under_agent:
            self.speculation.drop(turn)
            # the caller's own voice, kept a moment: more speech may make it a turn. Not words
            # the agent itself just said: that is its echo past the guard ("Thanks for calling."),
            # which joined to the interruption split jfk.wav in two on AVX2 kernels
            if turn.loud and not words_within(text, self.responder.recent_agent_text()):
                self._talk_under_agent = turn
            self.core.log(f"backchannel while the agent spoke, not a turn: {text!r}")
            return
        self.core.emit(ev.TranscriptionCompleted(item_id=turn.item_id, transcript=text))
        self.core.emit(ev.StageMark(stage=ev.Milestone.STT_FINAL, turn_id=turn.item_id, detail={
            "final_compute_ms": round(stats.final_compute_s * 1000, 1), "partial_passes": stats.passes,
            "partials_skipped": stats.skipped, "partial_cadence_hz": round(stats.cadence_hz, 2),
            "finals_discarded": stats.finals_discarded}))
        if not text:
            self.speculation.drop(turn)
            self.core.log("turn had no words; nothing to answer")
            return
        farewell = self.control.on_caller_turn(text)  # "okay, bye!" after our goodbye: no reply
        self.core.add_item(Item(type="message", role="user", text=text, id=turn.item_id))
        if farewell or not self.responder.auto_respond:  # or the client asks for replies itself
            return
        await self.speculation.respond(turn, text)

    # --- turns the client commits (no server VAD) ------------------------------------------------

    def _manual_turn_window(self, end_ms: float) -> None:
        """Without server VAD, all input since the last commit belongs to one manual turn."""
        if self.turn is None:
            self._new_turn(max(0.0, end_ms - WINDOW_MS))

    def commit_now(self) -> str | None:
        """End the open turn now (input_audio_buffer.commit); its item id, or None if none."""
        if (turn := self.turn) is not None:
            self._commit(CommitReason.CLIENT)
        return None if turn is None else turn.item_id

    def clear_now(self) -> None:
        """Drop the open turn's audio and any speculation on it (input_audio_buffer.clear)."""
        if (turn := self.turn) is not None:
            self.speculation.drop(turn)
            self._close()
            # the talk is dropped, never a turn: a barge-in still hearing it hears no words and
            # the agent goes on (a text-only client sends no more audio to decide it by)
            self._tell_words(turn, "", final=True)
            self._finishing.pop(turn.item_id, None)
        self.core.emit(ev.InputCleared())

    # --- the end of the call ---------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop the open turn's transcription passes."""
        if self.turn is not None:
            await self.turn.stt.aclose()

    def release(self) -> None:
        """After `aclose`: let go of the turns (and their audio) and of who heard their words."""
        self.words.clear()
        self.turn = None
        self._finishing.clear()
