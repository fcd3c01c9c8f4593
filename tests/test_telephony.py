"""Telephony media streams: G.711 against known vectors, the phone-band filters, and a carrier
per dialect (Twilio, Telnyx, Plivo) against `pipeline serve` on one server for the module.

Each carrier (`pipeline.testing.carrier`) is written from its public documentation, not from the
server's code: it sends `connected` / `start`, streams the caller as 20 ms frames of 8 kHz μ-law at real-time
pace, queues the agent's audio and plays it one frame per 20 ms (its own delay, like a real
carrier), echoes each mark (Plivo: checkpoint) when playout reaches it, and on a clear drops what
it queued (Twilio and Telnyx echo the queued marks then, as their docs say). The caller speaks
tones; the fake STT hears a tone's pitch as a sentence.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from pipeline.base.audio import (
    PHONE_TAPS,
    StreamResampler,
    alaw_decode,
    alaw_encode,
    dbfs,
    mulaw_decode,
    mulaw_encode,
)
from pipeline.base.config import Config, apply
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.testing import carrier
from pipeline.testing.server import ServerThread
from pipeline.turns import HeuristicCompleteness

# --- G.711 against known vectors ----------------------------------------------------------------

# 16-bit linear -> code, from the ITU-T G.191 reference coder (g711.c) and the G.711 tables.
MULAW_VECTORS = {0: 0xFF, -1: 0x7F, 1: 0xFF, 4: 0xFE, -5: 0x7E, 32767: 0x80, -32768: 0x00,
                 1000: 0xCE, -1000: 0x4E, 8159 * 4: 0x80, 124: 0xEF}
ALAW_VECTORS = {0: 0xD5, -1: 0x55, 32767: 0xAA, -32768: 0x2A, 1000: 0xFA, -1000: 0x7A,
                16: 0xD4, -17: 0x54}
# code -> 16-bit linear (the decoding tables)
MULAW_LEVELS = {0x80: 32124, 0x00: -32124, 0xFF: 0, 0x7F: 0, 0xFE: 8, 0xEF: 132, 0x8F: 16764,
                0xCE: 988, 0x4E: -988}
ALAW_LEVELS = {0xD5: 8, 0x55: -8, 0xAA: 32256, 0x2A: -32256, 0xFA: 1008, 0x7A: -1008}


def _codes(encode: Any, values: list[int]) -> list[int]:
    return list(encode(np.array(values, np.float64) / 32768.0))


def test_g711_encoders_match_the_reference_vectors() -> None:
    assert _codes(mulaw_encode, list(MULAW_VECTORS)) == list(MULAW_VECTORS.values())
    assert _codes(alaw_encode, list(ALAW_VECTORS)) == list(ALAW_VECTORS.values())


def test_g711_decoders_match_the_tables() -> None:
    mu = np.round(mulaw_decode(bytes(MULAW_LEVELS)) * 32768).astype(int)
    assert mu.tolist() == list(MULAW_LEVELS.values())
    a = np.round(alaw_decode(bytes(ALAW_LEVELS)) * 32768).astype(int)
    assert a.tolist() == list(ALAW_LEVELS.values())


def test_g711_every_code_survives_a_round_trip() -> None:
    codes = np.arange(256, dtype=np.uint8)
    back = np.frombuffer(mulaw_encode(mulaw_decode(codes.tobytes())), np.uint8)
    assert (back == codes).sum() == 255 and back[0x7F] == 0xFF  # negative zero decodes to 0
    back = np.frombuffer(alaw_encode(alaw_decode(codes.tobytes())), np.uint8)
    assert (back == codes).all()


def test_g711_against_the_standard_library_coder_where_it_follows_the_standard() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # gone in Python 3.13
    pcm = np.arange(-32768, 32768, dtype=np.int32)
    raw = pcm.astype("<i2").tobytes()
    x = pcm / 32768.0
    assert alaw_encode(x) == audioop.lin2alaw(raw, 2)
    codes = bytes(range(256))
    assert np.array_equal(np.round(mulaw_decode(codes) * 32768),
                          np.frombuffer(audioop.ulaw2lin(codes, 2), "<i2"))
    assert np.array_equal(np.round(alaw_decode(codes) * 32768),
                          np.frombuffer(audioop.alaw2lin(codes, 2), "<i2"))
    # audioop negates a negative sample before its 14-bit shift where G.191 takes the one's
    # complement: the two agree on every sample >= 0
    ours = np.frombuffer(mulaw_encode(x), np.uint8)
    theirs = np.frombuffer(audioop.lin2ulaw(raw, 2), np.uint8)
    assert np.array_equal(ours[pcm >= 0], theirs[pcm >= 0])


# --- the phone-band filters ---------------------------------------------------------------------


def _level_at(x: np.ndarray, rate_hz: int, freq_hz: float) -> float:
    """dB of the spectrum's peak within 50 Hz of `freq_hz` (Hann window)."""
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    freqs = np.fft.rfftfreq(len(x), 1 / rate_hz)
    near = np.abs(freqs - freq_hz) < 50
    return 20 * np.log10(spectrum[near].max() + 1e-12)


