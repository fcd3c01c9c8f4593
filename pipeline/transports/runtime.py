"""What every way of running the pipeline shares: settings from arguments, and running a call.

The command line, the WebSocket server, the sound card and the benchmark all build their
configuration with `add_config_args` / `load_config` and run calls with `run_call`; printing a
conversation as it happens is `conversation_printer`; the tools a server offers its phone calls
are a `Desk` (`load_desk`, `pipeline serve --desk`). Nothing here imports a transport or the CLI.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base import config as cfg
from ..base import events as ev
from ..base.clock import RealClock, SimClock
from ..base.errors import ConfigError
from ..base.protocols import Transport
from ..call.session import Session, Stages
from ..tools import Ledger, ToolRegistry


def add_config_args(p: argparse.ArgumentParser) -> None:
    """--config, --set, a --NAME per stage, --preset and --device."""
    p.add_argument("--config", type=Path, help="TOML configuration file")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one setting, e.g. --set turn.preset=fast (repeatable)")
    for kind in cfg.STAGES:
        p.add_argument(f"--{kind}", metavar="NAME", help=f"the {kind} stage's entry-point name")
    p.add_argument("--preset", choices=sorted(cfg.TURN_PRESETS), help="turn-taking preset")
    p.add_argument("--device", choices=["cpu", "cuda"], help="run STT, LLM and TTS on this device")


def load_config(args: argparse.Namespace, *, base: cfg.Config | None = None) -> cfg.Config:
    """The configuration those arguments describe: defaults (or `base`: a desk's), file, stage
    names, preset, --set."""
    overrides = list(args.set)
    for kind in cfg.STAGES:
        if getattr(args, kind, None):
            overrides.insert(0, f"{kind}.name={getattr(args, kind)}")
    if getattr(args, "preset", None):  # before --set, so an explicit threshold wins
        overrides.insert(0, f"turn.preset={args.preset}")
    config = cfg.load(args.config, overrides, base=base)
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


DESK_FUNCTION, DESK_CONFIG = "desk", "CONFIG"


class Desk:
    """What a server offers every phone call, which has no client to send `session.update`: the
    tools (with their server-side code, holding lines included) and a ledger for their side
    effects, shared by every call the server answers (one effect per business key across calls
    and restarts).

    `setup` is called for each call's session before it starts, with the parameters it names of
    `session`, `clock` (the session's) and `ledger`; it either calls `session.use_tools(...)`
    itself (to pass `queries`, say) or returns a `ToolRegistry`, which is offered with the ledger.
    `config` is the desk's own settings (sections as in a configuration file: its instructions,
    `call.end_call`), under the command line's: `--config` and `--set` still win.
    """

    def __init__(self, setup: Callable[..., Any], *, config: dict[str, Any] | None = None,
                 ledger: Any = None, name: str = "desk") -> None:
        self.setup, self.config, self.ledger, self.name = setup, dict(config or {}), ledger, name

    def base_config(self) -> cfg.Config:
        """Defaults with the desk's settings over them (a bad section is a ConfigError)."""
        try:
            return cfg.apply(cfg.Config.default(), self.config)
        except ConfigError as exc:
            raise ConfigError(f"{self.name}'s {DESK_CONFIG}: {exc}") from None

    def open_ledger(self, path: str | Path) -> Ledger:
        """The ledger at `path` (`call.db_path`); effects left in flight by a crash become
        `unknown`, to be asked of the provider when they come up again."""
        self.ledger = Ledger(path)
        self.ledger.recover()
        return self.ledger

    def attach(self, session: Session) -> None:
        known = {"session": session, "clock": session.clock, "ledger": self.ledger}
        params = inspect.signature(self.setup).parameters
        registry = self.setup(**{k: v for k, v in known.items() if k in params})
        if isinstance(registry, ToolRegistry):
            session.use_tools(registry, ledger=self.ledger)
        elif registry is not None:
            raise ConfigError(f"{self.name} returned {type(registry).__name__}; return a "
                              "ToolRegistry, or None after calling session.use_tools")


def load_desk(ref: str) -> Desk:
    """`FILE.py`, `FILE.py:FUNCTION` or `module:FUNCTION` (FUNCTION defaults to `desk`), and the
    module's `CONFIG` if it has one."""
    where, sep, attr = ref.rpartition(":")
    if not sep or not where or not attr.isidentifier():  # no function named
        where, attr = ref, DESK_FUNCTION
    path = Path(where)
    if where.endswith(".py"):
        if not path.is_file():
            raise ConfigError(f"--desk {ref}: {path} does not exist")
        name = f"pipeline_desk_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise ConfigError(f"--desk {ref}: cannot import {where} ({exc}); give a file "
                              "(desk.py) or an importable module (package.desk)") from None
    setup = getattr(module, attr, None)
    if not callable(setup):
        raise ConfigError(f"--desk {ref}: {where} has no function {attr}(); define one that "
                          "takes `session` (and `ledger`) and offers the tools")
    config = getattr(module, DESK_CONFIG, None) or {}
    if not isinstance(config, dict):
        raise ConfigError(f"--desk {ref}: {DESK_CONFIG} must be a dict of configuration sections")
    return Desk(setup, config=config, name=f"{where}:{attr}")


def add_desk_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--desk", metavar="FILE.py[:FUNCTION]",
                   help="offer every phone call this desk's tools (FUNCTION, default `desk`, is "
                   "called per call with `session` and `ledger`; docs/telephony.md)")


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
