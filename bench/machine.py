"""What the numbers were measured on: latency results mean nothing without the machine."""

from __future__ import annotations

import datetime as dt
import os
import platform
import socket
from importlib import metadata
from pathlib import Path
from typing import Any

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
