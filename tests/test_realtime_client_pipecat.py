"""Pipecat's OpenAI realtime LLM service against `pipeline serve`, unchanged.

`OpenAIRealtimeLLMService(base_url=...)` in a minimal pipeline with Pipecat's own context
aggregators (as its realtime examples wire it): a first context that runs the LLM (a typed turn),
a spoken turn (audio frames in, server VAD, real Whisper and Piper, audio frames out), a spoken
question that makes the model call a registered function whose result Pipecat sends back and
answers, and an interruption. The service speaks the GA protocol. The model is scripted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from pipeline.base import events as ev
from pipeline.testing import ServerThread, pcm16_24k, with_stages

from .conftest import import_client
from .realtime_clients import STORY, scripted_llm

realtime_llm = import_client("pipecat.services.openai.realtime.llm")
pytestmark = [pytest.mark.models, pytest.mark.slow]

from pipecat.adapters.schemas.function_schema import FunctionSchema  # noqa: E402
from pipecat.adapters.schemas.tools_schema import ToolsSchema  # noqa: E402
from pipecat.frames.frames import (  # noqa: E402
    EndFrame,
    ErrorFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMRunFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
)
from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.runner import PipelineRunner  # noqa: E402
from pipecat.pipeline.task import PipelineTask  # noqa: E402
from pipecat.processors.aggregators.llm_context import LLMContext  # noqa: E402
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair  # noqa: E402
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor  # noqa: E402
from pipecat.services.llm_service import FunctionCallParams  # noqa: E402


@pytest.fixture(scope="module")
def server(real_stages):
    with ServerThread(with_stages(real_stages, llm=scripted_llm())) as running:
        yield running


class Recorder(FrameProcessor):
    """Keeps every frame that passes (either way) and wakes whoever waits for one."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[Frame] = []
        self._arrived = asyncio.Event()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        self.frames.append(frame)
        self._arrived.set()
        await self.push_frame(frame, direction)

    async def until(self, kind: type, where: Callable[[Any], bool] = lambda f: True, *,
                    after: int = 0, timeout: float = 60.0) -> Any:
        """The first frame of `kind` at index >= `after` that matches."""
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.frames[after:]:
                if isinstance(frame, kind) and where(frame):
                    return frame
            self._arrived.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind.__name__} within {timeout} s; got "
                                     f"{sorted({type(f).__name__ for f in self.frames})}")
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                pass

    def said(self, after: int) -> str:
        return "".join(f.text for f in self.frames[after:] if isinstance(f, TTSTextFrame))


def _audio_s(frames: list[Frame]) -> float:
    """Seconds of agent audio among `frames` (16-bit mono)."""
    return sum(len(f.audio) / 2 / f.sample_rate for f in frames if isinstance(f, TTSAudioRawFrame))


