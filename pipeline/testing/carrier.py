"""A carrier's end of a media stream, written from the carriers' public documentation (Twilio
Media Streams' WebSocket messages, Telnyx's media-streaming AsyncAPI page, Plivo's audio-streaming
reference), not from the server's code: what the telephony tests and `bench.wire --via` call
`pipeline serve` with.

`async with Carrier("twilio", port) as c:` opens `/telephony/twilio`, sends `connected` and
`start`, then streams the caller as 20 ms frames of 8 kHz G.711 at real-time pace (silence when
the caller is quiet). It queues the agent's audio and plays it one frame per 20 ms, starting
`DELAY_FRAMES` ticks after audio arrives (a carrier's own buffer), echoes each mark (Plivo: a
checkpoint) when playout reaches it, and on a clear drops what it queued (Twilio and Telnyx echo
the queued marks then, as their documentation says). `say(hz)` speaks a tone, `speak(audio)`
16 kHz speech, `press(keys)` sends DTMF, `stop()` hangs up; `arrivals` holds when each agent
frame came in, `said_from` when the caller's last utterance started going out.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from pipeline.base.audio import (
    INPUT_RATE_HZ,
    PHONE_TAPS,
    StreamResampler,
    alaw_decode,
    alaw_encode,
    dbfs,
    mulaw_decode,
    mulaw_encode,
)

from .sounds import PHONE_RATE_HZ

DELAY_FRAMES = 10  # the carrier plays what it got 200 ms later: heard lags sent


class Carrier:
    """One call as the carrier runs it: the caller's audio out, the agent's audio played."""

    def __init__(self, kind: str, port: int, *, token: str | None = None,
                 signature: str | None = None, echo_marks: bool = True, alaw: bool = False) -> None:
        self.kind = kind
        self.echo_marks = echo_marks
        self.alaw = alaw  # Telnyx PCMA
        self.decode, self.encode = (alaw_decode, alaw_encode) if alaw else (mulaw_decode, mulaw_encode)
        self.silence = bytes([0xD5 if alaw else 0xFF]) * 160
        self.agent: list[bytes] = []  # every frame played
        self.url = f"ws://127.0.0.1:{port}/telephony/{kind}"
        self.token = token
        self.signature = signature
        self.stream_id = f"{kind}-stream-{next(_ids)}"
        self.seq = itertools.count(1)
        self.caller: deque[bytes] = deque()  # mu-law frames still to say
        self.queue: deque[tuple[str, Any]] = deque()  # ("frame", bytes) / ("mark", name)
        self.received: list[dict[str, Any]] = []
        self.played_frames = 0
        self.loud_frames = 0
        self.echoed: list[tuple[str, int]] = []  # (mark, frames played when echoed)
        self.clears: list[int] = []  # frames played at each clear
        self.closed_at: float | None = None
        self.close_code: int | None = None
        self.frames_queued_at_close = 0
        self.arrivals: list[tuple[float, bytes]] = []  # (monotonic time, frame) per agent frame
        self.said_from: float | None = None  # when the last utterance's first frame went out

    # the carrier's events, in its words
    def _start(self) -> dict[str, Any]:
        params = {"token": self.token} if self.token else {}
        if self.kind == "twilio":
            return {"event": "start", "sequenceNumber": "1", "streamSid": self.stream_id,
                    "start": {"accountSid": "AC0", "streamSid": self.stream_id, "callSid": "CA1",
                              "tracks": ["inbound"], "customParameters": params,
                              "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000,
                                              "channels": 1}}}
        if self.kind == "telnyx":
            return {"event": "start", "sequence_number": "1", "stream_id": self.stream_id,
                    "start": {"user_id": "u1", "call_control_id": "v3:call", "from": "+1",
                              "to": "+2", "custom_parameters": params,
                              "media_format": {"encoding": "PCMA" if self.alaw else "PCMU",
                                               "sample_rate": 8000,
                                               "channels": 1}}}
        return {"event": "start", "sequenceNumber": 1,
                "start": {"callId": "call-1", "streamId": self.stream_id, "accountId": "MA0",
                          "tracks": ["inbound"],
                          "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000}},
                "extra_headers": f"token={self.token}" if self.token else ""}

    def _media(self, chunk: int, payload: bytes) -> dict[str, Any]:
        media = {"track": "inbound", "chunk": str(chunk), "timestamp": str(chunk * 20),
                 "payload": base64.b64encode(payload).decode()}
        if self.kind == "twilio":
            return {"event": "media", "sequenceNumber": str(next(self.seq)),
                    "streamSid": self.stream_id, "media": media}
        if self.kind == "telnyx":
            return {"event": "media", "sequence_number": str(next(self.seq)),
                    "stream_id": self.stream_id, "media": media}
        return {"event": "media", "sequenceNumber": next(self.seq), "streamId": self.stream_id,
                "media": {**media, "chunk": chunk}}

    def _mark_echo(self, name: str) -> dict[str, Any]:
        if self.kind == "twilio":
            return {"event": "mark", "sequenceNumber": str(next(self.seq)),
                    "streamSid": self.stream_id, "mark": {"name": name}}
        if self.kind == "telnyx":
            return {"event": "mark", "sequence_number": str(next(self.seq)),
                    "stream_id": self.stream_id, "mark": {"name": name}}
        return {"event": "playedStream", "sequenceNumber": next(self.seq),
                "streamId": self.stream_id, "name": name}

    def _dtmf(self, digit: str) -> dict[str, Any]:
        if self.kind == "twilio":
            return {"event": "dtmf", "streamSid": self.stream_id,
                    "sequenceNumber": str(next(self.seq)),
                    "dtmf": {"track": "inbound_track", "digit": digit}}
        if self.kind == "telnyx":
            return {"event": "dtmf", "stream_id": self.stream_id,
                    "sequence_number": str(next(self.seq)), "dtmf": {"digit": digit}}
        return {"event": "dtmf", "streamId": self.stream_id, "sequenceNumber": next(self.seq),
                "dtmf": {"digit": digit, "track": "inbound"}}

    # the call
    async def __aenter__(self) -> Carrier:
        headers = {"X-Twilio-Signature": self.signature} if self.signature else None
        self.ws = await connect(self.url, additional_headers=headers)
        if self.kind != "plivo":  # Plivo opens with start
            await self.ws.send(json.dumps({"event": "connected", "protocol": "Call",
                                           "version": "1.0.0"}))
        await self.ws.send(json.dumps(self._start()))
        self.tasks = [asyncio.ensure_future(t) for t in (self._read(), self._talk(), self._play())]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self.tasks:
            task.cancel()
        await self.ws.close()

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                event = json.loads(message)
                self.received.append(event)
                kind = event["event"]
                if kind in ("media", "playAudio"):
                    assert event["media"].get("contentType", "audio/x-mulaw") == "audio/x-mulaw"
                    payload = base64.b64decode(event["media"]["payload"])
                    assert len(payload) == 160, "20 ms frames of 8 kHz mu-law"
                    self.arrivals.append((time.monotonic(), payload))
                    self.queue.append(("frame", payload))
                elif kind in ("mark", "checkpoint"):
                    name = event["mark"]["name"] if kind == "mark" else event["name"]
                    self.queue.append(("mark", name))
                elif kind in ("clear", "clearAudio"):
                    self.clears.append(self.played_frames)
                    marks = [v for k, v in self.queue if k == "mark"]
                    self.queue.clear()
                    if self.kind == "plivo":
                        await self.ws.send(json.dumps({"event": "clearedAudio",
                                                       "streamId": self.stream_id}))
                    else:  # Twilio and Telnyx send back the marks a clear dropped
                        for name in marks:
                            await self.ws.send(json.dumps(self._mark_echo(name)))
        except ConnectionClosed:
            pass
        self.closed_at = time.monotonic()
        self.close_code = self.ws.close_code
        self.frames_queued_at_close = sum(1 for k, _ in self.queue if k == "frame")

    async def _every_20ms(self) -> AsyncIterator[int]:
        start = time.monotonic()
        for n in itertools.count():
            await asyncio.sleep(max(0.0, start + n * 0.02 - time.monotonic()))
            yield n

    async def _talk(self) -> None:
        async for n in self._every_20ms():  # real-time pace, silence when the caller is quiet
            if self.caller and self.caller[0] is _UTTERANCE:
                self.caller.popleft()
                self.said_from = time.monotonic()
            frame = self.caller.popleft() if self.caller else self.silence
            try:
                await self.ws.send(json.dumps(self._media(n, frame)))
            except ConnectionClosed:
                return

    async def _play(self) -> None:
        wait = 0  # a carrier's own delay: playout starts DELAY_FRAMES ticks after audio arrives
        async for _ in self._every_20ms():  # the carrier's playout, one frame a tick
            if not any(k == "frame" for k, _ in self.queue):
                wait = 0
            elif wait < DELAY_FRAMES:
                wait += 1
                continue
            played = False
            while self.queue and (not played or self.queue[0][0] == "mark"):
                kind, value = self.queue.popleft()
                if kind == "mark":
                    self.echoed.append((value, self.played_frames))
                    if not self.echo_marks:
                        continue
                    try:
                        await self.ws.send(json.dumps(self._mark_echo(value)))
                    except ConnectionClosed:
                        return
                else:
                    played = True
                    self.played_frames += 1
                    self.loud_frames += dbfs(self.decode(value)) > -30
                    self.agent.append(value)

    async def say(self, freq_hz: int, seconds: float = 0.8) -> None:
        t = np.arange(int(8000 * seconds)) / 8000
        audio = self.encode((0.3 * np.sin(2 * np.pi * freq_hz * t)).astype(np.float32))
        await self._say(audio)

    async def speak(self, audio: np.ndarray, rate_hz: int = INPUT_RATE_HZ) -> None:
        """Say `audio` (speech at `rate_hz`) down the line: to 8 kHz through the phone band's
        filter, G.711, 20 ms frames at real time; returns once the last frame is sent."""
        narrow = StreamResampler(rate_hz, PHONE_RATE_HZ, taps=PHONE_TAPS).process(
            np.asarray(audio, np.float32))
        await self._say(self.encode(narrow))

    async def _say(self, coded: bytes) -> None:
        frames = [coded[i:i + 160] for i in range(0, len(coded), 160)]
        frames[-1] = frames[-1] + self.silence[len(frames[-1]):]
        self.caller.extend([_UTTERANCE, *frames])
        while self.caller:
            await asyncio.sleep(0.02)

    async def press(self, keys: str) -> None:
        for key in keys:
            await self.ws.send(json.dumps(self._dtmf(key)))
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        if self.kind == "plivo":  # Plivo has no stop event: the call's end closes the socket
            await self.ws.close()
        else:
            stop = {"event": "stop", "streamSid": self.stream_id,
                    "stop": {"accountSid": "AC0", "callSid": "CA1"}} if self.kind == "twilio" else {
                    "event": "stop", "stream_id": self.stream_id,
                    "stop": {"user_id": "u1", "call_control_id": "v3:call"}}
            await self.ws.send(json.dumps(stop))

    async def until(self, check: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"{self.kind}: {what} within {timeout} s"
            await asyncio.sleep(0.02)

    def idle(self) -> bool:
        """Nothing of the agent's queued to play."""
        return not any(k == "frame" for k, _ in self.queue)

    def heard_ms(self, item_id: str) -> int:
        """What the echoed marks say the caller heard of an item (its frames are contiguous)."""
        before = [f for name, f in self.echoed if not name.startswith(item_id + ":")]
        mine = [(i, f) for i, (name, f) in enumerate(self.echoed) if name.startswith(item_id + ":")]
        first = mine[0][0]
        start = max((f for name, f in self.echoed[:first]), default=0) if before else 0
        return (mine[-1][1] - start) * 20


_ids = itertools.count(1)
_UTTERANCE = b""  # in the caller's queue: the next frame starts an utterance

