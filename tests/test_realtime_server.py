"""The realtime-API server: a real WebSocket client against a real server on 127.0.0.1.

Protocol tests run on fakes (an energy VAD, scripted STT and LLM, a tone voice) so they need no
models; the spoken-call tests run the real VAD, Whisper and Piper with a scripted LLM.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from pipeline.base.audio import INPUT_RATE_HZ, dbfs, mulaw_encode, resample, to_int16
from pipeline.base.config import Config
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing import with_stages
from pipeline.transports.realtime_server import RealtimeServer
from pipeline.turns import HeuristicCompleteness

LEAD_S = 0.2

# --- fakes and a small client ----------------------------------------------------------------


class EnergyVAD:
    """Voice = loud enough: enough for protocol tests on tones."""

    def probability(self, window: np.ndarray) -> float:
        return 0.95 if dbfs(window) > -35 else 0.02

    def fork(self) -> EnergyVAD:
        return EnergyVAD()


class SlowLLM(ScriptedLLM):
    """A scripted reply at a steady token rate, so a response is still being made when cut off."""

    def __init__(self, *, replies: list[str], seconds_per_token: float) -> None:
        super().__init__(replies=replies)
        self.seconds_per_token = seconds_per_token
        self.generating = 0  # model threads inside stream() right now

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
               **kwargs: Any) -> Iterator[str]:
        self.generating += 1
        try:
            for piece in super().stream(messages, cancel=cancel, **kwargs):
                time.sleep(self.seconds_per_token)
                yield piece
        finally:
            self.generating -= 1


def fake_stages(reply: str = "Sure. I can help with that.") -> Stages:
    return Stages(vad=EnergyVAD(), stt=ScriptedSTT(transcripts=["Hello there."]),
                  completeness=HeuristicCompleteness(), llm=ScriptedLLM(replies=[reply]),
                  tts=ToneTTS(ms_per_char=30.0))


@asynccontextmanager
async def serving(stages: Stages, config: Config | None = None,
                  **kwargs: Any) -> AsyncIterator[RealtimeServer]:
    server = RealtimeServer(stages=stages, config=config or Config.default(), port=0, **kwargs)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


class Client:
    """Records every server event (with its arrival time in `_at`) and waits for them."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                event = json.loads(message)
                event["_at"] = time.monotonic()
                self.events.append(event)
        except ConnectionClosed:
            pass

    async def send(self, event: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(event if isinstance(event, str | bytes) else json.dumps(event))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def wait_for(self, kind: str, where: Callable[[dict[str, Any]], bool] | None = None, *,
                       timeout: float = 30.0, count: int = 1) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self.of(kind) if where is None or where(e)]
            if len(found) >= count:
                return found[count - 1]
            if time.monotonic() > deadline:
                seen = [e["type"] for e in self.events if not e["type"].endswith(".delta")]
                raise AssertionError(f"no {kind} (#{count}) within {timeout} s; got {seen}")
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        await self.ws.close()
        await self._reader


@asynccontextmanager
async def client(server: RealtimeServer, **kwargs: Any) -> AsyncIterator[Client]:
    async with connect(server.url, proxy=None, **kwargs) as ws:
        c = Client(ws)
        try:
            yield c
        finally:
            await c.close()


