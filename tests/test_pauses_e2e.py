"""A caller who says a number in groups, pausing 900 ms between them, is one turn through
`pipeline call` and over `pipeline serve`'s realtime protocol (tests/test_realtime_server.py):
each group is said on its own, and the pauses outlast min_silence_ms. The same calls in the
held-out espeak-ng voices are measured, not tested: `python -m bench.pauses` (bench/README.md)."""

from __future__ import annotations

import pytest

from pipeline.base.audio import INPUT_RATE_HZ, write_wav
from pipeline.testing import paused_speech

from .test_cli import _cli

GROUPS = ["My number is five five five,", "two one two,", "three four five six."]


@pytest.mark.models
@pytest.mark.slow
def test_pipeline_call_keeps_a_number_said_in_groups_in_one_turn(tmp_path, say):
    caller = tmp_path / "caller.wav"
    write_wav(caller, paused_speech(GROUPS, say), INPUT_RATE_HZ)
    proc = _cli("call", "--caller", str(caller), "--llm", "scripted")
    assert proc.returncode == 0, proc.stderr
    turns = [ln for ln in proc.stdout.splitlines() if ln.startswith("Caller: ")]
    assert len(turns) == 1, proc.stdout
    assert "3456" in "".join(c for c in turns[0] if c.isdigit()), turns
