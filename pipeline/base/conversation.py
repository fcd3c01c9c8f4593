"""Conversation items, and the LLM context built from them.

Items mirror the realtime API: messages (user, assistant), function_call, function_call_output.
An assistant item cut off by the caller keeps only what the caller heard, marked as cut off.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .events import new_id

CUT_OFF_MARK = "— [cut off]"
# How a tool's output stands in the LLM context (a user message: every chat template has one);
# a model with a tool role of its own gets it back in that (`tools.dialect`, `read_result`).
_RESULT = re.compile(r"\[result of (?P<name>[^:(]+?)(?: \((?P<note>[^)]*)\))?: (?P<output>.*)\]", re.DOTALL)


def result_message(name: str, output: str, note: str | None = None) -> str:
    """A tool's output as the context's user message says it."""
    return f"[result of {name}{f' ({note})' if note else ''}: {output}]"


def read_result(text: str) -> tuple[str, str | None, str] | None:
    """(tool name, note, output) of a message `result_message` wrote; None for any other."""
    m = _RESULT.fullmatch(text)
    return (m["name"], m["note"], m["output"]) if m else None


@dataclass
class Item:
    type: str  # "message" | "function_call" | "function_call_output"
    role: str = "assistant"  # for messages: "user" | "assistant" | "system"
    text: str = ""
    id: str = field(default_factory=lambda: new_id("item"))
    status: str = "completed"  # "in_progress" | "completed" | "incomplete"
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | None = None
    audio_end_ms: int | None = None  # set when truncated to what was played
    interrupted: bool = False
    note: str | None = None  # e.g. "completed during an interruption"
    audio: bool = True  # spoken (input_audio / output_audio) or typed (input_text / output_text)

    def truncate(self, *, audio_end_ms: int, heard_text: str) -> None:
        """Keep only what the caller heard of this (agent) item."""
        self.audio_end_ms = audio_end_ms
        self.text = heard_text
        self.interrupted = True
        self.status = "incomplete"

    def to_dict(self) -> dict[str, Any]:
        if self.type == "function_call":
            return {"id": self.id, "type": "function_call", "status": self.status,
                    "call_id": self.call_id, "name": self.name, "arguments": self.arguments}
        if self.type == "function_call_output":
            return {"id": self.id, "type": "function_call_output", "call_id": self.call_id,
                    "output": self.output}
        if self.role == "assistant":
            part = ({"type": "output_audio", "transcript": self.text} if self.audio
                    else {"type": "output_text", "text": self.text})
        elif self.role == "user" and self.audio:
            part = {"type": "input_audio", "transcript": self.text}
        else:  # typed user text, and system messages (always text)
            part = {"type": "input_text", "text": self.text}
        return {"id": self.id, "type": "message", "role": self.role, "status": self.status,
                "content": [part]}


class Conversation:
    def __init__(self) -> None:
        self.items: list[Item] = []

    def add(self, item: Item) -> Item:
        self.items.append(item)
        return item

    def get(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)

    def remove(self, item_id: str) -> Item:
        """Delete an item (conversation.item.delete); KeyError if there is none."""
        item = self.get(item_id)
        if item is None:
            raise KeyError(item_id)
        self.items.remove(item)
        return item

    def last_user_id(self) -> str | None:
        """The caller's latest message (a spoken turn's item id is its turn id)."""
        return next((i.id for i in reversed(self.items) if i.type == "message" and i.role == "user"), None)

    def since_caller(self) -> list[Item]:
        """The items after the caller's latest message: what the agent has done since they spoke."""
        last = self.last_user_id()
        ids = [i.id for i in self.items]
        return self.items[ids.index(last) + 1:] if last in ids else list(self.items)

    def previous_id(self, item: Item) -> str | None:
        idx = self.items.index(item) if item in self.items else len(self.items)
        return self.items[idx - 1].id if idx > 0 else None

    def truncate(self, item_id: str, *, audio_end_ms: int, heard_text: str) -> Item:
        item = self.get(item_id)
        if item is None:
            raise KeyError(item_id)
        item.truncate(audio_end_ms=audio_end_ms, heard_text=heard_text)
        return item

    def to_messages(self, instructions: str) -> list[dict[str, str]]:
        """Chat messages for the LLM; consecutive assistant parts merge into one message."""
        messages: list[dict[str, str]] = [{"role": "system", "content": instructions}]

        def say(role: str, text: str) -> None:
            if messages and messages[-1]["role"] == role and role == "assistant":
                messages[-1]["content"] += " " + text
            else:
                messages.append({"role": role, "content": text})

        for item in self.items:
            if item.type == "message":
                text = item.text.strip()
                if item.interrupted:  # a word cut in half already ends in "-" (response.heard_text)
                    text = f"{text} {CUT_OFF_MARK}".strip()
                if text:
                    say(item.role, text)
            elif item.type == "function_call":
                say("assistant", json.dumps({"name": item.name, "arguments": json.loads(item.arguments or "{}")}))
            elif item.type == "function_call_output":
                say("user", result_message(item.name or "tool", item.output or "", item.note))
        return messages
