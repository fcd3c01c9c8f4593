"""A tool call read from the model's token stream, as it streams.

The model calls a tool by writing one JSON object, `{"name": ..., "arguments": {...}}` (the
grammar keeps it parseable). While it streams, the argument text goes out as deltas and each
spoken argument (a holding line) is handed over as soon as its string is complete, so it is
said while the rest of the call is still being written and the tool is still to run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

from .schema import ToolCall, ToolSpec, parse_tool_call

_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_ARGS = re.compile(r'"arguments"\s*:\s*')


def called_name(text: str) -> str | None:
    """The tool a call's text names, as far as it got ('{"name": "refund", "argu' names refund)."""
    m = _NAME.search(text)
    return m.group(1) if m else None


def starts_tool_call(text: str) -> bool | None:
    """True if the reply is a tool call, False if it is speech, None while nothing visible yet."""
    visible = text.lstrip()
    return visible.startswith("{") if visible else None


class ToolCallStream:
    """Follows one reply that is a tool call.

    `lookup(name)` finds the spec of a named tool; `say_param(spec, param)` says whether a
    spoken argument is to be said at all (a repeat `end_call` says no second farewell).
    """

    def __init__(self, lookup: Callable[[str], ToolSpec | None], *,
                 say_param: Callable[[ToolSpec, str], bool] = lambda _spec, _param: True) -> None:
        self._lookup = lookup
        self._say_param = say_param
        self._args_sent = 0
        self._spoken_done: set[str] = set()
        self.name: str | None = None  # the tool's name, once the model has written it

    def progress(self, text: str) -> tuple[str, list[str]]:
        """The text so far -> (new argument text, spoken arguments that just completed)."""
        delta = ""
        m = _ARGS.search(text)
        if m:
            args_text = text[m.end():].rstrip()
            args_text = args_text[:-1] if args_text.endswith("}}") else args_text
            if len(args_text) > self._args_sent:
                delta = args_text[self._args_sent:]
                self._args_sent = len(args_text)
        name = called_name(text)
        if name:
            self.name = name
        spec = self._lookup(name) if name else None
        said: list[str] = []
        if spec is None:
            return delta, said
        for param in spec.spoken:
            if param in self._spoken_done:
                continue
            if not self._say_param(spec, param):
                self._spoken_done.add(param)
                continue
            value = re.search(rf'"{re.escape(param)}"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
            if value:
                self._spoken_done.add(param)
                said.append(json.loads('"' + value.group(1) + '"'))
        return delta, said

    @staticmethod
    def finish(text: str, specs: Iterable[ToolSpec]) -> ToolCall:
        """The complete call; ValueError if the model began one and did not finish it."""
        call = parse_tool_call(text.strip(), specs)
        if call is None:
            raise ValueError("the model began a tool call but did not finish it")
        return call


# What begins a tool call written inside a spoken reply: Qwen's tag (its dialect reads off only
# a leading one), a stray closing tag, or the bare JSON object of a call.
_MARKUP = re.compile(r"</?tool_call>|\{\s*\"name\"\s*:")
# A JSON object written in the words, a call's arguments most often ('arguments: {"customer_name":
# "Paddy Hession", ...}'): never said; the words after it are.
_OBJECT = re.compile(r"(?:\barguments\s*:\s*)?\{\s*\"[A-Za-z_]\w*\"\s*:")
_FENCE_END = re.compile(r"`{1,3}[A-Za-z]*\s*$")


class CallMarkup:
    """The guard between a spoken reply and the chunker: tool-call markup is never spoken.

    A model may write its call after some words ("Let me check. <tool_call>{...}</tool_call>")
    or write a call again after its result; the dialect reads a call only at a reply's start.
    `push` lets through the text before the markup (holding back what may yet turn out to be
    it); from the markup on, the text is the call's (`call`: its JSON, tags read off), which the
    response runs or drops, never says."""

    def __init__(self) -> None:
        self._held = ""
        self._call: str | None = None  # from the markup on
        self._object: str | None = None  # a JSON object in the words, until it closes

    def push(self, piece: str) -> str:
        """The piece's speakable text."""
        if self._call is not None:
            self._call += piece
            return ""
        if self._object is not None:
            text, self._object = self._object + piece, None
            if (end := _object_end(text)) is None:
                self._object = text
                return ""
            return self.push(text[end:])
        text = self._held + piece
        self._held = ""
        m, o = _MARKUP.search(text), _OBJECT.search(text)
        if m and (o is None or m.start() <= o.start()):
            self._call = text[m.start():]
            return _FENCE_END.sub("", text[:m.start()])  # a markdown fence around the call is its
        if o:  # 'arguments: {...}': skipped to its closing brace
            self._object = ""
            return _FENCE_END.sub("", text[:o.start()]) + self.push(text[o.start() + o.group(0).index("{"):])
        keep = _markup_suffix(text)
        self._held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep]

    def finish(self) -> str:
        """What was held back and turned out to be words (an object left open is none)."""
        held, self._held = self._held, ""
        return held if self._call is None and self._object is None else ""

    @property
    def call(self) -> str | None:
        """The call written in the reply (the JSON object, without tags), or None."""
        if self._call is None:
            return None
        text = re.sub(r"^\s*<tool_call>", "", self._call)
        end = text.find("</tool_call>")
        text = text[:end] if end >= 0 else text
        fence = text.find("```")
        return (text[:fence] if fence >= 0 else text).strip()


def _object_end(text: str) -> int | None:
    """Where the JSON object the text begins closes (past its last brace), strings read as strings;
    None while it is open."""
    depth, quoted, escaped = 0, False, False
    for i, ch in enumerate(text):
        if quoted:
            quoted, escaped = (not (ch == '"' and not escaped)), (ch == "\\" and not escaped)
        elif ch == '"':
            quoted = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _markup_suffix(text: str) -> int:
    """How many of the last characters could begin tool-call markup."""
    keep = 0
    for tag in ("<tool_call>", "</tool_call>"):
        keep = max(keep, next((n for n in range(min(len(tag) - 1, len(text)), 0, -1)
                               if tag.startswith(text[-n:])), 0))
    if fence := _FENCE_END.search(text):  # "```json" may open a call (Qwen writes one so)
        keep = max(keep, len(text) - fence.start())
    brace = text.rfind("{")
    if brace >= 0 and re.fullmatch(r'\{\s*(?:"\w*(?:"\s*)?)?', text[brace:]):
        keep = max(keep, len(text) - brace)  # '{', '{ "na', '{"customer_name"': an object may be beginning
    before = text[:len(text) - keep]
    if (word := re.search(r"\b([a-z]+)(\s*:?\s*)$", before)) and "arguments".startswith(word.group(1)) \
            and (keep == 0 or word.group(1) == "arguments"):
        keep = len(text) - word.start()  # 'argu', 'arguments: ', 'arguments: {': its object may follow
    return keep
