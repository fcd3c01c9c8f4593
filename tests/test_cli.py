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
    assert len(lines) == 1 and "pipeline models download" in lines[0] and str(empty) in lines[0]
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


# --- the command a user runs: its name, version, logging, models and settings ------------------


def test_the_command_is_called_pipeline_and_prints_the_package_version():
    import pipeline

    proc = _cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"pipeline {pipeline.__version__}"
    proc = _cli("--help")
    assert proc.stdout.startswith("usage: pipeline ")
    for command in ("call", "config", "plugins", "serve", "live", "test", "models"):
        assert command in proc.stdout


def test_the_console_script_is_pipeline():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"pipeline": "pipeline.cli:main"}
    assert "base/download_models.sh" in project["tool"]["setuptools"]["package-data"]["pipeline"]


@pytest.mark.parametrize("args, level", [
    ([], "WARNING"), (["-v"], "INFO"), (["-vv"], "DEBUG"), (["-v", "-v", "-v"], "DEBUG"),
    (["--log-level", "error"], "ERROR"), (["-v", "--log-level", "warning"], "WARNING"),
])
def test_v_and_log_level_set_the_logging_level(args, level):
    import logging

    from pipeline.cli import _log_level

    parser_args = __import__("argparse").Namespace()
    for flag in args:
        if flag.startswith("-v"):
            parser_args.verbose = getattr(parser_args, "verbose", 0) + flag.count("v")
    if "--log-level" in args:
        parser_args.log_level = args[args.index("--log-level") + 1]
    assert logging.getLevelName(_log_level(parser_args)) == level


def test_v_is_taken_before_and_after_the_subcommand():
    for args in (["-v", "config"], ["config", "-v"], ["config", "--log-level", "debug"]):
        proc = _cli(*args)
        assert proc.returncode == 0, proc.stderr
    proc = _cli("config", "--log-level", "loud")
    assert proc.returncode == 2 and "debug" in proc.stderr


def test_models_download_help_and_bad_components():
    proc = _cli("models", "download", "--help")
    assert proc.returncode == 0 and "--only" in proc.stdout and "--hub" in proc.stdout
    proc = _cli("models", "download", "--only", "nonsense")
    assert proc.returncode == 2 and "unknown component" in proc.stderr


def test_models_are_read_from_models_dir_a_clone_or_the_user_cache(monkeypatch, tmp_path):
    from pipeline.base import models

    for name in ("MODELS_DIR", "PIPELINE_MODELS", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert models.in_clone() and models.models_dir() == ROOT / "models"
    monkeypatch.setattr(models, "REPO", tmp_path / "site-packages")  # an installed copy
    assert not models.in_clone()
    assert models.models_dir() == tmp_path / "home" / ".cache" / "pipeline" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models.models_dir() == tmp_path / "xdg" / "pipeline" / "models"
    monkeypatch.setenv("PIPELINE_MODELS", str(tmp_path / "mine"))
    assert models.models_dir() == tmp_path / "mine"
    monkeypatch.setenv("MODELS_DIR", str(tmp_path / "dev"))
    assert models.models_dir() == tmp_path / "dev"
    assert models.DOWNLOAD_SCRIPT.is_file()  # package data: an installed copy can fetch


def test_a_model_path_the_user_sets_replaces_the_default_model():
    proc = _cli("config", "--set", "llm.model_path=/tmp/mine.gguf")
    assert proc.returncode == 0, proc.stderr
    llm = proc.stdout.split("[llm]")[1].split("[")[0]
    assert 'model_path = "/tmp/mine.gguf"' in llm and "model =" not in llm
    proc = _cli("config")
    llm = proc.stdout.split("[llm]")[1].split("[")[0]
    assert 'model = "qwen2.5-coder-0.5b"' in llm and "model_path" not in llm


def test_a_model_path_in_a_file_replaces_the_default_model_and_both_is_an_error(tmp_path):
    from pipeline.base import config as cfg
    from pipeline.base.errors import ConfigError

    mine = tmp_path / "mine.toml"
    mine.write_text('[llm]\nmodel_path = "mine.gguf"\n')
    config = cfg.load(mine)
    assert config.llm.params == {"model_path": "mine.gguf"}
    with pytest.raises(ConfigError, match="set only one of them"):
        cfg.load(mine, ["llm.model=smollm2-135m"])
    with pytest.raises(ConfigError, match="llm.model .* and llm.model_path"):
        cfg.load(overrides=["llm.model=smollm2-135m", "llm.model_path=mine.gguf"])
    # the later choice of a name replaces nothing the user set: a name after a path clashes too,
    # and a name over the default name is simply that name
    assert cfg.load(overrides=["llm.model=smollm2-135m"]).llm.params == {"model": "smollm2-135m"}
    assert cfg.load(overrides=["llm.name=scripted", "llm.name=llama-cpp"]).llm.params == {}


def test_an_unknown_model_name_is_one_line_listing_the_embedded_ones():
    pytest.importorskip("llama_cpp")
    from pipeline.base.errors import ConfigError
    from pipeline.stages.llm import MODELS, embedded_gguf

    with pytest.raises(ConfigError) as caught:
        embedded_gguf("qwen-7b", None, setting="llm", what="LLM model")
    message = str(caught.value)
    assert "\n" not in message and "llm.model 'qwen-7b'" in message
    assert all(name in message for name in MODELS)


def test_serve_takes_the_session_cap():
    import argparse

    from pipeline.transports.realtime_server import MAX_SESSIONS, add_serve_args

    parser = argparse.ArgumentParser()
    add_serve_args(parser)
    assert parser.parse_args([]).max_sessions == MAX_SESSIONS == 8
    assert parser.parse_args(["--max-sessions", "3"]).max_sessions == 3
    proc = _cli("serve", "--max-sessions", "0")
    assert proc.returncode == 2 and "1 or more" in proc.stderr
