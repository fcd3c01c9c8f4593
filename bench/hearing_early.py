"""Does a final pass that reads less of the silence hear the words of the call? The decision table
for a final pass begun before speech-stop (not a setting: `turn.early_pass_ms` begins only a
speculation, and the final pass still runs at speech-stop).

At speech-stop (five 32 ms windows below the threshold after Silero's end) the final pass reads
the turn to Silero's end and what it has after it (~160 ms; at most `SPEECH_PAD_MS`). A final begun after fewer windows
reads the same speech with less of the silence after it, and the reply can start that much
sooner. `bench.early_final` counted words wrong without the recogniser's context; this runs the
hearing sets (bench/hearing_sets.py: dev, the held-out sentences and voices, the refund sentence
in the caller's voice, jfk.wav's phrases, in every condition) the way a session hears them:
tiny.en, sized-final, with the clip's own agent as context (the default) and without it. Each
clip gets a second of its condition after the speech, so the real Silero VAD and `TurnDetector`
reach speech-stop (the held-out and jfk.wav clips are made again with that tail, so their noise
is not `bench.hearing`'s own: compare the rows of one run, not across the two); the pass reads from the turn's onset (less the prefix padding) to each wait's
moment, at most `SPEECH_PAD_MS` past Silero's end, as `StreamingTranscriber` does. Reported per
set and condition: word error rate and key-word error (bench/hearing_keys.py) at each wait, the
groups where a wait is worse than speech-stop, and the clips whose words change.

    nice -n 19 python -m bench.hearing_early [--dev N] [--held-out N] [--waits 64,96] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.config import TurnPolicy
from pipeline.stages.vad import SileroVAD
from pipeline.stt import SPEECH_PAD_MS, WhisperSTT, same_words
from pipeline.stt import word_errors as wer
from pipeline.testing import jfk

from .conditions import as_heard
from .early_final import moments
from .eot_set import JFK_WORDS, build, jfk_phrases
from .hearing import group, prompt, sample_held_out
from .hearing_keys import key_errors
from .hearing_sets import (
    AGENTS,
    CONDITIONS,
    DEV_KEYS,
    HELD_OUT,
    LEAD_S,
    PHRASES,
    HearingClip,
    _cached,
    _speech,
)
from .hearing_sets import plain as plain_text
from .machine import describe_machine, machine_line
from .summary import print_report

TAIL_S = 1.0  # after the speech: enough for speech-stop in every condition
CONTEXTS = ("own", "off")


def dev_clips(n: int) -> list[HearingClip]:
    """The end-of-turn set's whole sentences (as bench.hearing's dev set) with a second after the
    speech; every k-th of the 180 when `n` is set."""
    wholes = {" ".join(p.strip() for p in marked.split("|")): i for i, (_, marked) in enumerate(PHRASES)}
    out = []
    for clip in build():
        if not clip.finished or clip.source == "jfk":
            continue
        domain, marked = DEV_KEYS[wholes[clip.text]]
        out.append(HearingClip("dev", marked, domain, AGENTS[domain][2], clip.voice, clip.condition, clip.audio))
    return out if not n or n >= len(out) else out[::max(1, len(out) // n)][:n]


def with_tail(clip: HearingClip) -> HearingClip:
    """A held-out or jfk.wav clip made again with `TAIL_S` of its condition after the speech."""
    if clip.voice == "jfk":
        k = list(JFK_WORDS).index(clip.text)
        x, ends = jfk(), jfk_phrases()
        a, b = ([0.0, *ends][k], ends[k])
        audio = as_heard(x[int(a * INPUT_RATE_HZ):int(b * INPUT_RATE_HZ)], seed=90 + k, tail_s=TAIL_S,
                         **CONDITIONS[clip.condition])
    else:
        s = [plain_text(m) for _, _, m in HELD_OUT].index(clip.text)
        seed = 7000 + 97 * s + sum(map(ord, clip.voice))
        speech = _cached(f"{clip.voice}|{clip.text}", lambda: _speech(clip.text, clip.voice))
        audio = as_heard(speech, seed=seed, lead_s=LEAD_S, tail_s=TAIL_S, **CONDITIONS[clip.condition])
    return HearingClip(clip.set, clip.marked, clip.domain, clip.asked, clip.voice, clip.condition, audio)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hearing_early", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=int, default=0, help="dev clips, every k-th (default all 180)")
    parser.add_argument("--held-out", type=int, default=90, help="held-out synthetic clips (default 90), "
                        "besides the refund clip in the caller's voice and jfk.wav's phrases")
    parser.add_argument("--waits", default="64,96", help="ms of trailing windows before speech-stop")
    parser.add_argument("--out", type=Path, help="markdown results file")
    args = parser.parse_args(argv)
    policy = TurnPolicy()
    stop = policy.speech_stop_ms
    waits = sorted({int(w) for w in args.waits.split(",") if w.strip()} | {stop})
    t0, load_before = time.perf_counter(), os.getloadavg()
    clips = dev_clips(args.dev) + [with_tail(c) for c in sample_held_out(args.held_out)]
    vad, stt = SileroVAD(), WhisperSTT(window="sized-final")
    stt.transcribe(clips[0].audio[:INPUT_RATE_HZ], final=True)  # load and warm
    texts: dict[tuple[str, int], list[str]] = defaultdict(list)
    kept: list[HearingClip] = []
    for i, clip in enumerate(clips):
        found = moments(clip.audio, vad, policy, waits)
        if found is None:
            print(f"{i} no speech-stop: {clip.voice} {clip.condition} {clip.text!r}", file=sys.stderr)
            continue
        start_ms, vad_end_ms, at = found
        kept.append(clip)
        for wait in waits:
            end_ms = min(at.get(wait, at[stop]), vad_end_ms + SPEECH_PAD_MS)
            turn = clip.audio[int(start_ms * 16):int(end_ms * 16)]
            for which in CONTEXTS:
                texts[(which, wait)].append(stt.transcribe(turn, final=True, prompt=prompt(clip, which)))
        print(f"{i + 1}/{len(clips)}", file=sys.stderr, flush=True)
    # per group: {(context, wait): [word errors, words, key errors, key words]}
    cells: dict[str, dict[tuple[str, int], list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    for k, clip in enumerate(kept):
        for key, got in texts.items():
            e, n = wer(clip.text, got[k])
            ke, kn = key_errors(clip.marked, got[k])
            for g in (group(clip), f"{'jfk' if clip.voice == 'jfk' else clip.set}, all"):
                c = cells[g][key]
                c[0] += e
                c[1] += n
                c[2] += ke
                c[3] += kn
    groups = sorted(cells, key=lambda g: (["dev", "held-out", "jfk"].index(g.split(",")[0]), g.endswith("all"), g))
    keys = [(which, w) for which in CONTEXTS for w in waits]
    load = " ".join(f"{x:.2f}" for x in load_before) + " before, " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + " after"
    lines = [f"# The final pass before speech-stop: the hearing sets ({time.strftime('%Y-%m-%d')})", "",
             f"Command: `nice -n 19 python -m bench.hearing_early {shlex.join(sys.argv[1:] if argv is None else argv)}` "
             f"({time.perf_counter() - t0:.0f} s).", "",
             f"Machine: {machine_line(describe_machine())}; load average (1, 5, 15 min) {load}.", "",
             f"tiny.en, sized-final, as a session runs it; {len(kept)} of {len(clips)} clips reached speech-stop. "
             f"Waits in ms of trailing windows; {stop} is speech-stop. Context own: the clip's agent "
             "(the default); off: none.", ""]
    for title, a, b in (("Word error rate (word edits / reference words)", 0, 1),
                        ("Key-word error (marked words missed / marked words)", 2, 3)):
        lines += [f"### {title}", "", "| context, wait | " + " | ".join(groups) + " |", "|---" * (len(groups) + 1) + "|"]
        for key in keys:
            lines.append(f"| {key[0]}, {key[1]} | " + " | ".join(
                f"{cells[g][key][a] / max(1, cells[g][key][b]):.3f} ({cells[g][key][a]})" for g in groups) + " |")
        lines.append("")
    lines += ["## Groups where a wait is worse than speech-stop (the default changes only if none is)", ""]
    for which in CONTEXTS:
        for w in waits:
            if w == stop:
                continue
            bad = [f"{g}: {name} {cells[g][(which, stop)][x]} -> {cells[g][(which, w)][x]} of {cells[g][(which, stop)][n]}"
                   for g in groups for name, x, n in (("WER", 0, 1), ("key-word error", 2, 3))
                   if cells[g][(which, w)][x] > cells[g][(which, stop)][x]]
            better = sum(cells[g][(which, w)][x] < cells[g][(which, stop)][x] for g in groups for x in (0, 2))
            same = sum(same_words(a, b) for a, b in zip(texts[(which, w)], texts[(which, stop)], strict=True))
            lines += [f"- context {which}, {w} ms: worse in {len(bad)} groups, better in {better} "
                      f"(counting WER and key words apart); the same words as speech-stop on {same} of {len(kept)}",
                      *[f"  - {x}" for x in bad]]
    lines += ["", "## Clips whose words change (context own)", ""]
    for w in waits:
        if w != stop:
            lines += [f"- {w} ms, {c.voice} {c.condition}, said \"{c.text}\": \"{a}\", at speech-stop \"{b}\""
                      for c, a, b in zip(kept, texts[("own", w)], texts[("own", stop)], strict=True)
                      if not same_words(a, b)]
    lines += ["", "## The refund sentence in the caller's voice (context own)", ""]
    lines += [f"- {c.condition}, {w} ms: \"{texts[('own', w)][k]}\"" for k, c in enumerate(kept)
              if c.voice == "caller" for w in waits]
    report = "\n".join(lines) + "\n"
    print_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
