"""A turn's "looks complete" probability, from the session's signal (`pipeline.turns` plugin).

Every signal reads the transcript and the turn's last 8 s of audio (Smart Turn's window); one
that reads context (`ContextCompleteness`, the text end-of-turn model) also gets the last four
messages before the turn. Scored in a thread: a model signal takes milliseconds to seconds. Where
the pass found its last words with no voice under them, the words before them are scored too and
the lower score decides (`stages/unvoiced.py`: tiny.en closes "a table for" as "a table for it."
in the silence).
"""

from __future__ import annotations

from ..base.protocols import Completeness, ContextCompleteness
from ..stages.unvoiced import lower_of
from .core import SessionCore
from .turn import Turn

_EOT_AUDIO_S, _EOT_CONTEXT_TURNS = 8.0, 4  # what a turn signal reads: Smart Turn's 8 s; 4 messages


class TurnSignal:
    def __init__(self, core: SessionCore, signal: Completeness) -> None:
        self.core = core
        self.signal = signal
        # it asks the session's LLM (the `llm` signal): a reply generating holds that model
        self.shares_llm = getattr(signal, "llm", None) is not None

    async def probability(self, turn: Turn, text: str) -> float:
        audio, signal = turn.stt.audio_tail(_EOT_AUDIO_S), self.signal
        confidence = turn.stt.confidences.get(text.strip())
        said = [(i.role, i.text) for i in self.core.conversation.items  # the turns before this one
                if i.type == "message" and i.id != turn.item_id][-_EOT_CONTEXT_TURNS:]

        def score(words: str) -> float:
            return (signal.probability_in(words, audio, said) if isinstance(signal, ContextCompleteness)
                    else signal.probability(words, audio))

        unvoiced = confidence.unvoiced_words if confidence is not None else 0
        complete = self.core.config.turn.complete_threshold
        return await self.core.clock.run_in_thread(lambda: lower_of(score, text, unvoiced, complete=complete))
