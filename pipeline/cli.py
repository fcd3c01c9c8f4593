"""Command line: `pipeline call|config|plugins|serve|live|test|models` (or `python -m pipeline`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .base import config as cfg
from .base import models, plugins
from .base.audio import AudioFormatError
from .base.errors import ConfigError, PipelineError
from .transports.runtime import add_config_args, load_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pipeline", description=__doc__, parents=[_logging_args()])
    parser.add_argument("--version", action="version", version=f"pipeline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, **kw: Any) -> argparse.ArgumentParser:  # -v and --log-level after it too
        return sub.add_parser(name, parents=[_logging_args()], **kw)

    p_call = add("call", help="run a call: a scripted caller from a WAV file (default), "
                              "or any installed transport")
    p_call.add_argument("--caller", type=Path, help="the caller's audio (WAV), for the wav transport")
    p_call.add_argument("--transport", default="wav", metavar="NAME",
                        help="the pipeline.transport entry point that plays the caller (default wav)")
    p_call.add_argument("--transport-opt", action="append", default=[], metavar="KEY=VALUE",
                        help="a keyword argument for the transport's constructor (repeatable)")
    p_call.add_argument("--out", type=Path, help="write the call as a two-channel WAV")
    p_call.add_argument("--events", type=Path, help="write every event as JSON lines")
    p_call.add_argument("--realtime", action="store_true", help="feed audio at wall-clock pace")
    add_config_args(p_call)

    p_config = add("config", help="print the effective configuration as TOML")
    add_config_args(p_config)
    p_config.add_argument("--reference", action="store_true",
                          help="print every setting (the policies' and the default stages'), its type, "
                               "default and meaning, as Markdown (docs/configuration.md)")

    add("plugins", help="list the installed stages per entry-point group")

    p_models = add("models", help="the model files: fetch the default set")
    models_sub = p_models.add_subparsers(dest="models_command", required=True)
    where = (f"fetch, verify (sha256) and assemble the default models into {models.models_dir()} "
             f"(${models.ENV} puts them elsewhere)")
    p_download = models_sub.add_parser("download", help=where, description=where)
    p_download.add_argument("--only", metavar="COMPONENTS",
                            help="only these components, comma separated (vad, whisper-tiny.en, "
                                 "whisper-base, llm, llm-qwen, tts, audio, turn, llm-qwen-1.5b)")
    p_download.add_argument("--with", dest="with_", metavar="COMPONENTS",
                            help="the default set and these optional ones: llm-qwen-1.5b "
                                 "(Qwen2.5-Coder-1.5B, 1.1 GB)")
    p_download.add_argument("--hub", action="store_true",
                            help="also the larger optional models from the Hugging Face hub")

    from .transports.live import add_live_args
    from .transports.realtime_server import add_serve_args

    p_serve = add("serve", help="serve the realtime-API WebSocket protocol on localhost")
    add_serve_args(p_serve)  # includes the configuration options

    p_live = add("live", help="talk on the default microphone and speakers")
    add_live_args(p_live)
    add_config_args(p_live)

    p_test = add("test", help="run call scenarios (*.scenario.toml) on the simulated clock")
    p_test.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="scenario files, or folders to search for *.scenario.toml")
    p_test.add_argument("--junit", type=Path, metavar="FILE", help="write the results as JUnit XML")
    p_test.add_argument("--out", type=Path, default=Path("scenario-results"), metavar="DIR",
                        help="each scenario's event log, timeline and recording (default scenario-results)")
    p_test.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="run N scenario files at once, each in a process of its own (default 1)")

    args = parser.parse_args(argv)
    logging.basicConfig(level=_log_level(args), format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "plugins":
            return cmd_plugins()
        if args.command == "config":
            if args.reference:
                from .base.config_reference import reference

                print(reference(), end="")
                return 0
            print(cfg.to_toml(load_config(args)))
            return 0
        if args.command == "models":
            return models.download([*(["--only", args.only] if args.only else []),
                                    *(["--with", args.with_] if args.with_ else []),
                                    *(["--hub"] if args.hub else [])])
        if args.command == "call":
            return asyncio.run(cmd_call(args))
        if args.command == "test":
            from .testing.scenario_cli import main as test_main

            return test_main(args.paths, junit_path=args.junit, out=args.out, jobs=args.jobs)
        if args.command == "serve":
            from .transports.realtime_server import serve_main

            return serve_main(args)
        if args.command == "live":
            from .transports.live import live_main

            return asyncio.run(live_main(args))
    except (PipelineError, AudioFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


LEVELS = ("debug", "info", "warning", "error")


def _logging_args() -> argparse.ArgumentParser:
    """-v and --log-level, taken before or after the subcommand (absent ones set nothing)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="log more: -v info, -vv debug (default: warnings only)")
    p.add_argument("--log-level", choices=LEVELS, default=argparse.SUPPRESS,
                   help="log at this level (default warning)")
    return p


def _log_level(args: argparse.Namespace) -> int:
    """--log-level when given, else warning lowered one step per -v."""
    if hasattr(args, "log_level"):
        return int(getattr(logging, args.log_level.upper()))
    return max(logging.DEBUG, logging.WARNING - 10 * getattr(args, "verbose", 0))


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


def _transport(args: argparse.Namespace) -> Any:
    """The call's transport, from its entry point; `--caller` goes to it as `caller`."""
    cls = plugins.load("transport", args.transport)
    kwargs: dict[str, Any] = {}
    for item in args.transport_opt:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--transport-opt {item!r} must look like KEY=VALUE")
        kwargs[key.strip()] = cfg.parse_scalar(value.strip())
    if args.caller is not None:
        kwargs["caller"] = args.caller
    elif args.transport == "wav":
        raise ConfigError("the wav transport needs --caller FILE.wav (the caller's audio)")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"the {args.transport} transport does not take these options ({exc})") from None


async def cmd_call(args: argparse.Namespace) -> int:
    from .base.metrics import format_table, turn_timings
    from .base.protocols import RecordingTransport
    from .call.session import Stages
    from .transports.runtime import run_call
    from .transports.wav import WavTransport

    config = load_config(args)
    for path in (args.out, args.events):  # fail now, not after the models load and the call runs
        if path is not None and not path.resolve().parent.is_dir():
            raise PipelineError(f"the folder for {path} does not exist; create it or choose another path")
    transport = _transport(args)  # read (and reject bad audio) before loading models
    if isinstance(transport, WavTransport):
        print(f"caller: {args.caller} ({len(transport.caller) / 16000:.1f} s)", file=sys.stderr)
    stages = Stages.load(config, progress=lambda m: print(m, file=sys.stderr))
    result = await run_call(config, stages, transport, realtime=args.realtime, events_path=args.events,
                            printer=print)
    for timing in turn_timings(result.events.events):
        print(f"\nturn {timing.turn_id}: {timing.transcript!r}"
              f"{' (preemptive)' if timing.preemptive else ''} -> {timing.status}")
        print(format_table(timing, real_clock=args.realtime))
    if args.out:
        if not isinstance(transport, RecordingTransport):
            raise PipelineError(f"the {args.transport} transport cannot write the call; drop --out")
        transport.save(args.out, rate_hz=stages.tts.sample_rate_hz)
        print(f"\nwrote {args.out} (left: caller, right: agent)", file=sys.stderr)
    if args.events:
        print(f"wrote {args.events}", file=sys.stderr)
    return 0
