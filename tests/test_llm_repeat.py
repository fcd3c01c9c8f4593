"""The repeat guard on the real model: a reply says each sentence once (the llama.cpp stage stops
at a repeat; the chunker drops one), and the demo's answer to jfk.wav is not a loop."""

from __future__ import annotations

import re
import threading

import pytest

from pipeline.base.protocols import Generation
from pipeline.chunker import sentence_key
from pipeline.testing import call

pytestmark = pytest.mark.models

LOOP = [{"role": "user", "content": "Ask not what your country can do for you."}]
# A small model loops only now and then (SmolLM2 answered the demo "I'm glad of that." three
# times); a grammar makes the real model (the default, Qwen) write the loop every time, so the
# stage's guard is what ends it.
LOOP_GRAMMAR = 'root ::= "I\'m glad of that. I\'m glad of that. I\'m glad of that. Goodbye."'


def sentences(text: str) -> list[str]:
    return [k for s in re.split(r"(?<=[.!?])\s+", text) if (k := sentence_key(s))]


def test_a_looping_model_is_stopped_at_its_first_repeat(real_stages) -> None:
    llm = real_stages.llm
    unguarded = "".join(llm._stream(LOOP, cancel=threading.Event(), grammar=LOOP_GRAMMAR,
                                    max_tokens=60, result=Generation(), temperature=0.0))
    assert sentences(unguarded).count("i m glad of that") == 3, unguarded  # the loop, unguarded
    result = Generation()
    guarded = "".join(llm.stream(LOOP, cancel=threading.Event(), grammar=LOOP_GRAMMAR,
                                 max_tokens=60, result=result, temperature=0.0))
    # stopped as the repeat ended: it is said at most twice here, and the chunker drops the second
    assert sentences(guarded).count("i m glad of that") <= 2 and "Goodbye" not in guarded, guarded
    assert result.finish_reason == "stop"  # a whole reply, not one cut at its token limit
    # the model is free again: the stopped stream let go of it
    assert llm.complete([{"role": "user", "content": "Hello."}], max_tokens=8).strip()


def test_the_demo_answers_jfk_with_each_sentence_once(real_stages, jfk_16k) -> None:
    rec = call(real_stages, [jfk_16k])
    assert rec.agent_lines, rec.timeline()
    for reply in rec.agent_lines:  # what the caller heard of each reply, as the item keeps it
        said = sentences(reply)
        assert said and len(said) == len(set(said)), reply
