"""The realtime-API wire format: audio formats, and reading client events strictly.

Audio formats, for `session.audio.input.format` / `session.audio.output.format` (GA shape) or
`input_audio_format` / `output_audio_format` (beta shape):

    {"type": "audio/pcm", "rate": 24000}   or "pcm16"      16-bit little-endian, 24 kHz (default)
    {"type": "audio/pcm", "rate": 16000}                   16-bit little-endian, 16 kHz
    {"type": "audio/pcmu"}                 or "g711_ulaw"  G.711 mu-law, 8 kHz

A client mistake raises `ClientError` with the code the `error` event carries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.audio import from_int16, mulaw_decode, mulaw_encode, to_int16
from ..base.config import Config, apply
from ..base.conversation import Item
from ..base.errors import ConfigError
from ..tools import ToolSpec


class ClientError(Exception):
    """A client mistake, answered with an `error` event; the session goes on."""

    def __init__(self, code: str, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param  # the field at fault (`item.content[0].text`), where one is


@dataclass(frozen=True)
class AudioFormat:
    encoding: str  # "pcm16" | "pcmu"
    rate_hz: int

    @property
    def bytes_per_sample(self) -> int:
        return 2 if self.encoding == "pcm16" else 1

    def decode(self, data: bytes) -> np.ndarray:
        if self.encoding == "pcmu":
            return mulaw_decode(data)
        return from_int16(np.frombuffer(data, "<i2"))

    def encode(self, samples: np.ndarray) -> bytes:
        if self.encoding == "pcmu":
            return mulaw_encode(samples)
        return to_int16(samples).astype("<i2").tobytes()

    def to_dict(self) -> dict[str, Any]:
        if self.encoding == "pcmu":
            return {"type": "audio/pcmu"}
        return {"type": "audio/pcm", "rate": self.rate_hz}

    @property
    def legacy(self) -> str | dict[str, Any]:
        """The beta spelling where one exists ("pcm16", "g711_ulaw"), else the GA shape."""
        if self.encoding == "pcmu":
            return "g711_ulaw"
        return "pcm16" if self.rate_hz == 24_000 else self.to_dict()


PCM16_24K = AudioFormat("pcm16", 24_000)
TEXT_PARTS = ("input_text", "text", "output_text")
SUPPORTED = ('{"type": "audio/pcm", "rate": 24000}, {"type": "audio/pcm", "rate": 16000}, '
              '{"type": "audio/pcmu"}, "pcm16" or "g711_ulaw"')


def parse_format(value: Any, where: str) -> AudioFormat:
    if value == "pcm16":
        return PCM16_24K
    if value == "g711_ulaw":
        return AudioFormat("pcmu", 8_000)
    if isinstance(value, dict) and value.get("type") == "audio/pcm":
        rate = value.get("rate", 24_000)
        if rate in (16_000, 24_000) and not isinstance(rate, bool):
            return AudioFormat("pcm16", int(rate))
    if isinstance(value, dict) and value.get("type") == "audio/pcmu":
        return AudioFormat("pcmu", 8_000)
    raise ClientError("invalid_value", f"{where} {json.dumps(value)[:80]} is not supported; use one of "
                                        f"{SUPPORTED}.")


KINDS: dict[type, str] = {str: "a string", int: "an integer", dict: "an object", list: "a list"}


def require(body: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """A field the event cannot do without, of the JSON type it must have."""
    if body.get(key) is None:
        raise ClientError("missing_required_parameter",
                           f"{where} needs `{key}`; add it and resend.")
    value = body[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ClientError("invalid_value", f"{where}: `{key}` must be {KINDS[kind]}, "
                                            f"got {json.dumps(value)[:80]}.")
    return value


def jsonable(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


def message_text(body: dict[str, Any], where: str) -> str:
    content = require(body, "content", list, where)
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in TEXT_PARTS:
            raise ClientError("invalid_value", f"{where}: content parts must be text, like "
                                                "{\"type\": \"input_text\", \"text\": \"...\"}.")
        texts.append(require(part, "text", str, where))
    return " ".join(texts)


def turn_settings(value: Any, config: Config) -> dict[str, Any] | None:
    """A realtime `turn_detection` object -> our turn policy keys and response flags (None: off)."""
    if value is None:
        return None
    where = "session.update: turn_detection"
    if not isinstance(value, dict):
        raise ClientError("invalid_value", f"{where} must be null or an object like "
                                            "{\"type\": \"server_vad\"}.")
    # Our detector already judges whether the words look finished, so semantic_vad maps onto it.
    if value.get("type", "server_vad") not in ("server_vad", "semantic_vad"):
        raise ClientError("invalid_value",
                           f"{where}.type must be \"server_vad\" or \"semantic_vad\".")
    turn: dict[str, Any] = {}
    for key, ours, lo, hi in (("threshold", "vad_threshold", 0.0, 1.0),
                              ("prefix_padding_ms", "prefix_padding_ms", 0, 1000),
                              ("silence_duration_ms", "min_silence_ms", 0, 10_000)):
        if value.get(key) is None:
            continue
        number = value[key]
        numeric = isinstance(number, int | float) and not isinstance(number, bool)
        if not numeric or not lo <= number <= hi:
            raise ClientError("invalid_value",
                               f"{where}.{key} must be a number from {lo} to {hi}.")
        turn[ours] = number if ours == "vad_threshold" else int(number)
    if "min_silence_ms" in turn:  # the hard cap must stay at or above the new silence time
        turn["max_silence_ms"] = max(config.turn.max_silence_ms, turn["min_silence_ms"])
    try:
        apply(config, {"turn": turn})  # checked on a copy; the session applies it
    except ConfigError as exc:
        raise ClientError("invalid_value", f"{where}: {exc}") from None
    flags = {}
    for key in ("create_response", "interrupt_response"):
        flag = value.get(key, True)
        if not isinstance(flag, bool):
            raise ClientError("invalid_value", f"{where}.{key} must be true or false.")
        flags[key] = flag
    return {"turn": turn, **flags}


@dataclass
class SessionUpdate:
    """A checked `session.update`: None where the client left a setting as it was."""

    input_format: AudioFormat | None
    output_format: AudioFormat | None
    instructions: str | None
    tools: list[ToolSpec] | None
    include_local: bool | None
    settings: dict[str, Any]  # keyword arguments for ClientControl.update (turn detection, text)


def parse_session_update(event: dict[str, Any], config: Config) -> SessionUpdate:
    """Read a whole session.update, raising ClientError at its first bad field."""
    body = require(event, "session", dict, "session.update")
    audio = body.get("audio") or {}
    if not isinstance(audio, dict):
        raise ClientError("invalid_value", "session.update: `session.audio` must be an object.")
    a_in, a_out = audio.get("input") or {}, audio.get("output") or {}
    if not isinstance(a_in, dict) or not isinstance(a_out, dict):
        raise ClientError("invalid_value", "session.update: `session.audio.input` and "
                                           "`.output` must be objects.")
    in_fmt = out_fmt = None
    if "format" in a_in or "input_audio_format" in body:
        in_fmt = parse_format(a_in.get("format", body.get("input_audio_format")), "The input format")
    if "format" in a_out or "output_audio_format" in body:
        out_fmt = parse_format(a_out.get("format", body.get("output_audio_format")), "The output format")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise ClientError("invalid_value", "session.update: `instructions` must be a string.")
    tools = None
    if body.get("tools") is not None:
        tools = parse_tools(require(body, "tools", list, "session.update"))
    include_local = body.get("include_local_events")
    if include_local is not None and not isinstance(include_local, bool):
        raise ClientError("invalid_value", "session.update: `include_local_events` must be "
                                           "true or false.")
    settings: dict[str, Any] = {}
    if body.get("type", "realtime") != "realtime":
        raise ClientError("invalid_value", "session.update: this server runs conversations only; "
                                           "set `session.type` to \"realtime\" or leave it out.")
    for key in ("output_modalities", "modalities"):  # GA, beta
        if body.get(key) is not None:
            settings["text_only"] = text_only(body[key], f"session.update: `{key}`")
    if "turn_detection" in a_in or "turn_detection" in body:
        vad = turn_settings(a_in.get("turn_detection", body.get("turn_detection")), config)
        if vad is None:  # the client commits, asks for replies and interrupts itself
            settings |= {"server_vad": False, "create_response": False, "interrupt_response": False}
        else:
            settings |= {"server_vad": True, "turn": vad["turn"], "create_response": vad["create_response"],
                        "interrupt_response": vad["interrupt_response"]}
    return SessionUpdate(in_fmt, out_fmt, instructions, tools, include_local, settings)


def parse_tools(definitions: list[Any]) -> list[ToolSpec]:
    """Function-tool definitions from a session.update, as specs the session can offer."""
    specs = []
    for i, definition in enumerate(definitions):
        if not isinstance(definition, dict):
            raise ClientError("invalid_value", f"session.update: tools[{i}] must be an object "
                                               "like {\"type\": \"function\", \"name\": ...}.")
        try:
            specs.append(ToolSpec.from_openai(definition))
        except (ValueError, TypeError, AttributeError) as exc:
            raise ClientError("invalid_value", f"session.update: tools[{i}]: {exc}") from None
    return specs


def text_only(value: Any, where: str) -> bool:
    """Output modalities -> text only? (["text"]: yes; ["audio"] or both: spoken, with words)."""
    if (not isinstance(value, list) or not value
            or not all(m in ("text", "audio") for m in value)):
        raise ClientError("invalid_value", f"{where} must be [\"audio\"] or [\"text\"].")
    return "audio" not in value


# read by realtime_settings.generation (temperature, token limit, speed, voice: this response's
# own), or accepted and not used (tools, the output format: the session's apply)
RESPONSE_SETTINGS = ("audio", "voice", "output_audio_format", "temperature", "tool_choice",
                           "tools", "max_output_tokens", "max_response_output_tokens", "prompt")


@dataclass
class ResponseRequest:
    """A checked `response.create`; None where the session's setting applies."""

    instructions: str | None = None
    text_only: bool | None = None
    out_of_band: bool = False
    metadata: dict[str, str] | None = None
    input: list[Item | str] | None = None  # items, or ids of items already in the conversation


