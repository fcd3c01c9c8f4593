"""One typed configuration: a TOML file, overridable from the command line.

Each stage is named by its entry point and carries its own parameters, checked against the
stage's constructor; the policy sections are dataclasses. Errors name the key and what is allowed.
"""

from __future__ import annotations

import tomllib
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, Literal

from .config_values import coerce
from .errors import ConfigError
from .stage_config import StageConfig, merged, stage_defaults
from .stage_config import build_stage as build_stage  # re-exported: cfg.build_stage
from .stage_config import check_stage as check_stage  # re-exported: cfg.check_stage

STAGES = ("vad", "stt", "turns", "llm", "tts")

DEFAULT_INSTRUCTIONS = (
    "You are a helpful voice assistant on a phone call. Answer in one or two short, plain "
    "sentences. No lists, no markdown."
)


# Presets (min_silence_ms, max_silence_ms): fast talkers, the default, deliberate speech.
TURN_PRESETS = {"fast": (300, 1000), "default": (600, 1500), "deliberate": (900, 2500)}


@dataclass(frozen=True)
class TurnPolicy:
    """When the caller's turn ends (the silence it takes, the voice thresholds, early commit), and
    what the recogniser is told to hear it by."""

    preset: Literal["fast", "default", "deliberate", "custom"] = "default"
    # the "default" preset's pair, written once (TURN_PRESETS)
    min_silence_ms: int = TURN_PRESETS["default"][0]  # ends the turn only if the transcript looks complete
    max_silence_ms: int = TURN_PRESETS["default"][1]  # ends the turn regardless
    prefix_padding_ms: int = 300  # audio kept before speech onset so no onset is clipped
    vad_threshold: float = 0.5  # Silero's own recommended speech threshold
    # in speech, silence starts only below vad_threshold - vad_hysteresis: silero-vad's own
    # VADIterator and get_speech_timestamps (utils_vad.py) end speech below threshold - 0.15
    vad_hysteresis: float = 0.15
    speech_stop_ms: int = 160  # five 32 ms VAD windows below threshold = speech stopped
    # after this many ms of trailing windows below the threshold, ~100 ms before speech-stop, a
    # pass over the speech as the final would read it then starts a held reply (0, or
    # speech_stop_ms and above: none); the final pass still runs at speech-stop over the audio
    # it always read, and the reply is adopted only if it says the same words. Speech going on
    # drops both. Not the final itself: reading less of the silence, tiny.en writes other words
    # on one clip in eight (`python -m bench.early_final`, bench/results/2026-12-03-early-final.md)
    early_pass_ms: int = 0
    # the silences above count from where the voice ended, the last 10 ms within this many dB of
    # the turn's speech level, up to 160 ms before the VAD's end, which Silero's smoothing puts
    # ~100 ms late (`turns.voice_end_ms`); a turn begun over the agent's voice keeps Silero's
    # (0: Silero's end). At the wire it commits ~100 ms sooner; a pause is judged by its real
    # length (bench/README.md, "Where the silence starts"). The final pass still reads to Silero's
    # end and its pad: cut at the voice's end it heard "reef and" for "refund" (`Turn.heard_to_ms`)
    voice_end_db: float = 25.0
    min_speech_ms: int = 96  # three windows above threshold = speech started (rejects clicks)
    complete_threshold: float = 0.5  # "looks complete" probability that allows min_silence_ms
    # Early commit (LiveKit's min/max endpointing): a probability of at least early_threshold
    # ends the turn after early_silence_ms, shorter than min_silence_ms. 0 = off, the default:
    # on the end-of-turn set some mid-sentence pause scores as high as all finished turns but
    # one, on every signal (heuristic 0.9, Smart Turn 0.989), so any early_silence_ms cuts off
    # more pauses of 200-600 ms (`python -m bench.eot_rescore --early`,
    # bench/results/2026-12-01-eot-early.md)
    early_silence_ms: int = 0
    early_threshold: float = 0.95
    # a turn longer than this is committed as it stands, so its audio and its transcription
    # passes stay bounded however long the input runs unbroken; a minute is a long phone turn
    max_turn_ms: int = 60_000
    # Waits learned per caller (LiveKit's dynamic endpointing, stages/eou_pauses.py): pauses the caller went on
    # after (in a turn, or as the reply to a turn cut off began) lengthen both waits, to 1200 / 3000 ms, never
    # shorten them (bench/README.md, "Waits learned per caller"; 3% of held-out pauses cut off against 32%)
    learn_pauses: bool = True
    # What the call is about, told to the recogniser as a prompt on every pass of a turn (tool
    # and argument names as said, `hotwords`, the instructions, the last `context_turns` turns;
    # pipeline/stages/stt_context.py; a pass that writes the prompt back, loops or hears only
    # its words is redone without it). On: on tiny.en sized-final it hears "refund" where it
    # wrote "reef and" without, misses no more key words than the full window (or than no
    # context) in any of 16 sets and conditions and fewer in 11, and gets fewer words wrong on
    # each whole set (held-out 0.647 -> 0.397); one more word wrong in 2 conditions (dev pink
    # noise at 20 dB, jfk at 0.8 pace); the same median pass, p90 659 ms against 586
    # (`python -m bench.hearing`, bench/results/2026-12-02-hearing-guarded.md). A turn begun under
    # the agent's voice is heard without it: "Mm-hmm." became "in a month.", an interruption
    context: bool = True
    hotwords: tuple[str, ...] = ()  # product, street and people's names the callers say
    context_tokens: int = 96  # the prompt's bound (Whisper reads at most 223)
    context_turns: int = 4


