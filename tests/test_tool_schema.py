"""Tool schemas from type hints and docstrings, hosted-API definitions, and the call grammar.

The grammar is checked three ways: by a small GBNF matcher below (accepts what it should,
rejects what it should, and everything it can generate parses), by llama.cpp's own parser
when llama_cpp is installed, and by a real model run when the model file is present.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import math
import random
import re
import struct
from pathlib import Path
from typing import Literal

import pytest

from pipeline.base.models import model_file
from pipeline.tools import (
    ToolCall,
    ToolRegistry,
    ToolSpec,
    parse_tool_call,
    tool,
    tool_call_grammar,
)

MODEL = model_file("llm/SmolLM2-135M-Instruct.Q4_1.gguf")


@tool(side_effect=True, business_key=lambda a: f"refund:{a['order_id']}")
async def refund(
    holding_line: str,
    order_id: str,
    reason: Literal["damaged", "late", "wrong item"],
    amount: float = 0.0,
    notify: bool = True,
) -> dict:
    """Refund an order to the card it was paid with.

    Only for orders that were delivered.

    Args:
        holding_line: A short sentence to say while the refund goes through.
        order_id (str): The order number, exactly
            as the caller read it out.
        reason: Why the caller wants the refund.
        amount: Amount in dollars; 0 means the whole order.
        notify: Whether to email a receipt.
    """
    return {"refund_id": f"R-{order_id}", "amount": amount}


@tool(name="order_status", timeout_s=3.0)
async def lookup(order_id: str, fields: list[str], limit: int = 3) -> dict:
    """Look up where an order is."""
    return {"order_id": order_id, "fields": fields, "limit": limit}


@tool
async def options_only(colour: str = "red", size: int = 1) -> str:
    """Pick options; every parameter is optional."""
    return f"{colour}:{size}"


SPECS = [refund, lookup, options_only]


# -- schema from the function -------------------------------------------------------------


def test_decorator_builds_schema_from_hints_and_docstring() -> None:
    assert isinstance(refund, ToolSpec)
    assert refund.name == "refund"
    assert refund.description == "Refund an order to the card it was paid with."
    assert refund.spoken == ("holding_line",)
    assert refund.side_effect is True
    assert refund.timeout_s == 10.0
    assert refund.key_for({"order_id": "A1"}) == "refund:A1"
    props = refund.parameters["properties"]
    assert list(props) == ["holding_line", "order_id", "reason", "amount", "notify"]
    assert props["holding_line"] == {
        "type": "string",
        "description": "A short sentence to say while the refund goes through.",
        "spoken": True,
    }
    assert props["order_id"]["description"] == (
        "The order number, exactly as the caller read it out."
    )
    assert props["reason"] == {
        "type": "string",
        "enum": ["damaged", "late", "wrong item"],
        "description": "Why the caller wants the refund.",
    }
    assert props["amount"]["type"] == "number"
    assert props["notify"]["type"] == "boolean"
    assert refund.parameters["required"] == ["holding_line", "order_id", "reason"]
    assert refund.parameters["type"] == "object"


def test_decorator_with_options_and_list_and_int() -> None:
    assert lookup.name == "order_status"
    assert lookup.timeout_s == 3.0
    assert lookup.spoken == ()
    assert lookup.side_effect is False
    assert lookup.key_for({"order_id": "A1"}) is None
    props = lookup.parameters["properties"]
    assert props["fields"] == {"type": "array", "items": {"type": "string"}}
    assert props["limit"] == {"type": "integer"}
    assert lookup.parameters["required"] == ["order_id", "fields"]


def test_spec_is_still_awaitable() -> None:
    got = asyncio.run(refund(holding_line="One moment.", order_id="A1", reason="late"))
    assert got == {"refund_id": "R-A1", "amount": 0.0}


def test_optional_spoken_parameter_is_refused_with_reason() -> None:
    with pytest.raises(ValueError, match="must be required.*small models skip optional"):

        @tool
        async def cancel(order_id: str, holding_line: str = "") -> None:
            """Cancel an order."""


def test_explicit_spoken_must_exist_and_be_text() -> None:
    with pytest.raises(ValueError, match="no such parameter"):

        @tool(spoken=("say",))
        async def a(order_id: str) -> None:
            """A."""

    with pytest.raises(ValueError, match="free string"):

        @tool(spoken=("n",))
        async def b(n: int) -> None:
            """B."""


def test_explicit_spoken_name_other_than_holding_line() -> None:
    @tool(spoken=("filler",))
    async def wait(filler: str, minutes: int) -> None:
        """Wait."""

    assert wait.spoken == ("filler",)
    assert wait.parameters["properties"]["filler"]["spoken"] is True
    assert "spoken" not in wait.parameters["properties"]["minutes"]


def test_tool_errors_say_what_to_do() -> None:
    with pytest.raises(TypeError, match="async def"):

        @tool
        def sync(x: str) -> None:
            """Sync."""

    with pytest.raises(ValueError, match="needs a description"):

        @tool
        async def undocumented(x: str) -> None:
            pass

    with pytest.raises(TypeError, match="needs a type hint"):

        @tool
        async def unhinted(x) -> None:
            """Unhinted."""

    with pytest.raises(TypeError, match="cannot express"):

        @tool
        async def nested(x: dict) -> None:
            """Nested."""

    with pytest.raises(ValueError, match="business_key"):

        @tool(side_effect=True)
        async def charge(x: str) -> None:
            """Charge."""

    with pytest.raises(ValueError, match="documents \\['y'\\]"):

        @tool
        async def typo(x: str) -> None:
            """Typo.

            Args:
                y: Not a parameter.
            """


def test_description_override_and_args_section_end() -> None:
    @tool(description="Say hello.")
    async def hello(name: str, loud: bool = False) -> str:
        """Ignored summary.

        Args:
            name: Who to greet.

        Returns:
            loud: not an argument description.
        """
        return name

    assert hello.description == "Say hello."
    props = hello.parameters["properties"]
    assert props["name"]["description"] == "Who to greet."
    assert "description" not in props["loud"]


# -- hosted-API definitions ---------------------------------------------------------------

HOSTED = {
    "type": "function",
    "name": "book_table",
    "description": "Book a table.",
    "parameters": {
        "type": "object",
        "properties": {
            "holding_line": {"type": "string", "poly_spoken": True},
            "party": {"type": "integer"},
            "when": {"type": "string", "enum": ["tonight", "tomorrow"]},
        },
        "required": ["holding_line", "party", "when"],
    },
}


def test_from_openai_reads_both_spoken_spellings_and_round_trips() -> None:
    spec = ToolSpec.from_openai(HOSTED)
    assert spec.spoken == ("holding_line",)
    assert spec.parameters["properties"]["holding_line"] == {"type": "string", "spoken": True}
    assert "poly_spoken" not in json.dumps(spec.to_openai())
    again = ToolSpec.from_openai(spec.to_openai())
    assert again == spec
    assert again.to_openai() == spec.to_openai()
    # The input definition is not modified.
    assert HOSTED["parameters"]["properties"]["holding_line"] == {
        "type": "string",
        "poly_spoken": True,
    }

    ours = json.loads(json.dumps(HOSTED).replace("poly_spoken", "spoken"))
    assert ToolSpec.from_openai(ours).spoken == ("holding_line",)
    nested = {"type": "function", "function": {k: v for k, v in HOSTED.items() if k != "type"}}
    assert ToolSpec.from_openai(nested) == spec


def test_from_openai_refuses_optional_spoken_and_unsupported_types() -> None:
    optional = json.loads(json.dumps(HOSTED))
    optional["parameters"]["required"] = ["party", "when"]
    with pytest.raises(ValueError, match="must be required"):
        ToolSpec.from_openai(optional)
    nested = json.loads(json.dumps(HOSTED))
    nested["parameters"]["properties"]["party"] = {"type": "object"}
    with pytest.raises(ValueError, match="cannot express"):
        ToolSpec.from_openai(nested)
    with pytest.raises(ValueError, match="Only function tools"):
        ToolSpec.from_openai({"type": "web_search"})


def test_from_openai_without_code_is_not_callable() -> None:
    spec = ToolSpec.from_openai(HOSTED)
    with pytest.raises(RuntimeError, match="pass fn="):
        asyncio.run(spec(holding_line="x", party=2, when="tonight"))


def test_decorated_spec_to_openai_emits_spoken() -> None:
    out = refund.to_openai()
    assert out["type"] == "function" and out["name"] == "refund"
    assert out["parameters"]["properties"]["holding_line"]["spoken"] is True
    out["parameters"]["properties"].clear()  # a copy: the spec is unchanged
    assert refund.parameters["properties"]


def test_registry() -> None:
    registry = ToolRegistry(specs=[refund, lookup])
    assert registry.get("refund") is refund
    assert registry.get("nope") is None
    assert registry["order_status"] is lookup
    assert "refund" in registry and len(registry) == 2
    assert registry.specs() == [refund, lookup]
    assert [d["name"] for d in registry.to_openai()] == ["refund", "order_status"]
    with pytest.raises(ValueError, match="already registered"):
        registry.add(refund)
    with pytest.raises(KeyError, match="known tools"):
        registry["nope"]


# -- parse_tool_call ----------------------------------------------------------------------


def test_parse_plain_text_is_none() -> None:
    assert parse_tool_call("Sure, I can help with that.", SPECS) is None
    assert parse_tool_call("", SPECS) is None


def test_parse_valid_call() -> None:
    text = (
        ' {"name": "refund", "arguments": {"holding_line": "One moment.", '
        '"order_id": "A1", "reason": "late", "amount": 12.5}}\n'
    )
    call = parse_tool_call(text, SPECS)
    assert call == ToolCall(
        name="refund",
        arguments={
            "holding_line": "One moment.",
            "order_id": "A1",
            "reason": "late",
            "amount": 12.5,
        },
    )
    assert parse_tool_call('{"name": "options_only", "arguments": {}}', SPECS) == ToolCall(
        name="options_only", arguments={}
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"name": "refund", "arguments": {', "not valid JSON"),
        ('{"name": "delete_everything", "arguments": {}}', "unknown tool 'delete_everything'"),
        ('{"name": "refund", "arguments": {"order_id": "A1"}}', "missing required"),
        (
            '{"name": "order_status", "arguments": {"order_id": "A1", "fields": [], "x": 1}}',
            "no parameter",
        ),
        (
            '{"name": "refund", "arguments": {"holding_line": "h", "order_id": "A1", '
            '"reason": "bored"}}',
            "must be one of",
        ),
        (
            '{"name": "order_status", "arguments": {"order_id": 7, "fields": []}}',
            "must be a string",
        ),
        (
            '{"name": "order_status", "arguments": {"order_id": "7", "fields": [], "limit": true}}',
            "must be an integer",
        ),
        (
            '{"name": "order_status", "arguments": {"order_id": "7", "fields": [1]}}',
            "item that must be a string",
        ),
        ('{"name": "order_status", "arguments": [1]}', "must be a JSON object"),
        ('{"tool": "refund"}', "JSON object like"),
        ('{"name": "options_only", "arguments": {}, "id": 3}', "only 'name' and 'arguments'"),
    ],
)
def test_parse_bad_call_raises_clear_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_tool_call(text, SPECS)


# -- a small GBNF matcher: enough of llama.cpp's grammar language for these grammars -------


class Gbnf:
    """Parses GBNF (one rule per line) and matches or generates whole strings."""

    def __init__(self, text: str) -> None:
        self.rules: dict[str, tuple] = {}
        for line in text.strip().splitlines():
            name, body = line.split(" ::= ", 1)
            assert re.fullmatch(r"[a-z0-9-]+", name), name
            assert name not in self.rules, f"rule {name} defined twice"
            self._src, self._i = body, 0
            self.rules[name] = self._alt()
            self._ws()
            assert self._i == len(self._src), f"trailing input in rule {name}: {body[self._i :]}"
        for name, node in self.rules.items():
            self._check_refs(node, name)

    # parsing
    def _ws(self) -> None:
        while self._i < len(self._src) and self._src[self._i] == " ":
            self._i += 1

    def _peek(self) -> str:
        self._ws()
        return self._src[self._i] if self._i < len(self._src) else ""

    def _alt(self) -> tuple:
        options = [self._seq()]
        while self._peek() == "|":
            self._i += 1
            options.append(self._seq())
        return ("alt", options)

    def _seq(self) -> tuple:
        items = []
        while self._peek() not in ("", "|", ")"):
            items.append(self._postfix(self._atom()))
        return ("seq", items)

    def _atom(self) -> tuple:
        c = self._peek()
        if c == '"':
            self._i += 1
            out = []
            while self._src[self._i] != '"':
                out.append(self._char())
            self._i += 1
            return ("lit", "".join(out))
        if c == "[":
            self._i += 1
            negated = self._src[self._i] == "^"
            self._i += negated
            ranges = []
            while self._src[self._i] != "]":
                lo = self._char()
                hi = lo
                if self._src[self._i] == "-" and self._src[self._i + 1] != "]":
                    self._i += 1
                    hi = self._char()
                ranges.append((lo, hi))
            self._i += 1
            return ("cls", negated, ranges)
        if c == "(":
            self._i += 1
            node = self._alt()
            assert self._peek() == ")"
            self._i += 1
            return node
        m = re.compile(r"[a-z0-9-]+").match(self._src, self._i)
        assert m, f"unexpected {self._src[self._i :]!r}"
        self._i = m.end()
        return ("ref", m.group())

    def _char(self) -> str:
        c = self._src[self._i]
        self._i += 1
        if c != "\\":
            return c
        e = self._src[self._i]
        self._i += 1
        if e == "x":
            self._i += 2
            return chr(int(self._src[self._i - 2 : self._i], 16))
        return {"n": "\n", "r": "\r", "t": "\t"}.get(e, e)

    def _postfix(self, node: tuple) -> tuple:
        c = self._src[self._i] if self._i < len(self._src) else ""
        if c in "*+?" and c:
            self._i += 1
            return ("rep", node, 1 if c == "+" else 0, 1 if c == "?" else None)
        if c == "{":
            m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self._src, self._i)
            assert m
            self._i = m.end()
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            return ("rep", node, lo, hi)
        return node

    def _check_refs(self, node: tuple, rule: str) -> None:
        kind = node[0]
        if kind == "ref":
            assert node[1] in self.rules, f"rule {rule} uses undefined rule {node[1]}"
        elif kind in ("alt", "seq"):
            for child in node[1]:
                self._check_refs(child, rule)
        elif kind == "rep":
            self._check_refs(node[1], rule)

    # matching
    def matches(self, s: str) -> bool:
        return len(s) in self._ends(("ref", "root"), s, 0)

    def _ends(self, node: tuple, s: str, pos: int) -> set[int]:
        kind = node[0]
        if kind == "lit":
            return {pos + len(node[1])} if s.startswith(node[1], pos) else set()
        if kind == "cls":
            if pos >= len(s):
                return set()
            inside = any(lo <= s[pos] <= hi for lo, hi in node[2])
            return {pos + 1} if inside != node[1] else set()
        if kind == "ref":
            return self._ends(self.rules[node[1]], s, pos)
        if kind == "alt":
            return set().union(*(self._ends(option, s, pos) for option in node[1]))
        if kind == "seq":
            positions = {pos}
            for item in node[1]:
                positions = set().union(*(self._ends(item, s, p) for p in positions))
                if not positions:
                    break
            return positions
        _, inner, lo, hi = node
        done, frontier, seen, count = set(), {pos}, {pos}, 0
        while frontier:
            if count >= lo:
                done |= frontier
            if hi is not None and count == hi:
                break
            frontier = set().union(*(self._ends(inner, s, p) for p in frontier))
            if hi is None:
                frontier -= seen
                seen |= frontier
            count += 1
        return done

    # generating
    def sample(self, rng: random.Random, node: tuple = ("ref", "root")) -> str:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "cls":
            pool = [c for c in _POOL if any(lo <= c <= hi for lo, hi in node[2]) != node[1]]
            return rng.choice(pool)
        if kind == "ref":
            return self.sample(rng, self.rules[node[1]])
        if kind == "alt":
            return self.sample(rng, rng.choice(node[1]))
        if kind == "seq":
            return "".join(self.sample(rng, item) for item in node[1])
        _, inner, lo, hi = node
        count = rng.randint(lo, lo + 3 if hi is None else rng.choice([lo, hi, min(hi, lo + 5)]))
        return "".join(self.sample(rng, inner) for _ in range(count))


_POOL = list('abcXYZ019 {}[]":,\\/-é€\n\t') + ["\x01", "\u4e2d"]


def _call(name: str, arguments: dict, **dumps) -> str:
    return json.dumps({"name": name, "arguments": arguments}, **dumps)


@pytest.fixture(scope="module")
def grammar_text() -> str:
    return tool_call_grammar(SPECS, max_string_chars=20)


@pytest.fixture(scope="module")
def grammar(grammar_text: str) -> Gbnf:
    return Gbnf(grammar_text)


def test_grammar_is_well_formed(grammar_text: str, grammar: Gbnf) -> None:
    assert grammar_text.startswith("root ::= call | text\n")
    assert set(grammar.rules) >= {"root", "call", "text", "string", "char", "ws"}
    for spec in SPECS:
        assert json.dumps(spec.name).replace('"', '\\"') in grammar_text
    assert "{0,20}" in grammar_text  # the string bound


ACCEPTED = [
    _call("refund", {"holding_line": "One moment.", "order_id": "A1", "reason": "late"}),
    '{"name": "refund", "arguments": {"holding_line": "Say \\"hi\\" \\u00e9 \\n", '
    '"order_id": "A-1", "reason": "wrong item", "amount": -12.25, "notify": false}}',
    _call(
        "refund",
        {
            "holding_line": "Un momento, señor €5",
            "order_id": "",
            "reason": "damaged",
            "notify": True,
        },
        ensure_ascii=False,
    ),
    _call("refund", {"holding_line": "é€", "order_id": "A1", "reason": "late"}),  # \u escapes
    _call("order_status", {"order_id": "A1", "fields": []}, separators=(",", ":")),
    _call("order_status", {"order_id": "A1", "fields": ["eta", "carrier"], "limit": 0}),
    _call("options_only", {}),
    _call("options_only", {"size": 3}),
    _call("options_only", {"colour": "blue"}),
    _call("options_only", {"colour": "blue", "size": 10}),
    "Sure, I can help with that. {braces} later are fine",
    "x",
    "ok\nsecond line",
    "a" * 600,
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_grammar_accepts(grammar: Gbnf, text: str) -> None:
    assert grammar.matches(text), text
    call = parse_tool_call(text, SPECS)
    assert (call is None) == (not text.startswith("{"))


REJECTED = [
    "",
    "a" * 601,
    " leading space",
    '{"name": "refund"}',
    ' {"name": "options_only", "arguments": {}}',
    _call("delete_everything", {}),
    _call("refund", {"order_id": "A1", "holding_line": "h", "reason": "late"}),  # order
    _call("refund", {"holding_line": "h", "order_id": "A1"}),  # missing required
    _call("refund", {"holding_line": "h", "order_id": "A1", "reason": "bored"}),
    _call("refund", {"holding_line": "x" * 21, "order_id": "A1", "reason": "late"}),
    _call("refund", {"holding_line": "h", "order_id": "A1", "reason": "late", "amount": 1e20}),
    '{"name": "refund", "arguments": {"holding_line": "two\nlines", "order_id": "A1", '
    '"reason": "late"}}',
    _call("options_only", {"size": 3, "colour": "blue"}),  # order
    _call("options_only", {"size": "3"}),
    _call("options_only", {"size": 1.5}),
    _call("options_only", {"size": 1}) + " trailing",
    _call("options_only", {}) + _call("options_only", {}),
    _call("order_status", {"order_id": "A1", "fields": ["a"] * 9}),
    '{"name":  "options_only", "arguments": {}}',  # at most one space
    '{"name": "options_only", "arguments": {"size": 01}}',
]


@pytest.mark.parametrize("text", REJECTED)
def test_grammar_rejects(grammar: Gbnf, text: str) -> None:
    assert not grammar.matches(text), text


def test_everything_the_grammar_generates_parses(grammar: Gbnf) -> None:
    rng = random.Random(7)
    calls = texts = 0
    for _ in range(400):
        out = grammar.sample(rng)
        assert grammar.matches(out), out
        call = parse_tool_call(out, SPECS)
        if call is None:
            texts += 1
        else:
            calls += 1
            assert call.name in {s.name for s in SPECS}
            for key, value in call.arguments.items():
                if isinstance(value, str):
                    assert len(value) <= 20, (key, value)
    assert calls > 100 and texts > 50


def test_grammar_without_text_allows_only_calls() -> None:
    g = tool_call_grammar([lookup], allow_text=False)
    assert "text" not in Gbnf(g).rules
    assert Gbnf(g).matches(_call("order_status", {"order_id": "A1", "fields": ["eta"]}))
    assert not Gbnf(g).matches("hello")
    assert not Gbnf(g).matches(_call("refund", {}))
    with pytest.raises(ValueError, match="at least one tool"):
        tool_call_grammar([], allow_text=False)


def test_grammar_text_only_and_odd_names() -> None:
    assert Gbnf(tool_call_grammar([])).matches("just talk")
    # offered no tool, Qwen opened a markdown call and said nothing else: a reply never opens so
    assert not Gbnf(tool_call_grammar([])).matches("```json")
    assert Gbnf(tool_call_grammar([])).matches("Sure, `code` later is words")

    with pytest.raises(TypeError, match="cannot express"):

        @tool
        async def mixed(mode: Literal["a", 2]) -> None:
            """Mixed kinds of enum values are refused."""

    @tool
    async def quote2(mode: Literal['say "hi"', "a\\b", "ünï"]) -> None:
        """Quote."""

    g = Gbnf(tool_call_grammar([quote2]))
    for mode in ['say "hi"', "a\\b", "ünï"]:
        text = _call("quote2", {"mode": mode}, ensure_ascii=False)
        assert g.matches(text), text
        assert parse_tool_call(text, [quote2]) == ToolCall(name="quote2", arguments={"mode": mode})


# -- llama.cpp's own parser and a real model ------------------------------------------------


def _byte_vocab_gguf(path: Path) -> None:
    """A vocab-only GGUF whose tokens are the 256 bytes, so any text is a token sequence."""

    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    def kv(key: str, kind: int, value: bytes) -> bytes:
        return string(key) + struct.pack("<I", kind) + value

    def array(key: str, kind: int, items: list[bytes]) -> bytes:
        return kv(key, 9, struct.pack("<IQ", kind, len(items)) + b"".join(items))

    u32, f32, i32, text = (4, 6, 5, 8)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    fields = [
        kv("general.architecture", text, string("llama")),
        kv("llama.context_length", u32, struct.pack("<I", 64)),
        kv("llama.embedding_length", u32, struct.pack("<I", 8)),
        kv("llama.block_count", u32, struct.pack("<I", 1)),
        kv("llama.feed_forward_length", u32, struct.pack("<I", 8)),
        kv("llama.attention.head_count", u32, struct.pack("<I", 1)),
        kv("llama.attention.layer_norm_rms_epsilon", f32, struct.pack("<f", 1e-5)),
        kv("tokenizer.ggml.model", text, string("llama")),
        array("tokenizer.ggml.tokens", text, [string(t) for t in tokens]),
        array("tokenizer.ggml.scores", f32, [struct.pack("<f", 0.0)] * len(tokens)),
        array(
            "tokenizer.ggml.token_type",
            i32,
            [struct.pack("<i", t) for t in [2, 3, 3]] + [struct.pack("<i", 6)] * 256,
        ),  # unknown, control x2, then byte tokens
        kv("tokenizer.ggml.bos_token_id", u32, struct.pack("<I", 1)),
        kv("tokenizer.ggml.eos_token_id", u32, struct.pack("<I", 2)),
        kv("tokenizer.ggml.unknown_token_id", u32, struct.pack("<I", 0)),
    ]
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, len(fields)) + b"".join(fields)
    path.write_bytes(data + b"\0" * (-len(data) % 32))


class LlamaCppGrammar:
    """llama.cpp's own grammar engine, driven byte by byte over the byte vocabulary."""

    EOS = 2
    N_VOCAB = 259

    def __init__(self, llama_cpp, path: Path) -> None:
        self.ll = llama_cpp
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        assert self.model, "llama.cpp could not load the byte vocabulary"
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)

    def compiles(self, grammar: str) -> bool:
        sampler = self.ll.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if sampler:
            self.ll.llama_sampler_free(sampler)
        return bool(sampler)

    def accepts(self, grammar: str, text: str) -> bool:
        ll = self.ll
        sampler = ll.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        assert sampler, "grammar did not compile"
        try:
            for token in [3 + b for b in text.encode()] + [self.EOS]:
                data = (ll.llama_token_data * self.N_VOCAB)(
                    *[ll.llama_token_data(i, 0.0, 0.0) for i in range(self.N_VOCAB)]
                )
                candidates = ll.llama_token_data_array(data, self.N_VOCAB, -1, False)
                ll.llama_sampler_apply(sampler, ctypes.byref(candidates))
                if math.isinf(data[token].logit):
                    return False
                if token != self.EOS:
                    # Only ever accept an allowed token: llama.cpp aborts on a forbidden one.
                    ll.llama_sampler_accept(sampler, token)
            return True
        finally:
            ll.llama_sampler_free(sampler)

    def close(self) -> None:
        self.ll.llama_model_free(self.model)


