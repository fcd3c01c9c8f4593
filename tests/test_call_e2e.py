"""A scripted call end to end on the real models, through the CLI as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.base.audio import read_wav

from .conftest import JFK, ROOT

pytestmark = [pytest.mark.models, pytest.mark.slow]


def test_scripted_call_on_jfk_transcribes_replies_and_writes_the_call(tmp_path):
    out, events = tmp_path / "call.wav", tmp_path / "events.jsonl"
    proc = subprocess.run([sys.executable, "-m", "pipeline", "call", "--caller", str(JFK),
                           "--out", str(out), "--events", str(events)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    caller_lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("Caller: ")]
    agent_lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("Agent: ")]
    assert any("ask not what your country" in ln.lower() for ln in caller_lines), proc.stdout
    assert agent_lines and len(agent_lines[0]) > len("Agent: ") + 3, proc.stdout
    for stage in ("speech_end", "stt_final", "turn_commit", "llm_first_token", "first_chunk",
                  "tts_first_audio", "first_audio_out"):
        assert stage in proc.stdout

    call = read_wav(out)
    assert call.samples.ndim == 2 and call.samples.shape[1] == 2
    caller_ch, agent_ch = call.samples[:, 0], call.samples[:, 1]
    assert abs(caller_ch).max() > 0.1 and abs(agent_ch).max() > 0.1
    # the agent speaks after the caller finished, on the same timeline
    first_agent = (abs(agent_ch) > 0.05).argmax() / call.sample_rate_hz
    assert first_agent > 10.5

    lines = [json.loads(line) for line in events.read_text().splitlines()]
    types = [e["type"] for e in lines]
    for t in ("session.created", "input_audio_buffer.speech_started", "input_audio_buffer.committed",
              "conversation.item.input_audio_transcription.completed", "response.created",
              "response.output_audio.delta", "response.done"):
        assert t in types
    assert all("ts" in e and "perf" in e for e in lines)
    done = [e for e in lines if e["type"] == "response.done"]
    # the reply ends normally: whole, or at the reply cap (max_output_tokens) when the small model
    # runs on; a failure or a cancel would be a bug
    first = done[0]["response"]
    assert first["status"] == "completed" or (
        first["status"] == "incomplete" and first["status_details"]["reason"] == "max_output_tokens"), first
