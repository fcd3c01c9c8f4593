"""The naive baseline every first-audio ratio is taken against: nothing overlaps.

The final transcription pass starts only once the turn is committed (partials still run, for the
completeness signal), the whole reply is generated, and only then synthesized, in one piece. The
pipeline itself has no such mode: the baseline is a `Session` whose turn taking and spoken output
are replaced, run through the same `run_call` as every other measurement (bench/calls.py).
"""

from __future__ import annotations

from pipeline.call.response import Response
from pipeline.call.response_modes import ResponseModes, Voice
from pipeline.call.session import Session
from pipeline.call.turn_taking import Turn, TurnTaking

# what the baseline's config must also say: no speculation (it would start a reply before the
# commit, and with it the final pass)
SETTINGS = {"preemptive": False}


class FinalAtCommit(TurnTaking):
    """Speech-stop starts nothing: the final pass runs at commit (`TurnTaking._finish_turn`), so
    the turn ends on the last partial's score."""

    scores_partials = True

    def _begin_final(self, turn: Turn) -> None:
        return None


class WholeReply(Voice):
    """Nothing is spoken before the last token; then the whole reply, in one piece."""

    def on_text(self, response: Response, piece: str) -> list[str]:
        return []

    def rest(self, response: Response) -> list[str]:
        chunker = response.speech.chunker
        whole = " ".join(chunker.push(response.text_so_far) + chunker.flush())
        return [whole] if whole else []


class SequentialSession(Session):
    turn_taking = FinalAtCommit
    response_modes = ResponseModes(voice=WholeReply)