@pytest.fixture(scope="module")
def llama_grammar(tmp_path_factory: pytest.TempPathFactory):
    llama_cpp = pytest.importorskip("llama_cpp")
    needed = ("llama_model_load_from_file", "llama_model_get_vocab", "llama_sampler_init_grammar")
    if not all(hasattr(llama_cpp, name) for name in needed):
        pytest.skip("this llama_cpp predates the vocab and sampler API")
    path = tmp_path_factory.mktemp("vocab") / "bytes.gguf"
    _byte_vocab_gguf(path)
    engine = LlamaCppGrammar(llama_cpp, path)
    yield engine
    engine.close()


def test_llama_cpp_parses_grammar(grammar_text: str, llama_grammar: LlamaCppGrammar) -> None:
    assert llama_grammar.ll.LlamaGrammar.from_string(grammar_text, verbose=False) is not None
    assert llama_grammar.compiles(grammar_text)
    assert llama_grammar.compiles(tool_call_grammar(SPECS))
    assert llama_grammar.compiles(tool_call_grammar([lookup], allow_text=False))
    assert llama_grammar.compiles(tool_call_grammar([]))
    # The check is real: llama.cpp refuses a broken grammar.
    assert not llama_grammar.compiles(grammar_text.replace("char{0,20}", "char{0,20"))
    assert not llama_grammar.compiles("root ::= undefined-rule")


