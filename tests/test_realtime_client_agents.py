"""The OpenAI Agents SDK's realtime agent against `pipeline serve`, unchanged.

`RealtimeRunner` with a `RealtimeAgent` that has a function tool, on the SDK's own
`OpenAIRealtimeWebSocketModel` (GA protocol) pointed at the local server: an audio turn (real VAD,
Whisper and Piper), a typed turn, a tool round trip the SDK runs itself, and a cancel. The model is
scripted (it must choose the tool, which the tiny real LLM cannot do reliably).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from pipeline.testing import ServerThread, pcm16_24k, with_stages

from .conftest import import_client
from .realtime_clients import STORY, scripted_llm

realtime = import_client("agents.realtime")
pytestmark = [pytest.mark.models, pytest.mark.slow]

from agents import function_tool  # noqa: E402
from agents.realtime.model_inputs import RealtimeModelSendInterrupt  # noqa: E402
from agents.realtime.openai_realtime import OpenAIRealtimeWebSocketModel  # noqa: E402

WEATHER_ASKED: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """Look up today's weather in a city."""
    WEATHER_ASKED.append(city)
    return json.dumps({"city": city, "sky": "sunny"})


@pytest.fixture(scope="module")
def server(real_stages):
    with ServerThread(with_stages(real_stages, llm=scripted_llm())) as running:
        yield running


class SessionEvents:
    """Every event the SDK's session yields, and a wait for the next one that matches."""

    def __init__(self, session: Any) -> None:
        self._events = session.__aiter__()
        self.seen: list[Any] = []

    async def until(self, kind: str, where: Callable[[Any], bool] = lambda e: True, *,
                    timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind} within {timeout} s; got "
                                     f"{[e.type for e in self.seen if e.type not in ('audio', 'raw_model_event')]}")
            event = await asyncio.wait_for(self._events.__anext__(), left)
            self.seen.append(event)
            if event.type == kind and where(event):
                return event

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.seen if e.type == kind]

    def raw(self, kind: str) -> list[dict[str, Any]]:
        """Server events of one type, as the SDK received them."""
        return [e.data.data for e in self.of("raw_model_event")
                if e.data.type == "raw_server_event" and e.data.data.get("type") == kind]

    def errors(self) -> list[Any]:
        """What the SDK reported as invalid or failed: none may come from a valid server."""
        return self.of("error") + [e for e in self.of("raw_model_event")
                                   if e.data.type in ("error", "exception")]


def assistant_transcripts(history: list[Any]) -> list[tuple[str, str]]:
    return [(item.status, "".join(getattr(c, "transcript", None) or getattr(c, "text", None) or ""
                                  for c in item.content))
            for item in history if item.type == "message" and item.role == "assistant"]


def test_agents_sdk_audio_turn_typed_turn_tool_round_trip_and_cancel(server, say):
    from agents.realtime import RealtimeAgent, RealtimeRunner

    speech = pcm16_24k(say("Good morning, can you hear me?"))
    agent = RealtimeAgent(name="front desk", instructions="Be helpful.", tools=[get_weather])
    runner = RealtimeRunner(agent, model=OpenAIRealtimeWebSocketModel(),
                            config={"model_settings": {"model_name": "local"}, "tracing_disabled": True})
    WEATHER_ASKED.clear()

    async def scenario() -> None:
        session = await runner.run(model_config={"url": server.url, "api_key": "unused-locally"})
        async with session:
            events = SessionEvents(session)
            await events.until("raw_model_event", lambda e: e.data.type == "raw_server_event"
                               and e.data.data["type"] == "session.updated")

            # 1. an audio turn: server VAD, Whisper, a spoken reply the SDK hands out as audio
            step = 24_000 * 2 // 10  # 100 ms of 24 kHz pcm16
            for start in range(0, len(speech), step):
                await session.send_audio(speech[start:start + step])
            heard = await events.until("raw_model_event", lambda e: e.data.type == "input_audio_transcription_completed")
            assert "morning" in heard.data.transcript.lower()
            await events.until("agent_end")
            assert events.of("audio") and events.of("audio_end")
            audio_bytes = sum(len(e.audio.data) for e in events.of("audio"))
            assert audio_bytes > 24_000 * 2 * 0.5  # over half a second of spoken reply

            # 2. a typed turn: send_message makes the item and asks for a response
            await session.send_message("Say hello in writing.")
            await events.until("agent_end")

            # 3. a tool round trip: the SDK runs get_weather itself and sends its output back
            await session.send_message("What's the weather in Paris?")
            tool_end = await events.until("tool_end")
            assert tool_end.tool.name == "get_weather" and WEATHER_ASKED == ["Paris"]
            await events.until("agent_end", lambda e: any(
                "sunny in Paris" in said for _, said in assistant_transcripts(session._history)))

            # 4. a cancel while the story is being told
            await session.send_message("Tell me a story.")
            await events.until("audio")
            await session.model.send_event(RealtimeModelSendInterrupt(force_response_cancel=True))
            await events.until("agent_end")
            done = events.raw("response.done")[-1]["response"]
            assert done["status"] == "cancelled"

            history = session._history
            said = assistant_transcripts(history)
            assert ("completed", "Hello! How can I help you today?") in said  # audio and typed turns
            assert sum(1 for s in said if s == ("completed", "Hello! How can I help you today?")) == 2
            story = said[-1]
            assert story[0] == "incomplete" and 0 < len(story[1]) < len(STORY)
            users = [item for item in history if item.type == "message" and item.role == "user"]
            assert "morning" in (users[0].content[0].transcript or "").lower()
            assert not events.errors(), [getattr(e, "error", None) or e.data for e in events.errors()]

    asyncio.run(scenario())