@dataclass(frozen=True)
class BargeInPolicy:
    """When the caller's voice over the agent's reply interrupts it, and what is only a backchannel."""

    enabled: bool = True
    energy_threshold_dbfs: float = -40.0  # a 32 ms window at least this loud (RMS) may be speech
    voice_threshold: float = 0.6  # Silero speech probability, surer than a turn's vad_threshold
    min_duration_ms: int = 250  # both held this long together: 8 windows (tests/test_bargein.py)
    echo_guard: bool = False  # on when the agent's audio can reach the microphone (speakers)
    pause_on_candidate: bool = True  # hold playback while a possible interruption is judged
    # false-interruption recovery: resume at the latest after this (the same 1.5 s as the
    # longest silence that still belongs to one turn, max_silence_ms)
    resume_after_false_ms: int = 1500
    # Once the gate fires, playback pauses and the words decide: only backchannels resume it.
    # Backchannels cancelling the reply 0% against 73% for the gate alone, interruptions missed
    # 31% against 27% (of 33 and 48: `python -m bench.bargein_words --short-words`,
    # bench/results/2026-12-01-bargein-words.md)
    hear_words: bool = True
    # a sound too short for the gate's hold (a quick "Wait.") heard out too: wideband / phone /
    # pink 10 dB / 25% faster / slower (--phone, --noise 10, --speed 0.8 / 1.25: the -phone,
    # -noise10dB, -stretch80, -stretch125 files), interruptions missed 4/8/4/6/4% against
    # 31/35/4/42/29% without it, backchannels cancelling 0/6/21/6/9% against 0/3/21/6/9%.
    # Not with echo_guard: short sounds there are mostly echo residue (tests/test_bargein.py)
    hear_short_words: bool = True
    backchannels: tuple[str, ...] = (
        "mm-hmm", "mhm", "mm", "hmm", "uh-huh", "yeah", "yes", "yep", "yup", "okay", "ok",
        "right", "i see", "sure", "got it", "all right", "alright", "uh", "um", "oh",
        "thanks", "thank you", "cool", "great", "nice", "wow", "really")
    # still talking this long after the gate fired: a real interruption. Backchannels run
    # 300-800 ms (voiced, in bench/bargein_words.py's set); the gate fires >= 250 ms in,
    # speech-stop needs 160 ms more
    decide_within_ms: int = 1000
    # words Whisper wrote less sure than this (mean token log-probability) do not cancel the
    # reply: a short non-lexical sound is where tiny.en hallucinates (the set's "Mm-hmm." heard
    # as "in my mom." in those results). -1.0 is Whisper's own threshold for a failed decode
    # (`log_prob_threshold`). A caller still talking past decide_within_ms cancels regardless.
    min_word_logprob: float = -1.0
    # a noise suppressor on the caller's audio before the VAD, this gate and Whisper: a
    # `pipeline.denoise` plugin (rnnoise, deepfilternet, webrtc); "" off, as the table says
    # (`python -m bench.denoise`, bench/results/2026-12-02-denoise.md)
    denoise: str = ""


