"""A call scenario: the agent under test, what the caller says and when, and what must happen.

The same thing two ways: a TOML file (read with the standard library) or these dataclasses.

    name = "a booking is looked up with a holding line"
    [agent]
    llm = "front_desk:scripted_llm"        # a factory (module:function), or an inline [agent.llm]
    tools = "front_desk:build_tools"       # called with what it names: clock, session, ledger, world objects
    tools_args = { lookup_latency_s = 0.8 }
    config = { call = { end_call = true } }  # sections as in a configuration file

    [[line]]
    say = "Hi, can you check my booking under Garcia?"
    [[line]]
    say = "Great, that's all, thanks!"
    after = "agent_said:I found it"        # when that words start to sound
    delay_s = 0.5

    [[expect]]
    tool_called = "look_up_booking"
    arguments = { last_name = "Garcia" }

`docs/testing.md` lists every trigger and expectation; `scenario_run.run` runs one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pipeline.base.config import read_toml
from pipeline.base.errors import ConfigError

# What a line may wait for ("after"): the next such event once the previous line has started.
TRIGGERS = ("start", "response_done", "heard_in_full", "first_audio_out", "barge_in",
            "agent_said", "tool_called", "tool_result", "line_end", "speech_stopped")
VOICES = ("text", "piper")
ENDED_BY = ("agent", "caller", "script", "cap")


@dataclass
class Agent:
    """The agent under test. `llm` is a factory ("module:function"), an inline script
    (`{"rules": [[pattern, reply], ...], "replies": [...]}`), or None for the configured model.
    `tools` and world factories are "module:function" too; from Python, the function itself."""

    config_file: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    llm: str | dict[str, Any] | Callable[[], Any] | None = None
    tools: str | Callable[..., Any] | None = None
    tools_args: dict[str, Any] = field(default_factory=dict)
    world: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {factory, **kwargs}
    voice: str | None = None  # "tone" (fast) or "piper"; default: the caller's kind decides


@dataclass
class Persona:
    """An LLM-played caller (`scenario_persona`): who they are, what they want, how long they try."""

    persona: str
    goal: str
    opening: str | None = None  # the first line, said as written (else the model opens)
    max_turns: int = 6
    llm: str | dict[str, Any] | Callable[[], Any] | None = None  # as Agent.llm; None: the configured model
    reply_delay_s: float = 0.6  # how long after the agent finishes the caller answers


@dataclass
class Line:
    """One thing the caller does: say words, stay silent, or hang up, at a time or after an event."""

    say: str | None = None
    at_s: float | None = None  # absolute time on the call's clock
    after: str | None = None  # a trigger, e.g. "response_done", "agent_said:goodbye", "heard_in_full:2"
    delay_s: float = 0.0
    silence_s: float | None = None  # a pause of this length instead of words
    hang_up: bool = False
    speed: float = 1.0  # Piper's length scale for this line (piper voice only)
    wav: str | None = None  # play this file instead (any rate, mixed to mono), with `say` as its words
    noise: str | None = None  # mixed under the line: white, pink, tones, cough (piper voice or wav)
    noise_dbfs: float = -30.0
    seed: int = 3  # the noise's
    phone: bool = False  # through the phone band: 8 kHz G.711 mu-law and back

    @property
    def trigger(self) -> tuple[str, str, int]:
        """(kind, argument, nth) of `after`: "heard_in_full:2" -> ("heard_in_full", "", 2)."""
        kind, _, arg = (self.after or "start").partition(":")
        nth = 1
        if kind != "agent_said" and arg.isdigit():
            nth, arg = int(arg), ""
        return kind, arg, nth

    def describe(self) -> str:
        what = (f"says {self.say!r}" if self.say is not None else
                "hangs up" if self.hang_up else f"is silent {self.silence_s} s")
        when = f"at {self.at_s} s" if self.at_s is not None else f"after {self.after or 'start'}"
        return f"{what} {when}" + (f" + {self.delay_s} s" if self.delay_s else "")


@dataclass
class Expect:
    """One expectation; exactly one of the first group of fields is set, the rest qualify it."""

    tool_called: str | None = None
    no_tool: bool | str | None = None  # true: no tool at all; a name: not that one
    said: str | None = None  # a regex the agent's heard words match (any response)
    not_said: str | None = None
    max_dead_air_s: float | None = None
    ledger: str | None = None  # a business key, e.g. "refund:4417"
    ended_by: str | None = None
    cancelled: bool | None = None  # some reply was cancelled (barge-in, talk-over) / none was
    resumed: bool | None = None  # a false interruption resumed a reply / none did
    world: str | None = None  # "provider.effects": an attribute of a world object
    # qualifiers
    arguments: dict[str, Any] | None = None
    times: int | None = None
    in_full: bool = False  # `said`: in a reply heard to its end
    state: str | None = None
    told: bool | None = None
    calls: int | None = None
    count: int | None = None
    equals: Any = None
    within_s: float | None = None  # `ended_by`: at most this long into the call

    KINDS = ("tool_called", "no_tool", "said", "not_said", "max_dead_air_s", "ledger", "ended_by",
             "cancelled", "resumed", "world")

    @property
    def kind(self) -> str:
        return next(k for k in self.KINDS if getattr(self, k) is not None)

    def describe(self) -> str:
        """The expectation as written: `tool_called = "refund", times = 1`."""
        parts = [f"{f.name} = {_show(getattr(self, f.name))}" for f in fields(self)
                 if getattr(self, f.name) is not None and (getattr(self, f.name) is not False or f.name in self.KINDS)]
        return ", ".join(parts)


@dataclass
class Scenario:
    name: str
    lines: list[Line] = field(default_factory=list)
    expect: list[Expect] = field(default_factory=list)
    caller: Persona | None = None  # an LLM-played caller, instead of the lines
    agent: Agent = field(default_factory=Agent)
    voice: str = "text"  # how the caller's lines are voiced: "text" (fast, scripted STT) or "piper"
    max_s: float = 120.0  # the call's length cap
    tail_s: float = 1.5  # quiet after the last line before the scripted caller leaves
    # repeat runs: a dotted path into the scenario and the values it takes, every combination a
    # run ("line.*.speed" = [0.9, 1.1], "agent.world.provider.latency_s" = [0.5, 6.0]); it
    # passes when at least `min_pass` runs pass (default: all of them)
    vary: dict[str, list[Any]] = field(default_factory=dict)
    min_pass: int | None = None
    path: Path | None = None  # the file it came from (modules and WAVs resolve beside it)

    @property
    def folder(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def check(self) -> Scenario:
        where = f"scenario {self.name!r}"
        if self.voice not in VOICES:
            raise ConfigError(f"{where}: voice = {self.voice!r}; use one of: {', '.join(VOICES)}")
        if self.agent.voice not in (None, "tone", "piper"):
            raise ConfigError(f"{where}: agent.voice = {self.agent.voice!r}; use \"tone\" or \"piper\"")
        if not self.lines and self.caller is None:
            raise ConfigError(f"{where} has no [[line]] and no [caller]: the caller must do something")
        if self.lines and self.caller is not None:
            raise ConfigError(f"{where}: give [[line]]s or an LLM-played [caller], not both")
        for i, line in enumerate(self.lines, 1):
            done = [line.say is not None or line.wav is not None, line.silence_s is not None, line.hang_up]
            if sum(done) != 1:
                raise ConfigError(f"{where}, line {i}: give exactly one of say (or wav), silence_s, hang_up")
            if line.at_s is not None and line.after is not None:
                raise ConfigError(f"{where}, line {i}: at_s and after exclude each other")
            if line.noise is not None and self.voice == "text":
                raise ConfigError(f"{where}, line {i}: noise needs voice = \"piper\" (the tone caller's "
                                  "VAD hears any sound as speech)")
            if line.wav is not None and self.voice == "text":
                raise ConfigError(f"{where}, line {i}: a wav needs voice = \"piper\" (the real VAD and "
                                  "STT hear it; the tone caller's STT knows only its own tones)")
            kind, arg, _ = line.trigger
            if kind not in TRIGGERS:
                raise ConfigError(f"{where}, line {i}: after = {line.after!r}; triggers: {', '.join(TRIGGERS)}")
            if kind == "agent_said" and not arg:
                raise ConfigError(f"{where}, line {i}: agent_said needs words, e.g. agent_said:goodbye")
        for key, values in self.vary.items():
            if not isinstance(values, list) or not values:
                raise ConfigError(f"{where}: vary.{key} must be a list of values to try")
        if self.min_pass is not None and not 1 <= self.min_pass:
            raise ConfigError(f"{where}: min_pass must be at least 1")
        for i, e in enumerate(self.expect, 1):
            named = [k for k in Expect.KINDS if getattr(e, k) is not None]
            if len(named) != 1:
                raise ConfigError(f"{where}, expect {i}: name exactly one of {', '.join(Expect.KINDS)} "
                                  f"(got {', '.join(named) or 'none'})")
            if e.ended_by is not None and e.ended_by not in ENDED_BY:
                raise ConfigError(f"{where}, expect {i}: ended_by = {e.ended_by!r}; use one of: {', '.join(ENDED_BY)}")
        return self


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + " }"
    return repr(value)


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a table")
    allowed = [f.name for f in fields(cls)]
    unknown = [k for k in data if k not in allowed or k == "path"]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(a for a in allowed if a != 'path')}")
    return cls(**data)


def parse(data: dict[str, Any], *, path: Path | None = None) -> Scenario:
    """A scenario from a parsed TOML document."""
    where = str(path) if path else "scenario"
    data = dict(data)
    agent = _build(Agent, data.pop("agent", {}), f"{where} [agent]")
    lines = [_build(Line, d, f"{where} [[line]] {i}") for i, d in enumerate(data.pop("line", []), 1)]
    if "caller" in data:
        caller = data.pop("caller")
        missing = [k for k in ("persona", "goal") if not isinstance(caller, dict) or k not in caller]
        if missing:
            raise ConfigError(f"{where} [caller] needs {' and '.join(missing)}")
        data["caller"] = _build(Persona, caller, f"{where} [caller]")
    expect = [_build(Expect, d, f"{where} [[expect]] {i}") for i, d in enumerate(data.pop("expect", []), 1)]
    data.setdefault("name", path.name.removesuffix(".scenario.toml") if path else "scenario")
    scenario = _build(Scenario, {**data, "lines": lines, "expect": expect, "agent": agent}, where)
    scenario.path = path
    return scenario.check()


def load(path: str | Path) -> Scenario:
    """Read a `*.scenario.toml` file."""
    path = Path(path)
    return parse(read_toml(path, "scenario file"), path=path)


def find(paths: list[str | Path]) -> list[Path]:
    """Scenario files: the files given, and every `*.scenario.toml` under the folders given."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(p.rglob("*.scenario.toml"))
        elif p.is_file():
            out.append(p)
        else:
            raise ConfigError(f"{p} is neither a scenario file nor a folder")
    return out
