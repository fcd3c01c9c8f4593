"""Which recogniser, window and context hear the words of the call? The decision table for the
hearing defaults (`stt` model and `window`, `turn.context`).

For each clip of the dev and held-out sets (bench/hearing_sets.py), the final pass runs as a
session runs it (the speech and 250 ms after it, int8, greedy) on every model (whisper tiny.en,
base), window (full 30 s, sized-final) and context: off; on with the clip's own agent (its
instructions and tools as said, and the agent's question the caller answers:
`CallContext.prompt`, 96 tokens); on with a wrong domain's agent. Reported per set and condition:
word error rate, key-word error (the marked words missed: bench/hearing_keys.py), and the median
time of a final pass. Then the hotword check: silence, noise and backchannels with each context
on must produce none of the context's words.

The held-out sentences were written before this benchmark was first run and are not changed
after seeing results; they are reported last.

    nice -n 19 python -m bench.hearing [--dev N] [--held-out N] [--model tiny.en --model base]
        [--out bench/results/DATE-hearing.md]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from pipeline.stages.stt_window import Window
from pipeline.stt import WhisperSTT
from pipeline.stt import word_errors as wer
from pipeline.testing.sounds import at_level, noise, silence

from .clips import CACHE
from .hearing_keys import key_errors
from .hearing_sets import (
    AGENTS,
    HELD_OUT,
    WRONG,
    HearingClip,
    context,
    dev_set,
    held_out_clip,
    held_out_recipes,
    jfk_set,
)
from .hearing_sets import _speech as speech_of
from .machine import describe_machine, machine_line
from .summary import print_report

MODELS = {"tiny.en": "stt/whisper-tiny.en", "base": "stt/whisper-base"}  # under the models directory
WINDOWS = {"full": None, "sized-final": Window(margin_ms=2000, floor_ms=1000)}  # the stage's defaults
CONTEXTS = ("off", "own", "wrong")
RUNS = CACHE / "hearing-runs"  # one line per pass, so a run can be stopped and resumed
# the code a pass's text depends on: the run cache is kept per version of it, so a changed guard
# or window is measured afresh and an unchanged one resumes
RECOGNISER = [Path(__file__).resolve().parents[1] / "pipeline" / "stages" / f
              for f in ("whisper.py", "stt_context.py", "stt_window.py", "unvoiced.py")]


def recogniser_version() -> str:
    return hashlib.sha256(b"".join(f.read_bytes() for f in RECOGNISER)).hexdigest()[:10]


def guarded(stats: dict, before: dict) -> str | None:
    """Why the guard redid the last pass without its prompt (`prompt_failure`), or None."""
    return next((k for k, n in stats.items() if k.startswith("prompt ") and n > before.get(k, 0)), None)


def prompt(clip: HearingClip, which: str) -> str | None:
    if which == "off":
        return None
    domain = clip.domain if which == "own" else WRONG[clip.domain]
    asked = clip.asked if which == "own" else AGENTS[domain][2]
    return context(domain).prompt([asked], max_tokens=96)


def sample_dev(n: int) -> list[HearingClip]:
    """Every k-th of the dev set's 180 clips (its voices and noise rotate with the sentence)."""
    clips = dev_set()
    return clips if not n or n >= len(clips) else clips[::max(1, len(clips) // n)][:n]


def sample_held_out(n: int) -> list[HearingClip]:
    """About `n` synthetic clips: sentence s in voice (s + k) and condition (s + 3k) for k = 0,
    1, ..., so every sentence, voice and condition is met about equally; then the refund
    sentence in the caller's voice and jfk.wav's phrases, in every condition."""
    recipes = held_out_recipes()
    voices = sorted({v for _, v, _ in recipes if v != "caller"}, key=[v for _, v, _ in recipes].index)
    conditions = list(dict.fromkeys(c for _, _, c in recipes))
    picked: list[tuple[int, str, str]] = []
    k = 0
    while len(picked) < n:
        for s in range(len(HELD_OUT)):
            if len(picked) < n:
                picked.append((s, voices[(s + k) % len(voices)], conditions[(s + 3 * k) % len(conditions)]))
        k += 1
    picked += [(0, "caller", c) for c in conditions]
    return [held_out_clip(*r) for r in picked] + jfk_set()


def clip_id(clip: HearingClip) -> str:
    return f"{clip.set}|{clip.text}|{clip.voice}|{clip.condition}"


def run(model: str, clips: list[HearingClip]) -> dict[tuple[str, str, str], dict]:
    """Every clip through every window and context on `model`: {(clip, window, context): pass}."""
    path = RUNS / f"{model}-{recogniser_version()}.jsonl"
    done: dict[tuple[str, str, str], dict] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done[(r["clip"], r["window"], r["context"])] = r
    stt = WhisperSTT(model_path=MODELS[model], window="sized-final")
    stt.transcribe(clips[0].audio, final=True)  # load and warm the kernels
    RUNS.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        for clip in clips:
            for window_name, window in WINDOWS.items():
                for which in CONTEXTS:
                    key = (clip_id(clip), window_name, which)
                    if key in done:
                        continue
                    stt.window = window
                    before = dict(stt.window_stats)
                    t0 = time.perf_counter()
                    text = stt.transcribe(clip.audio, final=True, prompt=prompt(clip, which))
                    spent = time.perf_counter() - t0
                    kept = stt.last_pass
                    done[key] = r = {"clip": key[0], "window": window_name, "context": which, "text": text,
                                     "seconds": round(spent, 4),
                                     "redone": kept is not None and kept.doubt is not None,
                                     "guard": guarded(stt.window_stats, before)}
                    out.write(json.dumps(r) + "\n")
                    out.flush()
    return done


def group(clip: HearingClip) -> str:
    if clip.voice == "jfk":
        return f"jfk, {clip.condition}"
    return f"{clip.set}, {clip.condition}"


def scores(clips: list[HearingClip], passes: dict, model: str, window: str, which: str) -> dict[str, dict]:
    """Per group (set and condition) and overall per set: word and key-word errors, seconds."""
    out: dict[str, dict] = defaultdict(lambda: {"e": 0, "n": 0, "ke": 0, "kn": 0, "s": [], "clips": 0})
    for clip in clips:
        r = passes[model][(clip_id(clip), window, which)]
        e, n = wer(clip.text, r["text"])
        ke, kn = key_errors(clip.marked, r["text"])
        for g in (group(clip), f"{'jfk' if clip.voice == 'jfk' else clip.set}, all"):
            cell = out[g]
            cell["e"] += e
            cell["n"] += n
            cell["ke"] += ke
            cell["kn"] += kn
            cell["s"].append(r["seconds"])
            cell["clips"] += 1
    return out


def configs(models: list[str]) -> list[tuple[str, str, str]]:
    return [(m, w, c) for m in models for w in WINDOWS for c in CONTEXTS]


def tables(clips: list[HearingClip], passes: dict, models: list[str]) -> tuple[list[str], dict]:
    every = {cfg: scores(clips, passes, *cfg) for cfg in configs(models)}
    groups = sorted({g for s in every.values() for g in s},
                    key=lambda g: (["dev", "held-out", "jfk"].index(g.split(",")[0]), g.endswith("all"), g))
    lines = []
    for title, metric in (("Word error rate (word edits / reference words)", lambda c: c["e"] / max(1, c["n"])),
                          ("Key-word error (marked words missed / marked words)",
                           lambda c: c["ke"] / max(1, c["kn"]))):
        lines += [f"### {title}", "", "| model, window, context | " + " | ".join(groups) + " |",
                  "|---" * (len(groups) + 1) + "|"]
        for cfg, s in every.items():
            lines.append(f"| {', '.join(cfg)} | " + " | ".join(f"{metric(s[g]):.3f}" for g in groups) + " |")
        lines.append("")
    lines += ["### Time of a final pass (median / p90 ms, every set together)", "",
              "| model, window, context | median ms | p90 ms |", "|---|---|---|"]
    for cfg in configs(models):
        ms = np.array([passes[cfg[0]][(clip_id(c), cfg[1], cfg[2])]["seconds"] for c in clips]) * 1000
        lines.append(f"| {', '.join(cfg)} | {np.median(ms):.0f} | {np.percentile(ms, 90):.0f} |")
    sizes = ", ".join(f"{g} {every[configs(models)[0]][g]['clips']}" for g in groups)
    return [f"Clips per group: {sizes}.", "", *lines, ""], every


def worse(every: dict, base: tuple, other: tuple) -> list[str]:
    """The groups where `other` has a higher WER or key-word error than `base`."""
    out = []
    for g, a in every[base].items():
        b = every[other][g]
        for name, x, y, n in (("WER", a["e"], b["e"], a["n"]), ("key-word error", a["ke"], b["ke"], a["kn"])):
            if y > x:
                out.append(f"{g}: {name} {x / max(1, n):.3f} -> {y / max(1, n):.3f} ({x} -> {y} of {n})")
    return out


def why_redone(stats: dict) -> str:
    got = {k.removeprefix("prompt "): n for k, n in stats.items() if k.startswith("prompt ") and n}
    return ", ".join(f"{n} {k}" for k, n in sorted(got.items())) or "0"


def guard_lines(clips: list[HearingClip], passes: dict, models: list[str]) -> list[str]:
    """Per model, window and context: the passes the guard redid without the prompt, and why."""
    lines = ["| model, window, context | passes | redone without the prompt (why; \"words kept\": "
             "redone, the prompted text kept) |", "|---|---|---|"]
    for model, window, which in configs(models):
        if which == "off":
            continue
        rs = [passes[model][(clip_id(clip), window, which)] for clip in clips]
        stats: dict[str, int] = defaultdict(int)
        for r in rs:
            if r.get("guard"):
                stats[r["guard"]] += 1
        lines.append(f"| {model}, {window}, {which} | {len(rs)} | {why_redone(stats)} |")
    return lines


def hotword_check(models: list[str]) -> list[str]:
    """Silence, noise and backchannels, with each agent's context on: no word of its vocabulary
    may be heard (and no prompt written back)."""
    lead = silence(300)
    sounds = {"silence": silence(1500), "pink noise -35 dBFS": noise("pink", 1.5, seed=5, level_dbfs=-35.0),
              "white noise -45 dBFS": noise("white", 1.5, seed=6, level_dbfs=-45.0)}
    for said in ("Mm-hmm.", "Uh-huh.", "Yeah."):
        for voice in ("caller", "en-us"):
            sounds[f"\"{said}\" ({voice})"] = np.r_[lead, at_level(speech_of(said, voice), -20.0), silence(250)]
    # words no hotword is made of ("in" of "check in", "up" of "look up order")
    stop = {"a", "an", "the", "of", "and", "to", "for", "in", "up", "id", "name", "date", "time", "day", "new"}
    lines = ["| model, window | passes | with a context word | redone without the prompt (why) | what was heard |",
             "|---|---|---|---|---|"]
    for model in models:
        stt = WhisperSTT(model_path=MODELS[model], window="sized-final")
        for window_name, window in WINDOWS.items():
            stt.window = window
            stt.window_stats.clear()
            bad, heard, total = [], set(), 0
            for domain in AGENTS:
                ctx = context(domain)
                vocabulary = {w for p in ctx.vocabulary for w in p.lower().split()} - stop
                p = ctx.prompt([AGENTS[domain][2]], max_tokens=96)
                for name, audio in sounds.items():
                    text = stt.transcribe(audio, final=True, prompt=p)
                    total += 1
                    heard.add(text[:60] or "(nothing)")
                    words = set("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())
                    if words & vocabulary:
                        bad.append(f"{domain}/{name}: \"{text[:80]}\"")
            shown = "; ".join(sorted(heard))[:400]
            lines.append(f"| {model}, {window_name} | {total} | {len(bad)}{': ' + '; '.join(bad[:5]) if bad else ''} "
                         f"| {why_redone(stt.window_stats)} | {shown} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hearing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=int, default=60, help="dev clips, every k-th (default 60 of 180; 0: all)")
    parser.add_argument("--held-out", type=int, default=90, help="held-out synthetic clips (default 90: "
                        "2 or 3 per sentence), besides the refund clip in the caller's voice and jfk.wav's phrases")
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="repeatable (default: both)")
    parser.add_argument("--out", type=Path, default=None, help="markdown results file")
    args = parser.parse_args(argv)
    models = args.model or ["tiny.en", "base"]
    t0, load_before = time.perf_counter(), os.getloadavg()
    clips = sample_dev(args.dev) + sample_held_out(args.held_out)
    passes = {m: run(m, clips) for m in models}
    table, every = tables(clips, passes, models)
    checks = hotword_check(models)
    load = " ".join(f"{x:.2f}" for x in load_before) + " at the start, " + \
        " ".join(f"{x:.2f}" for x in os.getloadavg()) + " at the end"
    decisions = []
    for model in models:
        for window in WINDOWS:
            for which in ("own", "wrong"):
                got = worse(every, (model, window, "off"), (model, window, which))
                decisions += [f"- {model}, {window}: context {which} against off: "
                              f"{'worse in ' + str(len(got)) + ' groups' if got else 'no worse in any group'}",
                              *[f"  - {x}" for x in got]]
    pairs = [(("tiny.en", "full", "off"), ("tiny.en", "sized-final", "off")),
             (("tiny.en", "full", "off"), ("base", "sized-final", "off")),
             (("tiny.en", "sized-final", "off"), ("base", "sized-final", "off")),
             (("tiny.en", "sized-final", "off"), ("tiny.en", "full", "off")),
             (("tiny.en", "sized-final", "off"), ("base", "full", "off"))]
    for a, b in pairs:
        if a[0] in models and b[0] in models:
            got = worse(every, a, b)
            decisions += [f"- {', '.join(b)} against {', '.join(a)}: "
                          f"{'worse in ' + str(len(got)) + ' groups' if got else 'no worse in any group'}",
                          *[f"  - {x}" for x in got]]
    refund = [c for c in clips if c.voice == "caller"]
    heard = [f"- {c.condition}, {', '.join(cfg)}: \"{passes[cfg[0]][(clip_id(c), cfg[1], cfg[2])]['text']}\""
             for c in refund for cfg in configs(models) if cfg[2] != "wrong"]
    redone = {m: sum(r["redone"] for r in passes[m].values() if r["window"] == "sized-final") for m in models}
    lines = [f"# Hearing the words of the call: models, windows, context ({time.strftime('%Y-%m-%d')})", "",
             f"Command: `nice -n 19 python -m bench.hearing {shlex.join(sys.argv[1:] if argv is None else argv)}` "
             f"({time.perf_counter() - t0:.0f} s in all, passes already in the run cache not redone).", "",
             f"Machine: {machine_line(describe_machine())}; load average (1, 5, 15 min) {load}. "
             "A shared, loaded machine: the times are indicative only, for comparing the rows.", "",
             "Each clip's final pass as a session runs it (the speech and 250 ms after it, int8, greedy). "
             "Context own: the clip's agent's instructions and tools as said, and the question the "
             "caller answers (`CallContext.prompt`, 96 tokens); wrong: another domain's agent and its "
             "opening question. Groups: dev (the end-of-turn set's whole sentences, its voices and "
             "noise), held-out (new sentences, every espeak-ng gmw English voice, Piper at 0.8 and "
             "1.25 with sampling noise, the refund sentence in the tests' caller voice; 5 conditions), "
             "jfk (jfk.wav's 4 phrases; 5 conditions). Sampling: `sample_dev`, `sample_held_out`.", "",
             f"Sized-final passes redone on the full window: {redone}. A prompted pass that writes the "
             "prompt back, loops or hears only the prompt's words is redone without it "
             f"(`prompt_failure`; recogniser code {recogniser_version()}):", "", *guard_lines(clips, passes, models), "",
             *table, "## Decision checks (a default changes only if neither WER nor key-word error "
             "gets worse on any group)", "", *decisions, "",
             "## The refund sentence in the caller's voice", "", *heard, "",
             "## Hotword check: silence, noise, backchannels with each agent's context on", "",
             *checks, ""]
    report = "\n".join(lines)
    print_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
