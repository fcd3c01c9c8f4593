"""What the numbers were measured on: latency results mean nothing without the machine."""

from __future__ import annotations

import datetime as dt
import os
import platform
import socket
from importlib import metadata
from pathlib import Path
from typing import Any

from pipeline.base.models import model_file

PACKAGES = ("numpy", "onnxruntime", "onnxruntime-gpu", "faster-whisper", "ctranslate2",
            "llama-cpp-python", "piper-tts", "matplotlib")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return f"{line.split('=', 1)[1].strip(chr(34))} (kernel {platform.release()})"
    except OSError:
        pass
    return platform.platform()


def _versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def host_name() -> str:
    """A file-name-safe host name for the results file."""
    name = socket.gethostname().split(".")[0] or "host"
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)


def describe_machine() -> dict[str, Any]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": host_name(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "ram_gib": _ram_gib(),
        "os": _os_name(),
        "python": platform.python_version(),
        "packages": _versions(),
    }


def machine_line(m: dict[str, Any]) -> str:
    return (f"{m['cpu']}, {m['cores_usable']} of {m['cores']} cores, {m['ram_gib']} GiB RAM, "
            f"{m['os']}, Python {m['python']}; {m['date']}")


# Constructor settings worth a line in the results: where each model runs and on how many threads,
# and Whisper's encoder window (a pass over a few seconds takes about a fifth of the time on a
# sized one).
_STAGE_KEYS = ("model_path", "device", "compute_type", "use_cuda", "gpu_layers", "threads", "beam_size",
               "window", "n_ctx", "max_tokens", "keep_prompt_cache", "warm_up")


def _size_mb(path: str) -> float | None:
    p = model_file(path)
    if p.is_dir():
        return round(sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20, 1)
    return round(p.stat().st_size / 2**20, 1) if p.is_file() else None


def describe_stages(config: Any, stages: Any) -> dict[str, dict[str, Any]]:
    """Per stage: its entry point, device, model file and size, and the threads it really got
    (a `threads=None` default resolves to the detected cores' split, pipeline.base.cpu)."""
    from pipeline.base import config as cfg

    loaded = {"vad": stages.vad, "stt": stages.stt, "turns": stages.completeness, "llm": stages.llm,
              "tts": stages.tts}
    out: dict[str, dict[str, Any]] = {}
    for kind, stage in loaded.items():
        params = cfg.stage_defaults(kind, config.stage(kind))
        row: dict[str, Any] = {"name": config.stage(kind).name}
        row |= {k: params[k] for k in _STAGE_KEYS if k in params}
        if getattr(stage, "threads", None) is not None:
            row["threads"] = stage.threads
        if isinstance(row.get("model_path"), str):
            row["model_mb"] = _size_mb(row["model_path"])
        out[kind] = row
    return out


def stages_line(described: dict[str, dict[str, Any]]) -> str:
    """One line per stage for a results file: `stt faster-whisper (whisper-tiny.en, 74.2 MB,
    device cpu, threads 2)`."""
    parts = []
    for kind, row in described.items():
        bits = [f"{Path(row['model_path']).name}, {row.get('model_mb')} MB"] if "model_path" in row else []
        bits += [f"{k.replace('_', ' ')} {row[k]}" for k in _STAGE_KEYS[1:] if k in row]
        parts.append(f"{kind} {row['name']}" + (f" ({', '.join(bits)})" if bits else ""))
    return "; ".join(parts)