async def _server_event(connection: Any, kind: type, where: Callable[[Any], bool] = lambda e: True,
                        *, seen: frozenset[int] = frozenset(), timeout: float = 15.0) -> Any:
    """The server session's first event of `kind` that matches and is not among `seen` (ids of
    events logged before), once it has been emitted. The log is capped, so not by index."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in list(connection.session.events.events):
            if id(event) not in seen and isinstance(event, kind) and where(event):
                return event
        await asyncio.sleep(0.02)
    raise AssertionError(f"the server emitted no matching {kind.__name__} within {timeout} s")


def test_pipecat_service_typed_turn_audio_turn_tool_round_trip_and_interruption(server, say):
    weather = FunctionSchema(name="get_weather", description="Look up today's weather in a city.",
                             properties={"city": {"type": "string"}}, required=["city"])
    greeting = pcm16_24k(say("Good morning, can you hear me?"))
    question = pcm16_24k(say("What is the weather in Paris?"))
    story = pcm16_24k(say("Please tell me a story."))
    asked: list[dict[str, Any]] = []

    async def get_weather(params: FunctionCallParams) -> None:
        asked.append(dict(params.arguments))
        await params.result_callback({"city": params.arguments["city"], "sky": "sunny"})

    async def scenario() -> None:
        llm = realtime_llm.OpenAIRealtimeLLMService(
            api_key="unused-locally", base_url=f"ws://127.0.0.1:{server.port}/v1/realtime",
            settings=realtime_llm.OpenAIRealtimeLLMService.Settings(model="local"))
        llm.register_function("get_weather", get_weather)
        context = LLMContext(messages=[{"role": "user", "content": "Say hello in writing."}],
                             tools=ToolsSchema(standard_tools=[weather]))
        aggregators = LLMContextAggregatorPair(context)
        # `up` sees what the service sends upstream (transcriptions) before the user aggregator takes it
        up, tail = Recorder(), Recorder()
        task = PipelineTask(Pipeline([aggregators.user(), up, llm, tail, aggregators.assistant()]))
        running = asyncio.create_task(PipelineRunner(handle_sigint=False).run(task))

        async def speak(pcm: bytes) -> None:
            step = 24_000 * 2 // 10  # 100 ms frames, as a transport would deliver them
            for start in range(0, len(pcm), step):
                await task.queue_frame(InputAudioRawFrame(audio=pcm[start:start + step],
                                                          sample_rate=24_000, num_channels=1))

        try:
            # 1. a typed turn: the first context sets the conversation up and runs the LLM
            await task.queue_frame(LLMRunFrame())
            await tail.until(LLMFullResponseEndFrame)
            assert tail.said(0) == "Hello! How can I help you today?"

            # 2. a spoken turn: transcription goes upstream, the spoken reply downstream
            mark = len(tail.frames)
            await speak(greeting)
            heard = await up.until(TranscriptionFrame)
            assert "morning" in heard.text.lower()
            await tail.until(LLMFullResponseEndFrame, after=mark)
            audio = [f for f in tail.frames[mark:] if isinstance(f, TTSAudioRawFrame)]
            assert sum(len(f.audio) for f in audio) / 2 / audio[0].sample_rate > 1.0
            assert tail.said(mark) == "Hello! How can I help you today?"

            # 3. a tool round trip: Pipecat runs get_weather, sends the output, asks for the reply
            mark = len(tail.frames)
            await speak(question)
            await tail.until(TTSTextFrame, lambda f: "sunny" in tail.said(mark), after=mark)
            await tail.until(LLMFullResponseEndFrame, after=len(tail.frames) - 1)
            assert asked == [{"city": "Paris"}]
            assert "sunny in Paris" in tail.said(mark)

            # 4. an interruption once the story is sounding: Pipecat truncates the item to what
            # it played (wall time since the first delta), and the server cancels the response
            # there. Waits are on events, never on fixed sleeps: how far the reply has got when
            # the interruption lands depends on the machine.
            mark = len(tail.frames)
            connection = next(iter(server.server.connections))
            logged = frozenset(map(id, list(connection.session.events.events)))
            await speak(story)
            first = await tail.until(TTSAudioRawFrame, after=mark)
            await tail.until(TTSAudioRawFrame, lambda f: _audio_s(tail.frames[mark:]) >= 0.5,
                             after=mark)
            await task.queue_frame(InterruptionFrame())
            # (Pipecat also truncates the weather reply when the caller starts the story)
            done = await _server_event(connection, ev.ResponseDone, seen=logged)
            assert done.response["status"] == "cancelled", done.response
            story_item = done.response["output"][0]["id"]
            truncated = await _server_event(connection, ev.ItemTruncated,
                                            lambda e: e.item_id == story_item, seen=logged)
            # Pipecat truncates at the shorter of its wall time and the audio it had
            assert truncated.audio_end_ms <= _audio_s(tail.frames[mark:]) * 1000 + 1, truncated
            # the conversation keeps what was played, not the whole story (its text was streamed
            # ahead of the audio, as the hosted API does, so Pipecat's text frames say nothing)
            item = connection.session.conversation.get(truncated.item_id)
            assert item is not None and item.audio_end_ms == truncated.audio_end_ms
            assert len(item.text) < len(STORY), item.text
            assert first.sample_rate == 24_000
            assert not [f for f in up.frames + tail.frames if isinstance(f, ErrorFrame)]
        finally:
            await task.queue_frame(EndFrame())
            try:
                await asyncio.wait_for(running, 15)
            except TimeoutError:
                await task.cancel()

    asyncio.run(scenario())
