"""Does Piper's first chunk come sooner if the LLM stops decoding while it is synthesized?

On 2 cores the reply's first chunk is synthesized while the LLM decodes the next words (both
models take both cores: `pipeline.base.cpu`). This measures one chunk's synthesis three ways,
the order rotated per round: alone; beside the LLM streaming a long reply; and beside the LLM
paused between tokens for the synthesis (the token in flight when the pause is asked for is
finished first: llama.cpp cannot stop halfway through one). For the paused way it also reports
how long the pause waited for that token: the synthesis starts only after it, so what the first
audio would gain is (beside - paused synthesis - wait).

    python -m bench.tts_contention [--rounds 3] [--out bench/results/DATE-tts-contention.md]
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.stages.llm import LlamaLLM
from pipeline.stages.tts import PiperTTS

from .machine import describe_machine, machine_line
from .summary import median

CHUNKS = ("I close today at 10 AM.", "Sure, I can help you with that.",
          "We have a table for two at seven tonight.", "Your refund is on its way.")
PROMPT = [{"role": "system", "content": "You are a helpful assistant."},
          {"role": "user", "content": "Tell me a long story about a lighthouse keeper and a storm."}]


class Decoding:
    """The LLM streaming replies in a thread, one after another, until stopped; `hold()` parks it
    between tokens and says how long that took."""

    def __init__(self, llm: LlamaLLM) -> None:
        self.llm = llm
        self.stop = threading.Event()
        self.go = threading.Event()
        self.go.set()
        self.parked = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            for _ in self.llm.stream(PROMPT, cancel=self.stop):
                if not self.go.is_set():
                    self.parked.set()
                    self.go.wait()
                    self.parked.clear()

    def __enter__(self) -> Decoding:
        self.thread.start()
        time.sleep(1.0)  # past the prompt's prefill: decoding
        return self

    def __exit__(self, *exc: object) -> None:
        self.go.set()
        self.stop.set()
        self.thread.join()

    def hold(self) -> float:
        t0 = time.perf_counter()
        self.go.clear()
        self.parked.wait()
        return (time.perf_counter() - t0) * 1000.0

    def release(self) -> None:
        self.go.set()


def _synth(tts: PiperTTS, text: str) -> float:
    t0 = time.perf_counter()
    tts.synthesize(text)
    return (time.perf_counter() - t0) * 1000.0


def run(rounds: int, progress: Callable[[str], None] = print) -> dict[str, Any]:
    tts, llm = PiperTTS(), LlamaLLM(max_tokens=400)
    times: dict[str, list[float]] = {"alone": [], "beside": [], "paused": [], "wait": []}
    ways = ["alone", "beside", "paused"]
    for r in range(rounds):
        for way in ways[r % 3:] + ways[:r % 3]:
            if way == "alone":
                times["alone"] += [_synth(tts, c) for c in CHUNKS]
                continue
            with Decoding(llm) as decoding:
                for chunk in CHUNKS:
                    if way == "beside":
                        times["beside"].append(_synth(tts, chunk))
                    else:
                        times["wait"].append(decoding.hold())
                        times["paused"].append(_synth(tts, chunk))
                        decoding.release()
                    time.sleep(0.3)
        progress(f"round {r + 1} of {rounds}")
    return {"threads": {"tts": tts.threads, "llm": getattr(llm, "threads", None)},
            "medians": {k: round(float(median(v) or 0.0), 1) for k, v in times.items()}, "times": times}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    machine, load0 = describe_machine(), os.getloadavg()
    result = run(args.rounds)
    load1 = os.getloadavg()
    m = result["medians"]
    lines = [
        "# Piper's first chunk beside the LLM decoding", "",
        f"Machine: {machine_line(machine)}; load average before {load0[0]:.2f}, after {load1[0]:.2f}", "",
        f"Command: `python -m bench.tts_contention --rounds {args.rounds}`; threads {result['threads']}", "",
        "| synthesis of one chunk (median ms) | alone | beside the LLM decoding | LLM paused for it | wait for the token in flight |",
        "|---|---|---|---|---|",
        f"| {len(CHUNKS)} chunks x {args.rounds} rounds | {m['alone']} | {m['beside']} | {m['paused']} | {m['wait']} |",
        "", f"First audio gained by pausing: {m['beside'] - m['paused'] - m['wait']:.1f} ms at the medians.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        args.out.with_suffix(".json").write_text(json.dumps({"machine": machine, **result}, indent=1),
                                                 encoding="utf-8")


if __name__ == "__main__":
    main()
