"""Speculation (preemptive generation): a held reply begun at speech-stop, adopted at commit.

The reply starts from the quick pass over the whole turn, the last partial, or the final pass
(`response.speculate_from`), is held (nothing reaches the caller), and at commit is adopted when
the final transcript says the same words, or dropped and started again from the final. One
`x.stage speculation` mark per speculation says which source it came from and how it ended:
the benchmark's adoption rate reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ..base import events as ev
from ..stt import same_words
from .core import SessionCore
from .responder import Responder
from .response import Response
from .states import ResponseStatus


class TranscriptSource(StrEnum):
    """Which transcript a speculation answers (`response.speculate_from` names one)."""

    QUICK = "quick"  # the quick pass over the whole turn at speech-stop
    EARLY = "early"  # a pass as the final would read the speech before speech-stop (turn.early_pass_ms)
    PARTIAL = "partial"  # the last partial transcript
    FINAL = "final"  # the final pass


@dataclass
class HeldReply:
    """A turn's held reply, if any, and which transcript it answers: written by `Speculation`
    alone (a turn carries one; turn taking never writes it)."""

    response: Response | None = None
    source: TranscriptSource | None = None  # the transcript it answers


class Speculated(Protocol):
    """What speculation reads of a turn (`turn.Turn`), and the held reply it keeps there."""

    @property
    def item_id(self) -> str: ...

    @property
    def held(self) -> HeldReply: ...

    @property
    def over_agent(self) -> bool: ...


class Speculation:
    def __init__(self, core: SessionCore, responder: Responder) -> None:
        self.core = core
        self.responder = responder
        self.used = 0  # adopted at commit
        self.discarded = 0  # dropped: the final said other words, or the caller went on

    def start(self, turn: Speculated, text: str, *, source: TranscriptSource | str) -> None:
        """Generate (held) while the turn may still be committed. `source` says which
        transcript `text` is (a `TranscriptSource` or its name), for the adoption rate."""
        origin = TranscriptSource(source)  # a misspelt source fails here, not in the readout
        response = self.core.config.response
        if (not response.preemptive or not self.responder.auto_respond
                or not text.strip() or self.responder.active is not None
                or turn.held.response is not None or turn.over_agent):
            return
        held = turn.held
        held.response = self.responder.new(turn.item_id, held=True, transcript=text)
        held.source = origin
        self.responder.begin(held.response)

    def drop(self, turn: Speculated) -> None:
        held = turn.held
        if held.response is not None:
            self._ended(turn, held.response, "dropped")
            held.response.handle.cancel("discarded")
            held.response = None
            self.discarded += 1

    async def confirm(self, turn: Speculated, final: str) -> None:
        """The final pass is in before the commit: a speculation begun from other words (a
        partial, the quick pass) is dropped, and has stopped when this returns."""
        spec = turn.held.response
        if spec is not None and spec.asked.transcript is not None and not same_words(spec.asked.transcript, final):
            self.drop(turn)
            while self.responder.active is spec.handle:  # one response at a time: let it stop first
                await self.core.floor.wait()

    async def respond(self, turn: Speculated, text: str) -> None:
        """The turn is committed with `text`: adopt the held reply if it answers these words,
        else drop it and reply afresh."""
        spec, turn.held.response = turn.held.response, None
        if self.responder.ctx.tools.takes_turn(turn.item_id, text):  # a yes to a read-back
            if spec is not None:
                self._ended(turn, spec, "dropped")
                spec.handle.cancel("discarded")
                self.discarded += 1
                await spec.handle.wait()
            return
        if (spec is not None and spec.asked.transcript is not None and same_words(spec.asked.transcript, text)
                and spec.status is ResponseStatus.IN_PROGRESS):
            self.used += 1
            self._ended(turn, spec, "adopted")
            spec.adopt()
            await spec.handle.wait()
            return
        if spec is not None:
            self._ended(turn, spec, "dropped")
            spec.handle.cancel("discarded")
            self.discarded += 1
            await spec.handle.wait()
        await self.responder.create_response(turn_id=turn.item_id)

    def _ended(self, turn: Speculated, spec: Response, outcome: str) -> None:
        self.core.emit(ev.StageMark(stage=ev.Milestone.SPECULATION, response_id=spec.id, turn_id=turn.item_id,
                                    detail={"source": turn.held.source, "outcome": outcome,
                                            "transcript": spec.asked.transcript}))
