"""A trained end-of-utterance head on an embedded instruct LLM, as LiveKit's turn detector does.

The transcript, lower-cased and without punctuation (`text_eot.normalise`: Whisper writes a
period at every pause), is put in the chat template as the user's message, left open, after the
last few turns of the conversation. The model's final hidden state at the transcript's last
token goes through a logistic-regression head trained for this model on text alone: complete
caller lines against the same lines cut at every word (`python -m bench.eou_train`, data in
bench/eou_lines.txt). Each embedded model has its own head file in `eou_heads/`, whose
probability 0.5 is where the two classes, weighted equally, meet: `turn.complete_threshold`
means the same for every model. No threshold is fitted on the end-of-turn set.

The model runs on its own llama.cpp context (the reply's prompt cache is untouched); the
instructions and context stay evaluated between calls, so a call evaluates the changed words
only. Compute and error rates: bench/results/2026-12-02-eou-head.md and -eou-head-2.md (the
second Qwen head, on 647 lines; `python -m bench.eou_eval`).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..base.cpu import default_threads
from ..turns import HeuristicCompleteness
from .llm import MODELS, embedded_gguf
from .text_eot import normalise

__all__ = ["HEADS", "EouHead", "EouHeadCompleteness", "HiddenState", "chat_prompt", "head_file"]

HEADS = Path(__file__).resolve().with_name("eou_heads")
SYSTEM = "You are a helpful assistant answering a phone call."


def head_file(model: str) -> Path:
    """The head shipped for an embedded model (a MODELS name)."""
    return HEADS / f"{model}.npz"


def chat_prompt(text: str, context: Sequence[tuple[str, str]] = (), context_turns: int = 2) -> str:
    """ChatML up to the caller's last word (the user turn left open), after the last
    `context_turns` (role, text) turns, oldest first."""
    turns = [(r, t) for r, t in context if r in ("user", "assistant") and t.strip()]
    parts = [f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"]
    for role, said in turns[-context_turns:] if context_turns else []:
        parts.append(f"<|im_start|>{role}\n{said.strip()}<|im_end|>\n")
    parts.append(f"<|im_start|>user\n{normalise(text)}")
    return "".join(parts)


@dataclass(frozen=True)
class EouHead:
    """Standardise, then logistic regression: p = sigmoid(w . (x - mean) / scale + b); with a
    hidden layer, p = sigmoid(w . tanh(W1 (x - mean) / scale + b1) + b). x is the mean of the
    hidden states at the transcript's last `pool` tokens (info["pool"], 1 when absent)."""

    model: str  # the MODELS name whose hidden states it reads
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    info: dict[str, Any] = field(default_factory=dict)  # how it was trained (bench.eou_train)
    # two hidden states kept for a model-free check: a complete line, then the same line cut short
    check: np.ndarray | None = None
    hidden_weights: np.ndarray | None = None  # (features, units) of the tanh layer, if any
    hidden_bias: np.ndarray | None = None

    @property
    def pool(self) -> int:
        return int(self.info.get("pool", 1))

    @classmethod
    def load(cls, path: Path) -> EouHead:
        with np.load(path, allow_pickle=False) as f:
            info = json.loads(str(f["info"]))
            return cls(model=info["model"], mean=f["mean"].astype(np.float64),
                       scale=f["scale"].astype(np.float64), weights=f["weights"].astype(np.float64),
                       bias=float(f["bias"]), info=info,
                       check=f["check"].astype(np.float64) if "check" in f else None,
                       hidden_weights=f["hidden_weights"].astype(np.float64) if "hidden_weights" in f else None,
                       hidden_bias=f["hidden_bias"].astype(np.float64) if "hidden_bias" in f else None)

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = {
            "mean": self.mean.astype(np.float32), "scale": self.scale.astype(np.float32),
            "weights": self.weights.astype(np.float32), "bias": np.float64(self.bias),
            "info": json.dumps({**self.info, "model": self.model}, sort_keys=True)}
        if self.check is not None:
            arrays["check"] = self.check.astype(np.float32)
        if self.hidden_weights is not None and self.hidden_bias is not None:
            arrays["hidden_weights"] = self.hidden_weights.astype(np.float32)
            arrays["hidden_bias"] = self.hidden_bias.astype(np.float32)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **arrays)

    def logit(self, states: np.ndarray) -> np.ndarray:
        """The head's log-odds for hidden states (one a row, or a single vector)."""
        z = (np.asarray(states, dtype=np.float64) - self.mean) / self.scale
        if self.hidden_weights is not None and self.hidden_bias is not None:
            z = np.tanh(z @ self.hidden_weights + self.hidden_bias)
        return z @ self.weights + self.bias

    def probability(self, states: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(self.logit(states), -50.0, 50.0)))


