"""The reply's prompt evaluated before the reply is asked for: the caller's words, and the
conversation up to where they go.

`response.prefill_pause` (on): in the caller's pause, the VAD's trailing windows before
speech-stop (~130 ms in which the cores wait for it), the last partial's words are evaluated as
the reply's prompt, through the words and not the template's end after them (the final pass may
hear more), in steps of 4 tokens (`LlamaLLM.prefill(through_words=True)`). It starts at the first
trailing window, or when a partial pass still running then lands; it begins no step once the
fourth of the five trailing windows is in (a step then would run into speech-stop, the final
pass's cores), nor once the voice goes on, a reply runs or the agent speaks, and what it
evaluated stays held. The reply begun from the final pass then evaluates only what the partial
lacked and the assistant's header (at the wire 8 tokens of 51 against 14: bench/README.md,
"Prefill in the pause").

`response.prefill` (off): each partial's words while the caller's voice goes on, the whole
prompt; on 2 cores it slowed the partial passes and the final pass.

Neither while a reply runs or the agent speaks (the turn is then over the agent's voice, perhaps
a backchannel), nor once a request wants the model; one at a time.

With `response.prefill_ahead` (and `response.preemptive`) on, the conversation as it stands is
evaluated up to where the caller's next words go (the instructions and tools, the last reply's
end, the caller's header) when the call begins, when a client changes its instructions or tools,
and once a reply has been heard to its end: the next turn's request then evaluates only its own
words and the assistant's header (bench/README.md, "The conversation evaluated ahead"). Those
tokens are the next request's whatever the caller says, so this one waits for a busy model and
runs on while the caller speaks and pauses (long instructions may still be evaluating at
speech-stop: then beside the final pass); it stops once a request wants the model, the
conversation changes again, or the call ends. Calls that share one model share its one cache:
each evaluates its own conversation ahead again.
"""

from __future__ import annotations

from ..base import events as ev
from ..base.audio import WINDOW_MS
from ..base.protocols import LLM, Messages, PrefillLLM, takes_keyword
from ..stages.playback import Playback
from ..turns import WordsHeard
from .context import ContextOverflowError
from .core import SessionCore
from .responder import Responder
from .turn import WordsPhase
from .turn_taking import TurnTaking


class Prefill:
    def __init__(self, core: SessionCore, *, llm: LLM, responder: Responder, playback: Playback,
                 turns: TurnTaking) -> None:
        self.core = core
        self.llm = llm if isinstance(llm, PrefillLLM) else None
        self.responder = responder
        self.playback = playback
        self.turns = turns
        self.running = False
        self._words_of: Messages | None = None  # the last prompt of the caller's words evaluated
        self._again = False  # the conversation to evaluate ahead again once the running prefill ends
        self.closed = False
        self._ahead_of: Messages | None = None  # the conversation last evaluated ahead
        # the words in the caller's pause need `through_words` (a plugin's prefill may predate it)
        self._through = self.llm is not None and takes_keyword(self.llm.prefill, "through_words")
        if self.llm is not None:
            turns.words.add(self._on_words, WordsPhase.PREFILL)
            turns.on_pause = self._on_pause
            core.listeners.add(self._on_event, ev.EventPhase.SESSION)

    def _on_event(self, event: ev.Event) -> None:
        """The call begun, its instructions or tools changed, a reply heard to its end."""
        if isinstance(event, ev.SessionCreated | ev.SessionUpdated) or (
                isinstance(event, ev.StageMark) and event.stage == ev.Milestone.HEARD_IN_FULL):
            self._ahead()

    def _ahead(self) -> None:
        """The conversation as it stands evaluated up to where the caller's next words go."""
        responder = self.responder
        response = self.core.config.response
        if (self.closed or not response.prefill_ahead or not response.preemptive or not responder.auto_respond
                or responder.active is not None):
            return
        if self.running:  # the prefill now running stops, and this follows it: what it read has changed
            self._again = True
            return
        try:
            messages = responder.messages(extra_user="", mark_fit=False)
        except ContextOverflowError:
            return
        if messages == self._ahead_of:  # a session.update that changed nothing it reads
            return
        self._ahead_of = messages
        self.running = True
        self.core.spawn(self._run(messages, None))

    def _still_ahead(self) -> bool:
        """The conversation being evaluated ahead is still the call's (read from the model's thread)."""
        return not self._again and not self.closed

    def close(self) -> None:
        """The call is over: a prefill running stops at its next step."""
        self.closed = True

    def _on_pause(self, text: str, passing: bool) -> None:
        """The caller's voice may be stopping (the VAD's first trailing window): the last
        partial's words, unless a partial pass is still running (its words come in the pause)."""
        if self._in_pause_on() and not passing:
            self._prefill(text, pause=True)

    def _in_pause_on(self) -> bool:
        return self._through and self.core.config.response.prefill_pause

    def _pausing(self) -> bool:
        """In the trailing windows, before the one ahead of speech-stop (from the fourth of five
        on, no step begins: a 4-token step would run into the final pass's cores; the final pass
        came 4-11 ms sooner, the first audio 11-12 ms per call: bench/README.md, "Prefill in the
        pause"). Read from the model's thread too."""
        detector = self.turns.detector
        return detector.in_speech and 0 < detector.trailing_ms < (detector.stop_windows - 1) * WINDOW_MS

    def _pause_goes_on(self) -> bool:
        return self._pausing() and self._free()

    def _free(self) -> bool:
        """No reply running, the agent silent, the call going on (read from the model's thread too)."""
        return self.responder.active is None and not self.playback.speaking and not self.closed

    def _on_words(self, heard: WordsHeard) -> None:
        if heard.final:
            return
        if self.core.config.response.prefill and self._voice_goes_on():
            self._prefill(heard.text, pause=False)
        elif self._in_pause_on() and self._pausing():  # a partial landed in the pause
            self._prefill(heard.text, pause=True)

    def _prefill(self, text: str, *, pause: bool) -> None:
        text = text.strip()
        responder = self.responder
        if (not text or self.running or not self.core.config.response.preemptive or not responder.auto_respond
                or not self._free()):
            return
        try:  # the messages a held reply to these words reads (`Responder.new`)
            messages = responder.messages(extra_user=text, mark_fit=False)
        except ContextOverflowError:
            return  # the reply says so itself
        if messages == self._words_of:  # evaluated already (a partial that says the last one's words)
            return
        self.running = True
        self.core.spawn(self._run(messages, text, pause=pause))

    def _voice_goes_on(self) -> bool:
        """The caller is speaking, not in the windows after speech that may end it (read from
        the model's thread too: two attributes, no lock needed)."""
        detector = self.turns.detector
        return detector.in_speech and detector.trailing_ms == 0

    async def _run(self, messages: Messages, text: str | None, *, pause: bool = False) -> None:
        """Evaluate `messages` ahead: the caller's words `text` while they speak (the whole prompt)
        or in their pause (through the words), or (None) up to where the words go."""
        assert self.llm is not None
        llm = self.llm
        try:
            evaluated = await self.core.clock.run_in_thread(
                lambda: llm.prefill(messages, upto_words=True, go_on=self._still_ahead) if text is None
                else llm.prefill(messages, through_words=True, go_on=self._pause_goes_on) if pause
                else llm.prefill(messages, go_on=self._voice_goes_on))
        finally:
            self.running = False
        if text is not None and evaluated:  # (0: busy or stopped, or held already: may be asked again)
            self._words_of = messages
        if self._again:
            self._again = False
            self._ahead()
