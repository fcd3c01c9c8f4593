"""What every way of running the pipeline shares: settings from arguments, and running a call.

The command line, the WebSocket server, the sound card and the benchmark all build their
configuration with `add_config_args` / `load_config` and run calls with `run_call`; printing a
conversation as it happens is `conversation_printer`. Nothing here imports a transport or the CLI.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base import config as cfg
from ..base import events as ev
from ..base.clock import RealClock, SimClock
from ..base.protocols import Transport
from ..call.session import Session, Stages


def add_config_args(p: argparse.ArgumentParser) -> None:
    """--config, --set, a --NAME per stage, --preset and --device."""
    p.add_argument("--config", type=Path, help="TOML configuration file")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one setting, e.g. --set turn.preset=fast (repeatable)")
    for kind in cfg.STAGES:
        p.add_argument(f"--{kind}", metavar="NAME", help=f"the {kind} stage's entry-point name")
    p.add_argument("--preset", choices=sorted(cfg.TURN_PRESETS), help="turn-taking preset")
    p.add_argument("--device", choices=["cpu", "cuda"], help="run STT, LLM and TTS on this device")


def load_config(args: argparse.Namespace) -> cfg.Config:
    """The configuration those arguments describe: defaults, file, stage names, preset, --set."""
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


class CallResult:
    def __init__(self, session: Session, events: ev.EventLog) -> None:
        self.session = session
        self.events = events


async def run_call(config: cfg.Config, stages: Stages, transport: Transport, *, realtime: bool = False,
                   events_path: Path | None = None, printer: Callable[[str], None] | None = None,
                   setup: Callable[[Session], None] | None = None,
                   session_class: type[Session] = Session) -> CallResult:
    """Run one call to the end on the simulated (default) or real clock.

    `setup(session)` runs before the call starts (tools, a custom call control);
    `session_class` may be a subclass that replaces a part (bench/sequential.py's baseline).
    """
    clock = RealClock() if realtime else SimClock()
    log = ev.EventLog(events_path)
    session = session_class(config, stages, clock=clock, sink=transport, events=log)
    if printer is not None:
        session.listeners.add(conversation_printer(printer), ev.EventPhase.OBSERVER)
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


def conversation_printer(printer: Callable[[str], None]) -> Callable[[ev.Event], None]:
    """An event listener that prints the call as it happens: "Caller: ...", "Agent: ..."."""
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
