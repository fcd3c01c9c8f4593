"""Call scenarios (pipeline.testing.scenario*): the format, the triggers, the expectations, the
`test` command and the pytest plugin; the examples' scenarios pass and broken agents fail them.

All on the tone caller (no model): each runs a call of 10-25 s in well under a second.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.base.errors import ConfigError
from pipeline.cli import main as cli_main
from pipeline.testing import LONG_REPLY
from pipeline.testing.scenario import Agent, Expect, Line, Persona, Scenario, load, parse
from pipeline.testing.scenario_expect import timeline
from pipeline.testing.scenario_vary import Repeated, expand

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FRONT_DESK = EXAMPLES / "front_desk.scenario.toml"
REFUND_DESK = EXAMPLES / "refund_desk.scenario.toml"
SCENARIO_FILES = sorted(EXAMPLES.glob("*.scenario.toml"))

# --- the examples' own scenarios ----------------------------------------------------------------


def test_the_examples_ship_scenarios_for_both_desks():
    names = {p.name for p in SCENARIO_FILES}
    assert {"front_desk.scenario.toml", "refund_desk.scenario.toml", "front_desk_voiced.scenario.toml"} <= names
    assert load(EXAMPLES / "front_desk_voiced.scenario.toml").voice == "piper"


def _example(path: Path):
    """A scenario on real models (voiced by Piper and Whisper, or an agent on the configured LLM)
    needs the models and takes seconds: so marked, as the pytest plugin marks it."""
    scenario = load(path)
    real = scenario.voice != "text" or scenario.agent.llm is None
    return pytest.param(path, id=path.name, marks=[pytest.mark.models, pytest.mark.slow] if real else [])


@pytest.mark.parametrize("path", [_example(p) for p in SCENARIO_FILES])
def test_every_example_scenario_passes(call_scenario, path):
    result = call_scenario(path, check=True)
    assert result.scenario.expect and result.passed
    runs = [r for _, r in result.runs] if isinstance(result, Repeated) else [result]
    assert all(r.artefacts["events"].stat().st_size > 0 for r in runs)


# --- broken agents fail, naming the expectation and the events that show it ---------------------


def _front_desk_llm_without_holding_line():
    sys.path.insert(0, str(EXAMPLES))
    import front_desk

    llm = front_desk.scripted_llm()
    silent = {"name": "look_up_booking", "arguments": {"holding_line": "", "last_name": "Garcia"}}
    llm.rules = [(p, silent if isinstance(r, dict) and r.get("name") == "look_up_booking" else r)
                 for p, r in llm.rules]
    return llm


def test_no_holding_line_fails_the_holding_line_and_the_dead_air(call_scenario):
    good = load(FRONT_DESK)
    bad = replace(good, agent=replace(good.agent, llm=_front_desk_llm_without_holding_line))
    result = call_scenario(bad)
    failed = {f.expectation: f for f in result.failures}
    assert set(failed) == {'said = "pull up your booking"', "max_dead_air_s = 1.2"}, result.report()
    dead = failed["max_dead_air_s = 1.2"]
    assert dead.why.endswith("until the agent spoke") and float(dead.why.split()[0]) > 1.2
    # the lines around the silence: the caller's words, the call started and its result
    assert any("caller: Hi, can you check my booking" in e for e in dead.events), dead
    assert any("call look_up_booking" in e for e in dead.events), dead
    assert any("result call_" in e for e in dead.events), dead
    assert "expected max_dead_air_s = 1.2:" in result.report()


def double_refund_tools(provider):
    """A refund tool with no business key, that makes a new idempotency key each time: asked
    twice, it refunds twice."""
    from pipeline.tools import ToolRegistry, tool

    @tool(spoken=("holding_line",))
    async def refund(holding_line: str, order_id: str, card_last4: str) -> dict:
        """Refund an order to the caller's card.

        Args:
            holding_line: What to say while the refund runs.
            order_id: The order number.
            card_last4: The last four digits of the card.
        """
        result = await provider.refund(order_id=order_id, card_last4=card_last4,
                                       idempotency_key=uuid.uuid4().hex)
        return {"status": "committed", "result": result}

    return ToolRegistry(specs=[refund])


def test_a_tool_that_runs_twice_fails_the_one_effect_and_the_ledger(call_scenario):
    good = load(REFUND_DESK)
    bad = replace(good, agent=replace(good.agent, tools=double_refund_tools))
    result = call_scenario(bad)
    failed = {f.expectation: f for f in result.failures}
    effects = failed['world = "provider.effects", count = 1']
    assert effects.why.startswith("provider.effects is 2"), result.report()
    assert sum("call refund(" in e for e in effects.events) == 2, effects
    assert failed['ledger = "refund:4417", state = "committed", told = true, calls = 2'].why == "no such ledger row"
    assert 'said = "already went through"' in failed  # it refunded again instead


def test_a_goodbye_cut_short_fails_heard_in_full(call_scenario):
    good = load(FRONT_DESK)
    bad = replace(good, agent=replace(good.agent, config={"call": {"end_call": True, "hangup_cap_ms": 1000}}))
    result = call_scenario(bad)
    assert [f.expectation for f in result.failures] == [
        'said = "have a wonderful stay, goodbye", in_full = true'], result.report()
    events = result.failures[0].events
    assert any("goodbye did not finish within 1 s" in e for e in events), events
    assert any("cancelled" in e and "Thanks for calli-" in e for e in events), events


# --- the format ---------------------------------------------------------------------------------


def test_a_scenario_reads_from_toml_as_the_dataclasses_say():
    s = load(FRONT_DESK)
    assert s.agent.tools == "front_desk:build_tools" and s.agent.config == {"call": {"end_call": True}}
    assert s.lines[1].trigger == ("heard_in_full", "", 2) and s.lines[1].delay_s == 0.5
    assert s.expect[0].kind == "tool_called" and s.expect[0].arguments == {"last_name": "Garcia"}
    assert Line(say="x", after="agent_said:bye: now").trigger == ("agent_said", "bye: now", 1)


@pytest.mark.parametrize("doc, message", [
    ({"line": [{"say": "hi", "whem": 1}]}, "unknown key 'whem'"),
    ({"line": []}, "has no [[line]]"),
    ({"line": [{"say": "hi", "hang_up": True}]}, "exactly one of say (or wav), silence_s, hang_up"),
    ({"line": [{"say": "hi", "after": "lunch"}]}, "triggers: start, response_done"),
    ({"line": [{"say": "hi", "after": "agent_said"}]}, "agent_said needs words"),
    ({"line": [{"say": "hi"}], "expect": [{"said": "a", "no_tool": True}]}, "(got no_tool, said)"),
    ({"line": [{"say": "hi"}], "expect": [{"ended_by": "nobody"}]}, "agent, caller, script, cap"),
    ({"line": [{"say": "hi"}], "agent": {"tool": "x:y"}}, "unknown key 'tool'"),
    ({"line": [{"say": "hi"}], "voice": "robot"}, "use one of: text, piper"),
    ({"line": [{"say": "hi"}], "agent": {"voice": "robot"}}, 'agent.voice = \'robot\'; use "tone" or "piper"'),
])
def test_a_bad_scenario_names_what_is_wrong(doc, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse(doc)


# --- triggers and expectations, from Python -----------------------------------------------------


def _said_only(*replies, rules=()):
    return {"replies": list(replies), "rules": [list(r) for r in rules]}


def test_agent_said_starts_a_line_when_those_words_start_to_sound(call_scenario):
    s = Scenario("talk over the breakfast sentence",
                 agent=Agent(llm=_said_only(LONG_REPLY, "The pool is open until nine.")), lines=[
        Line(say="What time is checkout?"),
        Line(say="Sorry, is the pool open?", after="agent_said:Breakfast is served", delay_s=1.0)],
        expect=[Expect(cancelled=True), Expect(said="Breakfast is"), Expect(said="until nine", in_full=True),
                Expect(not_said="garden room")])
    result = call_scenario(s)
    record = result.record
    first = record.stages("first_audio_out")[0]
    # the chunk's place in the reply: the audio of the chunks before it (ToneTTS: 65 ms a
    # character of each chunk, its spaces around it not counted)
    chunks = [d.delta.strip() for d in record.of("response.output_audio_transcript.delta")
              if d.response_id == first.response_id]
    before = chunks[:next(i for i, c in enumerate(chunks) if c.startswith("Breakfast is served"))]
    started = result.caller.clips[1].started_s
    assert len(before) >= 2
    assert started == pytest.approx(first.ts + sum(len(c) for c in before) * 0.065 + 1.0, abs=0.03), timeline(result)
    assert result.passed, result.report()
    truncated = record.of("conversation.item.truncated")[0].transcript
    assert "Breakfast is" in truncated and "garden room" not in truncated, timeline(result)


def test_a_backchannel_over_the_agent_resumes_the_reply(call_scenario):
    s = Scenario("mm-hmm", agent=Agent(llm=_said_only(LONG_REPLY)), lines=[
        Line(say="What time is checkout?"),
        Line(say="Mm-hmm, okay.", after="first_audio_out", delay_s=1.0)],
        expect=[Expect(resumed=True), Expect(cancelled=False), Expect(said="garden room", in_full=True)])
    result = call_scenario(s)
    assert result.passed, result.report() + "\n" + timeline(result)


def test_silence_then_a_hang_up_ends_the_call_by_the_caller_when_the_script_says(call_scenario):
    s = Scenario("hang up", agent=Agent(llm=_said_only("Checkout is at eleven.")), lines=[
        Line(say="What time is checkout?"),
        Line(silence_s=10.0, after="response_done"),
        Line(hang_up=True, after="line_end")],
        expect=[Expect(ended_by="caller", within_s=30.0), Expect(no_tool=True), Expect(said="eleven"),
                Expect(not_said="goodbye")])
    result = call_scenario(s)
    assert result.passed, result.report()
    done = result.record.done[0].ts
    assert result.caller.ended_at_s == pytest.approx(done + 10.0, abs=0.05)
    wrong = call_scenario(replace(s, expect=[Expect(ended_by="agent"), Expect(ended_by="caller", within_s=5.0)]))
    assert [f.why for f in wrong.failures] == ["the call was ended by caller",
                                                f"it ended at {result.caller.ended_at_s:.2f} s"]
    assert any("call ended by caller" in e for e in wrong.failures[0].events)


def test_a_line_whose_trigger_never_comes_fails_the_scenario(call_scenario):
    s = Scenario("no tool", agent=Agent(llm=_said_only("Checkout is at eleven.")), max_s=30.0, lines=[
        Line(say="What time is checkout?"),
        Line(say="Thanks for looking.", after="tool_called:look_up_booking")],
        expect=[Expect(said="eleven")])
    result = call_scenario(s)
    assert [(f.expectation, f.why) for f in result.failures] == [
        ("line 2 says 'Thanks for looking.' after tool_called:look_up_booking",
         "its trigger never came; the call was ended by cap at 30.00 s")], result.report()


def test_inline_llm_rules_call_a_tool_from_toml(tmp_path, call_scenario):
    (tmp_path / "my_tools.py").write_text('''
from pipeline.tools import ToolRegistry, tool

def build(clock, *, latency_s):
    @tool(spoken=("holding_line",))
    async def weather(holding_line: str, city: str) -> dict:
        """The weather.

        Args:
            holding_line: What to say while looking.
            city: The city.
        """
        await clock.sleep(latency_s)
        return {"sky": "clear"}
    return ToolRegistry(specs=[weather])
''')
    path = tmp_path / "weather.scenario.toml"
    path.write_text('''
[agent]
tools = "my_tools:build"
tools_args = { latency_s = 0.5 }
[agent.llm]
rules = [["result of weather", "It is {sky}."],
         ["weather", { name = "weather", arguments = { holding_line = "Let me look.", city = "Oslo" } }]]
[[line]]
say = "What is the weather in Oslo?"
[[expect]]
tool_called = "weather"
arguments = { city = "Oslo" }
[[expect]]
said = "It is clear"
[[expect]]
tool_called = "weather"
arguments = { city = "Bergen" }
''')
    result = call_scenario(path)
    assert result.scenario.name == "weather"
    assert [(f.expectation, f.why) for f in result.failures] == [
        ('tool_called = "weather", arguments = { city = "Bergen" }', "weather was called 1 time(s), none with those arguments")]


# --- how a line is carried: noise, the phone band ----------------------------------------------


def test_noise_and_the_phone_band_colour_a_line():
    import numpy as np

    from pipeline.base.audio import INPUT_RATE_HZ, dbfs
    from pipeline.testing.scenario_run import _colour

    t = np.arange(INPUT_RATE_HZ) / INPUT_RATE_HZ
    wide = (0.2 * (np.sin(2 * np.pi * 500 * t) + np.sin(2 * np.pi * 6000 * t))).astype(np.float32)

    def energy(x, lo, hi):
        spectrum = np.abs(np.fft.rfft(x)) ** 2
        return spectrum[lo:hi].sum()  # 1 Hz bins over 1 s

    phoned = _colour(wide, Line(say="x", phone=True))
    assert len(phoned) == len(wide)
    assert energy(phoned, 5500, 6500) < 1e-3 * energy(wide, 5500, 6500)  # gone above 4 kHz
    assert energy(phoned, 450, 550) > 0.8 * energy(wide, 450, 550)  # kept inside the band
    quiet = np.zeros(INPUT_RATE_HZ, np.float32)
    assert dbfs(_colour(quiet, Line(say="x", noise="pink", noise_dbfs=-35.0))) == pytest.approx(-35.0, abs=0.1)
    assert not np.array_equal(_colour(quiet, Line(say="x", noise="white", seed=1)),
                              _colour(quiet, Line(say="x", noise="white", seed=2)))
    with pytest.raises(ConfigError, match="noise kind 'brown'"):
        _colour(quiet, Line(say="x", noise="brown"))
    with pytest.raises(ConfigError, match='noise needs voice = "piper"'):
        parse({"line": [{"say": "hi", "noise": "pink"}]})
    with pytest.raises(ConfigError, match='a wav needs voice = "piper"'):
        parse({"line": [{"wav": "caller.wav"}]})


@pytest.mark.models
@pytest.mark.slow
def test_a_wav_line_is_heard_by_the_real_stages(call_scenario):
    from .conftest import JFK

    s = Scenario("jfk calls", voice="piper", agent=Agent(llm=_said_only("Thank you, Mr President.")),
                 lines=[Line(wav=str(JFK), say="And so, my fellow Americans...")],
                 expect=[Expect(said="Mr President", in_full=True), Expect(max_dead_air_s=1.6)])
    result = call_scenario(s)
    assert result.passed, result.report()
    assert "ask not what your country" in " ".join(result.record.transcripts).lower(), timeline(result)


@pytest.mark.models
@pytest.mark.slow
def test_the_voiced_front_desk_passes_over_the_phone_with_noise(call_scenario):
    voiced = load(EXAMPLES / "front_desk_voiced.scenario.toml")
    lines = [replace(line, phone=True, noise="pink", noise_dbfs=-40.0) for line in voiced.lines]
    result = call_scenario(replace(voiced, lines=lines))
    assert result.passed, result.report()
    assert result.record.transcripts[0].startswith("Hi, can you check my booking"), timeline(result)


# --- an LLM-played caller ------------------------------------------------------------------------


def _front_desk_agent():
    return Agent(llm=str(EXAMPLES / "front_desk.py") + ":scripted_llm",
                 tools=str(EXAMPLES / "front_desk.py") + ":build_tools", config={"call": {"end_call": True}})


def test_a_persona_speaks_after_the_agent_until_its_goal_is_met(call_scenario):
    from pipeline.stages.fakes import ScriptedLLM

    played = ScriptedLLM(rules=[["I found it", "Great, that's all, thanks! [done]"]],
                         replies=["Sorry, what was that?"])
    s = Scenario("a guest", agent=_front_desk_agent(), caller=Persona(
        persona="You are Maria Garcia.", goal="Learn which room you booked.",
        opening="Hi, can you check my booking under Garcia?", llm=lambda: played),
        expect=[Expect(said="sea-view double"), Expect(ended_by="agent"), Expect(max_dead_air_s=1.2)])
    result = call_scenario(s)
    assert result.passed, result.report()
    assert [w for _, w in result.persona_lines] == ["Hi, can you check my booking under Garcia?",
                                                   "Great, that's all, thanks!"]  # the marker is not said
    assert result.record.transcripts == [w for _, w in result.persona_lines]
    # asked once: after the booking was read out, not after the holding line (the agent went on)
    assert len(played.requests) == 1
    messages = played.requests[0]
    assert "You are Maria Garcia." in messages[0]["content"] and "Learn which room" in messages[0]["content"]
    assert [m["role"] for m in messages[1:]] == ["assistant", "user", "user"]
    assert messages[-1]["content"].startswith("I found it: a sea-view double")
    heard = result.record.stages("heard_in_full")[1].ts
    assert result.persona_lines[1][0] == pytest.approx(heard + 0.6)
    assert "persona: Great, that's all, thanks!" in timeline(result)


def test_a_persona_stops_at_its_turn_limit(call_scenario):
    s = Scenario("a lost guest", agent=Agent(llm=_said_only("How can I help?")), caller=Persona(
        persona="You are lost.", goal="Never met.", max_turns=3,
        llm={"replies": ["Hello? Is anyone there? I keep talking. And talking."]}),
        expect=[Expect(ended_by="script")])
    result = call_scenario(s)
    assert result.passed, result.report()
    assert [w for _, w in result.persona_lines] == ["Hello? Is anyone there?"] * 3  # two sentences at most
    assert len(result.record.done) == 3


@pytest.mark.models
@pytest.mark.slow
def test_the_embedded_model_plays_a_caller_in_short_lines(call_scenario):
    """SmolLM2-135M as the caller (the configured model): a weak one, so only the shape is
    asserted: it spoke in turn, in short lines, within its turn limit, and was heard."""
    s = Scenario("a guest played by the model", agent=_front_desk_agent(), caller=Persona(
        persona="You are Maria Garcia, a guest of the Harbor Hotel.",
        goal="Find out which room you booked, then say goodbye.",
        opening="Hi, can you check my booking under Garcia?", max_turns=3),
        expect=[Expect(said="sea-view double"), Expect(tool_called="look_up_booking")])
    result = call_scenario(s)
    assert result.passed, result.report()
    lines = [w for _, w in result.persona_lines]
    assert 2 <= len(lines) <= 3 and all(0 < len(w) < 400 for w in lines), lines
    assert result.record.transcripts == lines, timeline(result)


def test_a_caller_section_needs_a_persona_and_a_goal_and_no_lines():
    with pytest.raises(ConfigError, match=r"\[caller\] needs goal"):
        parse({"caller": {"persona": "x"}})
    with pytest.raises(ConfigError, match="not both"):
        parse({"caller": {"persona": "x", "goal": "y"}, "line": [{"say": "hi"}]})
    assert parse({"caller": {"persona": "x", "goal": "y", "max_turns": 2}}).caller.max_turns == 2


# --- repeat runs: k of N -----------------------------------------------------------------------


def test_vary_runs_every_combination_and_reports_k_of_n(call_scenario):
    s = replace(load(FRONT_DESK), vary={"agent.tools_args.lookup_latency_s": [0.2, 0.8, 5.0],
                                        "line.*.speed": [1.0, 1.2]})
    variants = expand(s)
    assert [v.agent.tools_args["lookup_latency_s"] for _, v in variants] == [0.2, 0.2, 0.8, 0.8, 5.0, 5.0]
    assert [v.lines[1].speed for _, v in variants] == [1.0, 1.2] * 3
    assert variants[1][0] == "agent.tools_args.lookup_latency_s=0.2, line.*.speed=1.2"
    assert s.agent.tools_args == {"lookup_latency_s": 0.8} and s.lines[0].speed == 1.0  # untouched
    result = call_scenario(s)
    assert isinstance(result, Repeated) and not result.passed
    assert result.summary() == "4 of 6 runs passed (needs 6)", result.report()
    # a 5 s lookup outlasts the 1.8 s holding line: the silence after it fails, in both paces
    failed = [label for label, r in result.runs if not r.passed]
    assert failed == ["agent.tools_args.lookup_latency_s=5.0, line.*.speed=1.0",
                      "agent.tools_args.lookup_latency_s=5.0, line.*.speed=1.2"]
    assert "expected max_dead_air_s = 1.2: 3.20 s of silence" in result.report()
    slower = result.runs[1][1].caller.clips[0]
    assert len(slower.audio) > 1.15 * len(result.runs[0][1].caller.clips[0].audio)  # the pace did change
    assert call_scenario(replace(s, min_pass=4)).passed


@pytest.mark.parametrize("path, message", [
    ("line.9.speed", "'9' is not a line number (1-2) or *"),
    ("agent.nope", "no 'nope' here; there is config_file"),
    ("line.*", "must name a key of the line"),
])
def test_a_bad_vary_path_names_it(path, message):
    with pytest.raises(ConfigError, match=re.escape(f"vary.{path}") + ".*" + re.escape(message)):
        expand(replace(load(FRONT_DESK), vary={path: [1.0]}))


# --- the command and the plugin -----------------------------------------------------------------


def _broken_file(tmp_path: Path) -> Path:
    text = FRONT_DESK.read_text().replace("config = { call = { end_call = true } }",
                                          "config = { call = { end_call = true, hangup_cap_ms = 1000 } }")
    text = text.replace('llm = "front_desk:scripted_llm"', f'llm = "{EXAMPLES / "front_desk.py"}:scripted_llm"')
    text = text.replace('tools = "front_desk:build_tools"', f'tools = "{EXAMPLES / "front_desk.py"}:build_tools"')
    path = tmp_path / "cut_short.scenario.toml"
    path.write_text(text)
    return path


def test_the_test_command_prints_a_table_writes_junit_and_artefacts(tmp_path, capsys):
    assert cli_main(["test", str(FRONT_DESK), str(REFUND_DESK), "--junit", str(tmp_path / "j.xml"),
                     "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "front desk: a booking looked up, then goodbye" in out and "6/6 met" in out
    assert cli_main(["test", str(EXAMPLES / "refund_desk_varied.scenario.toml"), "--out", str(tmp_path / "v")]) == 0
    assert "9 of 9 runs passed (needs 9)" in capsys.readouterr().out
    assert (tmp_path / "v" / "refund-desk-varied" / "run-9" / "timeline.txt").is_file()
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    folder = tmp_path / "out" / "front-desk"
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "response.function_call_arguments.done" for e in events)
    assert "call ended by agent" in (folder / "timeline.txt").read_text()
    assert (folder / "call.wav").stat().st_size > 44


def test_the_test_command_runs_files_in_parallel_with_the_same_verdicts(tmp_path, capsys):
    broken = _broken_file(tmp_path)
    args = ["test", str(FRONT_DESK), str(broken), str(REFUND_DESK), "--out", str(tmp_path / "o")]
    assert cli_main(args) == 1
    alone = capsys.readouterr().out
    assert cli_main([*args, "--jobs", "2", "--junit", str(tmp_path / "j.xml")]) == 1
    together = capsys.readouterr().out

    def verdicts(out: str) -> list[tuple[str, str]]:
        rows = [re.split(r"\s{2,}", line) for line in out.splitlines()[1:4]]
        return [(r[0], r[1]) for r in rows]

    assert verdicts(alone) == verdicts(together) == [
        ("pass", "front desk: a booking looked up, then goodbye"),
        ("FAIL", "front desk: a booking looked up, then goodbye"),
        ("pass", "refund desk: refunded once, however often it is asked for")]
    def story(out: str) -> str:  # ids count per process
        return re.sub(r"(resp|call|item)_\d+", r"\1_N", out.split("\n\n", 1)[1])

    assert story(together) == story(alone)  # the same failure, the same events
    assert ET.parse(tmp_path / "j.xml").getroot().find("testsuite").get("failures") == "1"


def test_the_test_command_fails_with_the_expectation_and_the_events(tmp_path, capsys):
    path = _broken_file(tmp_path)
    assert cli_main(["test", str(path), "--junit", str(tmp_path / "j.xml"), "--out", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().out
    assert 'expected said = "have a wonderful stay, goodbye", in_full = true' in out
    assert "the goodbye did not finish within 1 s" in out
    case = ET.parse(tmp_path / "j.xml").getroot().find("testsuite/testcase")
    assert "wonderful stay" in case.find("failure").get("message")
    bad = tmp_path / "bad.scenario.toml"
    bad.write_text("[[line]]\nsay = 1\nsilence_s = 2\n")
    assert cli_main(["test", str(bad), "--out", str(tmp_path / "o")]) == 1
    assert "ERROR" in capsys.readouterr().out


def test_a_voiced_scenario_without_the_models_is_skipped_and_said(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "no-models"
    empty.mkdir()
    monkeypatch.setenv("MODELS_DIR", str(empty))
    monkeypatch.delenv("PIPELINE_REQUIRE_MODELS", raising=False)
    voiced = EXAMPLES / "front_desk_voiced.scenario.toml"
    assert cli_main(["test", str(voiced), "--junit", str(tmp_path / "j.xml"), "--out", str(tmp_path / "o")]) == 0
    assert "skip    front desk, voiced" in capsys.readouterr().out
    assert ET.parse(tmp_path / "j.xml").getroot().find("testsuite").get("skipped") == "1"
    monkeypatch.setenv("PIPELINE_REQUIRE_MODELS", "1")
    assert cli_main(["test", str(voiced), "--out", str(tmp_path / "o")]) == 1
    assert "scripts/download_models.sh" in capsys.readouterr().out


def test_the_plugin_collects_scenario_files(tmp_path):
    (tmp_path / "good.scenario.toml").write_text(REFUND_DESK.read_text().replace(
        '"refund_desk:', f'"{EXAMPLES / "refund_desk.py"}:'))
    _broken_file(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "pipeline.testing.scenario_plugin",
                           "-p", "no:cacheprovider", str(tmp_path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    assert 'expected said = "have a wonderful stay, goodbye", in_full = true' in proc.stdout
    assert "timeline:" in proc.stdout and "call ended by agent" in proc.stdout
