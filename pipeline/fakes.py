"""Fakes for fast behaviour tests, registered through the same entry points as real stages."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from .llm import Generation


class ScriptedLLM:
    """Replies from a script, token by token. A reply that is a dict is a tool call."""

    def __init__(self, *, replies: list[Any] | None = None, words_per_token: int = 1) -> None:
        self.replies = list(replies or ["Sure. I can help with that."])
        self.words_per_token = words_per_token
        self.requests: list[list[dict[str, Any]]] = []
        self.lock = threading.Lock()
        self._next = 0

    def _take(self) -> str:
        reply = self.replies[min(self._next, len(self.replies) - 1)]
        self._next += 1
        return json.dumps(reply) if isinstance(reply, dict) else str(reply)

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
               grammar: str | None = None, max_tokens: int | None = None,
               result: Generation | None = None) -> Iterator[str]:
        result = result if result is not None else Generation()
        self.requests.append(messages)
        words = self._take().split(" ")
        for i in range(0, len(words), self.words_per_token):
            if cancel.is_set():
                result.finish_reason = "cancelled"
                return
            result.output_tokens += 1
            yield ("" if i == 0 else " ") + " ".join(words[i:i + self.words_per_token])
        result.finish_reason = "stop"

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> str:
        return "".join(self.stream(messages, cancel=threading.Event(), **kwargs))

    def next_token_logprobs(self, messages: list[dict[str, Any]], candidates: list[str]) -> dict[str, float]:
        return {"yes": -0.1, "no": -2.5}


class ToneTTS:
    """A tone whose length follows the text (65 ms a character, about normal speaking rate)."""

    def __init__(self, *, sample_rate_hz: int = 22_050, ms_per_char: float = 65.0,
                 frequency_hz: float = 220.0) -> None:
        self.sample_rate_hz = sample_rate_hz
        self.ms_per_char = ms_per_char
        self.frequency_hz = frequency_hz

    def synthesize(self, text: str) -> np.ndarray:
        n = int(len(text.strip()) * self.ms_per_char * self.sample_rate_hz / 1000)
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
