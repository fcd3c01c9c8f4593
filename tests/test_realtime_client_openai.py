"""The official openai SDK against `pipeline serve`: `client.realtime.connect` (GA) and
`client.beta.realtime.connect` (beta), unchanged, on the real VAD, Whisper and Piper.

The model is scripted (it must choose a tool, which the tiny real LLM cannot do reliably).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from pipeline.testing import ServerThread, chunks_b64, pcm16_24k, with_stages

from .conftest import import_client
from .realtime_clients import STORY, WEATHER_TOOL, scripted_llm

openai = import_client("openai")
pytestmark = [pytest.mark.models, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(real_stages):
    with ServerThread(with_stages(real_stages, llm=scripted_llm())) as running:
        yield running


def sdk(server) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="unused-locally", base_url=f"http://127.0.0.1:{server.port}/v1",
                              websocket_base_url=f"ws://127.0.0.1:{server.port}/v1")


class Recorder:
    """Every event the SDK parsed, as dicts, and a wait for the next one that matches."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.events: list[dict[str, Any]] = []

    async def until(self, kind: str, where: Callable[[dict[str, Any]], bool] = lambda e: True, *,
                    timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind} within {timeout} s; got "
                                     f"{[e['type'] for e in self.events if 'delta' not in e['type']]}")
            event = (await asyncio.wait_for(self.conn.recv(), left)).model_dump(mode="json")
            self.events.append(event)
            if event["type"] == kind and where(event):
                return event

    def of(self, kind: str, response_id: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind
                and (response_id is None or e.get("response_id") == response_id)]


def assert_lifecycle_closed(rec: Recorder, prefix: str = "response.output_audio") -> None:
    """Every .added has its .done: items, content parts, conversation items."""
    for opened, closed in (("response.output_item.added", "response.output_item.done"),
                           ("response.content_part.added", "response.content_part.done")):
        assert sorted(e["item_id"] if "item_id" in e else e["item"]["id"] for e in rec.of(opened)) == \
            sorted(e["item_id"] if "item_id" in e else e["item"]["id"] for e in rec.of(closed))


def test_ga_sdk_audio_turn_text_turn_tool_round_trip_and_cancel(server, say):
    speech = pcm16_24k(say("Good morning, can you hear me?"))

    async def scenario() -> None:
        async with sdk(server).realtime.connect(model="local") as conn:
            rec = Recorder(conn)
            created = await rec.until("session.created")
            assert created["session"]["type"] == "realtime"
            await conn.session.update(session={"type": "realtime", "instructions": "Be helpful.",
                                               "tools": [WEATHER_TOOL]})
            await rec.until("session.updated")

            # 1. an audio turn: server VAD, Whisper, a spoken reply
            for chunk in chunks_b64(speech):
                await conn.input_audio_buffer.append(audio=chunk)
            committed = await rec.until("input_audio_buffer.committed")
            user_item = await rec.until("conversation.item.added",
                                        lambda e: e["item"]["id"] == committed["item_id"])
            assert user_item["item"]["content"][0]["type"] == "input_audio"
            heard = await rec.until("conversation.item.input_audio_transcription.completed")
            assert "morning" in heard["transcript"].lower() and heard["usage"]["seconds"] > 1
            done = await rec.until("response.done")
            assert done["response"]["status"] == "completed"
            rid = done["response"]["id"]
            assert rec.of("response.output_audio.delta", rid) and rec.of("response.output_audio.done", rid)
            said = rec.of("response.output_audio_transcript.done", rid)[0]["transcript"]
            assert said == "Hello! How can I help you today?"
            assert len(rec.of("input_audio_buffer.speech_stopped")) == 1

            # 2. a text turn, answered in text only
            await conn.conversation.item.create(item={
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "Say hello in writing."}]})
            typed = await rec.until("conversation.item.done")
            assert typed["item"]["content"][0] == {"type": "input_text", "text": "Say hello in writing.",
                                                   "audio": None, "detail": None, "image_url": None,
                                                   "transcript": None}
            await conn.response.create(response={"output_modalities": ["text"],
                                                 "metadata": {"turn": "text"}})
            done = await rec.until("response.done")
            rid = done["response"]["id"]
            assert done["response"]["metadata"] == {"turn": "text"}
            assert rec.of("response.output_text.done", rid)[0]["text"] == "Hello! How can I help you today?"
            assert not rec.of("response.output_audio.delta", rid)

            # 3. a tool round trip: the client runs get_weather and asks for the reply
            await conn.conversation.item.create(item={
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "What's the weather in Paris?"}]})
            await conn.response.create()
            call = await rec.until("response.output_item.done",
                                   lambda e: e["item"]["type"] == "function_call")
            assert call["item"]["name"] == "get_weather"
            assert json.loads(call["item"]["arguments"]) == {"city": "Paris"}
            await rec.until("response.done")
            await conn.conversation.item.create(item={
                "type": "function_call_output", "call_id": call["item"]["call_id"],
                "output": json.dumps({"city": "Paris", "sky": "sunny"})})
            await conn.response.create()
            done = await rec.until("response.done")
            reply = rec.of("response.output_audio_transcript.done", done["response"]["id"])[0]
            assert "sunny in Paris" in reply["transcript"]

            # 4. a cancel; a second response.create meanwhile is refused like a hosted API's
            await conn.conversation.item.create(item={
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "Tell me a story."}]})
            await conn.response.create()
            first = await rec.until("response.output_audio.delta")
            await conn.response.create()
            busy = await rec.until("error")
            assert busy["error"]["code"] == "conversation_already_has_active_response"
            await conn.response.cancel()
            done = await rec.until("response.done", lambda e: e["response"]["id"] == first["response_id"])
            assert done["response"]["status"] == "cancelled"
            assert done["response"]["status_details"]["reason"] == "client_cancelled"
            message = done["response"]["output"][0]
            assert message["status"] == "incomplete"
            assert len(message["content"][0]["transcript"]) < len(STORY)
            assert_lifecycle_closed(rec)

    asyncio.run(scenario())


def test_beta_sdk_text_turn_tool_round_trip_and_audio(server):
    async def scenario() -> None:
        async with sdk(server).beta.realtime.connect(model="local") as conn:
            rec = Recorder(conn)
            created = await rec.until("session.created")
            assert created["session"]["input_audio_format"] == "pcm16"
            await conn.session.update(session={"modalities": ["audio", "text"], "tools": [WEATHER_TOOL],
                                               "instructions": "Be helpful."})
            await rec.until("session.updated")
            await conn.conversation.item.create(item={
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "What's the weather in Paris?"}]})
            await rec.until("conversation.item.created")
            await conn.response.create()
            call = await rec.until("response.output_item.done",
                                   lambda e: e["item"]["type"] == "function_call")
            await rec.until("response.done")
            await conn.conversation.item.create(item={
                "type": "function_call_output", "call_id": call["item"]["call_id"],
                "output": json.dumps({"city": "Paris"})})
            await conn.response.create()
            done = await rec.until("response.done")
            rid = done["response"]["id"]
            assert rec.of("response.audio.delta", rid)  # the beta names for audio
            assert "sunny in Paris" in rec.of("response.audio_transcript.done", rid)[0]["transcript"]
            assert done["response"]["output"][0]["content"][0]["type"] == "audio"

    asyncio.run(scenario())
