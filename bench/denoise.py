"""Noise suppression before the gate (`bargein.denoise`): each candidate on samples of the
barge-in set (`bench.bargein_words`) and of the end-of-turn set (`bench.eot_set`), clean and
under four noises at 10 dB SNR, against no suppression.

- Barge-in: each item played over the agent's reply as `bench.bargein_words` does (real Silero,
  Whisper, Piper; the session's own input path runs the denoiser): backchannels that cancelled
  the reply (false cancels), interruptions that did not (missed).
- End of turn: each clip through a fresh denoiser, then `bench.eot.run_clip` (Silero finds
  speech-stop, whisper tiny.en transcribes, the default heuristic signal decides): unfinished
  turns cut off at min_silence, finished turns left waiting for max_silence, and the word error
  rate of the transcripts against the words said.
- Added ms: the output's lag behind its input (cross-correlation on clean speech) plus the
  compute per 32 ms window (one Silero window), median over a clip.

The noises (16 kHz, seeded, made here): pink (`pipeline.testing.sounds.noise`); babble, six
talkers (jfk.wav from six offsets, each its own gain); street, brown rumble swelling as cars pass
(4-9 s) with a two-tone horn now and then; cafe, four-talker babble over pink room tone with
cutlery clicks (short high-passed bursts, about two a second).

    nice -n 19 python -m bench.denoise --limit 10 --eot-limit 12
    # writes bench/results/<date>-denoise.json (the table: bench/results/2026-12-02-denoise.md)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import plugins
from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.base.clock import perf_s
from pipeline.testing.sounds import jfk, noise

from . import bargein_words as bw

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
CANDIDATES = ("off", "rnnoise", "deepfilternet", "webrtc")
NOISES = ("clean", "pink", "babble", "street", "cafe")
SNR_DB = 10.0
FRAME = 320  # 20 ms: what the transports hand the session


def _brown(n: int, rng: np.random.Generator) -> np.ndarray:
    x = np.cumsum(rng.standard_normal(n))
    x -= np.convolve(x, np.ones(1601) / 1601, "same")  # no drift below ~10 Hz
    return x


def _babble(seconds: float, talkers: int, rng: np.random.Generator) -> np.ndarray:
    voice = jfk()
    n = int(seconds * INPUT_RATE_HZ)
    out = np.zeros(n)
    for _ in range(talkers):
        start = int(rng.integers(0, len(voice)))
        out += np.resize(np.roll(voice, -start), n) * rng.uniform(0.6, 1.0)
    return out


def make_noise(kind: str, seconds: float, *, seed: int) -> np.ndarray:
    """One of NOISES (not "clean"), `seconds` long at 16 kHz, at an arbitrary level."""
    rng = np.random.default_rng(seed)
    n = int(seconds * INPUT_RATE_HZ)
    t = np.arange(n) / INPUT_RATE_HZ
    if kind == "pink":
        return noise("pink", seconds, seed=seed)[:n]
    if kind == "babble":
        return _babble(seconds, 6, rng).astype(np.float32)
    if kind == "street":
        period = rng.uniform(4.0, 9.0)
        swell = 0.4 + 0.6 * np.sin(np.pi * ((t + rng.uniform(0, period)) % period) / period) ** 4
        x = _brown(n, rng) * swell
        x /= np.sqrt(np.mean(x ** 2)) + 1e-9
        for at in rng.uniform(0, max(seconds - 0.5, 0.1), size=max(1, int(seconds / 6))):
            i, k = int(at * INPUT_RATE_HZ), int(0.4 * INPUT_RATE_HZ)
            horn = 0.8 * (np.sin(2 * np.pi * 400 * t[:k]) + np.sin(2 * np.pi * 500 * t[:k]))
            x[i:i + k] += horn[:len(x[i:i + k])]
        return x.astype(np.float32)
    if kind == "cafe":
        talk = _babble(seconds, 4, rng)
        talk /= np.sqrt(np.mean(talk ** 2)) + 1e-9
        room = noise("pink", seconds, seed=seed)[:n]
        room = room / (np.sqrt(np.mean(room ** 2)) + 1e-9) * 0.5
        x = talk + room
        for at in rng.uniform(0, seconds, size=int(2 * seconds)):
            i, k = int(at * INPUT_RATE_HZ), int(0.03 * INPUT_RATE_HZ)
            click = np.diff(rng.standard_normal(k + 1)) * np.exp(-np.arange(k) / 60) * 2.5
            x[i:i + k] += click[:len(x[i:i + k])]
        return x.astype(np.float32)
    raise ValueError(f"noise {kind!r}: one of {', '.join(NOISES[1:])}")


def mix(speech: np.ndarray, kind: str, *, speech_from: int, speech_to: int, seed: int) -> np.ndarray:
    """`speech` (silence around the words allowed) with `kind` under all of it, SNR_DB below the
    words' level (RMS over [speech_from, speech_to))."""
    if kind == "clean":
        return speech.astype(np.float32)
    n = make_noise(kind, len(speech) / INPUT_RATE_HZ + 0.1, seed=seed)[:len(speech)]
    gain = 10 ** ((dbfs(speech[speech_from:speech_to]) - SNR_DB - dbfs(n)) / 20)
    return np.clip(speech + gain * n, -1.0, 1.0).astype(np.float32)


