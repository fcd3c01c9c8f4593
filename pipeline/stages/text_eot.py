"""A text end-of-turn model on an embedded instruct LLM, as LiveKit's turn detector does.

The transcript, lower-cased and without punctuation (Whisper writes a period at every pause, so
its punctuation says nothing about the caller), is put in the chat template as the user's
message, cut where the message would end, after the last few turns of the conversation. The
model's next-token distribution there says whether the message ends: the probability of the
template's end-of-message token (`<|im_end|>` in ChatML) against every way of going on.

That log-probability is mapped to 0..1 by a per-model logistic calibration (`CALIBRATION`),
centred where finished and unfinished turns of the end-of-turn set separate best
(bench/eot_rescore.py), so `turn.complete_threshold` (0.5) means the same for every model.

The model runs on its own llama.cpp context, so the reply's prompt cache is untouched. The
instructions and context stay evaluated between calls: a call evaluates only the tokens that
changed (the transcript, mostly). Measured only on a loaded 2-core machine (load average 10-17):
Qwen2.5-Coder-0.5B 5.9 s a call (median), SmolLM2-135M 0.5 s (`python -m bench.eot_rescore`,
bench/results/2026-12-01-eot-text.md); a quiet machine is still to be measured, and a score that
comes after `max_silence_ms` decides nothing.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base.cpu import default_threads
from ..base.models import model_file
from ..turns import HeuristicCompleteness
from .llm import MODELS, embedded_gguf

__all__ = ["CALIBRATION", "TextEndOfTurn", "normalise"]

# Per model (MODELS name): the score it reads, and (centre, scale) of the logistic over that
# log-probability, p = 1 / (1 + exp(-(logprob - centre) / scale)). The centre is the threshold
# with the fewest errors (unfinished cut off + finished left waiting) on the Piper clips of the
# end-of-turn set; the scale is the gap between the finished and unfinished medians over 4 (python
# -m bench.eot_rescore, bench/results/2026-12-01-eot-text.md). Qwen reads best as "stop" (39
# errors in 100 on all clips, 51 held out, against "end"'s 62 and 68), SmolLM2 as "end" (43, 55).
CALIBRATION: dict[str, tuple[str, float, float]] = {
    "qwen2.5-coder-0.5b": ("stop", -4.17, 1.09),
    "smollm2-135m": ("end", -13.97, 1.49),
}
_SYSTEM = "You are a helpful assistant answering a phone call."
_UNPUNCT = re.compile(r"[^\w\s']+")


def normalise(text: str) -> str:
    """What the model reads: lower case, no punctuation (hyphens and dashes become spaces)."""
    return " ".join(_UNPUNCT.sub(" ", text.lower()).split())


class TextEndOfTurn:
    """`probability(text)`: how likely the caller's message ends with these words.

    `probability_in(text, audio, context)` reads the conversation's last turns too, oldest
    first, as (role, text) pairs ("user" or "assistant"): the session's turn taking passes the
    turns before the open one (`base.protocols.ContextCompleteness`).
    """

    def __init__(self, *, model: str | None = "qwen2.5-coder-0.5b", model_path: str | None = None,
                 threads: int | None = None, context_turns: int = 2, n_ctx: int = 1024,
                 score: str | None = None, calibration: tuple[float, float] | None = None,
                 with_heuristic: bool = True, llm: Any = None) -> None:
        """`llm` (the session's LLM stage) is accepted and not used: this model keeps its own
        context so that scoring a turn never evicts the reply's prompt cache."""
        from llama_cpp import Llama

        path = embedded_gguf(model if model_path is None else None, model_path or "",
                             setting="turns", what="end-of-turn LLM")
        self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads or default_threads("llm"),
                          n_batch=256, logits_all=False, verbose=False)
        template = str(self._llm.metadata.get("tokenizer.chat_template", ""))
        if "<|im_start|>" not in template:
            raise ValueError(f"{path.name}: the text end-of-turn model reads ChatML "
                             "(<|im_start|> ... <|im_end|>); give a ChatML instruct model "
                             "such as qwen2.5-coder-0.5b or smollm2-135m")
        self._end = self._single_token("<|im_end|>")
        self._marks = [self._single_token(m) for m in (".", "?", "!")]
        known = next((c for name, c in CALIBRATION.items() if model_file(MODELS[name]) == path), None)
        if calibration is None and known is None:
            raise ValueError(f"no end-of-turn calibration for {path.name}: give turns.calibration "
                             "= [centre, scale] (python -m bench.eot_rescore finds the centre)")
        self.score = score or (known[0] if known else "stop")
        if self.score not in ("end", "stop"):
            raise ValueError(f"turns.score = {score!r}: use \"end\" or \"stop\"")
        self.centre, self.scale = calibration if calibration is not None else (known[1], known[2])  # type: ignore[index]
        # on its own the model cuts off more pauses than it must; with the heuristic's veto
        # (both say finished) it made the fewest errors held out (bench/results/2026-12-01-eot-text.md)
        self.heuristic = HeuristicCompleteness() if with_heuristic else None
        self.context_turns = context_turns
        self._lock = threading.Lock()

    def _single_token(self, text: str) -> int:
        ids = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if len(ids) != 1:
            raise ValueError(f"the model's vocabulary has no single {text!r} token")
        return int(ids[0])

    def prompt(self, text: str, context: Sequence[tuple[str, str]] = ()) -> str:
        """The chat template up to the caller's last word, after the last `context_turns`."""
        turns = [(r, t) for r, t in context if r in ("user", "assistant") and t.strip()]
        parts = [f"<|im_start|>system\n{_SYSTEM}<|im_end|>\n"]
        for role, said in turns[-self.context_turns:] if self.context_turns else []:
            parts.append(f"<|im_start|>{role}\n{said.strip()}<|im_end|>\n")
        parts.append(f"<|im_start|>user\n{normalise(text)}")
        return "".join(parts)

    def end_logprob(self, text: str, context: Sequence[tuple[str, str]] = ()) -> float:
        """The log-probability `probability` calibrates (`score`: "end" or "stop")."""
        return self.logprobs(text, context)[self.score]

    def logprobs(self, text: str, context: Sequence[tuple[str, str]] = ()) -> dict[str, float]:
        """log P(next token | the prompt up to the caller's last word): "end", the
        end-of-message token; "stop", that or a sentence's closing mark (. ? !), which an
        instruct model often writes first even though the transcript's were removed."""
        tokens = self._llm.tokenize(self.prompt(text, context).encode("utf-8"), add_bos=False, special=True)
        llm = self._llm
        with self._lock:
            # keep what is already evaluated (the instructions, the context, the words so far);
            # at least the last token is evaluated again, for its logits
            kept = 0
            limit = min(int(llm.n_tokens), len(tokens) - 1)
            ids = llm.input_ids
            while kept < limit and int(ids[kept]) == tokens[kept]:
                kept += 1
            llm.n_tokens = kept
            llm.eval(tokens[kept:])
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        top = logits.max()
        logp = logits - (top + math.log(np.exp(logits - top).sum()))
        stop = [self._end, *self._marks]
        return {"end": float(logp[self._end]),
                "stop": float(np.logaddexp.reduce(logp[stop]))}

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        """Text only; `audio` is accepted and ignored. No words: 0.0 (nothing has been said)."""
        return self.probability_in(text, audio, ())

    def probability_in(self, text: str, audio: np.ndarray | None,
                       context: Sequence[tuple[str, str]]) -> float:
        """`probability`, after the conversation's last turns (role, text), oldest first."""
        if not normalise(text):
            return 0.0
        z = (self.end_logprob(text, context) - self.centre) / self.scale
        p = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
        return p if self.heuristic is None else min(p, self.heuristic.probability(text))
