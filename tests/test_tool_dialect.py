"""Each model's own tool-call form (pipeline.tools.dialect): Qwen's `<tools>` / `<tool_call>`
and the bare JSON SmolLM2 writes, read back into the one form the call stream follows."""

from __future__ import annotations

import json
import random

import pytest

from pipeline.tools import tool
from pipeline.tools.dialect import JSON, QWEN, dialect_for_template, tools_prompt
from pipeline.tools.grammar import tool_call_grammar
from pipeline.tools.schema import parse_tool_call
from pipeline.tools.stream import ToolCallStream, starts_tool_call

from .test_tool_schema import Gbnf, LlamaCppGrammar, _byte_vocab_gguf


@tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}")
async def refund(holding_line: str, order_id: str, amount: float) -> dict:
    """Refund an amount of an order.

    Args:
        holding_line: What to say while the refund runs.
        order_id: The order number.
        amount: Dollars to refund.
    """
    return {}


SPECS = [refund]
CALL = {"name": "refund", "arguments": {"holding_line": "One moment.", "order_id": "A1234",
                                         "amount": 64.5}}
QWEN_TEMPLATE_PART = ('{%- if tools %}<tools>{%- for tool in tools %}{{ tool | tojson }}{%- endfor %}'
                      '</tools> <tool_call>\n{"name": ...}\n</tool_call>{%- endif %}')
SMOLLM2_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
                    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}")


def test_dialect_is_read_from_the_chat_template() -> None:
    assert dialect_for_template(QWEN_TEMPLATE_PART) is QWEN
    assert dialect_for_template(SMOLLM2_TEMPLATE) is JSON
    assert dialect_for_template(None) is JSON
    assert dialect_for_template("") is JSON


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 11, 1000])
def test_qwen_call_is_read_without_its_tags_however_the_tokens_fall(size: int) -> None:
    raw = "<tool_call>\n" + json.dumps(CALL) + "\n</tool_call>"
    out = list(QWEN.read(_pieces(raw, size)))
    text = "".join(out)
    assert json.loads(text) == CALL
    assert starts_tool_call(out[0]) is True  # the very first piece already says "a call"
    assert parse_tool_call(text, SPECS).arguments == CALL["arguments"]


def test_qwen_reads_one_call_and_stops_at_its_close_tag() -> None:
    raw = ["<tool_call>", "\n", json.dumps(CALL), "\n</tool_", "call>", "\n<tool_call>\n{\"name\""]
    consumed = []

    def source():
        for piece in raw:
            consumed.append(piece)
            yield piece

    assert json.loads("".join(QWEN.read(source()))) == CALL
    assert len(consumed) == 5  # the second call is never asked for


@pytest.mark.parametrize("text", ["Sure, I can help with that.", "<b>bold</b> words", " <to be sure>",
                                  json.dumps(CALL), "I'd say: <tool_call> is a tag."])
def test_qwen_text_and_bare_calls_pass_as_they_are(text: str) -> None:
    for size in (1, 4, 100):
        assert "".join(QWEN.read(_pieces(text, size))) == text


def test_qwen_call_cut_off_is_left_for_finish_to_report() -> None:
    raw = "<tool_call>\n" + json.dumps(CALL)[:30]
    text = "".join(QWEN.read(_pieces(raw, 3)))
    assert text == json.dumps(CALL)[:30]
    with pytest.raises(ValueError, match="not valid JSON"):
        ToolCallStream.finish(text, SPECS)


def test_the_call_stream_is_the_same_for_both_dialects() -> None:
    """Argument deltas and the spoken holding line come out alike from either form."""
    def follow(pieces) -> tuple[str, list[str]]:
        stream, text, deltas, said = ToolCallStream({s.name: s for s in SPECS}.get), "", "", []
        for piece in pieces:
            text += piece
            delta, spoken = stream.progress(text)
            deltas += delta
            said += spoken
        return deltas, said

    bare = json.dumps(CALL)
    from_json = follow(JSON.read(_pieces(bare, 4)))
    from_qwen = follow(QWEN.read(_pieces("<tool_call>\n" + bare + "\n</tool_call>", 4)))
    assert from_json == from_qwen
    assert from_qwen[1] == ["One moment."]
    assert json.loads(from_qwen[0]) == CALL["arguments"]


def test_qwen_prompt_lists_the_tools_in_its_templates_words() -> None:
    prompt = QWEN.prompt(SPECS)
    assert "<tools>\n" in prompt and "\n</tools>" in prompt
    listed = prompt.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].splitlines()
    assert [json.loads(line) for line in listed] == [{"type": "function", "function": {
        "name": "refund", "description": refund.description, "parameters": refund.parameters}}]
    assert "within <tool_call></tool_call> XML tags" in prompt
    assert "spoken argument" in prompt
    assert JSON.prompt(SPECS) == tools_prompt(SPECS)
    assert '{"name": "<tool>", "arguments": {...}}' in JSON.prompt(SPECS)


def test_qwen_history_shows_earlier_calls_in_tags_once() -> None:
    bare = json.dumps(CALL)
    messages = [{"role": "system", "content": 'say {"name": "x"} is fine'},
                {"role": "assistant", "content": "One moment. " + bare},
                {"role": "user", "content": "[result of refund: {}]"}]
    wrapped = QWEN.history(messages)
    assert wrapped[0] == messages[0]
    assert wrapped[2] == {"role": "tool", "content": "{}"}  # the result in Qwen's own tool role
    assert wrapped[1]["content"] == f"One moment.\n<tool_call>\n{bare}\n</tool_call>"
    assert QWEN.history(wrapped) == wrapped  # already in tags: left alone
    assert JSON.history(messages) is messages
    assert messages[1]["content"] == "One moment. " + bare  # the caller's list is not changed


def test_qwen_grammar_takes_the_call_in_tags_or_bare_and_nothing_else() -> None:
    text = QWEN.grammar(SPECS)
    g = Gbnf(text)
    bare = json.dumps(CALL)
    assert g.matches("<tool_call>\n" + bare + "\n</tool_call>")
    assert g.matches(bare)
    assert g.matches("Sure, one moment.")
    for bad in ("<tool_call>" + bare, "<tool_call>\n" + bare, "<b>hi</b>", " " + bare,
                "<tool_call>\nhello\n</tool_call>"):
        assert not g.matches(bad), bad
    rng = random.Random(5)
    for _ in range(200):
        out = g.sample(rng)
        read = "".join(QWEN.read(_pieces(out, 3)))
        call = parse_tool_call(read, SPECS)  # whatever the grammar lets through parses
        assert (call is not None) == out.startswith(("{", "<"))
    assert tool_call_grammar(SPECS) == JSON.grammar(SPECS)  # the JSON dialect's is unchanged


def test_llama_cpp_compiles_and_agrees_with_the_qwen_grammar(tmp_path) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    if not hasattr(llama_cpp, "llama_sampler_init_grammar"):
        pytest.skip("this llama_cpp predates the sampler API")
    path = tmp_path / "bytes.gguf"
    _byte_vocab_gguf(path)
    engine = LlamaCppGrammar(llama_cpp, path)
    try:
        text = QWEN.grammar(SPECS)
        assert engine.compiles(text)
        bare = json.dumps(CALL)
        assert engine.accepts(text, "<tool_call>\n" + bare + "\n</tool_call>")
        assert engine.accepts(text, bare)
        assert engine.accepts(text, "Sure.")
        assert not engine.accepts(text, "<b>")
    finally:
        engine.close()
