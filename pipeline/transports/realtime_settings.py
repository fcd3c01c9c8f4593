"""A `session.update`'s fields beyond formats, turns, instructions and tools (and a `response.create`'s
generation settings, for that response only): what each does here.

Every field a hosted realtime session has (GA or beta spelling) is applied, refused when its value
asks for what this server cannot do (`invalid_value` with the field in `param`), or accepted and
ignored where ignoring it changes nothing a client can tell; `docs/realtime.md` has the table. A
field no realtime session has is `unknown_parameter`, as on the hosted API: a typo is not silence.
"""

from __future__ import annotations

import json
from typing import Any

from ..base.protocols import AsyncTTS, takes_keyword
from ..call.session import Stages
from .realtime_protocol import ClientError

# The hosted API's voices: a client written for it names one; the one loaded voice speaks for all.
HOSTED_VOICES = ("alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova",
                 "onyx", "sage", "shimmer", "verse")
MAX_OUTPUT_TOKENS = 4096  # the hosted API's cap; ours is the LLM stage's max_tokens
TEMPERATURE = (0.0, 2.0)  # the chat API's range (the hosted beta allowed 0.6-1.2)
SPEED = (0.25, 1.5)  # the hosted API's range

FIELDS = {  # session.update keys, GA and beta, and ours (include_local_events)
    "session": {"type", "model", "instructions", "output_modalities", "modalities", "audio",
                "include", "max_output_tokens", "max_response_output_tokens", "prompt",
                "tool_choice", "tools", "tracing", "truncation", "voice", "speed", "temperature",
                "input_audio_format", "output_audio_format", "input_audio_transcription",
                "input_audio_noise_reduction", "turn_detection", "include_local_events",
                "object", "id", "expires_at", "client_secret"},  # the last four: read-only
    "session.audio": {"input", "output"},
    "session.audio.input": {"format", "turn_detection", "transcription", "noise_reduction"},
    "session.audio.output": {"format", "voice", "speed"},
}


def check_known(body: dict[str, Any]) -> None:
    """`unknown_parameter` for a key no realtime session has, at any level of `session`."""
    audio: dict[str, Any] = body["audio"] if isinstance(body.get("audio"), dict) else {}
    levels = [("session", body), ("session.audio", audio)]
    levels += [(f"session.audio.{k}", audio[k]) for k in ("input", "output") if isinstance(audio.get(k), dict)]
    for where, level in levels:
        for key in level:
            if key not in FIELDS[where]:
                shown = str(key)[:40]
                raise ClientError("unknown_parameter", f"session.update: unknown parameter "
                                                       f"`{where}.{shown}`; remove it.",
                                  param=f"{where}.{shown}")


EVENTS = {"session": "session.update", "response": "response.create"}  # the body -> its event


def _pick(body: dict[str, Any], ga: tuple[str, str] | None, beta: str | None,
          where: str = "session") -> tuple[str, Any] | None:
    """(the param as the client wrote it, its value), from the GA place or the beta one."""
    audio: dict[str, Any] = body["audio"] if isinstance(body.get("audio"), dict) else {}
    if ga is not None and isinstance(audio.get(ga[0]), dict) and ga[1] in audio[ga[0]]:
        return f"{where}.audio.{ga[0]}.{ga[1]}", audio[ga[0]][ga[1]]
    if beta is not None and beta in body:
        return f"{where}.{beta}", body[beta]
    return None


