"""Finding a sound device: PortAudio present, the device asked for, a format it takes.

Each failure is a `PipelineError` that says what to install or which flag picks another device.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ..base.errors import PipelineError

Device = int | str | None  # a PortAudio device number, part of its name, or None for the default
LIST_HINT = "list them with python -m sounddevice"


def import_sounddevice() -> ModuleType:
    """sounddevice, or a PipelineError that says what to install."""
    try:
        import sounddevice
    except OSError as exc:  # sounddevice is installed but the PortAudio library is not
        raise PipelineError(
            "the PortAudio library is not installed: install it (Debian/Ubuntu: "
            "apt-get install libportaudio2) and try again"
        ) from exc
    except ImportError as exc:
        raise PipelineError(
            "the sounddevice package is not installed: pip install sounddevice"
        ) from exc
    return sounddevice


def resolve_device(sd: ModuleType, device: Device, kind: str) -> dict[str, Any]:
    """PortAudio's description of the device named (None: the default), or a sentence saying
    how to name one."""
    what, flag = ("microphone", "--input-device") if kind == "input" else ("speaker", "--output-device")
    try:
        return dict(sd.query_devices(device, kind))
    except (ValueError, sd.PortAudioError) as exc:
        if device is None:
            raise PipelineError(
                f"no {what} found: connect one or pass {flag} ({LIST_HINT})") from exc
        raise PipelineError(
            f"no {kind} device matches {device!r}: pass {flag} with a number or a name "
            f"({LIST_HINT})") from exc


def pick_format(sd: ModuleType, info: dict[str, Any], kind: str, preferred_hz: int) -> tuple[int, int]:
    """The first (rate, channels) the device accepts: preferred rate first, mono first."""
    check = sd.check_input_settings if kind == "input" else sd.check_output_settings
    max_channels = int(info[f"max_{kind}_channels"])
    for rate in dict.fromkeys((preferred_hz, int(info["default_samplerate"]))):
        for channels in dict.fromkeys((1, min(2, max_channels))):
            try:
                check(device=info["index"], samplerate=rate, channels=channels, dtype="float32")
                return rate, channels
            except (ValueError, sd.PortAudioError):
                continue
    raise PipelineError(
        f"the {kind} device {info['name']!r} accepts neither {preferred_hz} Hz nor its own "
        f"default rate as float32 audio: pick another with --{kind}-device ({LIST_HINT})")
