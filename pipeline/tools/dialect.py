"""How a model writes a tool call: its instructions, its grammar, its output read back.

The pipeline reads one form of call, `{"name": ..., "arguments": {...}}` (`stream`, `schema`).
Models are trained on their own forms; a dialect translates at the model's edge, so the call
stream (argument deltas, spoken arguments, the result buffer, the ledger) is the same for all.

- `json` (SmolLM2, the scripted and OpenAI-compatible LLMs): the call is the bare JSON object,
  and the instructions describe it in words (`tools_prompt`).
- `qwen` (Qwen2.5, whose chat template has `<tool_call>`): the tools are listed in the system
  prompt's `<tools>` block, in the words of Qwen's template, and the model writes
  `<tool_call>\\n{json}\\n</tool_call>`; the tags are read off and the JSON inside goes on.

`dialect_for_template` picks one from the model's chat template (a GGUF's
`tokenizer.chat_template`), the JSON dialect where there is none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..base.conversation import read_result
from .grammar import tool_call_grammar
from .schema import ToolSpec

SPOKEN_GUIDANCE = ("Fill every spoken argument with a short sentence to say to the caller while "
                   "the tool runs.")


def tools_prompt(specs: Iterable[ToolSpec]) -> str:
    """The JSON dialect's paragraph of the instructions: the tools and how to call one."""
    lines = ["You can use tools. To use one, reply with only a JSON object: "
             '{"name": "<tool>", "arguments": {...}}. ' + SPOKEN_GUIDANCE + " Tools:"]
    for spec in specs:
        params = spec.parameters.get("properties", {})
        args = ", ".join(f"{k} ({v.get('type', 'string')}{', spoken' if k in spec.spoken else ''})"
                         f"{': ' + v['description'] if v.get('description') else ''}" for k, v in params.items())
        lines.append(f"- {spec.name}: {spec.description} Arguments: {args}")
    return "\n".join(lines)


def model_schema(schema: Any) -> Any:
    """The schema as the model reads it: without the keywords only the session reads (`x-source`,
    `x-kind`, `x-cues`: where a value may come from and what names it)."""
    if isinstance(schema, dict):
        return {k: model_schema(v) for k, v in schema.items() if not str(k).startswith("x-")}
    if isinstance(schema, list):
        return [model_schema(v) for v in schema]
    return schema


class JsonDialect:
    """The bare JSON object: what the pipeline reads, so nothing is translated."""

    name = "json"

    def prompt(self, specs: Iterable[ToolSpec]) -> str:
        return tools_prompt(specs)

    def grammar(self, specs: Iterable[ToolSpec], *, allow_text: bool = True) -> str:
        return tool_call_grammar(specs, allow_text=allow_text)

    def history(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages

    def read(self, pieces: Iterable[str]) -> Iterator[str]:
        yield from pieces


class QwenDialect:
    """Qwen2.5's `<tools>` block and `<tool_call>` tags (its chat template's own words)."""

    name = "qwen"
    OPEN = "<tool_call>"
    CLOSE = "</tool_call>"

    def prompt(self, specs: Iterable[ToolSpec]) -> str:
        listed = "\n".join(json.dumps({"type": "function", "function": {
            "name": s.name, "description": s.description, "parameters": model_schema(s.parameters)}},
            ensure_ascii=False) for s in specs)
        return ("When you call a tool, " + SPOKEN_GUIDANCE[0].lower() + SPOKEN_GUIDANCE[1:] +
                "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n"
                f"<tools>\n{listed}\n</tools>\n\n"
                "For each function call, return a json object with function name and arguments "
                "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
                '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>')

    def grammar(self, specs: Iterable[ToolSpec], *, allow_text: bool = True) -> str:
        return tool_call_grammar(specs, wrap=(self.OPEN + "\n", "\n" + self.CLOSE), allow_text=allow_text)

    def history(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Calls in the history (the assistant's JSON, `Conversation.to_messages`) as Qwen wrote
        them, and their results in its `tool` role (its template puts them in
        `<tool_response>` tags), so the model reads its own form back. A result given as the
        caller's words is one the model takes for the caller's, and says back to them."""
        out = []
        for m in messages:
            content = m.get("content")
            if m.get("role") == "assistant" and isinstance(content, str) and '{"name": ' in content:
                m = {**m, "content": _wrap_calls(content, self.OPEN, self.CLOSE)}
            elif m.get("role") == "user" and isinstance(content, str) and (result := read_result(content)):
                _name, note, output = result
                m = {"role": "tool", "content": output if note is None else f"{output} ({note})"}
            out.append(m)
        return out

    def read(self, pieces: Iterable[str]) -> Iterator[str]:
        """The model's text with the tags read off: a reply that opens with `<tool_call>` becomes
        the JSON inside it (ending at `</tool_call>`: one call a reply); any other reply passes
        as it is. Text that may still turn out to be a tag is held until it is known."""
        held = ""
        mode: str | None = None  # None: undecided; "text"; "call"
        started = False  # the call's first character has been seen
        for piece in pieces:
            held += piece
            if mode is None:
                head = held.lstrip()
                if not head or (len(head) < len(self.OPEN) and self.OPEN.startswith(head)):
                    continue
                if head.startswith(self.OPEN):
                    mode, held = "call", head[len(self.OPEN):]
                else:
                    mode = "text"
            if mode == "text":
                yield held
                held = ""
                continue
            if not started:  # the newline after the tag is the tag's, not the call's
                held = held.lstrip()
                started = bool(held)
            end = held.find(self.CLOSE)
            if end >= 0:
                body = held[:end].rstrip()
                if body:
                    yield body
                return
            keep = _partial_suffix(held, self.CLOSE)
            out, held = held[:len(held) - keep], held[len(held) - keep:]
            if out:
                yield out
        if mode == "call" and held.strip():
            yield held.rstrip()  # a call cut off before its close tag: finish() reports it


ToolDialect = JsonDialect | QwenDialect
JSON = JsonDialect()
QWEN = QwenDialect()


def dialect_for_template(template: str | None) -> ToolDialect:
    """The dialect a chat template speaks: Qwen's where it writes `<tool_call>`, else JSON."""
    if template and QwenDialect.OPEN in template and "<tools>" in template:
        return QWEN
    return JSON


def _partial_suffix(text: str, tag: str) -> int:
    """How many of the last characters of text could begin the tag."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


def _wrap_calls(content: str, open_tag: str, close_tag: str) -> str:
    """Each `{"name": ...}` call object in an assistant message, wrapped in the tags."""
    decoder = json.JSONDecoder()
    out, i = [], 0
    while (start := content.find('{"name": ', i)) >= 0:
        try:
            value, end = decoder.raw_decode(content, start)
        except ValueError:
            break
        if not (isinstance(value, dict) and "name" in value and "arguments" in value):
            out.append(content[i:end])
            i = end
            continue
        before = content[i:start].rstrip()
        if before.endswith(open_tag):  # wrapped already
            out.append(content[i:end])
            i = end
            continue
        out.append((before + "\n" if before else "") + f"{open_tag}\n{content[start:end]}\n{close_tag}")
        i = end
    out.append(content[i:])
    return "".join(out)
