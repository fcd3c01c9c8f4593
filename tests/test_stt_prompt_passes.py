"""The call's context reaches every pass of a backend that takes `prompt`, and none that does not."""

from __future__ import annotations

import asyncio

import numpy as np

from pipeline.base.clock import SimClock
from pipeline.stt import StreamingTranscriber


class Recording:
    partial_interval_ms = 100

    def __init__(self) -> None:
        self.prompts: list[str | None] = []

    def transcribe(self, audio: np.ndarray, *, final: bool, prompt: str | None = None) -> str:
        self.prompts.append(prompt)
        return "hello there"


class Plain:
    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        return "hello there"


def _turn(backend, prompt):
    async def go() -> str:
        stt = StreamingTranscriber(backend, SimClock(), prompt=prompt)
        stt.append(np.zeros(16000, np.float32))
        stt.poll_partial()
        await asyncio.sleep(0)
        return await stt.final()

    return asyncio.run(go())


def test_every_pass_gets_the_prompt():
    backend = Recording()
    assert _turn(backend, "Refund, order ID.") == "hello there"
    assert backend.prompts and set(backend.prompts) == {"Refund, order ID."}


def test_no_prompt_no_keyword_and_a_backend_without_it_is_called_as_before():
    backend = Recording()
    _turn(backend, None)
    assert set(backend.prompts) == {None}
    assert _turn(Plain(), "Refund, order ID.") == "hello there"