def registered() -> None:
    """The checkout's `pipeline.denoise` entry points, where the installed package predates them
    (an editable install reads its entry points from when it was installed)."""
    have = {p.name for p in plugins.available("denoise")}
    if set(CANDIDATES[1:]) <= have:
        return
    points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pipeline.denoise"]
    info = Path(tempfile.mkdtemp()) / "pipeline_denoise_bench-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pipeline-denoise-bench\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[pipeline.denoise]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    sys.path.append(str(info.parent))


def denoised(audio: np.ndarray, name: str) -> tuple[np.ndarray, list[float]]:
    """The clip through a fresh denoiser in 20 ms frames, and the compute per frame (ms)."""
    if name == "off":
        return audio, []
    from pipeline.stages.denoise import denoiser

    engine = denoiser(name)
    assert engine is not None
    out, ms = [], []
    for at in range(0, len(audio), FRAME):
        t0 = perf_s()
        out.append(engine.process(audio[at:at + FRAME]))
        ms.append((perf_s() - t0) * 1000)
    return np.concatenate(out), ms


def added_ms(name: str) -> dict[str, Any]:
    """Lag (cross-correlation on 6 s of clean speech) and compute per 32 ms window."""
    if name == "off":
        return {"lag_ms": 0.0, "compute_ms_per_window": 0.0}
    x = jfk()[:6 * INPUT_RATE_HZ]
    y, ms = denoised(x, name)
    lags = range(0, 960, 8)  # up to 60 ms
    a, b = 8000, len(x) - 1000
    lag = max(lags, key=lambda k: float(np.dot(y[a + k:b + k], x[a:b])))
    per_window = float(np.median(ms)) * 512 / FRAME
    return {"lag_ms": lag * 1000 / INPUT_RATE_HZ, "compute_ms_per_window": round(per_window, 3)}


_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def wer(said: str, heard: str) -> tuple[int, int]:
    """(word edits, words said), case and punctuation ignored, digits read out one by one (the
    set says an order number as "four seven nine two"; Whisper writes 4792)."""
    def words(s: str) -> list[str]:
        spaced = "".join(f" {_DIGITS[int(c)]} " if c.isdigit() else c for c in s.lower())
        return "".join(c if c.isalnum() or c == "'" else " " for c in spaced).split()
    r, h = words(said), words(heard)
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
    return d[len(h)], len(r)


def bargein_cells(items: list[Any], names: list[str], kinds: list[str], progress: Any) -> list[dict[str, Any]]:
    from pipeline.call.session import Stages

    base = cfg.Config.default()
    base.bargein = dataclasses.replace(base.bargein, hear_words=True, hear_short_words=True)
    stages = Stages.load(base)
    lead = int(bw.NOISE_LEAD_S * INPUT_RATE_HZ)
    cells = []
    for kind in kinds:
        heard = [dataclasses.replace(it, lead_s=bw.NOISE_LEAD_S if kind != "clean" else 0.0, audio=mix(
            np.concatenate([np.zeros(lead if kind != "clean" else 0), it.audio,
                            np.zeros(int(bw.NOISE_TAIL_S * INPUT_RATE_HZ) if kind != "clean" else 0)]),
            kind, speech_from=lead if kind != "clean" else 0,
            speech_to=(lead if kind != "clean" else 0) + len(it.audio), seed=i))
            for i, it in enumerate(items)]
        for name in names:
            progress(f"barge-in: {kind} / {name}")
            config = dataclasses.replace(base, bargein=dataclasses.replace(
                base.bargein, denoise="" if name == "off" else name))
            t0 = perf_s()
            rows = bw.run(stages, config, heard)
            cells.append({"noise": kind, "denoise": name, "summary": bw.summarise(rows),
                          "wall_s": round(perf_s() - t0, 1),
                          "rows": [{k: r[k] for k in ("kind", "text", "gate_fired", "cancelled", "words")}
                                   for r in rows]})
    return cells


