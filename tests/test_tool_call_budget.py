"""A reply that is a tool call may run past a spoken reply's token cap (`response.tool_call_tokens`):
its JSON must close. Qwen's calls with a free-text argument ("notes") ran past the stage's 96
tokens, the JSON was cut, nothing ran and the caller heard nothing (the tool-domain sets' pest
control and theatre lines). Words still stop at the stage's cap; a call cut at its own limit is
apologised for, not left silent (scripted model, tone caller, simulated clock)."""

from __future__ import annotations

import pytest

from pipeline.base import config as cfg
from pipeline.base.errors import CallCutError, ConfigError
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.calls import call
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

SAID = "Please log a fault at LS6 2AB, the boiler is leaking all over the kitchen floor."
NOTES = " ".join(["The boiler is leaking all over the kitchen floor"] * 12)  # 108 words
CALL = {"name": "log_fault", "arguments": {"postcode": "LS6 2AB", "notes": NOTES}}


def fault_desk(effects: list[dict]) -> ToolRegistry:
    @tool(side_effect=True, business_key=lambda a: f"fault:{a['postcode']}")
    async def log_fault(postcode: str, notes: str) -> dict:
        """Log a fault for an engineer to visit.

        Args:
            postcode: The caller's postcode.
            notes: What the engineer should know, in a few words.
        """
        effects.append({"postcode": postcode, "notes": notes})
        return {"logged": True, "reference": "F-1001"}

    return ToolRegistry(specs=[log_fault])


def one_turn(tmp_path, llm: ScriptedLLM, *, overrides: tuple[str, ...] = ()):
    effects: list[dict] = []
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[SAID]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(4.5), at_s=0.3)], config=cfg.load(overrides=list(overrides)),
               setup=lambda s: s.use_tools(fault_desk(effects), ledger=Ledger(tmp_path / "l.sqlite3")))
    return rec, effects


def test_a_call_longer_than_a_spoken_reply_is_written_whole_and_runs(tmp_path) -> None:
    llm = ScriptedLLM(rules=[[r"leaking", CALL], [r".", "I've logged that for you."]])  # 96 tokens a reply
    rec, effects = one_turn(tmp_path, llm)
    story = rec.timeline()
    assert effects == [{"postcode": "LS6 2AB", "notes": NOTES}], story
    first = rec.done[0].response
    assert first["status"] == "completed", story
    assert rec.agent_lines[0].startswith("I've logged that for you."), story


def test_words_still_stop_at_the_stages_cap_with_tools_offered(tmp_path) -> None:
    words = " ".join(["Sorry to hear that."] * 40)  # 160 words, no call
    rec, effects = one_turn(tmp_path, ScriptedLLM(rules=[[r"leaking", words]]))
    done = rec.done[0].response
    assert effects == []
    assert (done["status"], done["status_details"]["reason"]) == ("incomplete", "max_output_tokens")
    assert done["usage"]["output_tokens"] <= 96


def test_a_call_cut_at_its_own_limit_is_apologised_for_and_runs_nothing(tmp_path) -> None:
    llm = ScriptedLLM(rules=[[r"leaking", CALL]])
    rec, effects = one_turn(tmp_path, llm, overrides=("response.tool_call_tokens=40",))
    story = rec.timeline()
    assert effects == [], story
    done = rec.done[0].response
    assert done["status"] == "failed", story
    assert "tool_call_tokens" in done["status_details"]["error"]["message"], story
    assert " ".join(rec.agent_lines) == CallCutError.apology, story


def test_a_sessions_own_token_limit_bounds_a_call_too(tmp_path) -> None:
    """A client's max_output_tokens is the whole reply's limit, as the hosted API's: a call gets
    no more than it."""
    rec, effects = one_turn(tmp_path, ScriptedLLM(rules=[[r"leaking", CALL]]),
                            overrides=("response.max_output_tokens=40",))
    assert effects == [] and rec.done[0].response["status"] == "failed", rec.timeline()


def test_the_call_budget_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="tool_call_tokens"):
        cfg.load(overrides=["response.tool_call_tokens=0"])
