"""Helpers for the real-client tests: one local server per test module, in its own thread.

Each client test drives a third-party realtime client (its own event loop, its own socket)
against `pipeline serve` as a user would, so the server runs on a loop of its own.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from bench.serve_calls import ServerThread
from pipeline.base.audio import INPUT_RATE_HZ, resample, to_int16
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM

WEATHER_TOOL = {"type": "function", "name": "get_weather",
                "description": "Look up today's weather in a city.",
                "parameters": {"type": "object", "required": ["city"],
                               "properties": {"city": {"type": "string"}}}}
STORY = ("Once upon a time a lighthouse keeper counted the ships that passed his rock. "
         "Every night he wrote their names in a blue book. One winter a ship with no name "
         "came by, and he followed its light until morning. Nobody ever saw it again.")


def scripted_llm() -> ScriptedLLM:
    """The client tests' model: it can choose a tool, which the tiny real LLM cannot."""
    return ScriptedLLM(replies=["Hello! How can I help you today?"], rules=[
        [r"result of get_weather", "It is sunny in {city}, twenty degrees."],
        [r"weather", {"name": "get_weather", "arguments": {"city": "Paris"}}],
        [r"story", STORY],
    ])


@contextmanager
def serving_in_thread(stages: Stages, **kwargs: Any) -> Iterator[ServerThread]:
    with ServerThread(stages, **kwargs) as server:
        yield server


def pcm16_24k(audio_16k: np.ndarray, *, trailing_silence_s: float = 2.0) -> bytes:
    """Speech at 16 kHz -> 24 kHz pcm16 bytes, followed by silence that ends the turn."""
    padded = np.concatenate([np.zeros(INPUT_RATE_HZ // 4, np.float32), audio_16k,
                             np.zeros(int(INPUT_RATE_HZ * trailing_silence_s), np.float32)])
    return to_int16(resample(padded, INPUT_RATE_HZ, 24_000)).astype("<i2").tobytes()


def chunks_b64(pcm: bytes, *, chunk_ms: int = 100) -> Iterator[str]:
    step = 24_000 * 2 * chunk_ms // 1000
    for start in range(0, len(pcm), step):
        yield base64.b64encode(pcm[start:start + step]).decode("ascii")