async def mic_at_24k(c: Client) -> Mic:
    """The session told to take 24 kHz PCM, and a microphone sending it."""
    await c.send({"type": "session.update", "session": {
        "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}}}}})
    await c.wait_for("session.updated")
    return Mic(c)


class Mic:
    """A caller's microphone: 20 ms appends at real time, silence when nobody talks."""

    def __init__(self, c: Client, *, encoding: str = "pcm16", rate_hz: int = 24_000) -> None:
        self.c, self.encoding, self.rate_hz = c, encoding, rate_hz
        self.frame_bytes = rate_hz // 50 * (2 if encoding == "pcm16" else 1)
        self.pending = b""
        self._task = asyncio.ensure_future(self._run())

    def encode(self, audio_16k: np.ndarray) -> bytes:
        x = resample(audio_16k, INPUT_RATE_HZ, self.rate_hz)
        return mulaw_encode(x) if self.encoding == "pcmu" else to_int16(x).astype("<i2").tobytes()

    def say(self, audio_16k: np.ndarray) -> None:
        self.pending += self.encode(audio_16k)

    async def _run(self) -> None:
        silence = self.encode(np.zeros(INPUT_RATE_HZ // 50, np.float32))
        t0, sent = time.monotonic(), 0
        try:
            while True:
                chunk = self.pending[: self.frame_bytes]
                self.pending = self.pending[len(chunk):]
                chunk += silence[: self.frame_bytes - len(chunk)]
                await self.c.send({"type": "input_audio_buffer.append",
                                   "audio": base64.b64encode(chunk).decode("ascii")})
                sent += 1
                await asyncio.sleep(max(0.0, t0 + sent * 0.02 - time.monotonic()))
        except ConnectionClosed:
            pass

    async def stop(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass


def audio_of(c: Client, response_id: str, bytes_per_second: int) -> tuple[float, float]:
    """(seconds of audio, seconds over which it arrived) for one response."""
    deltas = [e for e in c.of("response.output_audio.delta") if e["response_id"] == response_id]
    total = sum(len(base64.b64decode(e["delta"])) for e in deltas) / bytes_per_second
    return total, deltas[-1]["_at"] - deltas[0]["_at"]


def user_text(text: str) -> dict[str, Any]:
    return {"type": "conversation.item.create", "item": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}


def append(raw: bytes | str) -> dict[str, Any]:
    audio = raw if isinstance(raw, str) else base64.b64encode(raw).decode("ascii")
    return {"type": "input_audio_buffer.append", "audio": audio}


def transcripts(c: Client) -> list[str]:
    return [e["transcript"] for e in c.of("conversation.item.input_audio_transcription.completed")]


def status(done: dict[str, Any]) -> tuple[str, str | None]:
    details = done["response"].get("status_details") or {}
    return done["response"]["status"], details.get("reason")


async def text_reply(c: Client, text: str = "Hi") -> dict[str, Any]:
    """A user text item, then response.create; returns the response.done."""
    await c.send(user_text(text))
    await c.wait_for("conversation.item.done")
    await c.send({"type": "response.create"})
    return await c.wait_for("response.done", timeout=20)


# --- protocol, on fakes ----------------------------------------------------------------------


def test_end_call_speaks_the_goodbye_then_closes_the_socket():
    from pipeline.base.config import apply

    goodbye = {"name": "end_call", "arguments": {"goodbye": "Thanks for calling, goodbye!",
                                                 "reason": "the caller is done"}}
    stages = fake_stages()
    stages.llm = ScriptedLLM(replies=[goodbye])

    async def scenario() -> None:
        config = apply(Config.default(), {"call": {"end_call": True}})
        async with serving(stages, config=config) as server, client(server) as c:
            await c.wait_for("session.created")
            done = await text_reply(c, "That's all, thanks.")
            assert done["response"]["status"] == "completed"
            # the call's item opens at its first argument, before the goodbye it speaks
            message = next(o for o in done["response"]["output"] if o["type"] == "message")
            said = message["content"][0]["transcript"]
            assert said == "Thanks for calling, goodbye!"
            audio = [e for e in c.of("response.output_audio.delta")
                     if e["response_id"] == done["response"]["id"]]
            assert audio and audio[-1]["_at"] <= done["_at"]  # the goodbye was sent before
            await asyncio.wait_for(c._reader, timeout=10)  # then the server closed the line
            assert c.ws.close_code == 1000

    asyncio.run(scenario())



def test_session_update_text_reply_paced_audio_and_truncate():
    reply = "Our store opens at nine in the morning. We close at six in the evening."
    tool = {"type": "function", "name": "check_hours", "description": "Look up opening hours.",
            "parameters": {"type": "object", "required": ["day", "holding_line"], "properties": {
                "day": {"type": "string"}, "holding_line": {"type": "string", "spoken": True}}}}

    async def scenario() -> None:
        async with serving(fake_stages(reply)) as server, client(server) as c:
            created = await c.wait_for("session.created")
            assert created["session"]["audio"]["output"]["format"] == {"type": "audio/pcm",
                                                                       "rate": 24000}
            await c.send({"type": "session.update", "session": {
                "instructions": "Be brief.", "tools": [tool],
                "audio": {"output": {"format": {"type": "audio/pcmu"}}}}})
            updated = (await c.wait_for("session.updated"))["session"]
            assert updated["instructions"] == "Be brief."
            assert updated["audio"]["output"]["format"] == {"type": "audio/pcmu"}
            assert updated["tools"][0]["parameters"]["properties"]["holding_line"]["spoken"] is True
            session = next(iter(server.connections)).session
            assert [spec.name for spec in session.tools.specs()] == ["check_hours"]

            done = await text_reply(c, "When do you open?")
            assert status(done) == ("completed", None)
            rid, item_id = done["response"]["id"], done["response"]["output"][0]["id"]
            deltas = [e for e in c.of("response.output_audio.delta") if e["response_id"] == rid]
            assert deltas and all(e["item_id"] == item_id for e in deltas)
            assert deltas[-1]["_at"] <= done["_at"]  # the last audio comes before response.done
            total, span = audio_of(c, rid, 8_000)
            assert total == pytest.approx(len(reply) * 0.030, rel=0.05)
            # paced like a hosted API: a short lead, then real time (not all at once)
            assert total - LEAD_S - 0.25 <= span <= total + 0.3, (total, span)
            assert not any(e["type"].startswith("x.") or "ts" in e for e in c.events)

            await c.send({"type": "conversation.item.truncate", "item_id": item_id,
                          "content_index": 0, "audio_end_ms": 1500})
            truncated = await c.wait_for("conversation.item.truncated")
            assert (truncated["item_id"], truncated["audio_end_ms"]) == (item_id, 1500)
            await c.send({"type": "conversation.item.retrieve", "item_id": item_id})
            item = (await c.wait_for("conversation.item.retrieved"))["item"]
            assert item["status"] == "incomplete"
            heard = item["content"][0]["transcript"]
            assert heard and len(heard) < len(reply)

    asyncio.run(scenario())


def test_with_turn_detection_off_the_client_commits_and_clears():
    tone = (0.3 * np.sin(2 * np.pi * 300 * np.arange(12_000) / 24_000)).astype(np.float32)
    pcm = to_int16(tone).astype("<i2").tobytes()

    async def scenario() -> None:
        async with serving(fake_stages("Okay.")) as server, client(server) as c:
            await c.send({"type": "session.update", "session": {
                "audio": {"input": {"turn_detection": None}}}})
            updated = (await c.wait_for("session.updated"))["session"]
            assert updated["audio"]["input"]["turn_detection"] is None
            await c.send(append(pcm))
            await c.send({"type": "input_audio_buffer.clear"})
            await c.wait_for("input_audio_buffer.cleared")
            await c.send(append(pcm))
            await c.send({"type": "input_audio_buffer.commit"})
            committed = await c.wait_for("input_audio_buffer.committed")
            # sent back to back, yet the clear dropped the first half second and only that
            session = next(iter(server.connections)).session
            inside = session.events.of_type("input_audio_buffer.committed")[-1]
            assert inside.reason == "client" and inside.audio_start_ms >= 450
            done = await c.wait_for("conversation.item.input_audio_transcription.completed")
            assert (done["item_id"], done["transcript"]) == (committed["item_id"], "Hello there.")
            assert not c.of("input_audio_buffer.speech_started")  # no server VAD turns

    asyncio.run(scenario())


def test_bad_input_gets_error_events_and_the_session_stays_up():
    async def scenario() -> None:
        async with serving(fake_stages("Okay.")) as server, client(server) as c:
            await c.wait_for("session.created")
            done = await text_reply(c)
            item_id = done["response"]["output"][0]["id"]
            barrage: list[tuple[Any, str]] = [
                ("{not json", "invalid_json"),
                (b"\xff\xfe\x00", "invalid_json"),
                ("[1, 2, 3]", "invalid_event"),
                ({"type": "no.such.event"}, "unknown_event_type"),
                ({"event_id": "evt_client_1", "type": "input_audio_buffer.append"},
                 "missing_required_parameter"),
                (append("%%% not base64 %%%"), "invalid_audio"),
                (append(b"\x01\x02\x03"), "invalid_audio"),  # pcm16 takes whole 2-byte samples
                (append("A" * ((1 << 20) + 4)), "message_too_large"),
                ({"type": "response.cancel"}, "response_cancel_not_active"),
                ({"type": "input_audio_buffer.commit"}, "input_audio_buffer_commit_empty"),
                ({"type": "conversation.item.truncate", "item_id": "item_nope", "audio_end_ms": 10},
                 "item_not_found"),
                ({"type": "conversation.item.truncate", "item_id": item_id,
                  "audio_end_ms": 999_999}, "invalid_audio_end_ms"),
                ({"type": "conversation.item.truncate", "item_id": item_id},
                 "missing_required_parameter"),
                ({"type": "conversation.item.retrieve", "item_id": "item_nope"}, "item_not_found"),
                ({"type": "conversation.item.create", "item": {"type": "message", "role": "robot",
                                                               "content": []}}, "invalid_value"),
                ({"type": "session.update", "session": {"audio": {"input": {"format": "mp3"}}}},
                 "invalid_value"),
                ({"type": "session.update", "session": {"turn_detection": {"type": "server_vad",
                                                                           "threshold": 3}}},
                 "invalid_value"),
                ({"type": "session.update", "session": "fast please"}, "invalid_value"),
            ]
            for message, _ in barrage:
                await c.send(message)
            await c.wait_for("error", count=len(barrage), timeout=10)
            errors = c.of("error")
            assert [e["error"]["code"] for e in errors] == [code for _, code in barrage]
            assert all(e["error"]["type"] == "invalid_request_error" and e["error"]["message"]
                       for e in errors)
            assert errors[4]["error"]["event_id"] == "evt_client_1"
            # still up, still answering, and nothing half-applied by the rejected updates
            await c.send({"type": "conversation.item.retrieve", "item_id": item_id})
            assert (await c.wait_for("conversation.item.retrieved"))["item"]["id"] == item_id
            assert not c.of("session.updated")

    asyncio.run(scenario())


def test_bearer_token_and_path_are_checked():
    async def scenario() -> None:
        async with serving(fake_stages(), token="s3cret") as server:
            for headers in (None, {"Authorization": "Bearer wrong"}):
                with pytest.raises(InvalidStatus) as info:
                    async with connect(server.url, proxy=None, additional_headers=headers):
                        pass
                assert info.value.response.status_code == 401
            with pytest.raises(InvalidStatus) as info:
                async with connect(server.url.replace("/v1/realtime", "/v1/other"), proxy=None,
                                   additional_headers={"Authorization": "Bearer s3cret"}):
                    pass
            assert info.value.response.status_code == 404
            async with client(server, additional_headers={"Authorization": "Bearer s3cret"}) as c:
                await c.wait_for("session.created")
                # a client that never sends session.update is served after a short wait
                session = next(iter(server.connections)).session
                assert not session.ready
                await asyncio.sleep(1.7)
                assert session.ready

    asyncio.run(scenario())


def test_a_client_that_drops_mid_response_frees_everything():
    stages = fake_stages()
    reply = " ".join(f"This reply, part {i}, is still being written when the line drops." for i in range(5))
    stages.llm = llm = SlowLLM(replies=[reply], seconds_per_token=0.05)

    async def scenario() -> None:
        async with serving(stages) as server:
            baseline = asyncio.all_tasks()
            async with connect(server.url, proxy=None) as ws:
                c = Client(ws)
                await c.send(user_text("Hi"))
                await c.send({"type": "response.create"})
                await c.wait_for("response.output_audio.delta")
                ws.transport.abort()  # no close handshake: the line just drops
                await c._reader
            assert llm.generating  # the reply was still being made when the line dropped
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and (
                    server.connections or llm.generating or asyncio.all_tasks() - baseline):
                await asyncio.sleep(0.05)
            assert not server.connections
            assert not asyncio.all_tasks() - baseline
            assert not llm.generating  # the model thread stopped too

    asyncio.run(scenario())


# --- spoken calls, on the real VAD, Whisper and Piper ----------------------------------------


@pytest.mark.models
def test_spoken_turn_over_pcm16_24k(real_stages, say):
    stages = with_stages(real_stages, llm=ScriptedLLM(replies=[
        "The pharmacy opens at nine tomorrow morning. It closes at six."]))
    speech = say("What time does the pharmacy open tomorrow?")

    async def scenario() -> None:
        async with serving(stages) as server, client(server) as c:
            await c.send({"type": "session.update", "session": {
                "instructions": "You answer questions about the pharmacy.",
                "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}}}}})
            await c.wait_for("session.updated")
            mic = Mic(c)
            mic.say(speech)
            done = await c.wait_for("response.done", timeout=40)
            await mic.stop()
            for kind in ("input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
                         "input_audio_buffer.committed", "response.created"):
                assert c.of(kind), kind
            assert "pharmacy" in transcripts(c)[0].lower()
            assert status(done) == ("completed", None)
            total, span = audio_of(c, done["response"]["id"], 2 * 24_000)
            assert total > 2.0
            assert total - LEAD_S - 0.4 <= span <= total + 1.0, (total, span)

    asyncio.run(scenario())


@pytest.mark.models
def test_a_number_said_in_groups_is_one_turn(real_stages, say):
    """The caller pauses 900 ms between the groups (tests/test_pauses_e2e.py holds the same call
    through `pipeline call`): one commit, with every group."""
    from pipeline.testing import paused_speech

    from .test_pauses_e2e import GROUPS

    stages = with_stages(real_stages, llm=ScriptedLLM(replies=["Got it."]))
    speech = paused_speech(GROUPS, say, tail_s=0.0)

    async def scenario() -> None:
        async with serving(stages) as server, client(server) as c:
            mic = await mic_at_24k(c)
            mic.say(speech)
            # every word sent, and past max_silence_ms: a second turn would be committed by now
            await asyncio.sleep(len(speech) / INPUT_RATE_HZ + 2.5)
            await c.wait_for("response.done", timeout=60)
            await mic.stop()
            assert len(c.of("input_audio_buffer.committed")) == 1, transcripts(c)
            assert "3456" in "".join(ch for ch in transcripts(c)[0] if ch.isdigit()), transcripts(c)

    asyncio.run(scenario())


@pytest.mark.models
def test_barge_in_cancels_the_reply_where_the_caller_cut_in(real_stages, say):
    long_reply = ("Our pharmacy opens at nine in the morning on weekdays. On Saturdays we open at "
                  "ten and close at four in the afternoon. On Sundays we are closed all day, but "
                  "the hospital pharmacy across the street stays open until midnight.")
    stages = with_stages(real_stages, llm=SlowLLM(replies=[long_reply, "Of course."],
                                                  seconds_per_token=0.08))
    first, second = say("When does the pharmacy open?"), say("Sorry, I only need Sunday hours.")

    async def scenario() -> None:
        async with serving(stages) as server, client(server) as c:
            await c.send({"type": "session.update", "session": {"instructions": "Pharmacy hours."}})
            mic = Mic(c)
            mic.say(first)
            audio = await c.wait_for("response.output_audio.delta", timeout=40)
            await asyncio.sleep(1.0)  # the caller lets the agent talk for a second, then cuts in
            mic.say(second)
            done = await c.wait_for("response.done", timeout=20)
            assert status(done) == ("cancelled", "turn_detected")
            truncated = await c.wait_for("conversation.item.truncated",
                                         lambda e: e["item_id"] == audio["item_id"])
            assert 1000 <= truncated["audio_end_ms"] <= 3000, truncated
            later = [e for e in c.of("response.output_audio.delta")
                     if e["response_id"] == audio["response_id"] and e["_at"] > done["_at"]]
            assert not later  # the cut-off reply sends nothing more
            await c.wait_for("conversation.item.input_audio_transcription.completed", count=2)
            await mic.stop()

    asyncio.run(scenario())


@pytest.mark.models
def test_four_concurrent_callers_each_get_their_own_transcript(real_stages, say):
    stages = with_stages(real_stages, llm=ScriptedLLM(replies=["Okay."]))
    callers = {"table": "Please book a table for two at seven tonight.",
               "refund": "My package never arrived and I want a refund.",
               "weather": "What will the weather be like tomorrow?",
               "sister": "Can you remind me to call my sister on Friday?"}

    async def one(server: RealtimeServer, sentence: str) -> str:
        async with client(server) as c:
            await c.send({"type": "session.update", "session": {"instructions": "Help."}})
            mic = Mic(c)
            mic.say(say(sentence))
            done = await c.wait_for("response.done", timeout=60)
            await mic.stop()
            assert status(done) == ("completed", None)
            return " ".join(transcripts(c)).lower()

    async def scenario() -> None:
        async with serving(stages) as server:
            heard = await asyncio.gather(*(one(server, s) for s in callers.values()))
        for key, transcript in zip(callers, heard, strict=True):
            assert key in transcript, (key, transcript)
            assert not any(other in transcript for other in callers if other != key), transcript

    asyncio.run(scenario())


@pytest.mark.models
def test_mulaw_8k_in_and_out_with_audio_held_until_the_first_update(real_stages, say):
    stages = with_stages(real_stages, llm=ScriptedLLM(replies=["Your order ships on Monday."]))

    async def scenario() -> None:
        async with serving(stages) as server, client(server) as c:
            await c.wait_for("session.created")
            # pcm16 sent before session.update is held, and decoded as the format it was sent in
            quiet = to_int16(np.zeros(24_000 // 2, np.float32)).astype("<i2").tobytes()
            await c.send(append(quiet))
            await c.send({"type": "session.update", "session": {
                "input_audio_format": "g711_ulaw",
                "audio": {"output": {"format": {"type": "audio/pcmu"}}}}})
            updated = (await c.wait_for("session.updated"))["session"]
            assert updated["audio"]["input"]["format"] == {"type": "audio/pcmu"}
            assert updated["audio"]["output"]["format"] == {"type": "audio/pcmu"}
            mic = Mic(c, encoding="pcmu", rate_hz=8_000)
            mic.say(say("When will my order ship?"))
            done = await c.wait_for("response.done", timeout=40)
            await mic.stop()
            assert "order" in transcripts(c)[0].lower()
            started = c.of("input_audio_buffer.speech_started")[0]
            assert started["audio_start_ms"] >= 200  # the held half second came first
            total, _ = audio_of(c, done["response"]["id"], 8_000)
            assert total > 1.0 and status(done) == ("completed", None)

    asyncio.run(scenario())


def test_response_create_parameters_item_delete_and_their_errors():
    stages = fake_stages("Okay then.")

    async def scenario() -> None:
        async with serving(stages) as server, client(server) as c:
            await c.wait_for("session.created")
            await c.send(user_text("Hi"))
            added = await c.wait_for("conversation.item.done")
            assert added["item"]["content"][0] == {"type": "input_text", "text": "Hi"}
            # out of band, text only, own instructions and context: nothing joins the conversation
            await c.send({"type": "response.create", "response": {
                "conversation": "none", "output_modalities": ["text"], "instructions": "Classify.",
                "metadata": {"topic": "x"}, "input": [
                    {"type": "item_reference", "id": added["item"]["id"]},
                    {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                     "text": "Label it."}]}]}})
            done = await c.wait_for("response.done")
            assert done["response"]["conversation_id"] is None
            assert done["response"]["metadata"] == {"topic": "x"}
            assert done["response"]["output_modalities"] == ["text"]
            assert not c.of("response.output_audio.delta")
            assert len(c.of("conversation.item.added")) == 1  # only the user's message
            prompt = stages.llm.requests[-1]
            assert prompt[0]["content"].startswith("Classify.")
            assert [m["content"] for m in prompt[1:]] == ["Hi", "Label it."]
            # delete, then the errors a hosted API gives
            await c.send({"type": "conversation.item.delete", "item_id": added["item"]["id"]})
            assert (await c.wait_for("conversation.item.deleted"))["item_id"] == added["item"]["id"]
            for message, code in [
                ({"type": "conversation.item.delete", "item_id": added["item"]["id"]}, "item_not_found"),
                ({"type": "response.create", "response": {"colour": "blue"}}, "unknown_parameter"),
                ({"type": "response.create", "response": {"conversation": "other"}}, "invalid_value"),
                ({"type": "response.create", "response": {"input": [
                    {"type": "item_reference", "id": "item_nope"}]}}, "item_not_found"),
                ({"type": "x" * 100_000}, "unknown_event_type"),
            ]:
                await c.send(message)
                error = (await c.wait_for("error", lambda e, code=code: e["error"]["code"] == code))
                assert len(error["error"]["message"]) <= 300  # never echoes the input back at length

    asyncio.run(scenario())


@pytest.mark.models
def test_a_caller_cut_off_once_is_not_cut_off_again_in_the_session(real_stages, say):
    """Waits learned per caller over the realtime protocol: a request whose pause follows words
    that look finished is cut in two; the caller goes on as the reply begins (an interruption),
    and the session learns that pause, so the next such request, later in the same session, is
    one turn (tests/test_learned_pauses_call.py holds the rule; bench.pauses --one-call the voices)."""
    from pipeline.testing import paused_speech

    stages = with_stages(real_stages, llm=ScriptedLLM(replies=["Sure, let me note that down for you."] * 4))
    # a longer first pause: cut off even where a loaded machine is slow to commit
    first = paused_speech(["I need a taxi to the station.", "at half past six tomorrow."], say, pause_s=1.2)
    later = paused_speech(["We need two rooms.", "for three nights in May."], say, pause_s=0.9, tail_s=0.0)

    async def scenario() -> None:
        async with serving(stages) as server, client(server) as c:
            mic = await mic_at_24k(c)
            mic.say(first)
            await asyncio.sleep(len(first) / INPUT_RATE_HZ + 4.0)
            assert len(c.of("input_audio_buffer.committed")) == 2, transcripts(c)  # cut off, went on
            mic.say(later)
            await asyncio.sleep(len(later) / INPUT_RATE_HZ + 2.5)  # past the learned long wait too
            await c.wait_for("response.done", timeout=60)
            await mic.stop()
            said = transcripts(c)
            assert len(c.of("input_audio_buffer.committed")) == 3, said  # the second request whole
            assert "rooms" in said[-1].lower() and "may" in said[-1].lower(), said

    asyncio.run(scenario())
