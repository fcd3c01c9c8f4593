"""Soak: one `pipeline serve` worker, many sessions of mixed kinds, memory and threads sampled.

One in-process `RealtimeServer` (its own event loop in a thread, as `pipeline serve` runs it)
with the real VAD, Whisper and Piper and a scripted LLM (it can call a tool; `--llm real` loads
SmolLM2 instead) takes batches of sessions at concurrency cycling 1, 2, 4, 8, 3, 6, 5, 7. Each
session is one of four kinds, drawn with a fixed seed:

    audio  a caller clip at real time (100 ms appends of 24 kHz pcm16), its reply heard out
    text   a typed turn and response.create, the reply heard out
    tool   the client's own tool: the model calls it, the client answers, the model replies
    abort  a long reply asked for, the socket cut at its first audio

The worker's RSS and thread count are sampled every second, and after each batch once its
sessions have left (`after_batch`). The worker runs as `pipeline serve` does: glibc's arenas
bounded to 2 before the models load, `malloc_trim(0)` when its last call leaves, Piper's
onnxruntime session without a memory arena (pipeline/base/memory.py, pipeline/stages/tts.py);
`--allocator glibc` leaves glibc's arenas unbounded, to compare.

    python -m bench.soak --minutes 8 [--allocator glibc] [--llm real] [--tracemalloc] [--out bench/results]

Python's own objects are counted after each batch, and the sessions and connections still
alive: a leak in our code grows them; allocator high-water marks do not.

The target (issue 28): RSS after the soak within 10% of RSS after the first 20 sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gc
import json
import os
import random
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from bench.machine import describe_machine, machine_line
from bench.serve_calls import ServerThread, rss_mib
from pipeline.base.audio import INPUT_RATE_HZ, read_wav, resample, to_int16
from pipeline.base.config import Config
from pipeline.base.memory import bound_arenas
from pipeline.call.session import Session, Stages
from pipeline.stages.fakes import ScriptedLLM
from pipeline.transports.realtime_connection import Connection

CONCURRENCY = (1, 2, 4, 8, 3, 6, 5, 7)
KINDS = ("audio", "text", "tool", "abort")
SESSION_CAP_S = 60.0
WEATHER = {"type": "function", "name": "get_weather", "description": "Today's weather in a city.",
           "parameters": {"type": "object", "required": ["city"],
                          "properties": {"city": {"type": "string"}}}}
STORY = " ".join(f"Once upon a time a lighthouse keeper counted ship {i} as it passed his rock." for i in range(4))


def scripted_llm() -> ScriptedLLM:
    return ScriptedLLM(replies=["Hello! How can I help you today?"], rules=[
        [r"result of get_weather|sunny", "It is sunny in {city}, twenty degrees."],
        [r"weather", {"name": "get_weather", "arguments": {"city": "Paris"}}],
        [r"story", STORY]])


def threads() -> int:
    return threading.active_count()


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def live_calls() -> int:
    """Sessions and connections still alive (after a batch has left: 0 unless one leaked or
    waits in a reference cycle for the collector)."""
    return sum(1 for o in gc.get_objects() if isinstance(o, (Session, Connection)))


def python_growth(before: Any, after: Any, top: int = 12) -> list[dict[str, Any]]:
    """tracemalloc: where Python's own allocations grew between two snapshots, largest first."""
    stats = after.compare_to(before, "lineno")
    return [{"where": str(s.traceback[0]), "kib": round(s.size_diff / 1024, 1), "blocks": s.count_diff}
            for s in sorted(stats, key=lambda s: -s.size_diff)[:top]]


