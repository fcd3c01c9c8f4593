"""Third-party stages arrive through entry points, installed like any package."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from .conftest import JFK, ROOT

HERE = ROOT / "tests"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """Install the two test plugin packages into a private target directory (not the venv)."""
    import shutil

    target = tmp_path_factory.mktemp("site")
    for pkg in ("plugin_pkg", "broken_plugin_pkg"):
        source = tmp_path_factory.mktemp("src") / pkg  # a copy: builds leave files beside the source
        shutil.copytree(HERE / pkg, source)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "--target", str(target), str(source)],
                       check=True, capture_output=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=str(target))
    return env


def test_installed_plugin_is_listed_and_a_broken_one_is_a_warning(plugin_site):
    proc = subprocess.run([sys.executable, "-m", "pipeline", "plugins"], cwd=ROOT, env=plugin_site,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "beep" in proc.stdout and "pipeline-beep-tts" in proc.stdout
    assert "broken" in proc.stdout and "BROKEN" in proc.stdout
    assert "pipeline-broken-stt" in proc.stderr  # the warning names the package to fix


@pytest.mark.models
def test_a_call_runs_with_the_third_party_stage_selected_by_name(plugin_site, tmp_path):
    out = tmp_path / "call.wav"
    proc = subprocess.run([sys.executable, "-m", "pipeline", "call", "--caller", str(JFK), "--tts", "beep",
                           "--llm", "scripted", "--out", str(out)],
                          cwd=ROOT, env=plugin_site, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Agent: Sure. I can help with that." in proc.stdout
    assert "loading tts: beep" in proc.stderr
    from pipeline.base.audio import read_wav

    call = read_wav(out)
    assert call.sample_rate_hz == 16_000  # the call is written at the plugin's own rate
    assert abs(call.samples[:, 1]).max() > 0.3


@pytest.mark.models
def test_a_third_party_transport_runs_a_call(plugin_site):
    """`--transport NAME` loads a pipeline.transport entry point from another package."""
    proc = subprocess.run([sys.executable, "-m", "pipeline", "call", "--transport", "file-caller",
                           "--caller", str(JFK), "--llm", "scripted", "--tts", "beep"],
                          cwd=ROOT, env=plugin_site, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    caller = [line for line in proc.stdout.splitlines() if line.startswith("Caller: ")]
    # the words, not Whisper's punctuation ("And so, my fellow" on AVX2 kernels)
    assert caller and "and so my fellow americans" in re.sub(r"[^a-z ]", "", caller[0].lower()), proc.stdout
    assert "Agent: Sure. I can help with that." in proc.stdout
    heard = [line for line in proc.stdout.splitlines() if line.startswith("(file caller heard")]
    assert heard and int(heard[0].split()[3]) > 16_000, proc.stdout  # more than 1 s of agent audio


def test_an_unknown_transport_lists_the_installed_ones(plugin_site):
    proc = subprocess.run([sys.executable, "-m", "pipeline", "call", "--transport", "carrier-pigeon",
                           "--caller", str(JFK)],
                          cwd=ROOT, env=plugin_site, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "carrier-pigeon" in proc.stderr and "file-caller" in proc.stderr and "wav" in proc.stderr


def test_selecting_a_broken_plugin_names_its_package(plugin_site):
    proc = subprocess.run([sys.executable, "-m", "pipeline", "call", "--caller", str(JFK), "--stt", "broken"],
                          cwd=ROOT, env=plugin_site, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "pipeline-broken-stt" in proc.stderr and "Traceback" not in proc.stderr
