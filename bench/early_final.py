"""Does a final pass started before speech-stop hear the same words? (`turn.early_pass_ms`)

The final pass (and the speculation that answers it) starts at VAD speech-stop: five 32 ms
windows below the threshold after the last speech window, ~160 ms after Silero's end and ~260
after the voice's. Started after fewer windows, the pass reads the same speech with less of the
silence after it. For each clip of the labelled end-of-turn set (Piper and espeak-ng voices at
three speeds, noise, jfk.wav cut at its pauses; `bench/eot_set.py`), the real Silero VAD and
`TurnDetector` find the turn's onset, the VAD's end and the moment each wait is reached; the
default recogniser (tiny.en, sized final) transcribes the turn's audio as the final pass would
read it at that moment (at most `SPEECH_PAD_MS` past the VAD's end). Reported per source and
condition: words wrong against what the clip says, and on how many clips each wait writes the
same words as speech-stop (with `turn.early_pass_ms`, the share of early replies the final
adopts); with `--phone`, each clip through the phone band too. With `--pad zeros,room`, each
early pass is also padded to the length the pass at speech-stop reads, with zeros or with the
quiet audio it has after the VAD's end repeated (room tone): does an early speech-stop keep the
final's words when the pass reads as much audio as it would have?

    python -m bench.early_final [--clips N] [--waits 32,64,96] [--phone] [--pad zeros,room] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, WINDOW_MS
from pipeline.base.config import TurnPolicy
from pipeline.stages.vad import SileroVAD
from pipeline.stt import SPEECH_PAD_MS, WhisperSTT, same_words
from pipeline.stt import word_errors as wer
from pipeline.testing.sounds import phone_band
from pipeline.turns import TurnDetector, voice_end_ms

from .eot_set import build
from .machine import describe_machine, machine_line
from .stt_window import sample

VOICE = -1  # the key of the pass at speech-stop ending where the voice ended (--voice-end-db)
assert INPUT_RATE_HZ == 16_000  # 16 samples a ms below
TAIL_S = 0.5  # zeros after each clip, so the last stop is always reached


Key = int | tuple[int, str]  # a wait, or (a wait, how its pass is padded to speech-stop's length)
PADS = ("zeros", "room")


def padded(turn: np.ndarray, samples: int, *, quiet: np.ndarray, room: bool) -> np.ndarray:
    """`turn` and `samples` more: zeros, or `quiet` (the audio after the VAD's end) repeated."""
    if samples <= 0:
        return turn
    more = (np.resize(quiet, samples) if room and len(quiet) else np.zeros(samples, np.float32))
    return np.concatenate([turn, more.astype(np.float32)])


def moments(audio: np.ndarray, vad: SileroVAD, policy: TurnPolicy,
            waits: list[int]) -> tuple[float, float, dict[int, float]] | None:
    """(turn start, VAD end, {wait: moment}) in ms for the clip's last speech-stop: the first
    onset less the prefix padding, the end of the last speech window, and when each wait of
    trailing windows was reached before it (the stop itself is `policy.speech_stop_ms`)."""
    vad.reset()
    detector = TurnDetector(policy)
    n = vad.window_samples
    onset = None
    found: tuple[float, dict[int, float]] | None = None
    pending: dict[int, float] = {}
    for i in range(0, len(audio) - n + 1, n):
        end_ms = (i + n) * 1000 / INPUT_RATE_HZ
        signal = detector.on_window(vad.probability(audio[i:i + n]), end_ms)
        for wait in waits:
            if detector.in_speech and detector.trailing_ms >= wait and wait not in pending:
                pending[wait] = end_ms
        if detector.in_speech and detector.trailing_ms == 0:
            pending = {}  # the speech went on: those waits were a pause inside it
        if signal is None:
            continue
        if signal.kind == "speech_started" and onset is None:
            onset = signal.at_ms
        elif signal.kind == "speech_stopped":
            found = (signal.at_ms, {**pending, policy.speech_stop_ms: end_ms})
            pending = {}
    if onset is None or found is None:
        return None
    return max(0.0, onset - policy.prefix_padding_ms), found[0], found[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.early_final", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", type=int, default=0, help="about N synthetic clips, evenly "
                        "spread, plus jfk.wav's cuts (default: all)")
    parser.add_argument("--waits", default="32,64,96", help="ms of trailing windows (default 32,64,96)")
    parser.add_argument("--phone", action="store_true", help="each clip through the phone band too")
    parser.add_argument("--voice-end-db", type=float, default=0.0, help="also the pass at speech-stop "
                        "with the speech's end where the voice ended (turn.voice_end_db), as it reads then")
    parser.add_argument("--pad", default="", help="also each early pass padded to speech-stop's "
                        "length: zeros, room (the quiet after the VAD's end, repeated), or both")
    parser.add_argument("--out", type=Path, help="write the tables to this .md")
    args = parser.parse_args(argv)
    policy = TurnPolicy()
    waits = sorted({int(w) for w in args.waits.split(",") if w.strip()} | {policy.speech_stop_ms})
    pads = [p for p in args.pad.split(",") if p.strip()]
    if any(p not in PADS for p in pads):
        parser.error(f"--pad takes {', '.join(PADS)}")
    early = [w for w in waits if w < policy.speech_stop_ms]
    keys: list[Key] = [*waits, *([VOICE] if args.voice_end_db else []),
                       *((w, p) for p in pads for w in early)]
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    clips = sample(build(), args.clips)
    conditions = ["wideband"] + (["phone band"] if args.phone else [])
    vad, stt = SileroVAD(), WhisperSTT(window="sized-final")
    stt.transcribe(clips[0].audio[:INPUT_RATE_HZ], final=True)  # load and warm
    texts: dict[tuple[str, Key], list[str]] = defaultdict(list)
    rows: list[tuple[str, str, str]] = []  # (condition, source, said) per clip, in order
    seconds: list[float] = []
    for condition in conditions:
        for clip in clips:
            audio = clip.audio if condition == "wideband" else phone_band(clip.audio)
            audio = np.concatenate([audio, np.zeros(int(TAIL_S * INPUT_RATE_HZ), np.float32)])
            found = moments(audio, vad, policy, waits)
            if found is None:
                continue
            start_ms, vad_end_ms, at = found
            rows.append((condition, clip.source, clip.text))
            voice_end = voice_end_ms(lambda a, b, x=audio: x[int(a * 16):int(b * 16)], start_ms, vad_end_ms,
                                     args.voice_end_db)
            stop_end_ms = min(at[policy.speech_stop_ms], vad_end_ms + SPEECH_PAD_MS)
            for wait in keys:
                pad = wait[1] if isinstance(wait, tuple) else None
                moment = wait[0] if isinstance(wait, tuple) else wait
                end_ms = (min(at[policy.speech_stop_ms], voice_end + SPEECH_PAD_MS) if wait == VOICE
                          else min(at.get(moment, at[policy.speech_stop_ms]), vad_end_ms + SPEECH_PAD_MS))
                turn = audio[int(start_ms * INPUT_RATE_HZ / 1000):int(end_ms * INPUT_RATE_HZ / 1000)]
                if pad is not None:
                    turn = padded(turn, int((stop_end_ms - end_ms) * INPUT_RATE_HZ / 1000),
                                  quiet=audio[int(vad_end_ms * 16):int(end_ms * 16)], room=pad == "room")
                t0 = time.perf_counter()
                texts[(condition, wait)].append(stt.transcribe(turn, final=True))
                seconds.append(time.perf_counter() - t0)
            print(f"{len(rows)} {clip.name}", file=sys.stderr, flush=True)
    stop = policy.speech_stop_ms
    lines = [f"# A final pass before speech-stop: `turn.early_pass_ms` ({len(rows)} turns)", "",
             f"Machine: {machine_line(describe_machine())}; load average (1, 5, 15 min) before, "
             f"after: {load_before}, " + " ".join(f"{x:.2f}" for x in os.getloadavg()), "",
             f"Command: `python -m bench.early_final {shlex.join(argv if argv is not None else sys.argv[1:])}`",
             "", f"tiny.en, sized final, as shipped; a pass's median {np.median(seconds) * 1000:.0f} ms. "
             f"Waits in ms of trailing windows ({WINDOW_MS} ms each); {stop} is speech-stop.", ""]
    sources = sorted({s for _, s, _ in rows})
    lines += ["| condition | wait ms | " + " | ".join(f"WER {s}" for s in sources) +
              " | WER all | same words as speech-stop |", "|---" * (len(sources) + 4) + "|"]
    differ: list[str] = []
    for condition in conditions:
        idx = [i for i, r in enumerate(rows) if r[0] == condition]
        for wait in keys:
            got = texts[(condition, wait)]
            per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for k, i in enumerate(idx):
                e, n = wer(rows[i][2], got[k])
                for key in (rows[i][1], "all"):
                    per[key][0] += e
                    per[key][1] += n
            same = sum(same_words(a, b) for a, b in zip(got, texts[(condition, stop)], strict=True))
            cells = [f"{per[s][0] / max(1, per[s][1]):.3f} ({per[s][0]}/{per[s][1]})" for s in [*sources, "all"]]
            label = (f"{stop}, voice end at {args.voice_end_db:g} dB" if wait == VOICE
                     else f"{wait[0]}, padded with {wait[1]}" if isinstance(wait, tuple) else str(wait))
            lines.append(f"| {condition} | {label} | " + " | ".join(cells) + f" | {same} of {len(idx)} |")
            if wait != stop:
                differ += [f"- {condition}, {label} ms, said \"{rows[i][2]}\": \"{a}\", at speech-stop \"{b}\""
                           for k, i in enumerate(idx)
                           for a, b in [(got[k], texts[(condition, stop)][k])] if not same_words(a, b)]
    lines += ["", "Differing from speech-stop:", "", *(differ or ["- none"])]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
