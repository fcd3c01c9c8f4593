"""The session.update fields beyond formats and turns: applied (temperature, max_output_tokens,
speed), refused with the field named (what this server cannot do), or accepted and ignored
(docs/realtime.md has the table). One server for the module, on fakes; one Piper check."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect

from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing import ServerThread
from pipeline.turns import HeuristicCompleteness

from .test_realtime_server import Client, EnergyVAD, user_text

REPLY = "One two three four five six."


class PlainTTS(ToneTTS):
    """A voice with one speaking rate: its synthesize takes no `speed`."""

    def synthesize(self, text: str) -> np.ndarray:  # type: ignore[override]
        return super().synthesize(text)


def stages(tts: Any = None) -> Stages:
    return Stages(vad=EnergyVAD(), stt=ScriptedSTT(transcripts=["Hello there."]),
                  completeness=HeuristicCompleteness(), llm=ScriptedLLM(replies=[REPLY]),
                  tts=tts or ToneTTS(ms_per_char=10.0))


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(stages()) as running:
        yield running


def session(server: ServerThread, scenario: Any, *, beta: bool = False) -> Any:
    async def run() -> Any:
        headers = {"OpenAI-Beta": "realtime=v1"} if beta else {}
        async with connect(server.url, proxy=None, additional_headers=headers) as ws:
            c = Client(ws)
            await c.wait_for("session.created")
            try:
                return await scenario(c)
            finally:
                await c.close()

    return asyncio.run(run())


async def update(c: Client, body: dict[str, Any]) -> dict[str, Any]:
    """session.update; the session.updated or the error that answers it."""
    n = len(c.of("session.updated")) + len(c.of("error"))
    await c.send({"type": "session.update", "session": body, "event_id": "evt_update"})
    while len(c.of("session.updated")) + len(c.of("error")) == n:
        await asyncio.sleep(0.01)
    return [e for e in c.events if e["type"] in ("session.updated", "error")][n]


async def text_reply(c: Client, text: str) -> dict[str, Any]:
    """A user text item, then response.create (either dialect); that response's response.done."""
    start = len(c.events)
    await c.send(user_text(text))
    await c.send({"type": "response.create"})
    created = await c.wait_for("response.created", lambda e: c.events.index(e) >= start)
    return await c.wait_for("response.done", lambda e: e["response"]["id"] == created["response"]["id"])


def audio_ms(c: Client, response_id: str) -> float:
    data = b"".join(base64.b64decode(e["delta"]) for e in c.events
                    if e["type"] in ("response.output_audio.delta", "response.audio.delta")
                    and e["response_id"] == response_id)
    return len(data) / 48  # pcm16 at 24 kHz: 48 bytes a millisecond


def test_temperature_reaches_the_llm_and_the_session_reports_it(server):
    llm = server.server.stages.llm

    async def scenario(c: Client) -> None:
        answer = await update(c, {"temperature": 0.8})
        assert answer["type"] == "session.updated" and answer["session"]["temperature"] == 0.8
        await text_reply(c, "Hi")
        assert llm.temperatures[-1] == 0.8
        bad = await update(c, {"temperature": 3})
        assert bad["error"]["code"] == "invalid_value" and bad["error"]["param"] == "session.temperature"

    session(server, scenario, beta=True)
    session(server, lambda c: text_reply(c, "Hi"))  # another session keeps the stage's own
    assert llm.temperatures[-1] is None


def test_max_output_tokens_ends_a_reply_early_and_inf_restores_the_stage_limit(server):
    async def scenario(c: Client) -> None:
        answer = await update(c, {"max_output_tokens": 2})
        assert answer["session"]["max_output_tokens"] == 2
        done = await text_reply(c, "Hi")
        assert done["response"]["status"] == "incomplete"
        assert done["response"]["status_details"]["reason"] == "max_output_tokens"
        assert done["response"]["usage"]["output_tokens"] == 2
        answer = await update(c, {"max_output_tokens": "inf"})
        assert answer["session"]["max_output_tokens"] == "inf"
        c.events.clear()
        assert (await text_reply(c, "Hi"))["response"]["status"] == "completed"
        for bad in (0, 5000, "lots", True):
            error = (await update(c, {"max_output_tokens": bad}))["error"]
            assert error["param"] == "session.max_output_tokens", (bad, error)

    session(server, scenario)

    async def beta(c: Client) -> None:
        answer = await update(c, {"max_response_output_tokens": 3})
        assert answer["session"]["max_response_output_tokens"] == 3
        assert (await text_reply(c, "Hi"))["response"]["status"] == "incomplete"

    session(server, beta, beta=True)