class HiddenState:
    """An embedded ChatML model's final hidden state after a prompt, on its own llama.cpp
    context; what is already evaluated (the instructions, the context) is kept between calls."""

    def __init__(self, *, model: str | None = "qwen2.5-coder-0.5b", model_path: str | None = None,
                 threads: int | None = None, n_ctx: int = 1024) -> None:
        import llama_cpp

        self._api = llama_cpp
        self.path = embedded_gguf(model if model_path is None else None, model_path or "",
                                  setting="turns", what="end-of-utterance LLM")
        # one batch holds a whole prompt, so every token's state comes from one decode
        self._llm = llama_cpp.Llama(model_path=str(self.path), n_ctx=n_ctx, n_batch=n_ctx,
                                    n_threads=threads or default_threads("llm"), embedding=True,
                                    pooling_type=llama_cpp.LLAMA_POOLING_TYPE_NONE, verbose=False)
        if "<|im_start|>" not in str(self._llm.metadata.get("tokenizer.chat_template", "")):
            raise ValueError(f"{self.path.name}: the end-of-utterance head reads ChatML "
                             "(<|im_start|> ... <|im_end|>); give a ChatML instruct model "
                             "such as qwen2.5-coder-0.5b or smollm2-135m")
        self.size = int(self._llm.n_embd())
        self._lock = threading.Lock()

    def tokens(self, prompt: str) -> list[int]:
        return list(self._llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def states(self, tokens: Sequence[int], positions: Sequence[int]) -> np.ndarray:
        """The hidden states at `positions` (indices into `tokens`), one a row."""
        llm = self._llm
        first = min(positions)
        with self._lock:
            kept = 0
            limit = min(int(llm.n_tokens), first)
            ids = llm.input_ids
            while kept < limit and int(ids[kept]) == tokens[kept]:
                kept += 1
            llm.n_tokens = kept
            llm.eval(list(tokens[kept:]))
            rows = len(tokens) - kept
            out = np.ctypeslib.as_array(self._api.llama_get_embeddings(llm.ctx), shape=(rows, self.size))
            return np.array([out[p - kept] for p in positions], dtype=np.float64)

    def last(self, prompt: str) -> np.ndarray:
        """The hidden state at the prompt's last token."""
        return self.pooled(prompt, 1)

    def pooled(self, prompt: str, pool: int) -> np.ndarray:
        """The mean of the hidden states at the prompt's last `pool` tokens."""
        tokens = self.tokens(prompt)
        return self.states(tokens, [max(0, len(tokens) - pool + i) for i in range(pool)]).mean(axis=0)


class EouHeadCompleteness:
    """`probability(text)`: how likely the caller's message ends here, from the trained head.

    `probability_in(text, audio, context)` reads the conversation's last turns too, oldest first
    (`base.protocols.ContextCompleteness`). `with_heuristic`: report the lower of the head and
    the text heuristic (both must say finished).
    """

    def __init__(self, *, model: str | None = "qwen2.5-coder-0.5b", model_path: str | None = None,
                 head_path: str | None = None, threads: int | None = None, context_turns: int = 2,
                 with_heuristic: bool = False, llm: Any = None) -> None:
        """`llm` (the session's LLM stage) is accepted and not used: this model keeps its own
        context so that scoring a turn never evicts the reply's prompt cache."""
        self.hidden = HiddenState(model=model, model_path=model_path, threads=threads)
        name = next((n for n, rel in MODELS.items() if self.hidden.path.name == Path(rel).name), None)
        path = Path(head_path) if head_path else (head_file(name) if name else None)
        if path is None or not path.is_file():
            raise ValueError(f"no end-of-utterance head for {self.hidden.path.name}: train one with "
                             "`python -m bench.eou_train --model-path <gguf> --out <file>` and give "
                             "it as turns.head_path")
        self.head = EouHead.load(path)
        if self.head.mean.shape[0] != self.hidden.size:
            raise ValueError(f"{path.name} was trained on {self.head.model} ({self.head.mean.shape[0]} "
                             f"features), not on {self.hidden.path.name} ({self.hidden.size}): give "
                             "the head trained for this model")
        self.context_turns = context_turns
        self.heuristic = HeuristicCompleteness() if with_heuristic else None

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        """Text only; `audio` is accepted and ignored. No words: 0.0 (nothing has been said)."""
        return self.probability_in(text, audio, ())

    def probability_in(self, text: str, audio: np.ndarray | None,
                       context: Sequence[tuple[str, str]]) -> float:
        """`probability`, after the conversation's last turns (role, text), oldest first."""
        if not normalise(text):
            return 0.0
        state = self.hidden.pooled(chat_prompt(text, context, self.context_turns), self.head.pool)
        p = float(self.head.probability(state))
        p = 0.0 if math.isnan(p) else p
        return p if self.heuristic is None else min(p, self.heuristic.probability(text))