def eot_cells(limit: int, names: list[str], kinds: list[str], progress: Any) -> list[dict[str, Any]]:
    from pipeline.base.config import TurnPolicy
    from pipeline.stages.vad import SileroVAD
    from pipeline.stt import WhisperSTT
    from pipeline.turns import HeuristicCompleteness

    from . import eot_set
    from .eot import run_clip

    recipes = [r for r in eot_set._recipes() if r["voice"] in ("joe-1.0", "jfk")]
    recipes = recipes[::max(1, -(-len(recipes) // limit))][:limit]
    clean = []
    for r in recipes:
        audio, speech_end_s = eot_set._make(r | {"condition": ("pink", None)})
        clean.append((r, audio, speech_end_s))
    policy, vad, stt = TurnPolicy(), SileroVAD(), WhisperSTT()
    signals = {"heuristic": HeuristicCompleteness()}
    lead = int(eot_set.LEAD_S * INPUT_RATE_HZ)
    cells = []
    for kind in kinds:
        for name in names:
            progress(f"end of turn: {kind} / {name}")
            rows = []
            for i, (r, audio, end_s) in enumerate(clean):
                x = mix(audio, kind, speech_from=lead, speech_to=int(end_s * INPUT_RATE_HZ), seed=7000 + i)
                y, _ = denoised(x, name)
                clip = eot_set.EotClip(name=eot_set._name(r), text=r["text"], finished=r["finished"],
                                       kind=r["kind"], voice=r["voice"], condition=kind,
                                       audio=y, speech_end_s=end_s)
                row = run_clip(clip, vad=vad, stt=stt, signals=signals, policy=policy)
                rows.append(row)
            scored = [r for r in rows if not r.get("no_speech")]
            unf = [r for r in scored if not r["finished"]]
            fin = [r for r in scored if r["finished"]]
            edits = [wer(r["said"], r.get("transcript", "")) for r in scored]
            cells.append({
                "noise": kind, "denoise": name, "clips": len(rows), "no_speech": len(rows) - len(scored),
                "cut_off": sum(r["heuristic"]["ended"] == "min_silence" for r in unf), "unfinished": len(unf),
                "waited_max": sum(r["heuristic"]["ended"] == "max_silence" for r in fin), "finished": len(fin),
                "wer": round(sum(e for e, _ in edits) / max(1, sum(n for _, n in edits)), 3),
                "transcripts": [(r["said"], r.get("transcript")) for r in rows]})
    return cells


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def _wer_pct(cell: dict[str, Any]) -> str:
    edits = [wer(said, heard or "") for said, heard in cell["transcripts"]]
    return f"{100 * sum(e for e, _ in edits) / max(1, sum(n for _, n in edits)):.1f}%"


def render(result: dict[str, Any]) -> str:
    """The tables of a results file: per noise and candidate, the barge-in and end-of-turn figures."""
    names = list(result["added"])
    lines = ["| noise | denoise | false cancels (backchannels) | missed interruptions | gate fired on backchannels "
             "| cut-offs (unfinished turns) | finished turns waiting max | WER (end-of-turn clips) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    eot = {(c["noise"], c["denoise"]): c for c in result.get("eot", [])}
    for cell in result["bargein"]:
        rows, e = cell["rows"], eot.get((cell["noise"], cell["denoise"]))
        back = [r for r in rows if r["kind"] == "backchannel"]
        inter = [r for r in rows if r["kind"] == "interruption"]
        lines.append(
            f"| {cell['noise']} | {cell['denoise']} | {_pct(sum(r['cancelled'] for r in back), len(back))} "
            f"| {_pct(sum(not r['cancelled'] for r in inter), len(inter))} "
            f"| {_pct(sum(r['gate_fired'] for r in back), len(back))} "
            + (f"| {_pct(e['cut_off'], e['unfinished'])} | {_pct(e['waited_max'], e['finished'])} "
               f"| {_wer_pct(e)} |" if e else "| | | |"))
    lines += ["", "| denoise | lag behind its input (ms) | compute per 32 ms window (ms, median) |",
              "|---|---:|---:|"]
    lines += [f"| {n} | {result['added'][n]['lag_ms']:g} | {result['added'][n]['compute_ms_per_window']:g} |"
              for n in names]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.denoise", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=10, help="barge-in items (every k-th of one Piper voice's)")
    parser.add_argument("--eot-limit", type=int, default=12, help="end-of-turn clips (0: skip)")
    parser.add_argument("--candidates", default=",".join(CANDIDATES))
    parser.add_argument("--noises", default=",".join(NOISES))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--report", type=Path, metavar="JSON", help="print the tables of a results file")
    args = parser.parse_args(argv)
    if args.report:
        print(render(json.loads(args.report.read_text())), end="")
        return 0
    names = [n for n in args.candidates.split(",") if n]
    kinds = [k for k in args.noises.split(",") if k]
    registered()
    started, load0 = perf_s(), os.getloadavg()

    def progress(message: str) -> None:
        print(f"[{perf_s() - started:6.0f} s] {message}", flush=True)

    result: dict[str, Any] = {"command": "python -m bench.denoise " + " ".join(argv if argv is not None else sys.argv[1:]),
                              "snr_db": SNR_DB, "added": {n: added_ms(n) for n in names}}
    out = args.out / f"{dt.date.today().isoformat()}-denoise.json"
    items, _ = bw.build_set(["joe-1.0"])
    if args.limit and args.limit < len(items):
        items = items[::-(-len(items) // args.limit)]
    result["bargein"] = bargein_cells(items, names, kinds, progress)
    out.write_text(json.dumps(result, indent=1))
    if args.eot_limit:
        result["eot"] = eot_cells(args.eot_limit, names, kinds, progress)
    result |= {"load_average": {"start": load0, "end": os.getloadavg()}, "wall_s": round(perf_s() - started, 1)}
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