def parse_response_create(event: dict[str, Any]) -> ResponseRequest:
    """Read a response.create's `response` object, raising ClientError at its first bad field."""
    where = "response.create"
    body = event.get("response")
    if body is None:
        return ResponseRequest()
    if not isinstance(body, dict):
        raise ClientError("invalid_value", f"{where}: `response` must be an object.")
    for key in body:
        if key not in RESPONSE_SETTINGS and key not in (
                "instructions", "output_modalities", "modalities", "conversation", "metadata", "input"):
            raise ClientError("unknown_parameter", f"{where}: unknown parameter "
                                                   f"`response.{str(key)[:40]}`; remove it.")
    request = ResponseRequest()
    if body.get("instructions") is not None:
        request.instructions = require(body, "instructions", str, where)
    for key in ("output_modalities", "modalities"):
        if body.get(key) is not None:
            request.text_only = text_only(body[key], f"{where}: `response.{key}`")
    conversation = body.get("conversation", "auto")
    if conversation not in ("auto", "none"):
        raise ClientError("invalid_value", f"{where}: `response.conversation` must be \"auto\" "
                                           "or \"none\" (out of band).")
    request.out_of_band = conversation == "none"
    metadata = body.get("metadata")
    if metadata is not None:
        if (not isinstance(metadata, dict) or len(metadata) > 16
                or not all(isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 512
                           for k, v in metadata.items())):
            raise ClientError("invalid_value", f"{where}: `response.metadata` must map at most 16 "
                                               "keys (64 characters) to strings (512 characters).")
        request.metadata = metadata
    if body.get("input") is not None:
        request.input = [input_item(i, part, where)
                         for i, part in enumerate(require(body, "input", list, where))]
    return request


def input_item(i: int, value: Any, where: str) -> Item | str:
    """One entry of `response.input`: a message, or a reference to a conversation item."""
    if not isinstance(value, dict):
        raise ClientError("invalid_value", f"{where}: `response.input[{i}]` must be an object.")
    if value.get("type") == "item_reference":
        return require(value, "id", str, f"{where}: response.input[{i}]")
    if value.get("type", "message") != "message":
        raise ClientError("invalid_value", f"{where}: `response.input[{i}]` must be a message or "
                                           "{\"type\": \"item_reference\", \"id\": ...}.")
    role = require(value, "role", str, f"{where}: response.input[{i}]")
    if role not in ("user", "system", "assistant"):
        raise ClientError("invalid_value", f"{where}: `response.input[{i}].role` must be user, "
                                           "system or assistant.")
    return Item(type="message", role=role, text=message_text(value, where), audio=False)