def _tone(freq_hz: float, rate_hz: int, seconds: float = 1.0) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * freq_hz * np.arange(int(rate_hz * seconds)) / rate_hz)).astype(np.float32)


def test_upsampling_8k_to_16k_filters_the_image() -> None:
    tone = _tone(3000, 8000)
    plain = StreamResampler(8000, 16000).process(tone)[200:]
    filtered = StreamResampler(8000, 16000, taps=PHONE_TAPS, filter_up=True).process(tone)[200:]
    # a 3 kHz tone's image sits at 5 kHz: linear interpolation alone leaves it ~13 dB down
    assert _level_at(plain, 16000, 3000) - _level_at(plain, 16000, 5000) < 20
    assert dbfs(plain) < dbfs(_tone(3000, 16000)) - 2  # and dulls the band's top
    assert _level_at(filtered, 16000, 3000) - _level_at(filtered, 16000, 5000) > 55
    for freq in (300, 1000, 3000):  # the phone band passes within 1 dB
        x = StreamResampler(8000, 16000, taps=PHONE_TAPS, filter_up=True).process(_tone(freq, 8000))
        assert abs(dbfs(x[400:-400]) - dbfs(_tone(freq, 16000))) < 1.0


def test_downsampling_to_8k_keeps_aliases_out() -> None:
    for src in (22050, 16000, 24000):
        down = StreamResampler(src, 8000, taps=PHONE_TAPS).process(_tone(5000, src))[200:]
        ref = StreamResampler(src, 8000, taps=PHONE_TAPS).process(_tone(1000, src))[200:]
        # 5 kHz would fold to 3 kHz at 8 kHz: it must be 55 dB under a passed 1 kHz tone
        assert _level_at(ref, 8000, 1000) - _level_at(down, 8000, 3000) > 55, src


def test_filtered_resampling_is_the_same_in_any_split() -> None:
    x = np.random.default_rng(1).standard_normal(8000).astype(np.float32) * 0.1
    whole = StreamResampler(8000, 16000, taps=PHONE_TAPS, filter_up=True).process(x)
    split = StreamResampler(8000, 16000, taps=PHONE_TAPS, filter_up=True)
    parts = np.concatenate([split.process(x[i:i + 160]) for i in range(0, len(x), 160)])
    assert len(parts) == len(whole) and np.allclose(parts, whole, atol=1e-5)


# --- fakes: a caller who speaks tones, an STT that hears their pitch ----------------------------

SAYS = {300: "Hello there.", 500: "That's all, bye.", 700: "Wait, stop that.",
        900: "Tell me a story."}
GOODBYE = "Thanks for calling, goodbye!"
LONG = ("You pressed a key. Our lighthouse keeper counted the ships that passed his rock every "
        "night, and he wrote their names in a blue book that he kept by the lamp. One winter a "
        "ship with no name came by, and he followed its light across the water until morning.")
TOKEN, TWILIO_TOKEN, PUBLIC_URL = "sekret123", "twilio-auth-token", "wss://agent.example.com"


