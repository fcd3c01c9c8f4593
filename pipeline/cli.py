"""Command line: `python -m pipeline call|config|plugins|serve|live`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from . import config as cfg
from . import events as ev
from . import plugins
from .audio import AudioFormatError
from .clock import RealClock, SimClock
from .errors import PipelineError


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, help="TOML configuration file")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one setting, e.g. --set turn.preset=fast (repeatable)")
    for kind in cfg.STAGES:
        p.add_argument(f"--{kind}", metavar="NAME", help=f"the {kind} stage's entry-point name")
    p.add_argument("--preset", choices=sorted(cfg.TURN_PRESETS), help="turn-taking preset")
    p.add_argument("--device", choices=["cpu", "cuda"], help="run STT, LLM and TTS on this device")


def load_config(args: argparse.Namespace) -> cfg.Config:
    overrides = list(args.set)
    for kind in cfg.STAGES:
        if getattr(args, kind, None):
            overrides.insert(0, f"{kind}.name={getattr(args, kind)}")
    if getattr(args, "preset", None):  # before --set, so an explicit threshold wins
        overrides.insert(0, f"turn.preset={args.preset}")
    config = cfg.load(args.config, overrides)
    if getattr(args, "device", None) == "cuda":
        config = cfg.apply(config, _cuda_overrides(config))
    return config


def _cuda_overrides(config: cfg.Config) -> dict[str, Any]:
    """Put each built-in stage that can use a GPU on it."""
    out: dict[str, Any] = {}
    if config.stt.name == "faster-whisper":
        out["stt"] = {"device": "cuda"}
    if config.llm.name == "llama-cpp":
        out["llm"] = {"gpu_layers": -1}
    if config.tts.name == "piper":
        out["tts"] = {"use_cuda": True}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p_call = sub.add_parser("call", help="run a scripted call from a WAV file")
    p_call.add_argument("--caller", required=True, type=Path, help="the caller's audio (WAV)")
    p_call.add_argument("--out", type=Path, help="write the call as a two-channel WAV")
    p_call.add_argument("--events", type=Path, help="write every event as JSON lines")
    p_call.add_argument("--realtime", action="store_true", help="feed audio at wall-clock pace")
    _add_config_args(p_call)

    p_config = sub.add_parser("config", help="print the effective configuration as TOML")
    _add_config_args(p_config)

    sub.add_parser("plugins", help="list the installed stages per entry-point group")

    from .transports.realtime_server import add_serve_args
    from .transports.soundcard import add_live_args

    p_serve = sub.add_parser("serve", help="serve the realtime-API WebSocket protocol on localhost")
    add_serve_args(p_serve)  # includes the configuration options

    p_live = sub.add_parser("live", help="talk on the default microphone and speakers")
    add_live_args(p_live)
    _add_config_args(p_live)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "plugins":
            return cmd_plugins()
        if args.command == "config":
            print(cfg.to_toml(load_config(args)))
            return 0
        if args.command == "call":
            return asyncio.run(cmd_call(args))
        if args.command == "serve":
            from .transports.realtime_server import serve_main

            return serve_main(args)
        if args.command == "live":
            from .transports.soundcard import live_main

            return asyncio.run(live_main(args))
    except (PipelineError, AudioFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def cmd_plugins() -> int:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = plugins.check_all()
    for group, rows in report.items():
        print(f"pipeline.{group}:")
        for info, problem in rows:
            state = "BROKEN" if problem else "ok"
            print(f"  {info.name:<16} {info.target:<44} {info.package} {info.version}  [{state}]")
        if not rows:
            print("  (none)")
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return 0


async def cmd_call(args: argparse.Namespace) -> int:
    from .metrics import format_table, turn_timings
    from .session import Stages
    from .transports.wav import WavTransport

    config = load_config(args)
    for path in (args.out, args.events):  # fail now, not after the models load and the call runs
        if path is not None and not path.resolve().parent.is_dir():
            raise PipelineError(f"the folder for {path} does not exist; create it or choose another path")
    transport = WavTransport(caller=args.caller)  # read (and reject bad audio) before loading models
    print(f"caller: {args.caller} ({len(transport.caller) / 16000:.1f} s)", file=sys.stderr)
    stages = Stages.load(config, progress=lambda m: print(m, file=sys.stderr))
    result = await run_call(config, stages, transport, realtime=args.realtime, events_path=args.events,
                            printer=print)
    for timing in turn_timings(result.events.events):
        print(f"\nturn {timing.turn_id}: {timing.transcript!r}"
              f"{' (preemptive)' if timing.preemptive else ''} -> {timing.status}")
        print(format_table(timing))
    if args.out:
        transport.save(args.out, rate_hz=stages.tts.sample_rate_hz)
        print(f"\nwrote {args.out} (left: caller, right: agent)", file=sys.stderr)
    if args.events:
        print(f"wrote {args.events}", file=sys.stderr)
    return 0


class CallResult:
    def __init__(self, session: Any, events: ev.EventLog) -> None:
        self.session = session
        self.events = events


async def run_call(config: cfg.Config, stages: Any, transport: Any, *, realtime: bool = False,
                   events_path: Path | None = None, printer: Any = None,
                   setup: Any = None) -> CallResult:
    """Run one scripted call to the end on the simulated (default) or real clock.

    `setup(session)` runs before the call starts (tools, a custom call control).
    """
    from .session import Session

    clock = RealClock() if realtime else SimClock()
    log = ev.EventLog(events_path)
    session = Session(config, stages, clock=clock, sink=transport, events=log)
    if printer is not None:
        session.listeners.append(_conversation_printer(printer))
    if setup is not None:
        setup(session)
    driver = asyncio.ensure_future(clock.drive()) if isinstance(clock, SimClock) else None
    try:
        session.start()
        await transport.run(session, clock)
        await session.close()
    finally:
        if driver is not None:
            driver.cancel()
        log.close()
    return CallResult(session, log)


def _conversation_printer(printer: Any) -> Any:
    def on_event(e: ev.Event) -> None:
        if isinstance(e, ev.TranscriptionCompleted) and e.transcript:
            printer(f"Caller: {e.transcript}")
        elif isinstance(e, ev.ResponseDone):
            out = e.response.get("output") or [{}]
            text = " ".join(c.get("transcript", "") for c in out[0].get("content", []))
            status = e.response["status"]
            if text or status != "completed":
                printer(f"Agent: {text}" + ("" if status == "completed" else f"  [{status}]"))
        elif isinstance(e, ev.CallLog) and (e.level != "info" or e.message.startswith("(hangs up")):
            printer(e.message if e.message.startswith("(") else f"({e.message})")
    return on_event
