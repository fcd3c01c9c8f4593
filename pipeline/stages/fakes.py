"""Fakes for fast behaviour tests, registered through the same entry points as real stages."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..base.protocols import Generation


class ScriptedLLM:
    """Replies from a script, token by token. A reply that is a dict is a tool call.

    `rules` are `[pattern, reply]` pairs tried first, against the last message (regex, any
    case); a reply may name fields of the latest tool output, e.g. "Refunded to {card_last4}."
    Otherwise `replies` are used in order, the last one repeating.
    """

    def __init__(self, *, replies: list[Any] | None = None, rules: list[list[Any]] | None = None,
                 words_per_token: int = 1, max_tokens: int = 96,
                 context_window: int = 2048) -> None:  # LlamaLLM's n_ctx
        self.replies = list(replies or ["Sure. I can help with that."])
        self.rules = [(re.compile(p, re.IGNORECASE), r) for p, r in (rules or [])]
        self.words_per_token = words_per_token
        self.max_tokens = max_tokens
        self.context_window = context_window
        self.requests: list[list[dict[str, Any]]] = []
        self.temperatures: list[float | None] = []
        self.lock = threading.Lock()
        self._next = 0

    def _take(self, messages: list[dict[str, Any]]) -> str:
        last = messages[-1]["content"] if messages else ""
        reply = next((r for p, r in self.rules if p.search(last)), None)
        if reply is None:
            reply = self.replies[min(self._next, len(self.replies) - 1)]
            self._next += 1
        if isinstance(reply, dict):
            return json.dumps(reply)
        return str(reply).format_map(_Fields(_latest_output(messages)))

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
               grammar: str | None = None, max_tokens: int | None = None,
               result: Generation | None = None, temperature: float | None = None) -> Iterator[str]:
        result = result if result is not None else Generation()
        self.requests.append(messages)
        self.temperatures.append(temperature)  # what each request asked for (None: the stage's)
        words = self._take(messages).split(" ")
        limit = max_tokens or self.max_tokens
        for i in range(0, len(words), self.words_per_token):
            if cancel.is_set():
                result.finish_reason = "cancelled"
                return
            if result.output_tokens >= limit:
                result.finish_reason = "length"
                return
            result.output_tokens += 1
            yield ("" if i == 0 else " ") + " ".join(words[i:i + self.words_per_token])
        result.finish_reason = "stop"

    def complete(self, messages: list[dict[str, Any]], *, cancel: threading.Event | None = None,
                 **kwargs: Any) -> str:
        return "".join(self.stream(messages, cancel=cancel or threading.Event(), **kwargs))

    def next_token_logprobs(self, messages: list[dict[str, Any]], candidates: list[str]) -> dict[str, float]:
        return {"yes": -0.1, "no": -2.5}

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        """An estimate: a token a word, 4 a message for the chat template, 3 for the reply's cue
        (ChatML's `<|im_start|>role\n ... <|im_end|>\n` and `<|im_start|>assistant\n`)."""
        return 3 + sum(4 + len(str(m.get("content", "")).split()) for m in messages)


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _latest_output(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Flattened fields of the newest tool output in the context ("[result of x: {...}]")."""
    for m in reversed(messages):
        found = re.search(r"\[result of [^:]+: (\{.*\})\]$", m.get("content", ""), re.DOTALL)
        if found:
            try:
                data = json.loads(found.group(1))
            except ValueError:
                return {}
            flat: dict[str, Any] = {}
            stack = [data]
            while stack:
                d = stack.pop()
                for k, v in d.items():
                    stack.append(v) if isinstance(v, dict) else flat.setdefault(k, v)
            return flat
    return {}


class ToneTTS:
    """A tone whose length follows the text (65 ms a character, about normal speaking rate)."""

    def __init__(self, *, sample_rate_hz: int = 22_050, ms_per_char: float = 65.0,
                 frequency_hz: float = 220.0) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.ms_per_char = ms_per_char
        self.frequency_hz = frequency_hz

    def synthesize(self, text: str, *, speed: float | None = None) -> np.ndarray:
        n = int(len(text.strip()) * self.ms_per_char / (speed or 1.0) * self.sample_rate_hz / 1000)
        t = np.arange(n) / self.sample_rate_hz
        return (0.3 * np.sin(2 * np.pi * self.frequency_hz * t)).astype(np.float32)


class ScriptedSTT:
    """Returns scripted transcripts: each final pass takes the next one; partials show a prefix."""

    def __init__(self, *, transcripts: list[str] | None = None) -> None:
        self.transcripts = list(transcripts or ["Hello."])
        self._next = 0

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        text = self.transcripts[min(self._next, len(self.transcripts) - 1)]
        if final:
            self._next += 1
            return text
        words = text.split()
        return " ".join(words[: max(1, len(words) // 2)])