class EnergyVAD:
    def probability(self, window: np.ndarray) -> float:
        return 0.95 if dbfs(window) > -35 else 0.02

    def fork(self) -> EnergyVAD:
        return EnergyVAD()


class PitchSTT:
    """Hears the loudest tone of the turn as the sentence it stands for."""

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        if len(audio) < 1600 or dbfs(audio) < -40:
            return ""
        spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
        peak = np.fft.rfftfreq(len(audio), 1 / 16000)[int(np.argmax(spectrum))]
        return SAYS[min(SAYS, key=lambda f: abs(f - peak))]


class PacedLLM(ScriptedLLM):
    """Scripted; a story comes slowly (a model still generating when the caller hangs up)."""

    def __init__(self) -> None:
        super().__init__(replies=["Sure. I can help with that."], rules=[
            [r"\[DTMF", LONG],
            [r"bye", {"name": "end_call", "arguments": {"goodbye": GOODBYE, "reason": "done"}}],
            [r"story", "Once upon a time there was a keeper. " + " ".join(["He counted ships."] * 30)],
        ])
        self.generating = 0

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
               **kwargs: Any) -> Iterator[str]:
        slow = "story" in (messages[-1]["content"] if messages else "")
        self.generating += 1
        try:
            for piece in super().stream(messages, cancel=cancel, **kwargs):
                time.sleep(0.06 if slow else 0.0)
                yield piece
        finally:
            self.generating -= 1


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    stages = Stages(vad=EnergyVAD(), stt=PitchSTT(), completeness=HeuristicCompleteness(),
                    llm=PacedLLM(), tts=ToneTTS(ms_per_char=30.0))
    config = apply(Config.default(), {"call": {"end_call": True}})
    with ServerThread(stages, config=config, token=TOKEN, twilio_auth_token=TWILIO_TOKEN,
                           public_url=PUBLIC_URL) as running:
        yield running


# --- a carrier per dialect, from its documentation ----------------------------------------------



def Carrier(kind: str, port: int, *, token: str | None = TOKEN, **kwargs: Any) -> carrier.Carrier:  # noqa: N802
    """The carrier's end (`pipeline.testing.carrier`), with the server's token by default."""
    return carrier.Carrier(kind, port, token=token, **kwargs)


def twilio_signed(url: str) -> str:
    return base64.b64encode(hmac.new(TWILIO_TOKEN.encode(), url.encode(), hashlib.sha1).digest()).decode()


def _line(server: Any, c: carrier.Carrier) -> Any:
    return next((line for line in list(server.server.phone.lines)
                 if line.start.stream_id == c.stream_id), None)


def _llm(server: Any) -> PacedLLM:
    return server.server.stages.llm