def _number(param: str, value: Any, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise ClientError("invalid_value", f"{_event(param)}: `{param}` must be a number from {lo} "
                                           f"to {hi}, got {json.dumps(value)[:40]}.", param=param)
    return float(value)


def _event(param: str) -> str:
    return EVENTS[param.split(".", 1)[0]]


def _refuse(param: str, why: str) -> ClientError:
    return ClientError("invalid_value", f"{_event(param)}: `{param}` {why}", param=param)


def generation(body: dict[str, Any], stages: Stages, *, voice: str,
               where: str = "session") -> dict[str, Any]:
    """The checked generation settings (ResponsePolicy keys: temperature, max_output_tokens,
    speed; a key present only where the client set it, None meaning the stage's own), after
    refusing whatever this server cannot do. Reads every field; changes nothing.

    `where`: "session" (a session.update's `session`) or "response" (a response.create's
    `response`, whose settings hold for that response only); the same fields, the same checks."""
    out: dict[str, Any] = {}
    if (got := _pick(body, None, "temperature", where)) is not None and got[1] is not None:
        if not takes_keyword(stages.llm.stream, "temperature"):
            raise _refuse(got[0], "cannot be set: this server's LLM takes no temperature per request.")
        out["temperature"] = _number(got[0], got[1], *TEMPERATURE)
    cap = getattr(stages.llm, "max_tokens", MAX_OUTPUT_TOKENS)
    for key in ("max_output_tokens", "max_response_output_tokens"):  # GA, beta
        if (got := _pick(body, None, key, where)) is None or got[1] is None:
            continue
        param, value = got
        if value == "inf":
            out["max_output_tokens"] = None  # the LLM stage's own limit
        elif isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_OUTPUT_TOKENS:
            out["max_output_tokens"] = min(value, cap)  # the stage's limit also bounds its context
        else:
            raise _refuse(param, f"must be an integer from 1 to {MAX_OUTPUT_TOKENS} or \"inf\".")
    if (got := _pick(body, ("output", "speed"), "speed", where)) is not None and got[1] is not None:
        tts = stages.tts
        if isinstance(tts, AsyncTTS) or not takes_keyword(tts.synthesize, "speed"):
            raise _refuse(got[0], "cannot be set: this server's voice has one speaking rate.")
        out["speed"] = _number(got[0], got[1], *SPEED)
    if (got := _pick(body, ("output", "voice"), "voice", where)) is not None and got[1] is not None:
        if not isinstance(got[1], str) or got[1] not in (voice, *HOSTED_VOICES):
            raise _refuse(got[0], f"must be {voice!r} (this server's one voice) or a hosted "
                                  f"voice's name ({', '.join(HOSTED_VOICES)}), which it speaks for.")
    _check_ignored(body, where)
    return out


def _check_ignored(body: dict[str, Any], where: str) -> None:
    """The fields taken as they are or refused, with nothing to apply."""
    for param, value in ((f"{where}.model", body.get("model")),):
        if value is not None and not isinstance(value, str):
            raise _refuse(param, "must be a string (this server's models are its own).")
    if (got := _pick(body, ("input", "transcription"), "input_audio_transcription", where)) is not None:
        param, value = got
        if value is not None and (not isinstance(value, dict) or not all(
                isinstance(value.get(k), str | None) for k in ("model", "language", "prompt"))):
            raise _refuse(param, "must be null or an object like {\"model\": \"whisper-1\"}.")
    if (got := _pick(body, ("input", "noise_reduction"), "input_audio_noise_reduction", where)) is not None \
            and got[1] is not None:
        raise _refuse(got[0], "cannot be set: this server has no noise reduction; leave it null.")
    for key, allowed, why in (
            ("tool_choice", ("auto",), "must be \"auto\": the model decides when to call a tool."),
            ("truncation", ("auto",), "must be \"auto\": the oldest whole turns make room."),
            ("include", (), "must be null or []: transcriptions carry no log-probabilities."),
            ("prompt", (), "cannot be set: this server keeps no stored prompts.")):
        value = body.get(key)
        if value is None or value in allowed or (key == "include" and value == []):
            continue
        raise _refuse(f"{where}.{key}", why)
    tracing = body.get("tracing")
    if tracing is not None and tracing != "auto" and not isinstance(tracing, dict):
        raise _refuse(f"{where}.tracing", "must be null, \"auto\" or an object.")
