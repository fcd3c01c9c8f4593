"""Run a scenario on the simulated clock: build the agent, voice the caller, play the call, judge it.

    from pipeline.testing.scenario import load
    from pipeline.testing.scenario_run import run

    result = run(load("examples/front_desk.scenario.toml"), artefacts="out/")
    assert result.passed, result.report()

A "text" scenario loads no model (the tone caller, `scenario_voice`); a "piper" one loads the
configured VAD, STT and turn signal once per process and voices each line with Piper.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import inspect
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base.audio import INPUT_RATE_HZ, read_wav, resample
from pipeline.base.errors import ConfigError
from pipeline.base.models import models_dir
from pipeline.call.session import Session, Stages
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.tools import Ledger
from pipeline.transports.runtime import run_call
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .calls import CallRecord
from .scenario import Scenario
from .scenario_caller import ScenarioCaller
from .scenario_expect import judge, timeline
from .scenario_persona import PersonaCaller
from .scenario_result import ScenarioResult
from .scenario_voice import EnergyVAD, LineVoice
from .sounds import CALLER_VOICE, noise, phone_band


def _import(ref: Any, folder: Path) -> Any:
    """`module:attribute`, the module importable or a file beside the scenario (a Python
    scenario may give the function itself)."""
    if callable(ref):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep:
        raise ConfigError(f"{ref!r} must look like module:function")
    file = folder / module if module.endswith(".py") else folder / f"{module}.py"
    if file.is_file():
        name = f"scenario_agent_{file.stem}"
        mod = sys.modules.get(name)
        if mod is None or getattr(mod, "__file__", None) != str(file):
            spec = importlib.util.spec_from_file_location(name, file)
            mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            sys.modules[name] = mod
            spec.loader.exec_module(mod)  # type: ignore[union-attr]
    else:
        mod = importlib.import_module(module)
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ConfigError(f"{module} has no {attr} (from {ref!r})") from None


def _call(fn: Any, known: dict[str, Any], given: dict[str, Any]) -> Any:
    """Call with the given arguments and, for the other parameters it names, what is known."""
    params = inspect.signature(fn).parameters
    kwargs = {k: v for k, v in known.items() if k in params and k not in given}
    return fn(**kwargs, **given)


def agent_config(scenario: Scenario) -> cfg.Config:
    a = scenario.agent
    config = cfg.load(scenario.folder / a.config_file) if a.config_file else cfg.Config.default()
    config = cfg.apply(config, a.config) if a.config else config
    if a.instructions is not None:
        config = cfg.apply(config, {"response": {"instructions": a.instructions}})
    return config


@functools.cache
def _stage(kind: str, name: str, params: str, models: str) -> Any:
    return cfg.build_stage(kind, cfg.StageConfig(name, json.loads(params)))


def _loaded(config: cfg.Config, kind: str) -> Any:
    """A configured stage, built once per process (the models are large and read-only)."""
    stage = config.stage(kind)
    return _stage(kind, stage.name, json.dumps(stage.params, sort_keys=True, default=str), str(models_dir()))


def _llm(scenario: Scenario, config: cfg.Config, llm: Any = None) -> Any:
    if llm is None:
        return _loaded(config, "llm")
    if not isinstance(llm, dict):
        return _import(llm, scenario.folder)()
    return ScriptedLLM(**llm)  # a fresh script each call: its replies are used up in order


def stages_for(scenario: Scenario, config: cfg.Config) -> Stages:
    llm = _llm(scenario, config, scenario.agent.llm)
    if scenario.voice == "text":
        tts = _loaded(config, "tts") if scenario.agent.voice == "piper" else ToneTTS()
        return Stages(vad=EnergyVAD(), stt=LineVoice(), completeness=HeuristicCompleteness(), llm=llm, tts=tts)
    tts = ToneTTS() if scenario.agent.voice == "tone" else _loaded(config, "tts")
    return Stages(vad=_loaded(config, "vad"), stt=_loaded(config, "stt"),
                  completeness=_loaded(config, "turns"), llm=llm, tts=tts)


@functools.cache
def _caller_voice(speed: float) -> Any:
    from .sounds import caller_tts

    return caller_tts(**{**CALLER_VOICE, "length_scale": CALLER_VOICE["length_scale"] * speed})


@functools.cache
def _piper_line(text: str, speed: float) -> np.ndarray:
    tts = _caller_voice(speed)
    return resample(tts.synthesize(text), tts.sample_rate_hz, INPUT_RATE_HZ)


def _colour(audio: np.ndarray, line: Any) -> np.ndarray:
    """The line as the line carries it: noise under it, then the phone band."""
    if line.noise is not None and len(audio):
        try:
            audio = audio + noise(line.noise, len(audio) / INPUT_RATE_HZ, seed=line.seed,
                                  level_dbfs=line.noise_dbfs)[: len(audio)]
        except ValueError as exc:
            raise ConfigError(f"line {line.describe()}: {exc}") from None
    if line.phone and len(audio):
        audio = phone_band(audio)
    return audio.astype(np.float32)


def clips_for(scenario: Scenario, stages: Stages) -> list[Clip]:
    """One clip per line: its voice, not yet placed in time (the caller places it)."""
    clips = []
    for line in scenario.lines:
        if line.wav is not None:
            wav = read_wav(scenario.folder / line.wav)
            audio = resample(wav.mono(), wav.sample_rate_hz, INPUT_RATE_HZ)
        elif line.say is not None and scenario.voice == "text":
            audio = stages.stt.say(line.say, speed=line.speed)  # type: ignore[attr-defined]
        elif line.say is not None:
            audio = _piper_line(line.say, line.speed)
        else:
            audio = np.zeros(int((line.silence_s or 0.02) * INPUT_RATE_HZ), np.float32)
        clips.append(Clip(_colour(audio.astype(np.float32), line), None, label=line.describe()))
    return clips


def run(scenario: Scenario, *, artefacts: str | Path | None = None,
        ledger_path: str | Path | None = None) -> ScenarioResult:
    """Play the scenario's call to its end and judge it; with `artefacts`, write the event log
    (JSON lines), the timeline and the stereo recording (caller left, agent right) there. With
    `ledger_path`, the call keeps its books there, as they are (a caller calling back finds their
    earlier effects); else each run starts from empty books in its folder."""
    import time

    config = agent_config(scenario)
    stages = stages_for(scenario, config)
    if callable(forget := getattr(stages.llm, "forget", None)):
        forget()  # the same call whatever played before it in this process (a model is shared)
    caller = ScenarioCaller(scenario.lines, clips_for(scenario, stages), tail_s=scenario.tail_s,
                            max_s=scenario.max_s)
    folder = Path(artefacts) if artefacts is not None else Path(tempfile.mkdtemp(prefix="scenario-"))
    folder.mkdir(parents=True, exist_ok=True)
    if ledger_path is None:
        for old in folder.glob("ledger.sqlite3*"):  # a rerun into the same folder starts from empty books
            old.unlink()
    ledger = Ledger(ledger_path if ledger_path is not None else folder / "ledger.sqlite3")
    world: dict[str, Any] = {}
    persona = None
    if scenario.caller is not None:
        def voice(text: str) -> np.ndarray:
            if scenario.voice == "text":
                return stages.stt.say(text)  # type: ignore[attr-defined]
            return _piper_line(text, 1.0)

        persona = PersonaCaller(scenario.caller, _llm(scenario, config, scenario.caller.llm), voice,
                                caller.inner.clips)

    def setup(session: Session) -> None:
        if persona is not None:
            persona.attach(session)
        known: dict[str, Any] = {"clock": session.clock, "session": session, "ledger": ledger}
        for name, spec in scenario.agent.world.items():
            spec = dict(spec)
            factory = _import(spec.pop("factory"), scenario.folder)
            world[name] = known[name] = _call(factory, known, spec)
        if scenario.agent.tools:
            registry = _call(_import(scenario.agent.tools, scenario.folder), {**known, "world": world},
                             scenario.agent.tools_args)
            session.use_tools(registry, ledger=ledger)

    started = time.perf_counter()
    events_path = folder / "events.jsonl" if artefacts is not None else None
    out = asyncio.run(run_call(config, stages, caller, events_path=events_path, setup=setup))
    if persona is not None and persona.error is not None:
        raise RuntimeError(f"the LLM-played caller's model failed: {persona.error!r}") from persona.error
    record = CallRecord(out.session, caller.inner, out.events.events)
    result = ScenarioResult(scenario, record, caller, world, ledger, [], time.perf_counter() - started,
                            persona_lines=list(persona.spoken) if persona is not None else [])
    result.failures = judge(result)
    if artefacts is not None:
        result.artefacts = {"events": folder / "events.jsonl", "timeline": folder / "timeline.txt",
                            "recording": folder / "call.wav"}
        result.artefacts["timeline"].write_text(timeline(result) + "\n", encoding="utf-8")
        caller.save(result.artefacts["recording"])
    ledger.close()
    return result
