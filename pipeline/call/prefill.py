"""The reply's prompt evaluated while the caller still speaks (`response.prefill`).

Each partial transcript is the caller's words so far: the prompt a reply to them would read (the
instructions, the conversation, those words, the assistant's header) is handed to the model to
evaluate then, on the model's thread. The reply begun at speech-stop shares all of it up to where
the final pass's words differ, and evaluates only the rest: none when they are the last
partial's. Only while the caller's voice goes on: once it may be stopping (the VAD's trailing
windows), the cores are the final pass's, so a prefill neither starts nor takes another step then
(`LlamaLLM.prefill`: steps of 8 tokens), nor once a request wants the model; what it evaluated
stays held. Not while a reply runs or the agent speaks (the turn is then over the agent's voice,
perhaps a backchannel), and one at a time.

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
from ..base.protocols import LLM, Messages, PrefillLLM
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
        self.last_text: str | None = None  # the words of the last prefill
        self._again = False  # the conversation to evaluate ahead again once the running prefill ends
        self.closed = False
        self._ahead_of: Messages | None = None  # the conversation last evaluated ahead
        if self.llm is not None:
            turns.words.add(self._on_words, WordsPhase.PREFILL)
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

    def _on_words(self, heard: WordsHeard) -> None:
        text = heard.text.strip()
        responder = self.responder
        if (heard.final or not text or text == self.last_text or self.running
                or not self.core.config.response.prefill or not self.core.config.response.preemptive
                or not responder.auto_respond or responder.active is not None or self.playback.speaking
                or not self._voice_goes_on()):
            return
        try:  # the messages a held reply to these words reads (`Responder.new`)
            messages = responder.messages(extra_user=text, mark_fit=False)
        except ContextOverflowError:
            return  # the reply says so itself
        self.running = True
        self.core.spawn(self._run(messages, text))

    def _voice_goes_on(self) -> bool:
        """The caller is speaking, not in the windows after speech that may end it (read from
        the model's thread too: two attributes, no lock needed)."""
        detector = self.turns.detector
        return detector.in_speech and detector.trailing_ms == 0

    async def _run(self, messages: Messages, text: str | None) -> None:
        """Evaluate `messages` ahead: up to the caller's words `text`, or (None) up to where they go."""
        assert self.llm is not None
        llm = self.llm
        try:
            await self.core.clock.run_in_thread(
                lambda: llm.prefill(messages, go_on=self._voice_goes_on) if text is not None
                else llm.prefill(messages, upto_words=True, go_on=self._still_ahead))
        finally:
            self.running = False
        if text is not None:
            self.last_text = text
        if self._again:
            self._again = False
            self._ahead()