@dataclass(frozen=True)
class ChunkerPolicy:
    """Where the reply's text is cut into pieces for the voice: how soon the first one is said."""

    quick_first_fragment: bool = True
    min_fragment_words: int = 4  # the first chunk may end at a comma after this many words
    # the first chunk may end where a clause starts unpunctuated, after this many words (0: off)
    first_phrase_words: int = 4
    # the first chunk may end before a phrase a preposition starts, after a clause and its object
    # ("I close today | at 10 AM."), once it holds this many words (0: off)
    head_phrase_words: int = 3


@dataclass(frozen=True)
class ResponsePolicy:
    """How a reply is made: the instructions, starting it before the final transcript, its size."""

    instructions: str = DEFAULT_INSTRUCTIONS
    preemptive: bool = True  # start the LLM at speech-stop on the pending final transcript
    # while the caller speaks, each partial's words evaluated as the reply's prompt (`call/prefill.py`).
    # Off: on 2 cores it slowed the partial passes and the final pass; the reply evaluated 8-11 tokens
    # of 15, its first audio per call 1.065 of without (bench/results/2026-12-03-wire-prefill.md)
    prefill: bool = False
    # in the caller's pause (the VAD's trailing windows before speech-stop) the last partial's words
    # evaluated, through the words: the reply then evaluated 8 tokens of 51 against 14, its first audio
    # per call 0.977 and 0.974 of without (bench/README.md, "Prefill in the pause")
    prefill_pause: bool = True
    # the conversation evaluated up to the caller's next words as the call begins, on new instructions,
    # after a reply heard out: first audio 1.066 (a second turn) and 1.103 (a client's own instructions)
    # per call without it (bench/README.md). Calls sharing one model share its cache: each undoes the others'
    prefill_ahead: bool = True
    # What a speculation starts from; adopted if the final says the same words, else dropped and
    # begun again from the final. "quick": the STT's quick pass over the whole turn at
    # speech-stop (whisper on a window sized to the turn; `QuickSTT`), or the final where the
    # STT has none: 5 and 9 of 14 wire calls adopted a reply begun before the final against 1 of
    # 14 waiting for it, end of speech to audio median 0.86 and 0.76 of it in two loaded runs
    # (`python -m bench.wire`, bench/results/2026-12-01-wire-ab.md and -wire-ab-partials.md).
    # "partial": the last partial as it stood, which lacks the last words ("...for two people"
    # for "...tonight"): 3 of 21 adopted (bench/results/2026-12-01-wire-ab-last-partial.md).
    # "final": wait for the final pass.
    speculate_from: Literal["quick", "partial", "final"] = "quick"
    output_delta_ms: int = 100  # audio delta size cap
    # A session's own generation settings (a realtime client's session.update); None: the
    # stage's. The stage must take them per call (`protocols.takes_keyword`): the llama-cpp and
    # openai-compatible LLMs take `temperature`, Piper takes `speed` (its length scale over it).
    temperature: float | None = None
    max_output_tokens: int | None = None  # at most the LLM stage's max_tokens (its context budget)
    # A reply that is a tool call may run to this many tokens, where no max_output_tokens is set:
    # its JSON must close, and a free-text argument ("notes") outruns a spoken reply's cap (the
    # stage's max_tokens, 96): Qwen's calls were cut into invalid JSON, nothing ran and the
    # caller heard nothing (bench/README.md, "Tool provenance"). Spoken replies still stop at the
    # stage's max_tokens; the context window bounds both.
    tool_call_tokens: int = 256
    speed: float | None = None  # 1.0: the voice's own rate
    # The LLM waits between tokens while the reply's first chunk is synthesized (a voice of this
    # process; a network TTS is not waited for): on 2 cores both models take both cores, and Piper
    # made a first chunk in a median 157 ms beside the LLM decoding against 76 ms with it paused,
    # the token in flight finishing first in 4 ms (bench/results/2026-12-05-tts-contention.md).
    # At the wire it did not show: end of speech to first audio per call 0.996 of without, the
    # first chunk to Piper's first audio 82 against 68 ms at the median, 21 calls each
    # (bench/results/2026-12-05-wire-first-audio-first.md). Off until a run shows it.
    first_audio_first: bool = False


