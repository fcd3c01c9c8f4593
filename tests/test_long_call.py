"""A 200-turn scripted call on the real SmolLM2: the conversation outgrows the 2048-token context
and is fitted into it before every reply.

Until the responder calls `fit_conversation` itself, this test puts it in place of the session's
`_messages` (the one place the session builds a prompt); afterwards only that patch goes.
"""

from __future__ import annotations

import pytest

from pipeline.context import fit_conversation
from pipeline.fakes import ScriptedSTT, ToneTTS
from pipeline.llm import LlamaLLM
from pipeline.session import Session
from pipeline.transports.scripted import Clip

from .harness import call, with_stages

pytestmark = [pytest.mark.models, pytest.mark.slow]

TURNS = 200
MAX_TOKENS = 24  # short replies: the prompt, not the reply, is what this call is about
DROP_STEP = 8  # as a responder would: the prompt's start survives eight turns in the cache


def after_response(n: int):
    seen = [0]

    def match(e) -> bool:
        if e.type == "response.done":
            seen[0] += 1
            return seen[0] == n
        return False

    return match


def test_a_200_turn_call_fits_every_prompt_and_answers_every_turn(real_stages, say, monkeypatch):
    llm = LlamaLLM(max_tokens=MAX_TOKENS)
    budget = llm.context_window - MAX_TOKENS
    fits = []

    def fitted(self, extra_user=None, system_note=None):
        extra = [{"role": "user", "content": extra_user}] if extra_user is not None else []
        extra += [{"role": "system", "content": system_note}] if system_note is not None else []
        fit = fit_conversation(self.config.response.instructions, self.conversation.items,
                               count_tokens=self.llm.count_tokens, max_prompt_tokens=budget,
                               extra_messages=extra, cache=self.__dict__.setdefault("_fits", {}),
                               drop_step=DROP_STEP)
        fits.append(fit)
        return fit.messages

    monkeypatch.setattr(Session, "_messages", fitted)
    transcripts = [f"Question {n}: where is my parcel number {100 + n} today?" for n in range(TURNS)]
    stages = with_stages(real_stages, llm=llm, stt=ScriptedSTT(transcripts=transcripts),
                         tts=ToneTTS())
    audio = say("Where is my parcel today?")
    clips = [Clip(audio, at_s=0.3)] + [Clip(audio, at_s=None, after=after_response(n), delay_s=0.5)
                                       for n in range(1, TURNS)]
    rec = call(stages, clips, max_s=TURNS * 30.0)

    assert rec.transcripts == transcripts, rec.timeline()[-3000:]
    statuses = [d.response["status"] for d in rec.done]
    assert len(statuses) == TURNS and "failed" not in statuses, rec.timeline()[-3000:]
    assert all(f.prompt_tokens <= budget for f in fits)
    assert all(d.response["usage"]["input_tokens"] <= budget for d in rec.done)
    assert fits[-1].turns_omitted > TURNS // 2  # the call did outgrow the context
    last_prompt = fits[-1].messages
    assert last_prompt[0]["content"].startswith(rec.session.config.response.instructions)
    assert transcripts[-1] in [m["content"] for m in last_prompt]
    assert not any(transcripts[0] == m["content"] for m in last_prompt)

