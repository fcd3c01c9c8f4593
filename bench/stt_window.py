"""Does an encoder window sized to the audio cost accuracy, and what does it save? (`stt.window`)

Whisper pads every pass to 30 s; `stt.window = "sized"` encodes the audio plus a margin (at least
a floor) instead, and redoes on the full window a pass that looks wrong (pipeline/stages/stt_window.py).
For each clip of the labelled end-of-turn set (Piper and espeak-ng voices at three speeds, noise,
jfk.wav cut at its pauses; `bench/eot_set.py`), up to VAD speech-stop as the final pass sees it,
the final pass runs on the full window and on sized windows at each margin and floor. Reported per
model: word error rate against the words the clip says, per source and overall; the median and
p90 time of a pass (features, encode and decode, and the full-window redo where one was needed);
how many sized passes were redone, and why. Then the partial passes of a few of the clips (every
500 ms of audio, as the streaming transcriber runs them): how many were redone, how many say the
same words as the full window's pass, and their median and mean time.

With `--phone`, every clip is also passed through the phone band a caller crosses (8 kHz G.711
mu-law and back, the telephony transport's filters: `pipeline.testing.sounds.phone_band`) and
each window gets a second row, "phone band", beside its wideband one (the same clips, the same
words to find).

    python -m bench.stt_window [--clips N] [--model tiny.en --model base]
        [--margins 200,1000,2000] [--floors 1000,3000,10000] [--offset K] [--phone]
        [--out bench/results/DATE-stt-window.md [--append]]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.stages.stt_window import FRAMES_PER_S, Window, closes_sentence
from pipeline.stt import WhisperSTT, same_words
from pipeline.stt import word_errors as wer
from pipeline.testing.sounds import phone_band

from .eot_set import build
from .machine import describe_machine, machine_line

MODELS = {"tiny.en": "stt/whisper-tiny.en", "base": "stt/whisper-base"}  # under the models directory
HOP = INPUT_RATE_HZ // FRAMES_PER_S


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def sample(clips: list, n: int, offset: int = 0) -> list:
    """About `n` of the synthetic clips, evenly spread from the `offset`-th (another offset, another
    sample), and every jfk.wav cut (the one real voice)."""
    if not n:
        return clips
    synthetic = [c for c in clips if c.source != "jfk"]
    step = max(1, len(synthetic) // n)
    return synthetic[offset % step::step] + [c for c in clips if c.source == "jfk"]


def measure(stt: WhisperSTT, clips: list, windows: dict[str, Window | None], *,
            warm: bool = True, final: bool = True) -> dict:
    """Every clip through every window: texts, seconds, and the reasons sized passes were redone.
    A sized window of the same frame count as one already run gives the same pass: it is reused.
    `final=False`: as partial passes (a partial's words need not close a sentence)."""
    out: dict = {name: {"texts": [], "seconds": [], "redone": Counter(), "doubts": []} for name in windows}
    rates: list[float] = []
    if warm:
        stt.transcribe(clips[0].audio[:INPUT_RATE_HZ], final=True)  # load and warm the kernels
    for clip in clips:
        speech = clip.audio[:int((clip.speech_end_s + 0.16) * INPUT_RATE_HZ)]  # to VAD speech-stop
        frames_in = len(speech) // HOP
        done: dict[int | None, tuple[str, float, str | None]] = {}
        for name, window in windows.items():
            key = None if window is None else window.frames(frames_in)
            if key not in done:
                stt.window = window
                t0 = time.perf_counter()
                text = stt.transcribe(speech, final=final)
                spent = time.perf_counter() - t0
                kept = stt.last_pass
                doubt = None if kept is None else kept.doubt
                if kept is not None:
                    assert kept.frames == key, (kept.frames, key)
                    if doubt is None:
                        rates.append(kept.tokens * FRAMES_PER_S / frames_in)
                done[key] = (text, spent, doubt)
            text, spent, doubt = done[key]
            out[name]["texts"].append(text)
            out[name]["seconds"].append(spent)
            out[name]["doubts"].append(doubt)
            if doubt is not None:
                out[name]["redone"][doubt] += 1
    out["_max_tokens_per_s"] = max(rates, default=0.0)
    return out


def measure_partials(stt: WhisperSTT, clips: list, windows: dict[str, Window | None],
                     interval_ms: int = 500, min_ms: int = 300) -> dict:
    """The partial passes the streaming transcriber runs (every `interval_ms` of a clip's audio
    up to speech-stop, from `min_ms`), on every window: their audio ends inside the speech."""
    step, first = interval_ms * INPUT_RATE_HZ // 1000, min_ms * INPUT_RATE_HZ // 1000
    out: dict = {name: {"texts": [], "seconds": [], "redone": Counter(), "doubts": []} for name in windows}
    out["_said"] = []  # per pass: what the clip says, its source and condition
    for clip in clips:
        speech = clip.audio[:int((clip.speech_end_s + 0.16) * INPUT_RATE_HZ)]
        for end in range(max(step, first), len(speech) + 1, step):
            got = measure(stt, [_Cut(speech[:end])], windows, warm=False, final=False)
            out["_said"].append((clip.text, clip.source, "clean" if clip.condition == "clean" else "noise"))
            for name in windows:
                for key in ("texts", "seconds"):
                    out[name][key] += got[name][key]
                out[name]["redone"] += got[name]["redone"]
    return out


PHONE = ", phone band"


class _Phoned:
    """A clip as a caller on the phone says it: its audio through the phone band, the rest as is."""

    def __init__(self, clip) -> None:
        self.clip, self.audio = clip, phone_band(clip.audio)

    def __getattr__(self, name: str):
        return getattr(self.clip, name)


def with_phone(clips: list, results: dict, windows: dict[str, Window | None], stt: WhisperSTT,
               **kwargs) -> tuple[dict, dict[str, Window | None]]:
    """`results` and `windows` with a phone-band row after each window's wideband one."""
    phoned = measure(stt, [_Phoned(c) for c in clips], windows, **kwargs)
    rows: dict[str, Window | None] = {}
    for name, window in windows.items():
        rows[name] = window
        rows[name + PHONE] = window
        results[name + PHONE] = phoned[name]
    return results, rows


class _Cut:
    """A clip's audio cut short, as `measure` reads a clip."""

    def __init__(self, audio: np.ndarray) -> None:
        self.audio, self.speech_end_s = audio, len(audio) / INPUT_RATE_HZ  # all of it is read


def partial_table(results: dict, windows: dict[str, Window | None]) -> list[str]:
    """Per window: how many passes, redone, the same words as the full window's; and the words
    wrong against the start of what was said (`word_errors(..., best_start=True)`), per source, per condition and in all."""
    full = results["full (30 s)"]["texts"]
    said = results["_said"]
    groups = [*sorted({s for _, s, _ in said}), *sorted({c for _, _, c in said})]
    lines = ["| window | passes | redone on the full window | same words as the full window's | "
             + " | ".join(f"wrong {g}" for g in groups) + " | wrong, all | median ms | mean ms |",
             "|---" * (7 + len(groups)) + "|"]
    for name in windows:
        r = results[name]
        ms = np.array(r["seconds"]) * 1000
        same = sum(same_words(a, b) for a, b in zip(full, r["texts"], strict=True))
        redone = sum(r["redone"].values())
        reasons = ", ".join(f"{k} {v}" for k, v in r["redone"].most_common())
        wrong: dict[str, list[int]] = {g: [0, 0] for g in [*groups, "all"]}
        for (text, source, condition), heard in zip(said, r["texts"], strict=True):
            edits, words = wer(text, heard, best_start=True)
            for g in (source, condition, "all"):
                wrong[g][0] += edits
                wrong[g][1] += words
        cells = " | ".join(f"{e}/{w} ({e / w:.3f})" for e, w in wrong.values())
        lines.append(f"| {name} | {len(ms)} | {redone}" + (f" ({reasons})" if reasons else "") +
                     f" | {same} | {cells} | {np.median(ms):.0f} | {ms.mean():.0f} |")
    return lines


def table(clips: list, results: dict, windows: dict[str, Window | None]) -> list[str]:
    sources = sorted({c.source for c in clips})
    lines = ["| window | " + " | ".join(f"WER {s}" for s in sources) + " | WER all | median ms | "
             "p90 ms | redone on the full window |",
             "|---" * (len(sources) + 5) + "|"]
    for name in windows:
        r = results[name]
        per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for clip, text in zip(clips, r["texts"], strict=True):
            e, n = wer(clip.text, text)
            for key in (clip.source, "all"):
                per[key][0] += e
                per[key][1] += n
        cells = [f"{per[s][0] / max(1, per[s][1]):.3f} ({per[s][0]}/{per[s][1]})" for s in [*sources, "all"]]
        ms = np.array(r["seconds"]) * 1000
        redone = ", ".join(f"{k} {v}" for k, v in r["redone"].most_common()) or "-"
        if windows[name] is not None:
            redone = f"{sum(r['redone'].values())} ({redone})" if r["redone"] else "0"
        lines.append(f"| {name} | " + " | ".join(cells) +
                     f" | {np.median(ms):.0f} | {np.percentile(ms, 90):.0f} | {redone} |")
    return lines


def quick_agreement(results: dict, windows: dict[str, Window | None]) -> list[str]:
    """Per sized window: on how many clips its pass, not redone, says the full window's words
    (case and punctuation aside): the share of turns whose speculation from the quick pass at
    speech-stop (`WhisperSTT.transcribe_quick`, no redo) the full-window final would adopt."""
    full = results["full (30 s)"]["texts"]
    lines = ["| sized window | quick pass kept | same words as the full window | adopted share |",
             "|---|---|---|---|"]
    for name, window in windows.items():
        if window is None:
            continue
        r = results[name]
        kept = [d is None for d in r["doubts"]]
        same = sum(k and same_words(a, b) for k, a, b in zip(kept, full, r["texts"], strict=True))
        lines.append(f"| {name} | {sum(kept)} of {len(kept)} | {same} | {same / max(1, len(kept)):.2f} |")
    return lines


def parity(clips: list, results: dict, windows: dict[str, Window | None]) -> list[str]:
    """What word error rate does not see, per sized window against the full window's final: on
    how many clips the text closes its sentence as the full window's does (or does not), writes
    the same digits, and gets the same verdict from the completeness heuristic
    (`pipeline.turns.HeuristicCompleteness`, >= 0.5: "looks complete"), which reads both."""
    from pipeline.turns import HeuristicCompleteness

    heuristic = HeuristicCompleteness()

    def digits(text: str) -> str:
        return "".join(ch for ch in text if ch.isdigit())

    def looks_complete(text: str) -> bool:
        return heuristic.probability(text, None) >= 0.5

    full = results["full (30 s)"]["texts"]
    with_digits = [i for i, (c, t) in enumerate(zip(clips, full, strict=True)) if digits(t) or digits(c.text)]
    lines = ["| sized window | closing mark as full | digits as full (clips with digits) | "
             "heuristic verdict as full | finished turns looking complete (full: "
             f"{sum(looks_complete(t) for c, t in zip(clips, full, strict=True) if c.finished)}) | "
             "pauses looking complete (full: "
             f"{sum(looks_complete(t) for c, t in zip(clips, full, strict=True) if not c.finished)}) |",
             "|---|---|---|---|---|---|"]
    for name, window in windows.items():
        if window is None:
            continue
        texts = results[name]["texts"]
        marks = sum(closes_sentence(a) == closes_sentence(b) for a, b in zip(full, texts, strict=True))
        same_digits = sum(digits(full[i]) == digits(texts[i]) for i in with_digits)
        verdicts = sum(looks_complete(a) == looks_complete(b) for a, b in zip(full, texts, strict=True))
        fin = sum(looks_complete(t) for c, t in zip(clips, texts, strict=True) if c.finished)
        unf = sum(looks_complete(t) for c, t in zip(clips, texts, strict=True) if not c.finished)
        lines.append(f"| {name} | {marks} of {len(texts)} | {same_digits} of {len(with_digits)} | "
                     f"{verdicts} of {len(texts)} | {fin} | {unf} |")
    return lines


def differing(clips: list, results: dict, a: str, b: str) -> list[str]:
    return [f"- `{c.name}` said \"{c.text}\": {a} \"{x}\", {b} \"{y}\""
            for c, x, y in zip(clips, results[a]["texts"], results[b]["texts"], strict=True) if x != y]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stt_window", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", type=int, default=0, help="about N synthetic clips, evenly "
                        "spread, plus jfk.wav's cuts (default: all)")
    parser.add_argument("--offset", type=int, default=0, help="start the sample at the k-th clip "
                        "(default 0)")
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="repeatable "
                        "(default: tiny.en and base)")
    parser.add_argument("--margins", type=_ints, default=[200, 1000, 2000], help="ms past the audio")
    parser.add_argument("--floors", type=_ints, default=[1000, 3000, 10000], help="ms at the least")
    parser.add_argument("--compare", default="sized +2000 ms, floor 1000 ms", help="the sized window "
                        "whose differing transcripts are listed")
    parser.add_argument("--partial-clips", type=int, default=12, help="the partial passes of "
                        "about N of the sampled synthetic clips and every jfk.wav cut, every 500 ms "
                        "of audio (default 12; 0: none)")
    parser.add_argument("--no-finals", action="store_true", help="the partial passes only")
    parser.add_argument("--phone", action="store_true", help="each final pass also on the clip "
                        "through the phone band (8 kHz mu-law round trip), in the row beside it")
    parser.add_argument("--out", type=Path, default=None, help="markdown results file")
    parser.add_argument("--append", action="store_true", help="add to --out instead of replacing it")
    args = parser.parse_args(argv)

    clips = sample(build(), args.clips, args.offset)
    windows: dict[str, Window | None] = {"full (30 s)": None}
    for floor in args.floors:
        for margin in args.margins:
            windows[f"sized +{margin} ms, floor {floor} ms"] = Window(margin_ms=margin, floor_ms=floor)
    t0 = time.perf_counter()
    load_before = os.getloadavg()
    sections = []
    for model in args.model or ["tiny.en", "base"]:
        stt = WhisperSTT(model_path=MODELS[model], window="sized")
        bound = stt.window
        assert bound is not None
        started = time.perf_counter()
        sections += [f"## whisper {model} ({stt.threads} threads)", ""]
        if not args.no_finals:
            results = measure(stt, clips, windows)
            rows = windows
            if args.phone:
                results, rows = with_phone(clips, results, windows, stt, warm=False)
            sections += [f"Final passes ({time.perf_counter() - started:.0f} s):", "",
                         *table(clips, results, rows), "",
                         f"Highest tokens per second of audio in a kept sized pass: "
                         f"{results['_max_tokens_per_s']:.1f} (the bound allows "
                         f"{bound.tokens_per_s:g} a second plus {bound.tokens_extra}).", "",
                         "What word error rate does not see (closing marks, digits, the "
                         "completeness heuristic's verdict), against the full window's final:", "",
                         *parity(clips, results, windows), "",
                         "The quick pass at speech-stop (no redo) against the full-window final:",
                         "", *quick_agreement(results, windows), ""]
            if args.compare in results:
                diff = differing(clips, results, "full (30 s)", args.compare)
                sections += [f"Transcripts that differ between the full window and {args.compare}: "
                             f"{len(diff)}", "", *diff, ""]
            if args.phone:
                diff = differing(clips, results, "full (30 s)", "full (30 s)" + PHONE)
                sections += [f"Transcripts the full window's pass gives differently in the phone "
                             f"band: {len(diff)}", "", *diff, ""]
        if args.partial_clips:
            some = sample(clips, args.partial_clips)  # and every jfk.wav cut
            started = time.perf_counter()
            partials = measure_partials(stt, some, windows)
            sections += [f"Partial passes of {len(some)} of those clips, every 500 ms of audio from "
                         f"the first 500 ms to speech-stop ({time.perf_counter() - started:.0f} s). "
                         "Words wrong: edits against the start of what the clip says that the "
                         "pass matches best, over that start's words:",
                         "", *partial_table(partials, windows), ""]
            if args.phone:
                started = time.perf_counter()
                partials = measure_partials(stt, [_Phoned(c) for c in some], windows)
                sections += [f"The same partial passes through the phone band "
                             f"({time.perf_counter() - started:.0f} s):", "",
                             *partial_table(partials, windows), ""]
    load = " ".join(f"{x:.2f}" for x in load_before) + " before, " + \
        " ".join(f"{x:.2f}" for x in os.getloadavg()) + " after"
    by_source = Counter(c.source for c in clips)
    lines = [f"# Whisper's encoder window: full vs sized to the audio ({time.strftime('%Y-%m-%d')})",
             "", f"Machine: {machine_line(describe_machine())}; load average (1, 5, 15 min) {load}.",
             "", f"Command: `python -m bench.stt_window {shlex.join(sys.argv[1:] if argv is None else argv)}` "
             f"({time.perf_counter() - t0:.0f} s in all).", "",
             f"{len(clips)} clips of the end-of-turn set ({', '.join(f'{k} {v}' for k, v in sorted(by_source.items()))}), "
             "each up to VAD speech-stop (speech end + 160 ms), one final pass per window, int8, "
             "greedy. A pass's time is one measurement (features, encode, decode, and the "
             "full-window redo when the sized pass was doubted); WER is word edits over reference "
             "words, case and punctuation aside." + (
                 " A \"phone band\" row is the same clips through `phone_band` (16 kHz down to "
                 "8 kHz, G.711 mu-law, up again through the telephony transport's filters)."
                 if args.phone else ""), "", *sections]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        before = args.out.read_text() + "\n" if args.append and args.out.is_file() else ""
        args.out.write_text(before + report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
