"""A llama.cpp GBNF grammar that keeps the model's tool calls parseable.

Under it the model writes either plain text (not starting with '{') or exactly one tool call,
`{"name": ..., "arguments": {...}}`, with the properties in the schema's order and every string
bounded, so whatever it emits parses with `parse_tool_call`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .schema import MAX_ARRAY_ITEMS, JsonSchema, ToolSpec


def tool_call_grammar(
    specs: Iterable[ToolSpec], *, max_string_chars: int = 160, allow_text: bool = True,
    wrap: tuple[str, str] | None = None,
) -> str:
    """A llama.cpp GBNF grammar: plain text (not starting with '{') or exactly one tool call.

    Property order is fixed to the schema's order and every string is bounded, so whatever
    the model emits under this grammar parses with `parse_tool_call`. `wrap` (open, close):
    the call may also stand between these tags (Qwen's `<tool_call>`: Qwen2.5-Coder-0.5B writes
    the bare object as often), and text may not begin with the open tag's first character.
    """
    spec_list = list(specs)
    if not spec_list and not allow_text:
        raise ValueError("A grammar needs at least one tool, or allow_text=True.")
    if max_string_chars < 1:
        raise ValueError("max_string_chars must be at least 1.")
    rules: list[str] = []
    alternatives: list[str] = []
    if spec_list:
        alternatives.append("call")
        calls = []
        for i, spec in enumerate(spec_list):
            calls.append(f"call-{i}")
            rules.append(
                f'call-{i} ::= "{{" ws "\\"name\\"" ws ":" ws {_json_lit(spec.name)} '
                f'ws "," ws "\\"arguments\\"" ws ":" ws args-{i} ws "}}"'
            )
            rules.append(f"args-{i} ::= {_args_rule(spec, i, rules)}")
        body = " | ".join(calls)
        if wrap is not None:
            body = f"{_lit(wrap[0])} ({body}) {_lit(wrap[1])} | {body}"
        rules.insert(0, "call ::= " + body)
    if allow_text:
        alternatives.append("text")
        # Text starts with neither '{' nor whitespace, so a call cannot hide behind a space, nor
        # with '`': offered no tool, Qwen opened a markdown call ("```json") and said nothing else
        tag = _class_char(wrap[0][0]) if wrap else ""
        rules.append(f"text ::= [^{{{tag}` \\t\\r\\n] [^\\x00]{{0,{_MAX_TEXT_CHARS - 1}}}")
    rules += [
        "ws ::= [ ]?",
        f'string ::= "\\"" char{{0,{max_string_chars}}} "\\""',
        r'char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
        'integer ::= "-"? ("0" | [1-9] [0-9]{0,15})',
        'number ::= integer ("." [0-9]{1,15})?',
        'boolean ::= "true" | "false"',
    ]
    return "\n".join(["root ::= " + " | ".join(alternatives), *rules]) + "\n"


_MAX_TEXT_CHARS = 600


def _args_rule(spec: ToolSpec, index: int, rules: list[str]) -> str:
    props = spec.parameters.get("properties", {})
    required = set(spec.required)
    items: list[tuple[str, bool]] = []
    for j, (pname, prop) in enumerate(props.items()):
        key = _json_lit(pname)
        value = _value_rule(prop, f"value-{index}-{j}", rules)
        items.append((f'{key} ws ":" ws {value}', pname in required))
    body = _sequence(items, 0, emitted=False)
    return " ".join(part for part in ('"{" ws', body, 'ws "}"') if part)


def _sequence(items: list[tuple[str, bool]], i: int, *, emitted: bool) -> str:
    """Properties i.. in schema order; optional ones may be absent, commas only between items."""
    if i == len(items):
        return ""
    item, required = items[i]
    if emitted:
        item = f'"," ws {item}'
    after = _sequence(items, i + 1, emitted=True)
    if required:
        return f"{item} {after}".rstrip()
    if emitted:
        return f"({item})? {after}".rstrip()
    # Nothing emitted yet: either this property leads, or it is absent and a later one leads.
    taken = f"{item} {after}".rstrip()
    skipped = _sequence(items, i + 1, emitted=False)
    return f"({taken} | {skipped})?" if skipped else f"({taken})?"


def _value_rule(prop: JsonSchema, rule_name: str, rules: list[str]) -> str:
    if "enum" in prop:
        rules.append(f"{rule_name} ::= " + " | ".join(_json_lit(v) for v in prop["enum"]))
        return rule_name
    kind: Any = prop.get("type")  # any JSON value; only the names below make a rule
    if kind == "array":
        item = _value_rule(prop.get("items", {"type": "string"}), f"{rule_name}-item", rules)
        most = int(prop.get("maxItems", MAX_ARRAY_ITEMS))
        tail = f'("," ws {item}){{0,{most - 1}}}' if most > 1 else ""
        rules.append(f'{rule_name} ::= "[" ws ({item} {tail})? ws "]"')
        return rule_name
    return {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}[
        kind
    ]


def _class_char(ch: str) -> str:
    """One character as it stands inside a GBNF character class."""
    return "\\" + ch if ch in "]\\^-" else ch


def _json_lit(value: Any) -> str:
    """A GBNF literal matching `value` as JSON; non-ASCII stays raw, as models write it."""
    return _lit(json.dumps(value, ensure_ascii=False))


def _lit(text: str) -> str:
    """A GBNF string literal matching `text` exactly."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
