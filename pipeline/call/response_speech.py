"""A reply's speech: its chunks synthesized as they come, played, and what the caller heard of it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..base import events as ev
from ..base.config import Config
from ..base.conversation import Item
from ..chunker import SentenceChunker
from .handle import Heard
from .heard import SpokenChunk, heard_text


class Speaker(Protocol):
    """What of its response the speech needs (`response.Response`, which imports this module)."""

    item: Item
    delivery: Any  # its Delivery: where the audio goes (held until a speculation is adopted)

    @property
    def id(self) -> str: ...

    def emit(self, event: ev.Event) -> None: ...

    def mark(self, stage: ev.Milestone, **detail: Any) -> None: ...


def sentence_chunker(config: Config) -> SentenceChunker:
    policy = config.chunker
    return SentenceChunker(quick_first_fragment=policy.quick_first_fragment,
                           min_fragment_words=policy.min_fragment_words,
                           first_phrase_words=policy.first_phrase_words,
                           head_phrase_words=policy.head_phrase_words)


class Speech:
    """Step 3 of a response: each chunk synthesized as it comes, in deltas of at most
    output_delta_ms, then played; and the words the caller heard up to the last sample played."""

    def __init__(self, owner: Speaker, ctx: Any, *, generation: dict[str, Any], stopped: threading.Event,
                 pause: Callable[[], AbstractContextManager[None]] | None = None) -> None:
        self.owner = owner
        self.ctx = ctx  # the response's ResponseContext: its voice, clock, config and speaker
        self.generation = generation  # this response's own settings (its speaking rate)
        self.stopped = stopped  # the response was stopped: synthesize nothing more
        # the LLM waits between tokens while the first chunk is synthesized on this machine's
        # cores (`response.first_audio_first`); None: it never does
        self.pause = pause if ctx.config.response.first_audio_first else None
        self.chunker = sentence_chunker(ctx.config)
        self.spoken: list[SpokenChunk] = []
        self.generated = 0  # samples of the item made so far

    async def speak(self, chunks: asyncio.Queue[str | None]) -> None:
        ctx, owner = self.ctx, self.owner
        tts, rid, item_id = ctx.tts, owner.id, owner.item.id
        delta_samples = tts.sample_rate_hz * ctx.config.response.output_delta_ms // 1000
        while (chunk := await chunks.get()) is not None:
            if self.stopped.is_set():
                return
            if ctx.async_tts is not None:  # a voice that waits (a network TTS) waits on the clock
                audio = await ctx.async_tts.synthesize_async(chunk, clock=ctx.clock)
            else:
                with self.pause() if self.pause is not None and not self.spoken else contextlib.nullcontext():
                    audio = await self._synthesize(chunk)  # the first chunk with the LLM paused
            if self.stopped.is_set():
                return
            if not self.spoken:
                owner.mark(ev.Milestone.TTS_FIRST_AUDIO, samples=len(audio))
            self.spoken.append(SpokenChunk(chunk, self.generated, len(audio)))
            owner.emit(ev.OutputTranscriptDelta(response_id=rid, item_id=item_id,
                                                delta=(" " if self.generated else "") + chunk))
            for i in range(0, len(audio), delta_samples):
                piece = audio[i:i + delta_samples]
                owner.emit(ev.OutputAudioDelta(response_id=rid, item_id=item_id, delta=piece,
                                               sample_rate_hz=tts.sample_rate_hz,
                                               audio_ms=(self.generated + i) * 1000 / tts.sample_rate_hz))
                owner.delivery.play(piece)
                if i == 0 and not self.generated:  # let playback sound the first frame before
                    await asyncio.sleep(0)  # the rest of the chunk's deltas are announced
            self.generated += len(audio)

    async def _synthesize(self, chunk: str) -> Any:
        """One chunk on this process's voice, at the session's own speaking rate where it has one
        (a voice that takes it: protocols.takes_keyword)."""
        ctx, tts = self.ctx, self.ctx.tts
        if (speed := self.generation.get("speed", ctx.config.response.speed)) is None:
            return await ctx.clock.run_in_thread(tts.synthesize, chunk)
        paced: Any = tts
        return await ctx.clock.run_in_thread(lambda voice=paced: voice.synthesize(chunk, speed=speed))

    def heard(self) -> Heard:
        """What the caller heard: never more than was made."""
        played = min(self.ctx.playback.heard(self.owner.item.id), self.generated)
        return Heard(heard_text(self.spoken, played), int(played * 1000 / self.ctx.tts.sample_rate_hz))

    def truncate_to_played(self) -> None:
        """Keep only what the caller heard: audio_end_ms = played, transcript = words heard."""
        owner = self.owner
        heard = self.heard()
        # the item itself, in the conversation or not: an out-of-band reply's never is, and a
        # client may have deleted an in-band one while it played (both found by the fuzz test)
        owner.item.truncate(audio_end_ms=heard.played_ms, heard_text=heard.text)
        owner.emit(ev.ItemTruncated(item_id=owner.item.id, audio_end_ms=heard.played_ms, transcript=heard.text))
