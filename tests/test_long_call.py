"""A 200-turn scripted call on the real SmolLM2: the conversation outgrows the 2048-token context
and is fitted into it before every reply.

The responder fits every prompt (pipeline/call/responder.py `messages`); each fit that leaves turns out
is a `context_fit` stage mark.
"""

from __future__ import annotations

import os

import pytest

from pipeline.stages.fakes import ScriptedSTT, ToneTTS
from pipeline.stages.llm import LlamaLLM
from pipeline.testing import call, with_stages
from pipeline.transports.scripted import Clip

pytestmark = [pytest.mark.models, pytest.mark.slow]

# ~35 tokens a turn: 200 turns outgrow SmolLM2's 2048-token context more than three times over
# (PIPELINE_LONG_CALL_TURNS changes the count)
TURNS = int(os.environ.get("PIPELINE_LONG_CALL_TURNS", "200"))
MAX_TOKENS = 8  # short replies: the prompt, not the reply, is what this call is about


def after_response(n: int):
    seen = [0]

    def match(e) -> bool:
        if e.type == "response.done":
            seen[0] += 1
            return seen[0] == n
        return False

    return match


def test_a_200_turn_call_fits_every_prompt_and_answers_every_turn(real_stages, say):
    llm = LlamaLLM(max_tokens=MAX_TOKENS)
    budget = llm.context_window - MAX_TOKENS
    transcripts = [f"Question {n}: where is my parcel number {100 + n} today?" for n in range(TURNS)]
    stages = with_stages(real_stages, llm=llm, stt=ScriptedSTT(transcripts=transcripts),
                         tts=ToneTTS())
    # as long as the longest transcript takes to say (words the speech cannot hold decide
    # nothing), in one breath: a pause inside it would make two turns of one clip
    audio = say("Where is my parcel number two hundred ninety nine today")
    clips = [Clip(audio, at_s=0.3)] + [Clip(audio, at_s=None, after=after_response(n), delay_s=0.5)
                                       for n in range(1, TURNS)]
    rec = call(stages, clips, max_s=TURNS * 30.0)

    assert rec.transcripts == transcripts, rec.timeline()[-3000:]
    statuses = [d.response["status"] for d in rec.done]
    assert len(statuses) == TURNS and "failed" not in statuses, rec.timeline()[-3000:]
    fits = rec.stages("context_fit")  # the responder fitted the prompt once it had to
    assert fits and all(f.detail["prompt_tokens"] <= budget for f in fits)
    assert all(d.response["usage"]["input_tokens"] <= budget for d in rec.done)
    assert fits[-1].detail["turns_omitted"] > TURNS // 3  # the call did outgrow the context
    last_prompt = rec.session.responses[-1].asked.messages
    assert last_prompt[0]["content"].startswith(rec.session.config.response.instructions)
    assert transcripts[-1] in [m["content"] for m in last_prompt]
    assert not any(transcripts[0] == m["content"] for m in last_prompt)

