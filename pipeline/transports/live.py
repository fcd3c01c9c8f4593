"""`python -m pipeline live`: talk with the agent on this machine's microphone and speakers."""

from __future__ import annotations

import argparse
import sys

from ..base.audio import INPUT_RATE_HZ
from .soundcard import SoundCardTransport


def add_live_args(p: argparse.ArgumentParser) -> None:
    """The `live` command's own options (the config options come from the CLI)."""
    p.add_argument("--input-device", type=_device_arg, metavar="DEVICE",
                   help="microphone: number or name from python -m sounddevice (default: system's)")
    p.add_argument("--output-device", type=_device_arg, metavar="DEVICE",
                   help="speaker: number or name from python -m sounddevice (default: system's)")
    p.add_argument("--speakers", action="store_true",
                   help="the agent's audio can reach the microphone (no headphones): guard echo")
    p.add_argument("--seconds", type=float, metavar="N", help="hang up after N seconds")


def _device_arg(text: str) -> int | str:
    return int(text) if text.strip().isdigit() else text


async def live_main(args: argparse.Namespace) -> int:
    """Talk with the agent on this machine's microphone and speakers until Ctrl-C or --seconds."""
    from ..base import config as cfg
    from ..call.session import Stages
    from .runtime import load_config, run_call

    config = load_config(args)
    if args.speakers:
        config = cfg.apply(config, {"bargein": {"echo_guard": True}})
    transport = SoundCardTransport(input_device=args.input_device, output_device=args.output_device,
                                   speakers=args.speakers, pickup_cap_ms=config.call.pickup_cap_ms,
                                   max_s=args.seconds)
    with transport:  # the microphone is live from here: words spoken during loading are kept
        print(transport.describe(), file=sys.stderr)
        stages = Stages.load(config, progress=lambda m: print(m, file=sys.stderr))
        until = "until Ctrl-C" if args.seconds is None else f"for {args.seconds:g} s"
        print(f"listening {until}", file=sys.stderr)
        await run_call(config, stages, transport, realtime=True, printer=lambda line: print(line, flush=True))
    if transport.underruns or transport.dropped_samples:
        print(f"audio: {transport.underruns} output underruns, "
              f"{transport.dropped_samples / INPUT_RATE_HZ:.2f} s of early input dropped",
              file=sys.stderr)
    return 0


