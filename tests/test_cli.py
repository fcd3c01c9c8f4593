"""The command line: configuration, plugins listing, and bad input."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.base.audio import write_wav

from .conftest import ROOT


def _cli(*args: str, cwd=ROOT, timeout: int = 300, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=None if env is None else {**os.environ, **env})


def test_config_prints_the_effective_configuration_with_overrides():
    proc = _cli("config", "--preset", "fast", "--set", "bargein.energy_threshold_dbfs=-42")
    assert proc.returncode == 0, proc.stderr
    assert "[turn]" in proc.stdout and "min_silence_ms = 300" in proc.stdout
    assert "max_silence_ms = 1000" in proc.stdout
    assert "energy_threshold_dbfs = -42.0" in proc.stdout
    assert 'name = "faster-whisper"' in proc.stdout and "beam_size = 1" in proc.stdout


@pytest.mark.parametrize("override, words", [
    ("turn.preset=slow", ["turn.preset", "fast", "default", "deliberate"]),
    ("turn.min_silence_ms=abc", ["turn.min_silence_ms", "number"]),
    ("turn.bogus=1", ["turn.bogus", "min_silence_ms"]),
    ("stt.beam=3", ["stt.beam", "beam_size"]),
    ("llm.name=gpt", ["gpt", "llama-cpp", "scripted"]),
])
def test_config_errors_name_the_key_and_the_allowed_values(override, words):
    proc = _cli("config", "--set", override)
    assert proc.returncode == 2
    for word in words:
        assert word in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_file_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[turn\nmin_silence_ms = 3")
    proc = _cli("config", "--config", str(bad))
    assert proc.returncode == 2 and "not valid TOML" in proc.stderr
    good = tmp_path / "good.toml"
    good.write_text('[turn]\npreset = "deliberate"\n[llm]\nmax_tokens = 40\n')
    proc = _cli("config", "--config", str(good))
    assert "min_silence_ms = 900" in proc.stdout and "max_tokens = 40" in proc.stdout


def test_plugins_lists_every_group():
    proc = _cli("plugins")
    assert proc.returncode == 0, proc.stderr
    for group in ("vad", "stt", "turns", "llm", "tts", "transport"):
        assert f"pipeline.{group}:" in proc.stdout
    assert "faster-whisper" in proc.stdout and "piper" in proc.stdout and "[ok]" in proc.stdout


def test_missing_models_is_one_line_and_exit_2(tmp_path):
    caller = tmp_path / "caller.wav"
    write_wav(caller, np.zeros(16000, np.float32), 16000)
    empty = tmp_path / "no-models"
    empty.mkdir()
    proc = _cli("call", "--caller", str(caller), cwd=tmp_path, env={"MODELS_DIR": str(empty)})
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "scripts/download_models.sh" in lines[0] and str(empty) in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("content", [b"", b"this is not audio at all", b"RIFF\x10\x00\x00\x00WAVEjunk"])
def test_unreadable_caller_file_is_a_clear_error(tmp_path, content):
    caller = tmp_path / "caller.wav"
    caller.write_bytes(content)
    proc = _cli("call", "--caller", str(caller))
    assert proc.returncode == 2 and "error:" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_caller_file_is_a_clear_error(tmp_path):
    proc = _cli("call", "--caller", str(tmp_path / "nope.wav"))
    assert proc.returncode == 2 and "cannot read" in proc.stderr


@pytest.mark.models
@pytest.mark.parametrize("samples", [0, 16000 * 3])
def test_empty_or_silent_caller_is_a_call_with_no_turns(tmp_path, samples):
    caller = tmp_path / "quiet.wav"
    write_wav(caller, np.zeros(samples, np.float32), 16000)
    proc = _cli("call", "--caller", str(caller), "--llm", "scripted")
    assert proc.returncode == 0, proc.stderr
    assert "Caller:" not in proc.stdout and "Agent:" not in proc.stdout


def test_a_config_file_asking_for_the_sequential_mode_is_told_it_moved_to_the_benchmark(tmp_path):
    old = tmp_path / "old.toml"
    old.write_text('[response]\nmode = "sequential"\n')
    proc = _cli("config", "--config", str(old))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    for words in ("response.mode = 'sequential'", "bench/sequential.py", "remove response.mode"):
        assert words in proc.stderr, proc.stderr
    streaming = tmp_path / "streaming.toml"  # what `config` wrote before: still loads
    streaming.write_text('[response]\nmode = "streaming"\npreemptive = false\n')
    proc = _cli("config", "--config", str(streaming))
    assert proc.returncode == 0, proc.stderr
    assert "preemptive = false" in proc.stdout and "mode =" not in proc.stdout
