"""The realtime API's objects in one client's dialect (GA or beta): items, responses, sessions.

What the SDKs' models require of each object, apart from which events carry it and when
(`realtime_events.py`): the `object` names, the dialect's content part and format names, status
details, and usage filled wherever the protocol has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..base import events as ev
from ..tools import ToolSpec
from .realtime_protocol import PCM16_24K, AudioFormat

GA, BETA = "ga", "beta"
REASONS = {"turn_detected", "client_cancelled", "max_output_tokens", "content_filter"}
_BETA_PARTS = {"output_audio": "audio", "output_text": "text"}
Wire = dict[str, Any]


@dataclass
class WireSettings:
    """What the connection (not the session) decides: formats, the client's tools, names."""

    session_id: str = field(default_factory=lambda: ev.new_id("sess"))
    conversation_id: str = field(default_factory=lambda: ev.new_id("conv"))
    input_format: AudioFormat = PCM16_24K
    output_format: AudioFormat = PCM16_24K
    tools: list[ToolSpec] = field(default_factory=list)
    model: str = "local"
    voice: str = "piper"
    transcription_model: str = "faster-whisper"


class WireShapes:
    def __init__(self, dialect: str, settings: WireSettings) -> None:
        if dialect not in (GA, BETA):
            raise ValueError(f"dialect must be {GA!r} or {BETA!r}, got {dialect!r}")
        self.dialect = dialect
        self.settings = settings

    def item(self, item: Wire) -> Wire:
        """An internal item in this dialect's shape (`object`, content part names)."""
        out = {"object": "realtime.item", **item}
        if self.dialect == BETA and "content" in out:
            out["content"] = [{**c, "type": _BETA_PARTS.get(c.get("type", ""), c.get("type"))}
                              for c in out["content"]]
        return out

    def response(self, body: Wire, output: list[Wire], *, in_conversation: bool, text_only: bool,
                 metadata: dict[str, str] | None) -> Wire:
        s = self.settings
        out: Wire = {"object": "realtime.response", "id": body["id"], "status": body["status"],
                     "status_details": self._status_details(body), "output": output,
                     "conversation_id": s.conversation_id if in_conversation else None,
                     "metadata": metadata, "usage": self._usage(body.get("usage")),
                     "max_output_tokens": "inf"}
        if self.dialect == BETA:
            out["modalities"] = ["text"] if text_only else ["audio", "text"]
            out["voice"] = s.voice
            out["output_audio_format"] = _beta_format(s.output_format)
        else:
            out["output_modalities"] = ["text"] if text_only else ["audio"]
            out["audio"] = {"output": {"format": s.output_format.to_dict(), "voice": s.voice}}
        return out

    def _status_details(self, body: Wire) -> Wire | None:
        status = body["status"]
        details = body.get("status_details") or {}
        if status in ("in_progress", "completed"):
            return None
        out: Wire = {"type": status}
        if status == "failed":
            message = (details.get("error") or {}).get("message", "the response failed")
            out["error"] = {"type": "server_error", "code": "server_error", "message": message}
        elif status == "cancelled":  # our own reasons (a discarded speculation) read as a cancel
            reason = details.get("reason")
            out["reason"] = reason if reason in REASONS else "client_cancelled"
        else:
            out["reason"] = "max_output_tokens"
        return out

    def _usage(self, usage: Wire | None) -> Wire | None:
        if usage is None:
            return None
        tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        details_in: Wire = {"text_tokens": tokens_in, "audio_tokens": 0, "cached_tokens": 0}
        if self.dialect == GA:
            details_in |= {"image_tokens": 0, "cached_tokens_details": {
                "text_tokens": 0, "audio_tokens": 0, "image_tokens": 0}}
        return {"total_tokens": tokens_in + tokens_out, "input_tokens": tokens_in,
                "output_tokens": tokens_out, "input_token_details": details_in,
                "output_token_details": {"text_tokens": tokens_out, "audio_tokens": 0}}

    def session(self, base: Wire) -> Wire:
        """The session object: the session's settings plus the connection's (formats, tools)."""
        s = self.settings
        vad = base.get("turn_detection")
        if vad is not None:
            vad = {k: vad[k] for k in ("type", "threshold", "prefix_padding_ms", "silence_duration_ms",
                                       "create_response", "interrupt_response")}
        tools = [{"type": "function", "name": t.name, "description": t.description,
                  "parameters": t.parameters} for t in s.tools]
        text_only = base.get("output_modalities") == ["text"]
        common = {"object": "realtime.session", "id": s.session_id, "instructions": base["instructions"],
                  "tools": tools, "tool_choice": "auto"}
        tokens = base.get("max_output_tokens") or "inf"  # the settings a session.update applied
        speed = {"speed": base["speed"]} if base.get("speed") is not None else {}
        if self.dialect == BETA:
            temperature = {"temperature": base["temperature"]} if base.get("temperature") is not None else {}
            return {**common, "modalities": ["text"] if text_only else ["audio", "text"],
                    "voice": s.voice, "input_audio_format": _beta_format(s.input_format),
                    "output_audio_format": _beta_format(s.output_format),
                    "input_audio_transcription": {"model": s.transcription_model},
                    "turn_detection": vad, "max_response_output_tokens": tokens, **temperature, **speed}
        return {**common, "type": "realtime", "model": s.model,
                "output_modalities": ["text"] if text_only else ["audio"],
                "audio": {"input": {"format": s.input_format.to_dict(), "turn_detection": vad,
                                    "transcription": {"model": s.transcription_model}},
                          "output": {"format": s.output_format.to_dict(), "voice": s.voice, **speed}},
                "max_output_tokens": tokens}


def _beta_format(fmt: AudioFormat) -> str | None:
    """The beta protocol names only 24 kHz PCM and G.711; a 16 kHz session has no beta name."""
    legacy = fmt.legacy
    return legacy if isinstance(legacy, str) else None