def test_speed_changes_the_speaking_rate(server):
    async def scenario(c: Client) -> tuple[float, float]:
        normal = await text_reply(c, "Hi")
        answer = await update(c, {"audio": {"output": {"speed": 1.5}}})
        assert answer["session"]["audio"]["output"]["speed"] == 1.5
        c.events.clear()
        fast = await text_reply(c, "Hi")
        return audio_ms(c, fast["response"]["id"]), normal["response"]["id"]

    fast_ms, _ = session(server, scenario)
    chars = len(REPLY) - 1  # the tone lasts 10 ms a character, spaces between chunks aside
    assert fast_ms < 0.75 * chars * 10, fast_ms  # 2/3 of the normal length, within a frame or two


def test_speed_is_refused_by_a_voice_with_one_rate():
    with ServerThread(stages(PlainTTS(ms_per_char=10.0))) as plain:
        async def scenario(c: Client) -> None:
            error = (await update(c, {"audio": {"output": {"speed": 1.2}}}))["error"]
            assert error["code"] == "invalid_value"
            assert error["param"] == "session.audio.output.speed" and "one speaking rate" in error["message"]
            assert (await text_reply(c, "Hi"))["response"]["status"] == "completed"

        session(plain, scenario)


REFUSED = [  # (session, param)
    ({"audio": {"output": {"voice": "nobody"}}}, "session.audio.output.voice"),
    ({"voice": 7}, "session.voice"),
    ({"audio": {"output": {"speed": 9}}}, "session.audio.output.speed"),
    ({"speed": 0.1}, "session.speed"),
    ({"temperature": -0.5}, "session.temperature"),
    ({"audio": {"input": {"noise_reduction": {"type": "near_field"}}}}, "session.audio.input.noise_reduction"),
    ({"input_audio_noise_reduction": {"type": "far_field"}}, "session.input_audio_noise_reduction"),
    ({"audio": {"input": {"transcription": "whisper-1"}}}, "session.audio.input.transcription"),
    ({"tool_choice": "required"}, "session.tool_choice"),
    ({"tool_choice": {"type": "function", "name": "get_weather"}}, "session.tool_choice"),
    ({"truncation": "disabled"}, "session.truncation"),
    ({"include": ["item.input_audio_transcription.logprobs"]}, "session.include"),
    ({"prompt": {"id": "pmpt_123"}}, "session.prompt"),
    ({"model": 5}, "session.model"),
    ({"tracing": 5}, "session.tracing"),
]


def test_what_the_server_cannot_do_is_refused_naming_the_field_and_changes_nothing(server):
    async def scenario(c: Client) -> None:
        for body, param in REFUSED:
            # with a setting that would apply, to show a refused update changes nothing at all
            answer = await update(c, {"instructions": "Changed.", **body})
            assert answer["type"] == "error", (body, answer)
            error = answer["error"]
            assert (error["type"], error["code"], error["param"]) == (
                "invalid_request_error", "invalid_value", param), (body, error)
            assert error["event_id"] == "evt_update"
        assert not c.of("session.updated")
        assert (await update(c, {}))["session"]["instructions"] != "Changed."

    session(server, scenario)


def test_an_unknown_field_is_unknown_parameter_at_any_level(server):
    async def scenario(c: Client) -> None:
        for body, param in (({"temprature": 0.8}, "session.temprature"),
                            ({"audio": {"outptu": {}}}, "session.audio.outptu"),
                            ({"audio": {"output": {"volume": 2}}}, "session.audio.output.volume"),
                            ({"audio": {"input": {"vad": None}}}, "session.audio.input.vad")):
            error = (await update(c, body))["error"]
            assert (error["code"], error["param"]) == ("unknown_parameter", param), (body, error)

    session(server, scenario)


ACCEPTED = [  # taken as they are: nothing to apply, or served by what the server has
    {"audio": {"output": {"voice": "alloy"}}}, {"voice": "marin"}, {"voice": "piper"},
    {"model": "gpt-realtime"}, {"tracing": "auto"}, {"tracing": None}, {"tool_choice": "auto"},
    {"truncation": "auto"}, {"include": []}, {"prompt": None},
    {"audio": {"input": {"transcription": {"model": "whisper-1", "language": "en"}}}},
    {"input_audio_transcription": None}, {"audio": {"input": {"noise_reduction": None}}},
    {"object": "realtime.session", "id": "sess_x"}, {"temperature": None, "speed": None},
]