async def _full_call(server: Any, kind: str, digit: str) -> None:
    signed = twilio_signed(PUBLIC_URL + "/telephony/twilio") if kind == "twilio" else None
    async with Carrier(kind, server.port, token=None if signed else TOKEN, signature=signed) as c:
        await asyncio.sleep(0.3)
        # a turn answered: "Sure. I can help with that." is 27 characters, 0.8 s of tone
        await c.say(300)
        await c.until(lambda: c.loud_frames >= 35, 8, "the reply played")
        await c.until(c.idle, 4, "the reply played out")
        line = _line(server, c)
        assert line is not None and line.session is not None
        session = line.session  # released (line.session None) once the call is over
        # done once the carrier echoes its last mark (a tick after it played the last frame); heard
        # in full as its task ends, a loop turn after its status (read here from another thread)
        await c.until(lambda: any(r.status == "completed" and r.heard_in_full for r in session.responses), 2,
                      "the reply heard to its end")
        # DTMF reaches the model, and its reply (long) starts
        await c.press(f"{digit}#")
        await c.until(lambda: any(f"[DTMF {digit}#]" in m["content"] for req in _llm(server).requests
                                  for m in req), 3, "the keys reached the model")
        played = c.played_frames
        await c.until(lambda: c.played_frames - played >= 50, 6, "the long reply playing")
        # an interruption: the carrier is told to clear, and what was heard follows the marks
        speaking = asyncio.ensure_future(c.say(700, 1.2))
        await c.until(lambda: c.clears, 4, "a clear")
        long = next(r for r in session.responses if LONG.startswith(r.speech.spoken[0].text)
                    if r.speech.spoken)
        await c.until(lambda: long.item.interrupted, 2, "the long reply truncated")
        heard = c.heard_ms(long.item.id)
        # the marks lag the clock by the carrier's delay: truncation follows the marks, never
        # past them (the clock would say 140 ms more); an echo still in flight when the server
        # sent its clear is not counted (it cannot tell one from the echoes a clear sends back)
        assert heard - 220 <= long.item.audio_end_ms <= heard + 40, (long.item.audio_end_ms, heard)
        assert heard <= (c.clears[0] - played) * 20 + 40
        assert long.item.text and LONG.startswith(long.item.text.rstrip("-")[:10])
        await speaking
        loud = c.loud_frames
        await c.until(lambda: c.loud_frames - loud >= 35, 8, "the reply to the interruption")
        await c.until(c.idle, 4, "that reply played out")
        # a goodbye heard, then the stream closed
        await c.say(500)
        await c.until(lambda: c.closed_at is not None, 10, "the stream closed after the goodbye")
        assert c.close_code == 1000 and c.frames_queued_at_close == 0
        goodbye = next(r for r in reversed(session.responses) if r.speech.spoken)
        assert goodbye.heard_in_full and goodbye.speech.spoken[-1].text.endswith("goodbye!")


def test_a_call_per_dialect_turn_dtmf_interruption_goodbye(server: Any) -> None:
    async def calls() -> None:
        await asyncio.gather(*(_full_call(server, kind, digit)
                               for kind, digit in (("twilio", "1"), ("telnyx", "2"), ("plivo", "3"))))

    asyncio.run(calls())


@pytest.mark.parametrize("kind", ["twilio", "telnyx", "plivo"])
def test_the_caller_hanging_up_mid_reply_stops_the_work_within_a_second(server: Any, kind: str) -> None:
    llm = _llm(server)

    async def call() -> None:
        async with Carrier(kind, server.port) as c:
            await asyncio.sleep(0.3)
            await c.say(900)  # "Tell me a story.": a reply the model makes slowly
            await c.until(lambda: c.loud_frames >= 5, 8, "the story playing")
            line = _line(server, c)
            assert line is not None and llm.generating == 1  # the model is still at it
            await c.stop()
            hung_up = time.monotonic()
            await c.until(lambda: _line(server, c) is None and llm.generating == 0, 1.0,
                          "the session closed and the model stopped")
            assert line.stopped or kind == "plivo"
            assert time.monotonic() - hung_up < 1.0

    asyncio.run(call())


def test_a_badly_signed_twilio_stream_is_refused_at_the_handshake(server: Any) -> None:
    async def call() -> None:
        forged = twilio_signed("wss://elsewhere.example.com/telephony/twilio")
        with pytest.raises(InvalidStatus) as refused:
            async with Carrier("twilio", server.port, token=None, signature=forged):
                pass
        assert refused.value.response.status_code == 403

    asyncio.run(call())


def test_a_web_page_may_not_open_a_telephony_stream(server: Any) -> None:
    async def call() -> None:
        with pytest.raises(InvalidStatus) as refused:  # a page sends Origin; carriers do not
            await connect(f"ws://127.0.0.1:{server.port}/telephony/plivo",
                          origin="http://127.0.0.1:8000")  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403

    asyncio.run(call())


@pytest.mark.parametrize(("kind", "token"), [("twilio", None), ("telnyx", "wrong"),
                                             ("plivo", None)])
def test_a_stream_without_the_signature_or_token_is_refused(server: Any, kind: str,
                                                           token: str | None) -> None:
    async def call() -> None:
        async with Carrier(kind, server.port, token=token) as c:
            await c.until(lambda: c.closed_at is not None, 3, "the stream refused")
            assert c.close_code == 1008 and not c.received
            assert _line(server, c) is None

    asyncio.run(call())


