"""The realtime server under abuse: each test bounds its load in count and time, on loopback."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import logging
import time
import tracemalloc

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from pipeline.base.config import Config
from pipeline.stages.fakes import ScriptedLLM
from pipeline.transports import realtime_connection
from pipeline.transports.realtime_connection import Connection
from pipeline.transports.realtime_server import RealtimeServer

from .test_realtime_server import SlowLLM, client, fake_stages, serving, text_reply, user_text


def test_a_client_that_never_reads_is_dropped_with_its_outbox_bounded(monkeypatch):
    cap = 256 << 10
    monkeypatch.setattr(realtime_connection, "MAX_OUTBOX_BYTES", cap)
    monkeypatch.setattr(realtime_connection, "SEND_STALL_S", 1.0)
    peak = [0]
    send = Connection._send

    def measured(self, payload):
        send(self, payload)
        peak[0] = max(peak[0], self._outbox_bytes)

    monkeypatch.setattr(Connection, "_send", measured)

    async def scenario() -> None:
        async with serving(fake_stages()) as server:
            # max_queue=1: the client library stops reading after one message, like a stuck app
            async with connect(server.url, proxy=None, max_queue=1) as ws:
                closed = False
                for _ in range(30_000):  # each bad message earns an error event it never reads
                    try:
                        await ws.send("{bad")
                    except ConnectionClosed:
                        closed = True
                        break
                deadline = time.monotonic() + 10
                while server.connections and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert closed or not server.connections
            assert not server.connections
        assert 0 < peak[0] <= cap  # figure: the outbox never held more than its cap

    asyncio.run(scenario())


def test_origin_tokens_loopback_and_the_connection_cap():
    with pytest.raises(ValueError, match="without a token"):
        RealtimeServer(stages=fake_stages(), config=Config.default(), host="0.0.0.0")

    async def scenario() -> None:
        async with serving(fake_stages(), max_connections=2) as server:
            with pytest.raises(InvalidStatus) as info:
                async with connect(server.url, proxy=None, origin="http://evil.example"):
                    pass
            assert info.value.response.status_code == 403
            page = f"http://127.0.0.1:{server.port}"  # a page the server itself serves
            async with client(server, origin=page) as a, client(server) as b:
                await a.wait_for("session.created")
                await b.wait_for("session.created")
                with pytest.raises(InvalidStatus) as info:
                    async with connect(server.url, proxy=None):
                        pass
                assert info.value.response.status_code == 503

    asyncio.run(scenario())


def test_audio_faster_than_real_time_is_refused_past_its_lead():
    async def scenario() -> None:
        async with serving(fake_stages()) as server, client(server) as c:
            await c.wait_for("session.created")
            chunk = base64.b64encode(b"\x00\x00" * 2400).decode("ascii")  # 100 ms at 24 kHz
            started = time.monotonic()
            for _ in range(600):  # 60 s of audio, sent as fast as the socket takes it
                await c.send({"type": "input_audio_buffer.append", "audio": chunk})
            elapsed = time.monotonic() - started
            # past 30 s ahead of the session clock, which started a little before `started`:
            # a second of slack for a loaded machine
            refused = 600 - int((30 + elapsed) * 10) - 10
            await c.wait_for("error", count=refused, timeout=10)
            assert {e["error"]["code"] for e in c.of("error")} == {"input_audio_too_fast"}
            session = next(iter(server.connections)).session
            taken_s = session.input.samples_in / 16_000
            assert taken_s <= 30 + elapsed + 1  # figure: at most 30 s of audio ahead was taken

    asyncio.run(scenario())


def test_work_stops_within_a_second_of_a_disconnect():
    stages = fake_stages()
    stages.llm = llm = SlowLLM(replies=[" ".join(f"Still talking, part {i}." for i in range(40))], seconds_per_token=0.05)

    async def scenario() -> None:
        async with serving(stages) as server:
            async with connect(server.url, proxy=None) as ws:
                await ws.send('{"type": "conversation.item.create", "item": {"type": "message", '
                              '"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}}')
                await ws.send('{"type": "response.create"}')
                while '"response.output_audio.delta"' not in await ws.recv():
                    pass
                left = time.monotonic()
                ws.transport.abort()
            while (server.connections or llm.generating) and time.monotonic() - left < 5:
                await asyncio.sleep(0.01)
            stopped_s = time.monotonic() - left
            assert not server.connections and not llm.generating
            assert stopped_s < 1.0, stopped_s  # figure: all work stopped this soon

    asyncio.run(scenario())


def test_eight_concurrent_sessions_stay_isolated():
    words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]
    stages = fake_stages()
    stages.llm = ScriptedLLM(rules=[[w, f"You said {w}."] for w in words])

    async def one(server: RealtimeServer, word: str) -> list[str]:
        async with client(server) as c:
            await c.wait_for("session.created")
            done = await text_reply(c, f"My word is {word}.")
            await c.send(user_text("again"))
            return [o["content"][0]["transcript"] for o in done["response"]["output"]]

    async def scenario() -> None:
        async with serving(stages) as server:
            said = await asyncio.wait_for(asyncio.gather(*(one(server, w) for w in words)), 60)
        assert said == [[f"You said {w}."] for w in words]

    asyncio.run(scenario())


@pytest.mark.parametrize("beta", [False, True])
def test_a_frame_too_large_for_the_socket_gets_an_error_before_the_close(beta):
    """Over 8x the message limit the socket refuses the frame from its header and must close
    (1009); the client still learns why from an `error` event first."""
    limit = 16 << 10  # the socket reads up to 8x this: 128 KiB

    async def scenario() -> None:
        async with serving(fake_stages(), max_message_bytes=limit) as server:
            headers = {"OpenAI-Beta": "realtime=v1"} if beta else None
            async with connect(server.url, proxy=None, additional_headers=headers) as ws:
                json.loads(await ws.recv())  # session.created
                await ws.send(json.dumps({"type": "input_audio_buffer.append",
                                          "audio": "A" * (200 << 10)}))
                got = []
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        got.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
                errors = [e for e in got if e["type"] == "error"]
                assert [e["error"]["code"] for e in errors] == ["message_too_large"]
                assert "appends of 20-100 ms" in errors[0]["error"]["message"]
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            deadline = time.monotonic() + 5
            while server.connections and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert not server.connections  # the session ended with its socket

    asyncio.run(scenario())


def test_a_closed_session_lets_go_of_its_audio_without_the_cycle_collector():
    """Sessions, their owners and the WebSocket library's objects refer to each other, so only
    the cyclic collector frees them; what a closed session still holds until then must not grow
    with the call (its audio history, its event log)."""

    async def call(server: RealtimeServer, seconds: int) -> None:
        async with client(server) as c:
            await c.wait_for("session.created")
            noise = base64.b64encode(np.random.default_rng(seconds).integers(
                -3000, 3000, 2400, dtype=np.int16).tobytes()).decode("ascii")  # 100 ms, 24 kHz
            for _ in range(seconds * 10):
                await c.send({"type": "input_audio_buffer.append", "audio": noise})
            await text_reply(c, "Hello there.")
        deadline = time.monotonic() + 10
        while server.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)

    async def retained(server: RealtimeServer, seconds: int) -> int:
        before = tracemalloc.get_traced_memory()[0]
        await call(server, seconds)
        return tracemalloc.get_traced_memory()[0] - before

    async def scenario() -> tuple[int, int]:
        async with serving(fake_stages()) as server:
            await call(server, 1)  # first-use allocations (caches, lazy imports) out of the way
            gc.collect()
            gc.disable()
            tracemalloc.start()
            try:
                return await retained(server, 1), await retained(server, 20)
            finally:
                tracemalloc.stop()
                gc.enable()

    short, long = asyncio.run(scenario())
    # figures: each closed session keeps ~0.2 MB until collected (half of it the library's
    # compression state), the same after 1 s or 20 s of audio; without the release it kept
    # 0.39 MB and 0.64 MB (its 6 s of input history and its event log's audio)
    assert long - short < 128 << 10, (short, long)
    assert long < 512 << 10, (short, long)


# --- what a client sends that is JSON, or a header, but not something the call can carry ----------


def _sent(event_id: str, body: str) -> str:
    """A text frame written by hand, so the JSON escapes in `body` are exactly what goes out."""
    return f'{{"event_id": "{event_id}", {body}}}'


def test_a_lone_surrogate_is_refused_at_the_door_and_the_call_goes_on():
    """`\\udc80` is valid JSON but not text: Python turns it into a lone surrogate, which no model,
    log or UTF-8 wire can take. Before, the item went in and every later response.create failed
    with a server_error; now the event is refused, naming the field, and nothing of it is kept."""
    bad = [
        ("evt_item", '"type": "conversation.item.create", "item": {"type": "message", "role": '
                     '"user", "content": [{"type": "input_text", "text": "hi \\udc80"}]}',
         "item.content[0].text"),
        ("evt_update", '"type": "session.update", "session": {"instructions": "Be \\ud800 kind."}',
         "session.instructions"),
        ("evt_response", '"type": "response.create", "response": {"instructions": "x\\ud800"}',
         "response.instructions"),
        ("evt_key", '"type": "response.create", "response": {"metadata": {"k\\udfff": "v"}}',
         "response.metadata"),
    ]

    async def scenario() -> None:
        async with serving(fake_stages("Okay.")) as server, client(server) as c:
            await c.wait_for("session.created")
            for event_id, body, _ in bad:
                await c.send(_sent(event_id, body))
            await c.send('{"type": "response.create", "event_id": "evt_\\udc80"}')
            await c.wait_for("error", count=len(bad) + 1, timeout=10)
            errors = [e["error"] for e in c.of("error")]
            assert [e["code"] for e in errors] == ["invalid_value"] * (len(bad) + 1)
            assert all(e["type"] == "invalid_request_error" for e in errors)
            for error, (event_id, _, field) in zip(errors, bad, strict=False):
                assert error["event_id"] == event_id
                assert error["param"] == field and f"`{field}`" in error["message"]
                assert "surrogate" in error["message"]
            assert errors[-1]["event_id"] is None  # an event_id that is not text is not echoed
            assert errors[-1]["param"] == "event_id"
            # nothing of them was taken: no item, no update, no response
            assert not c.of("conversation.item.added") and not c.of("conversation.item.created")
            assert not c.of("session.updated") and not c.of("response.created")
            done = await text_reply(c, "Hello")
            assert done["response"]["status"] == "completed"
            assert len(c.of("response.created")) == 1
            assert not [e for e in c.of("error") if e["error"]["type"] == "server_error"]

    asyncio.run(scenario())


def test_json_too_deep_or_with_numbers_no_reader_can_take_is_invalid_json_and_the_call_goes_on():
    """Python's reader gives up on 100,000 nested arrays (RecursionError) and on a 5001-digit
    integer (ValueError); those were server_errors. NaN and 1e999 it reads, and would have sent
    back as bare NaN/Infinity, which a browser cannot parse; deep nesting it reads would fail
    later (a copy of an 800-deep tool schema recursed too far)."""
    deep_schema = '{"a": ' * 800 + '1' + '}' * 800
    def tool(parameters: str) -> str:
        return ('{"type": "session.update", "session": {"tools": [{"type": "function", "name": '
                f'"f", "description": "d", "parameters": {parameters}}}]}}}}')

    bad = [
        "[" * 100_000 + "]" * 100_000,
        '{"type": "conversation.item.truncate", "item_id": "x", "audio_end_ms": ' + "9" * 5001 + "}",
        '{"type": "conversation.item.truncate", "item_id": "x", "audio_end_ms": 9007199254740992}',
        tool('{"type": "object", "minimum": NaN}'),
        tool('{"type": "object", "maximum": -Infinity}'),
        tool('{"type": "object", "maximum": 1e999}'),
        tool(deep_schema),
    ]

    async def scenario() -> None:
        async with serving(fake_stages("Okay.")) as server, client(server) as c:
            await c.wait_for("session.created")
            for message in bad:
                await c.send(message)
            await c.wait_for("error", count=len(bad), timeout=10)
            errors = [e["error"] for e in c.of("error")]
            assert [e["code"] for e in errors] == ["invalid_json"] * len(bad), errors
            assert all(e["type"] == "invalid_request_error" for e in errors)
            assert "deep" in errors[0]["message"] and "deep" in errors[-1]["message"]
            assert "sys." not in errors[1]["message"]  # advice for the client, not the server
            assert not c.of("session.updated")
            done = await text_reply(c, "Hello")
            assert done["response"]["status"] == "completed"

    asyncio.run(scenario())


async def _handshake(server: RealtimeServer, extra: bytes) -> tuple[int, bytes]:
    """A WebSocket upgrade written by hand, so a header can hold any bytes; (status, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /v1/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"Sec-WebSocket-Version: 13\r\n" + extra + b"\r\n")
    try:
        response = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_non_ascii_handshake_headers_get_a_refusal_not_a_server_error(caplog):
    """The WebSocket library keeps a header's non-ASCII bytes as surrogates; encoding one as UTF-8
    failed, and the handshake answered 500 with a traceback in the log."""

    async def scenario() -> None:
        async with serving(fake_stages(), token="s3cret") as server:
            for value in (b"Bearer \xff\xfe", "Bearer s3cr\u00e9t".encode()):
                status, body = await _handshake(server, b"Authorization: " + value + b"\r\n")
                assert status == 401, (value, status, body)
                assert b"Authorization: Bearer <token>" in body
            status, _ = await _handshake(server, b"Sec-WebSocket-Protocol: realtime, "
                                                 b"openai-insecure-api-key.\xff\r\n")
            assert status == 401
            status, body = await _handshake(server, b"Authorization: Bearer s3cret\r\n"
                                                    b"Origin: http://\xff.example\r\n")
            assert status == 403 and b"may not use this server" in body
            async with client(server, additional_headers={"Authorization": "Bearer s3cret"}) as c:
                await c.wait_for("session.created")  # and the right token still gets in

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
