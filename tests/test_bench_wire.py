"""`bench.wire --via twilio`: a phone call as the benchmark places it, against a server with
fake stages (energy VAD, scripted STT and LLM, tone voice), and the report of both paths."""

from __future__ import annotations

import asyncio

import numpy as np

from bench import wire
from pipeline.base.audio import INPUT_RATE_HZ, mulaw_encode
from pipeline.base.config import Config
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.scenario_voice import EnergyVAD
from pipeline.testing.server import ServerThread
from pipeline.turns import HeuristicCompleteness


def _question() -> np.ndarray:
    t = np.arange(int(1.2 * INPUT_RATE_HZ)) / INPUT_RATE_HZ
    return (0.3 * np.sin(2 * np.pi * 400 * t)).astype(np.float32)


def test_a_phone_call_times_the_first_agent_frame_that_sounds_after_the_end_of_speech() -> None:
    stages = Stages(vad=EnergyVAD(), stt=ScriptedSTT(transcripts=["What time is checkout?"]),
                    completeness=HeuristicCompleteness(),
                    llm=ScriptedLLM(replies=["Checkout is at eleven."]), tts=ToneTTS())
    with ServerThread(stages, config=Config.default()) as server:
        row = asyncio.run(wire.phone_call(server.port, _question(), "twilio"))
    assert row["end_to_audio"] is not None and row["end_to_audio"] > 0  # answered after the end
    assert row["commit"] is None and row["llm_first_token"] is None  # no events on a phone line
    text = wire.report({"rows": [{"clip": "q", "round": 0, "via": "twilio", **row}],
                        "clips": {"q": 1.2}}, "Machine: test", "python -m bench.wire --via twilio")
    assert "## via" not in text and "no milestones" in text and "| q | 1.2 |" in text


def test_phone_sounds_reads_g711_frames() -> None:
    quiet = mulaw_encode(np.zeros(160, np.float32))
    loud = mulaw_encode(0.1 * np.sin(2 * np.pi * 300 * np.arange(160) / 8000))
    assert not wire.phone_sounds(quiet) and wire.phone_sounds(loud)


def test_the_budget_table_puts_each_stage_median_beside_its_target() -> None:
    rows = [{"speech_stopped": 170.0, "llm_first_token": 400.0, "first_chunk": 650.0, "tts_first_audio": 900.0,
             "commit": 690.0, "stt_final": 800.0, "first_audio_out": 905.0, "end_to_audio": 930.0}] * 3
    table = wire._budget_table(rows)
    assert "| llm first token | 460 | 360 | 400 | 400 | yes / no |" in table
    assert "| end to audio | 700 | 500 | 930 | 930 | no / no |" in table
    assert "| speech stopped | 160 | 160 | 170 | 170 | no / no |" in table
    assert "| - | - | - / - |" in wire._budget_table([{"commit": 600.0}])  # a stage not seen: no verdict


def test_variants_are_compared_call_by_call_and_on_the_same_first_chunk() -> None:
    def row(variant: str, clip: str, first: float, audio: float, chunk: str) -> dict:
        return {"variant": variant, "clip": clip, "round": 0, "llm_first_token": first,
                "end_to_audio": audio, "first_chunk_text": chunk}

    rows = [row("a", "q1", 500, 800, "Yes,"), row("b", "q1", 450, 700, "Yes,"),
            row("a", "q2", 500, 800, "Sure,"), row("b", "q2", 480, 1000, "I close at ten."),
            row("a", "q3", 600, 900, "No."), row("b", "q3", 540, 860, "No.")]
    table = wire._paired_table(rows, ["a", "b"])
    # every call: differences -50, -20, -60 (first token); -100, +200, -40 (the first audio)
    assert "| b | llm_first_token | -50 (0.900) | 3 | 3 | -55 (0.900) | 2 | 2 |" in table
    assert "| b | end_to_audio | -40 (0.956) | 3 | 2 | -70 (0.915) | 2 | 2 |" in table
    unanswered = wire._paired_table([row("a", "q1", 500, None, "x"), row("b", "q1", 400, None, "x")], ["a", "b"])
    assert "| b | end_to_audio | - | 0 | - | - | 0 | - |" in unanswered  # no audio on either: no pair


def test_a_variants_leading_assignments_are_its_servers_environment() -> None:
    env, rest = wire._environment(["PIPELINE_BLAS_THREADS=0", "A_B=x=y", "--set", "turns.threads=2"])
    assert env == {"PIPELINE_BLAS_THREADS": "0", "A_B": "x=y"}
    assert rest == ["--set", "turns.threads=2"]  # a setting after an argument stays an argument
    assert wire._environment(["--set", "X=1"]) == ({}, ["--set", "X=1"])


def test_each_calls_own_instructions_part_from_the_others_before_the_servers_own_follow():
    from pipeline.base.config import DEFAULT_INSTRUCTIONS

    said = [wire.own_instructions(n) for n in (0, 1, 12)]
    assert len(set(said)) == 3 and all(s.endswith(DEFAULT_INSTRUCTIONS) for s in said)
    assert all(s.index(DEFAULT_INSTRUCTIONS) < 60 for s in said)  # the account comes first


def test_a_clip_as_the_second_turn_follows_the_opener_and_the_gap_for_its_reply():
    opener, clip = np.ones(1600, np.float32), np.full(800, 0.5, np.float32)
    call = wire.after_a_turn(clip, opener)
    gap = int(wire.OPENER_GAP_S * INPUT_RATE_HZ)
    assert len(call) == 1600 + gap + 800
    assert np.all(call[:1600] == 1.0) and not np.any(call[1600:1600 + gap]) and np.all(call[-800:] == 0.5)
