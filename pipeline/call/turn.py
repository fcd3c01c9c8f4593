"""One caller turn, and how its words are told to those who decide on them.

A `Turn` is written by turn taking (`turn_taking.py`) alone: barge-in knows a turn by its id and
hears its words as `WordsHeard` (`pipeline/turns.py`) through `TurnTaking.words`; speculation
keeps its held reply in the turn's `HeldReply`, an object of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from ..stages.backchannel import unspoken
from ..stt import StreamingTranscriber
from ..turns import CommitReason, WordsHeard, speech_heard_ms
from .speculation import HeldReply
from .states import TURN_MOVES, TurnStanding


class WordsPhase(IntEnum):
    """Who hears a turn's words, in order (`TurnTaking.words`)."""

    BARGE_IN = 0  # do the words over the agent interrupt it?
    PREFILL = 1  # the caller's words so far, the prompt of the reply to them (`prefill.py`)


WordsListener = Callable[[WordsHeard], None]


@dataclass
class Turn:
    """One caller turn, from the first speech onset to commit."""

    item_id: str
    audio_start_ms: float
    stt: StreamingTranscriber
    speech_end_ms: float | None = None  # where the silence counts from (turn.voice_end_db)
    # Silero's end: the final pass reads to it and SPEECH_PAD_MS, as its window tables were measured
    # (from the voice's end, ~100 ms sooner, tiny.en wrote "reef and" for "refund" in the default call)
    heard_to_ms: float | None = None
    standing: TurnStanding = TurnStanding.CALLER  # over the agent's voice? an interruption?
    announced: bool = False  # speech_started sent; talk over the agent waits for the gate
    segment_start_ms: float = 0.0  # onset of the latest speech segment, with prefix padding
    held: HeldReply = field(default_factory=HeldReply)  # speculation's, not turn taking's
    commit_reason: CommitReason | None = None
    commit_announced: bool = False  # input_audio_buffer.committed sent
    joined_from_ms: float | None = None  # starts with earlier talk under the agent ("Wait.")
    loud: bool = False  # the barge-in gate saw it loud and voiced (not the agent's echo residue)
    voiced_ms: float = 0.0  # speech the VAD heard in finished segments; the open one's onset:
    onset_ms: float | None = None
    texts_checked: dict[str, float] = field(default_factory=dict)
    early_end_ms: float | None = None  # the VAD end an early pass began at (turn.early_pass_ms)

    @property
    def over_agent(self) -> bool:
        """Speech over the agent's voice (it began while the agent spoke, which has not been
        seen quiet at a speech stop since)."""
        return self.standing in (TurnStanding.UNDER_AGENT, TurnStanding.INTERRUPTING)

    @property
    def barged_in(self) -> bool:
        return self.standing in (TurnStanding.INTERRUPTING, TurnStanding.INTERRUPTION)

    @property
    def under_agent(self) -> bool:
        """Talk under the agent that did not interrupt it: no turn (a backchannel, echo)."""
        return self.standing is TurnStanding.UNDER_AGENT

    def unspoken(self, text: str, now_ms: float) -> str | None:
        """Why `text` may not be words the caller said, or None (`backchannel.unspoken`)."""
        voiced = speech_heard_ms(self.voiced_ms, self.onset_ms, now_ms)  # None: no VAD (manual turns)
        return unspoken(text, self.stt.confidences.get(text.strip()), voiced)

    def heard(self, text: str, *, final: bool) -> WordsHeard:
        """`text` as its listeners are told it, with what says whether it was spoken."""
        key = text.strip()
        return WordsHeard(turn_id=self.item_id, text=text, final=final, logprob=self.stt.logprobs.get(key, 0.0),
                          confidence=self.stt.confidences.get(key), done_ms=self.voiced_ms, onset_ms=self.onset_ms)

    def barges_in(self) -> None:
        """The barge-in gate made it an interruption."""
        self.standing = TURN_MOVES.after("barges_in", self.standing)

    def outlasts_agent(self) -> None:
        """Its speech stopped after the agent's voice had: a turn after all, if it was not one."""
        self.standing = TURN_MOVES.after("outlasts_agent", self.standing)