def test_llama_cpp_agrees_with_the_matcher(
    grammar_text: str, grammar: Gbnf, llama_grammar: LlamaCppGrammar
) -> None:
    for text in ACCEPTED:
        assert llama_grammar.accepts(grammar_text, text), text
    for text in REJECTED:
        assert not llama_grammar.accepts(grammar_text, text), text
    rng = random.Random(11)
    for _ in range(150):
        out = grammar.sample(rng)
        assert llama_grammar.accepts(grammar_text, out), out


@pytest.mark.models
@pytest.mark.slow
def test_model_output_under_grammar_parses() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    if not MODEL.exists():
        pytest.skip("SmolLM2 model not downloaded (scripts/download_models.sh)")
    offered = [refund, lookup]
    llm = llama_cpp.Llama(model_path=str(MODEL), n_ctx=1024, n_threads=2, verbose=False)
    grammar = llama_cpp.LlamaGrammar.from_string(
        tool_call_grammar(offered, max_string_chars=60), verbose=False
    )
    tools = json.dumps([spec.to_openai() for spec in offered])
    out = llm.create_chat_completion(
        messages=[
            {
                "role": "system",
                "content": "You are a phone agent. To use a tool, reply with only "
                '{"name": ..., "arguments": {...}}. Tools: ' + tools,
            },
            {"role": "user", "content": "My order A17 arrived damaged, please refund it."},
        ],
        grammar=grammar,
        max_tokens=400,
        temperature=0.0,
    )
    choice = out["choices"][0]
    text = choice["message"]["content"]
    assert text
    if text.lstrip().startswith("{"):
        # Bounded strings keep any call well inside max_tokens, so it must end on its own.
        assert choice["finish_reason"] == "stop", text
    call = parse_tool_call(text, offered)  # raises if the output is a malformed call
    assert call is None or call.name in {spec.name for spec in offered}