def clip_chunks() -> list[str]:
    wav = read_wav(Path("models/audio/jfk.wav"))
    audio = resample(wav.mono(), wav.sample_rate_hz, INPUT_RATE_HZ)[: INPUT_RATE_HZ * 4]  # 4 s
    padded = np.concatenate([np.zeros(INPUT_RATE_HZ // 4, np.float32), audio,
                             np.zeros(int(2.5 * INPUT_RATE_HZ), np.float32)])
    pcm = to_int16(resample(padded, INPUT_RATE_HZ, 24_000)).astype("<i2").tobytes()
    step = 24_000 * 2 // 10
    return [base64.b64encode(pcm[i:i + step]).decode("ascii") for i in range(0, len(pcm), step)]


async def _session(url: str, kind: str, chunks: list[str]) -> str:
    """One session of `kind`; its outcome ("completed", "aborted", or what went wrong)."""
    from websockets.asyncio.client import connect

    async with connect(url, proxy=None, max_size=None) as ws:
        async def until(pred: Any) -> dict[str, Any]:
            while True:
                event = json.loads(await ws.recv())
                if event["type"] == "error":
                    raise RuntimeError(event["error"].get("code"))
                if pred(event):
                    return event

        def done(e: dict[str, Any]) -> bool:
            return e["type"] == "response.done"

        await until(lambda e: e["type"] == "session.created")
        send = ws.send
        if kind == "tool":
            await send(json.dumps({"type": "session.update", "session": {"tools": [WEATHER]}}))
            await until(lambda e: e["type"] == "session.updated")
        if kind == "audio":
            loop = asyncio.get_running_loop()
            started = loop.time()
            for i, chunk in enumerate(chunks):  # at real time, as a microphone sends
                await send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
                await asyncio.sleep(max(0.0, started + (i + 1) / 10 - loop.time()))
            return (await until(done))["response"]["status"]
        text = {"text": "Hello there.", "tool": "What's the weather in Paris?",
                "abort": "Tell me a story."}[kind]
        await send(json.dumps({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}))
        await send(json.dumps({"type": "response.create"}))
        if kind == "abort":
            await until(lambda e: e["type"] == "response.output_audio.delta")
            ws.transport.abort()
            return "aborted"
        if kind == "tool":
            call = await until(lambda e: e["type"] == "response.function_call_arguments.done")
            await until(done)
            await send(json.dumps({"type": "conversation.item.create", "item": {
                "type": "function_call_output", "call_id": call["call_id"],
                "output": json.dumps({"city": "Paris", "sky": "sunny"})}}))
            await send(json.dumps({"type": "response.create"}))
        return (await until(done))["response"]["status"]


async def _batch(url: str, kinds: list[str], chunks: list[str]) -> list[str]:
    async def guarded(kind: str) -> str:
        try:
            return await asyncio.wait_for(_session(url, kind, chunks), SESSION_CAP_S)
        except Exception as exc:  # a failed session is counted, the soak goes on
            return f"failed: {type(exc).__name__} {exc}"[:80]

    return await asyncio.gather(*(guarded(k) for k in kinds))


class Sampler:
    """RSS and threads every `every_s`, with the session count at the time."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s = every_s
        self.started = time.monotonic()
        self.sessions = 0
        self.samples: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self, mark: str = "") -> dict[str, Any]:
        row = {"t_s": round(time.monotonic() - self.started, 1), "sessions": self.sessions,
               "rss_mib": round(rss_mib(), 1), "threads": threads(), "os_threads": os_threads()}
        if mark:  # after a batch: Python's own objects too (a leak in our code would grow them)
            row["mark"] = mark
            row["py_objects"] = len(gc.get_objects())
            row["live_calls"] = live_calls()
        self.samples.append(row)
        return row

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def soak(minutes: float, *, allocator: str, real_llm: bool, trace: bool = False,
         seed: int = 28) -> dict[str, Any]:
    bounded = bound_arenas() if allocator == "serve" else False  # as serve_main does
    config = Config.default()
    stages = Stages.load(config)
    if not real_llm:
        stages.llm = scripted_llm()
    chunks = clip_chunks()
    rng = random.Random(seed)
    outcomes: dict[str, int] = {}
    batches = []
    with ServerThread(stages, config) as worker, Sampler() as sampler:
        sampler.sample("loaded")
        asyncio.run(_batch(worker.url, ["text"], chunks))  # first-use costs out of the way
        sampler.sample("warm")
        if trace:
            tracemalloc.start()
        snapshots: dict[str, Any] = {}
        deadline = time.monotonic() + minutes * 60
        i = 0
        while time.monotonic() < deadline:
            n = CONCURRENCY[i % len(CONCURRENCY)]
            kinds = [rng.choice(KINDS) for _ in range(n)]
            t0 = time.monotonic()
            results = asyncio.run(_batch(worker.url, kinds, chunks))
            while worker.server.connections and time.monotonic() - t0 < SESSION_CAP_S:
                time.sleep(0.05)  # the server has let every session of the batch go
            time.sleep(1.0)  # and has closed them (it trims when the last one has closed)
            for log in ("requests", "temperatures"):  # the scripted LLM's own record of requests
                getattr(stages.llm, log, []).clear()  # would grow with the soak, not the server
            sampler.sessions += n
            row = sampler.sample("after_batch")
            if trace and "first_20" not in snapshots and sampler.sessions >= 20:
                snapshots["first_20"] = tracemalloc.take_snapshot()
            for r in results:
                outcomes[r] = outcomes.get(r, 0) + 1
            batches.append({"n": n, "kinds": kinds, "results": results, "seconds": round(time.monotonic() - t0, 1),
                            "rss_mib": row["rss_mib"], "threads": row["threads"]})
            i += 1
    after = [s for s in sampler.samples if s.get("mark") == "after_batch"]
    first20 = next((s for s in after if s["sessions"] >= 20), after[0] if after else None)
    last = after[-1] if after else None
    return {"minutes": minutes, "allocator": allocator, "arenas_bounded": bounded,
            "llm": "real" if real_llm else "scripted",
            "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX"), "sessions": sampler.sessions,
            "batches": batches, "outcomes": outcomes, "samples": sampler.samples,
            "after_first_20": first20, "after_all": last,
            "growth_vs_first_20": (last["rss_mib"] / first20["rss_mib"] - 1) if first20 and last else None,
            "python_growth": python_growth(snapshots["first_20"], tracemalloc.take_snapshot())
            if "first_20" in snapshots else None,
            "python_traced_mib": round(tracemalloc.get_traced_memory()[0] / 2**20, 1) if trace else None}


def report(result: dict[str, Any], machine: dict[str, Any], load: tuple[float, float]) -> str:
    first, last = result["after_first_20"], result["after_all"]
    after = [s for s in result["samples"] if s.get("mark") == "after_batch"]
    lines = [f"# Soak: one worker, {result['sessions']} sessions in {result['minutes']:g} min",
             "", f"Machine: {machine_line(machine)}.", "",
             f"Command: `python -m bench.soak --minutes {result['minutes']:g}"
             f"{' --allocator glibc' if result['allocator'] == 'glibc' else ''}` (LLM {result['llm']}; "
             f"real VAD, Whisper, Piper; glibc arenas "
             f"{'bounded to 2 as `pipeline serve` does' if result['arenas_bounded'] else 'unbounded'}, "
             f"MALLOC_ARENA_MAX {result['malloc_arena_max'] or 'unset'}). The machine was shared: "
             f"other work ran on the same 2 cores (load average {load[0]:.1f} at the start, "
             f"{load[1]:.1f} at the end), so session times are slow and uneven; memory is not "
             "affected by that.", "",
             f"Outcomes: {', '.join(f'{k} {v}' for k, v in sorted(result['outcomes'].items()))}.", "",
             f"RSS after the first 20 sessions: {first['rss_mib']:.0f} MiB (at {first['sessions']}); "
             f"after all {last['sessions']}: {last['rss_mib']:.0f} MiB, "
             f"{100 * result['growth_vs_first_20']:+.1f}% (target: within 10%). Threads "
             f"(Python / OS) after the first 20: {first['threads']} / {first['os_threads']}; at the "
             f"end: {last['threads']} / {last['os_threads']}.", "",
             "## The curve (after each batch, once its sessions had left)", "",
             "| sessions | seconds | RSS MiB | threads | OS threads | Python objects | live calls |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    step = max(1, len(after) // 40)
    for s in after[::step] + ([after[-1]] if after and after[-1] is not after[::step][-1] else []):
        lines.append(f"| {s['sessions']} | {s['t_s']:.0f} | {s['rss_mib']:.0f} | {s['threads']} | "
                     f"{s['os_threads']} | {s.get('py_objects', '')} | {s.get('live_calls', '')} |")
    if result.get("python_growth") is not None:
        lines += ["", f"## Python's own allocations (tracemalloc): {result['python_traced_mib']} MiB "
                  "traced at the end; grown since the first 20 sessions, by line", "",
                  "| where | KiB | blocks |", "|---|---:|---:|"]
        lines += [f"| `{g['where']}` | {g['kib']:+.1f} | {g['blocks']:+d} |" for g in result["python_growth"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--allocator", choices=("serve", "glibc"), default="serve",
                        help="serve: glibc arenas bounded as `pipeline serve` does; glibc: unbounded")
    parser.add_argument("--llm", choices=("scripted", "real"), default="scripted")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="where Python's own allocations grew after the first 20 sessions "
                             "(slows the worker: a diagnosis, not a soak)")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--name", default="soak")
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    result = soak(args.minutes, allocator=args.allocator, trace=args.tracemalloc, real_llm=args.llm == "real")
    machine = describe_machine()
    result["machine"] = machine
    load = (load0, os.getloadavg()[0])
    result["load_average"] = load
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{machine['date'][:10]}-{args.name}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    stem.with_suffix(".md").write_text(report(result, machine, load), encoding="utf-8")
    print(report(result, machine, load))


if __name__ == "__main__":
    main()