def test_what_changes_nothing_here_is_accepted(server):
    async def scenario(c: Client) -> None:
        for body in ACCEPTED:
            answer = await update(c, body)
            assert answer["type"] == "session.updated", (body, answer)
            assert answer["session"]["audio"]["output"]["voice"] == "piper"  # the one voice speaks
        assert (await text_reply(c, "Hi"))["response"]["status"] == "completed"

    session(server, scenario)


@pytest.mark.models
def test_piper_speed_divides_its_length_scale(caller_voice):
    normal = caller_voice.synthesize("Thank you for calling the front desk.")
    fast = caller_voice.synthesize("Thank you for calling the front desk.", speed=1.5)
    slow = caller_voice.synthesize("Thank you for calling the front desk.", speed=0.75)
    # figures: 0.755 and 1.197 of the normal length (1/1.5 = 0.667, 1/0.75 = 1.333): Piper's
    # length scale stretches the phonemes, not the silence at either end
    assert 0.6 < len(fast) / len(normal) < 0.85, len(fast) / len(normal)
    assert 1.1 < len(slow) / len(normal) < 1.4, len(slow) / len(normal)


# --- response.create's own generation settings: that response only ----------------------------


async def reply_with(c: Client, response: dict[str, Any]) -> dict[str, Any]:
    """A user text item, then response.create with `response`; its response.done."""
    start = len(c.events)
    await c.send(user_text("Hi"))
    await c.send({"type": "response.create", "response": response, "event_id": "evt_create"})
    created = await c.wait_for("response.created", lambda e: c.events.index(e) >= start)
    return await c.wait_for("response.done", lambda e: e["response"]["id"] == created["response"]["id"])


def test_a_responses_temperature_holds_for_that_response_only(server):
    llm = server.server.stages.llm

    async def scenario(c: Client) -> None:
        await update(c, {"temperature": 0.7})
        assert (await reply_with(c, {"temperature": 1.1}))["response"]["status"] == "completed"
        assert llm.temperatures[-1] == 1.1
        await text_reply(c, "Hi")  # the next one takes the session's again
        assert llm.temperatures[-1] == 0.7

    session(server, scenario, beta=True)


def test_a_responses_token_limit_and_speed_hold_for_that_response_only(server):
    async def scenario(c: Client) -> None:
        cut = await reply_with(c, {"max_output_tokens": 2})
        assert cut["response"]["status"] == "incomplete", cut["response"]
        assert cut["response"]["usage"]["output_tokens"] == 2
        assert (await text_reply(c, "Hi"))["response"]["status"] == "completed"
        normal = await text_reply(c, "Hi")
        fast = await reply_with(c, {"audio": {"output": {"speed": 1.5}}})
        assert audio_ms(c, fast["response"]["id"]) < 0.75 * audio_ms(c, normal["response"]["id"])

    session(server, scenario)

    async def beta(c: Client) -> None:
        assert (await reply_with(c, {"max_response_output_tokens": 3}))["response"]["status"] == "incomplete"
        assert (await text_reply(c, "Hi"))["response"]["status"] == "completed"

    session(server, beta, beta=True)


def test_a_response_asking_for_what_this_server_cannot_do_is_refused_naming_the_field(server):
    async def scenario(c: Client) -> list[dict[str, Any]]:
        errors = []
        for bad in ({"temperature": 3}, {"temperature": "hot"}, {"max_output_tokens": 0},
                    {"max_response_output_tokens": "lots"}, {"voice": "nobody"},
                    {"audio": {"output": {"speed": 9}}}, {"tool_choice": "required"}):
            n = len(c.of("error"))
            await c.send({"type": "response.create", "response": bad, "event_id": "evt_bad"})
            await c.wait_for("error", count=n + 1)
            errors.append(c.of("error")[-1]["error"])
        assert c.of("response.created") == []  # a refused one starts nothing
        await c.send({"type": "response.create", "response": {"voice": "alloy"}})  # a hosted voice
        await c.wait_for("response.done")
        return errors

    errors = session(server, scenario)
    assert [e["param"] for e in errors] == [
        "response.temperature", "response.temperature", "response.max_output_tokens",
        "response.max_response_output_tokens", "response.voice", "response.audio.output.speed",
        "response.tool_choice"]
    assert all(e["code"] == "invalid_value" and e["event_id"] == "evt_bad"
               and e["message"].startswith("response.create:") for e in errors), errors