@dataclass(frozen=True)
class CallPolicy:
    """The call's edges: pickup, the goodbye and hanging up, the tools offered, the ledger."""

    # caller audio held while the session gets ready (the one default: the sound card's too)
    pickup_cap_ms: int = 5000
    hangup_cap_ms: int = 8000  # wait for the goodbye to drain, at most this long
    # quiet needed after the goodbye, long enough for a caller's "bye" to begin before we close:
    # turn gaps in conversation are about 200 ms (Stivers et al., PNAS 106(26), 2009)
    close_grace_ms: int = 800
    repeat_close_grace_ms: int = 300  # a second close after the farewell was said waits less
    pre_hangup_check: bool = False  # one LLM call at goodbye time: is an action still owed?
    pre_hangup_timeout_ms: int = 2000  # the check fails open past this
    end_call: bool = False  # offer the end_call tool (examples/front_desk.py turns it on)
    # offer the transfer_call tool: a spoken line, then the phone call goes to a person
    # (`call.transfer`, docs/telephony.md); off, and no phone line, it is not offered
    transfer: bool = False
    transfer_to: str = ""  # the number or sip: URI a carrier's transfer command dials
    transfer_url: str = ""  # Plivo: the URL whose XML dials the person (its API takes a URL)
    transfer_warm: bool = False  # warm: a summary of the call goes with it (cold: none)
    # each reply's grammar offers only the tools the caller's words can use (`tools.choice`);
    # off: every tool, every reply (the provenance guard still refuses a value nobody gave)
    tool_choice: bool = True
    # a sentence stating a number, price, time or limit that neither the caller, a tool result nor
    # the instructions gave is not said ("I don't have that information" instead, `tools.facts`);
    # off until real replies show it costs less than it saves (bench/results/2026-12-02-facts.md)
    unsourced_facts: bool = False
    db_path: str = "calls.sqlite3"  # the side-effect ledger


def _default_stages() -> dict[str, StageConfig]:
    return {
        "vad": StageConfig("silero"),
        "stt": StageConfig("faster-whisper"),
        "turns": StageConfig("combined"),
        # the embedded model that calls tools (README, "Embedded LLMs"); smollm2-135m: faster, no tools
        "llm": StageConfig("llama-cpp", {"model": "qwen2.5-coder-0.5b"}, frozenset({"model"})),
        "tts": StageConfig("piper"),
    }


@dataclass
class Config:
    vad: StageConfig
    stt: StageConfig
    turns: StageConfig
    llm: StageConfig
    tts: StageConfig
    turn: TurnPolicy = field(default_factory=TurnPolicy)
    bargein: BargeInPolicy = field(default_factory=BargeInPolicy)
    chunker: ChunkerPolicy = field(default_factory=ChunkerPolicy)
    response: ResponsePolicy = field(default_factory=ResponsePolicy)
    call: CallPolicy = field(default_factory=CallPolicy)

    @classmethod
    def default(cls) -> Config:
        s = _default_stages()
        return cls(vad=s["vad"], stt=s["stt"], turns=s["turns"], llm=s["llm"], tts=s["tts"])

    def stage(self, kind: str) -> StageConfig:
        return getattr(self, kind)


POLICIES = {"turn": TurnPolicy, "bargein": BargeInPolicy, "chunker": ChunkerPolicy,
            "response": ResponsePolicy, "call": CallPolicy}


# Keys a section no longer has: the value that still means what the pipeline does (accepted,
# so a file written by an older `config` still loads), and what to do about any other.
_RETIRED = {
    ("response", "mode"): ("streaming", "response.mode = {value!r} is no longer a setting: replies "
                           "always stream. The sequential baseline the benchmark compares "
                           "against moved to the benchmark (bench/sequential.py, run by python -m "
                           "bench.ttfa); remove response.mode from the configuration"),
}