def test_a_signature_over_the_right_url_is_the_only_one_accepted() -> None:
    from websockets.datastructures import Headers

    from pipeline.transports import telephony_auth as auth

    path = "/telephony/twilio?tenant=7"
    urls = auth.signed_urls(path, Headers({"Host": "agent.example.com"}), None)
    assert urls == ["wss://agent.example.com/telephony/twilio?tenant=7",
                    "wss://agent.example.com:443/telephony/twilio?tenant=7"]
    good = twilio_signed("wss://agent.example.com:443/telephony/twilio?tenant=7")
    assert auth.signature_ok(TWILIO_TOKEN, good, urls)
    assert not auth.signature_ok("another-account", good, urls)
    assert not auth.signature_ok(TWILIO_TOKEN, twilio_signed("wss://agent.example.com/x"), urls)
    behind_proxy = auth.signed_urls(path, Headers({"Host": "127.0.0.1:8765"}), PUBLIC_URL)
    assert behind_proxy[0] == PUBLIC_URL + path


def test_a_carrier_that_never_echoes_marks_does_not_keep_the_agent_speaking(server: Any) -> None:
    async def call() -> None:
        async with Carrier("twilio", server.port, echo_marks=False) as c:
            await asyncio.sleep(0.3)
            await c.say(300)
            await c.until(lambda: c.loud_frames >= 35, 8, "the reply played")
            session = _line(server, c).session
            reply = next(r for r in session.responses if r.speech.spoken)
            # its marks count as played 2 s after they were sent: the reply ends, heard
            await c.until(lambda: reply.status == "completed", 4, "the reply done without echoes")
            assert reply.heard_in_full and not session.playback.speaking

    asyncio.run(call())


def test_telnyx_pcma_is_a_law_both_ways(server: Any) -> None:
    async def call() -> None:
        async with Carrier("telnyx", server.port, alaw=True) as c:
            await asyncio.sleep(0.3)
            await c.say(300)
            await c.until(lambda: c.loud_frames >= 35, 8, "the reply played")
            session = _line(server, c).session
            said = [i.text for i in session.conversation.items if i.role == "user"]
            assert said == ["Hello there."]  # the caller's 300 Hz, decoded as A-law
            voice = alaw_decode(b"".join(c.agent))
            where = np.nonzero(np.abs(voice) > 0.05)[0]
            loud = voice[where[0] + 80:where[-1] - 80]  # the tone's span, its edges left out
            spectrum = np.abs(np.fft.rfft(loud * np.hanning(len(loud))))
            peak = np.fft.rfftfreq(len(loud), 1 / 8000)[int(np.argmax(spectrum))]
            assert abs(peak - 220) < 10  # the tone voice's pitch, read back as A-law
            assert abs(dbfs(loud) - dbfs(np.full(1, 0.3 / np.sqrt(2)))) < 1.5

    asyncio.run(call())


class _Caller:
    """What a PhoneLine feeds: 16 kHz frames."""

    def __init__(self) -> None:
        self.frames: list[np.ndarray] = []

    def push_audio(self, frame: np.ndarray) -> None:
        self.frames.append(frame)


def test_jitter_in_lost_chunks_keep_their_time_late_ones_are_dropped() -> None:
    from pipeline.transports.telephony import PhoneLine
    from pipeline.transports.telephony_dialects import DIALECTS, Media, Start

    line = PhoneLine(None, DIALECTS["/telephony/twilio"], Start("MZ1", "CA1", "mulaw", 8000))  # type: ignore[arg-type]
    caller = _Caller()
    line.session = caller  # type: ignore[assignment]
    tone = mulaw_encode(0.3 * np.sin(2 * np.pi * 440 * np.arange(160) / 8000))
    for chunk in (1, 2, 4, 3, 5):  # 3 is lost in transit, then arrives after 4
        line._media(Media(tone, chunk))
    assert len(caller.frames) == 5  # 1, 2, silence for 3, 4, 5: 20 ms each, 3's late copy dropped
    levels = [dbfs(f[80:]) for f in caller.frames]
    assert levels[2] < levels[1] - 20 and min(levels[0:2] + levels[3:]) > -15