def _apply_policy(section: str, cls: type, current: Any, values: dict[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    allowed = [f.name for f in fields(cls)]
    updates = {}
    for key, value in values.items():
        if (section, key) in _RETIRED:
            still_true, why = _RETIRED[section, key]
            if value != still_true:
                raise ConfigError(why.format(value=value))
            continue
        if key not in allowed:
            raise ConfigError(f"unknown key {section}.{key}; allowed: {', '.join(allowed)}")
        updates[key] = coerce(f"{section}.{key}", value, hints[key])
    out = replace(current, **updates)
    if section == "turn":
        out = _resolve_turn_preset(out, updates)
    if section == "response" and out.tool_call_tokens < 1:
        raise ConfigError(f"response.tool_call_tokens ({out.tool_call_tokens}) must be 1 or more: the "
                          "tokens a reply that is a tool call may run to (256 by default)")
    return out


def _resolve_turn_preset(policy: TurnPolicy, updates: dict[str, Any]) -> TurnPolicy:
    if "preset" in updates and policy.preset != "custom":
        lo, hi = TURN_PRESETS[policy.preset]
        policy = replace(policy, min_silence_ms=updates.get("min_silence_ms", lo),
                         max_silence_ms=updates.get("max_silence_ms", hi))
    elif {"min_silence_ms", "max_silence_ms"} & updates.keys():
        policy = replace(policy, preset="custom")
    if policy.vad_hysteresis < 0.0:
        raise ConfigError(f"turn.vad_hysteresis ({policy.vad_hysteresis}) must be 0 or more: in "
                          "speech, silence starts below turn.vad_threshold minus it")
    if policy.early_silence_ms < 0 or policy.early_silence_ms > policy.min_silence_ms:
        raise ConfigError(
            f"turn.early_silence_ms ({policy.early_silence_ms}) must be 0 (off) or between 1 and "
            f"turn.min_silence_ms ({policy.min_silence_ms}): it is the shorter silence that ends "
            "a turn the completeness signal is sure of")
    if policy.early_pass_ms < 0:
        raise ConfigError(
            f"turn.early_pass_ms ({policy.early_pass_ms}) must be 0 or more: the trailing ms "
            "after which an early pass begins a held reply (0, or turn.speech_stop_ms and above: none)")
    if not policy.complete_threshold <= policy.early_threshold <= 1.0:
        raise ConfigError(
            f"turn.early_threshold ({policy.early_threshold}) must be between "
            f"turn.complete_threshold ({policy.complete_threshold}) and 1: early commit needs a "
            "surer signal than the ordinary one")
    if policy.min_silence_ms > policy.max_silence_ms:
        raise ConfigError(
            f"turn.min_silence_ms ({policy.min_silence_ms}) must not exceed "
            f"turn.max_silence_ms ({policy.max_silence_ms})"
        )
    return policy


def apply(config: Config, data: dict[str, Any]) -> Config:
    """Overlay a parsed TOML document (or CLI overrides shaped like one) on a configuration."""
    config = replace(config)
    for section, values in data.items():
        if section in STAGES:
            if isinstance(values, str):
                values = {"name": values}
            if not isinstance(values, dict):
                raise ConfigError(f"[{section}] must be a table with a `name` and stage parameters")
            values = dict(values)
            current = config.stage(section)
            setattr(config, section, merged(section, current, values.pop("name", current.name), values))
        elif section in POLICIES:
            if not isinstance(values, dict):
                raise ConfigError(f"[{section}] must be a table")
            setattr(config, section, _apply_policy(section, POLICIES[section], getattr(config, section), values))
        else:
            allowed = ", ".join([*STAGES, *POLICIES])
            raise ConfigError(f"unknown section [{section}]; allowed: {allowed}")
    return config


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    """A TOML file's table; a missing or malformed file is a ConfigError naming `what` it is."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def load(path: str | Path | None = None, overrides: list[str] | None = None, *,
         base: Config | None = None) -> Config:
    """Defaults (or `base`), then the TOML file, then `section.key=value` overrides."""
    config = base if base is not None else Config.default()
    if path is not None:
        config = apply(config, read_toml(path, "configuration file"))
    for item in overrides or []:
        key, sep, value = item.partition("=")
        section, dot, name = key.strip().partition(".")
        if not sep or not dot:
            raise ConfigError(f"override {item!r} must look like section.key=value (e.g. turn.preset=fast)")
        config = apply(config, {section: {name: parse_scalar(value.strip())}})
    return config


def parse_scalar(text: str) -> Any:
    """A command-line value as TOML reads it (numbers, booleans), else the bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare string


def to_toml(config: Config, *, effective: bool = True) -> str:
    """Render the configuration (with each stage's defaults when `effective`) as TOML."""
    lines: list[str] = []
    for kind in STAGES:
        stage = config.stage(kind)
        params = stage_defaults(kind, stage) if effective else stage.params
        lines.append(f"[{kind}]")
        lines.append(f"name = {render_value(stage.name)}")
        lines += [f"{k} = {render_value(v)}" for k, v in params.items() if v is not None]
        lines.append("")
    for section in POLICIES:
        lines.append(f"[{section}]")
        policy = getattr(config, section)
        lines += [f"{k} = {render_value(v)}" for k, v in asdict(policy).items()]
        lines.append("")
    return "\n".join(lines)


def render_value(value: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    if isinstance(value, Path):
        value = str(value)
    if is_dataclass(value):
        value = str(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'
