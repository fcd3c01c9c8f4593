"""The LLM behind an OpenAI-compatible server against the same GGUF in process.

Four measurements, all against llama-cpp-python's own server on a loopback port, started here:

1. Time to first token and first audio: each caller clip is one call on the real clock (as in
   bench/ttfa.py, through its helpers), once with the in-process LlamaLLM and once with the
   `openai-compatible` stage, back to back, the order alternating from clip to clip.
2. How fast the server stops generating after the client closes a stream: a long reply is
   cancelled after a few tokens and a one-token request follows at once; it waits for the model
   lock, so its latency against an idle server's bounds the generation that went on after the
   close. The server's log line for the disconnect is timed too.
3. Concurrent streams: N requests at once (1, 2, 4), time to first token and to the last token.
4. Memory: the worker's RSS with its models loaded (with and without the in-process LLM), the
   server's RSS, and the Python heap one call's session adds (tracemalloc peak during a call).
5. Concurrent calls through one `pipeline serve` worker whose LLM is the server
   (bench/serve_calls.py): N callers at once, end of speech → first audio and memory per call.

    python -m bench.endpoint               # results in bench/results/<date>-endpoint.md
    python -m bench.endpoint --turns 2     # fewer caller clips
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from pipeline.base import config as cfg
from pipeline.base.models import model_file
from pipeline.testing import LlamaServer
from pipeline.transports.scripted import Clip

from .calls import LEAD_IN_S, one_call, prime_llm
from .clips import caller_clips
from .machine import describe_machine, machine_line
from .readout import read_turns
from .serve_calls import concurrent_calls, rss_mib

RESULTS = Path(__file__).resolve().parent / "results"
MODEL = model_file("llm/SmolLM2-135M-Instruct.Q4_1.gguf")
CALL_CAP_S = 45.0  # bench/ttfa.py's cap beyond the clip
LONG_REPLY = [{"role": "user", "content": "Count from one to two hundred in words."}]
CONCURRENCY = (1, 2, 4)
CALLS = (1, 2, 4)  # concurrent calls per worker


def first_audio(stages: Any, base: cfg.Config, clips: list[Any], llms: dict[str, Any]
                ) -> dict[str, list[dict[str, float]]]:
    """Per LLM, per clip: LLM first token and first audio (ms after end of speech), and the
    request → first token span, read from the call's event log."""
    out: dict[str, list[dict[str, float]]] = {name: [] for name in llms}
    names = list(llms)
    for i, clip in enumerate(clips):
        for name in names[i % 2:] + names[:i % 2]:
            prime_llm(llms[name], base.response.instructions)
            events, _, _ = one_call(base, dataclasses.replace(stages, llm=llms[name]),
                                    [Clip(clip.audio, LEAD_IN_S)], realtime=True,
                                    hang_up_after=("first_audio_out", 0.0),
                                    max_s=LEAD_IN_S + clip.seconds + CALL_CAP_S)
            turn = next((t for t in read_turns(events, sequential=False)
                         if t.end_to_audio_ms is not None), None)
            if turn is None:
                failed = [e for e in events if e.type == "response.done"
                          and e.response["status"] == "failed"]
                why = (failed[0].response["status_details"]["error"]["message"] if failed
                       else "no audio")
                print(f"  {name}: {clip.name} failed: {why}", file=sys.stderr)
                out.setdefault(f"{name} failures", []).append({"clip": clip.name, "why": why})
                continue
            out[name].append({"first_token_ms": turn.at_ms.get("llm_first_token"),
                              "first_audio_ms": turn.end_to_audio_ms,
                              "request_to_token_ms": turn.llm_prompt_ms})
            print(f"  {name}: {clip.name}", file=sys.stderr)
    return out


def _one_token_s(llm: Any) -> float:
    t0 = time.perf_counter()
    llm.complete([{"role": "user", "content": "Hi."}], max_tokens=1)
    return time.perf_counter() - t0


def stop_after_close(llm: Any, server: LlamaServer, *, tokens: int = 9, repeats: int = 3
                     ) -> dict[str, float]:
    """A one-token request right after a long reply was closed at `tokens` tokens, against one
    right after the same reply ran to exactly `tokens` tokens: the server's prompt cache is the
    same in both, so the difference is the generation that went on after the close."""
    finished, closed, noticed, per_token = [], [], [], []
    for _ in range(repeats):
        llm.complete(LONG_REPLY, max_tokens=tokens)
        finished.append(_one_token_s(llm))
        cancel = threading.Event()
        stream = llm.stream(LONG_REPLY, cancel=cancel, max_tokens=400)
        next(stream)
        t0 = time.perf_counter()
        for _ in range(tokens - 1):
            next(stream)
        per_token.append((time.perf_counter() - t0) / (tokens - 1))
        before = server.disconnects()
        cancel.set()
        t_close = time.perf_counter()
        list(stream)  # returns at once: the check comes before the next read
        _one_token_s(llm)
        closed.append(time.perf_counter() - t_close)
        deadline = time.monotonic() + 10
        while server.disconnects() == before and time.monotonic() < deadline:
            time.sleep(0.005)
        noticed.append(time.perf_counter() - t_close)
    return {"tokens": tokens, "after_finish_ms": 1000 * statistics.median(finished),
            "after_close_ms": 1000 * statistics.median(closed),
            "log_line_after_ms": 1000 * statistics.median(noticed),
            "decode_ms_per_token": 1000 * statistics.median(per_token)}


def concurrent_streams(url: str, n: int, *, max_tokens: int = 32) -> dict[str, float]:
    """n streams started together; each a different question so no prompt is shared."""
    from pipeline.stages.llm_openai import OpenAICompatibleLLM

    llm = OpenAICompatibleLLM(base_url=url, first_token_timeout_s=120.0, total_timeout_s=300.0)
    first: list[float] = []
    last: list[float] = []
    tokens: list[int] = []
    go = threading.Barrier(n)

    def one(k: int) -> None:
        messages = [{"role": "system", "content": cfg.DEFAULT_INSTRUCTIONS},
                    {"role": "user", "content": f"Caller {k}: what are your opening hours on day {k}?"}]
        go.wait()
        t0 = time.perf_counter()
        count = 0
        for _ in llm.stream(messages, cancel=threading.Event(), max_tokens=max_tokens):
            if count == 0:
                first.append(time.perf_counter() - t0)
            count += 1
        last.append(time.perf_counter() - t0)
        tokens.append(count)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    llm.close()
    return {"n": n, "first_token_median_ms": 1000 * statistics.median(first),
            "first_token_max_ms": 1000 * max(first), "last_token_max_ms": 1000 * max(last),
            "tokens_per_s": sum(tokens) / max(last)}


def session_heap_mib(stages: Any, base: cfg.Config, clip: Any) -> float:
    """Python heap a call's session allocates at its peak (numpy buffers included)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    one_call(base, stages, [Clip(clip.audio, LEAD_IN_S)], realtime=True,
             hang_up_after=("first_audio_out", 0.0), max_s=LEAD_IN_S + clip.seconds + CALL_CAP_S)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - start) / 2**20


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.0f}"


def render(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [f"# The LLM behind an OpenAI-compatible server: {m['date'][:10]}", "",
             f"Machine: {machine_line(m)}.", "",
             f"Command: `{results['command']}` ({results['seconds']:.0f} s in all). Model: "
             f"{MODEL.name}, 2 threads, n_ctx 2048, in process (LlamaLLM) and in "
             "llama-cpp-python's server on a loopback port (`openai-compatible`). The server "
             "shares the same cores with the pipeline. Load average (1 min) at the start and "
             f"end of the run: {results['load'][0]:.1f} and {results['load'][1]:.1f}: other "
             "work on the machine competes for the same cores, so read ratios within a table, "
             "not absolute figures.", "",
             "## Time to first token and first audio", "",
             f"{results['clips']} caller clips, one call each per LLM, on the real clock; "
             "medians in ms after the end of speech.", "",
             "| LLM | LLM first token | first audio | request → first token | calls |",
             "|---|---:|---:|---:|---:|"]
    failures = {k: v for k, v in results["first_audio"].items() if k.endswith("failures")}
    for name, rows in results["first_audio"].items():
        if name in failures:
            continue
        med = {k: statistics.median([r[k] for r in rows if r[k] is not None] or [float("nan")])
               for k in ("first_token_ms", "first_audio_ms", "request_to_token_ms")}
        lines.append(f"| {name} | {_ms(med['first_token_ms'])} | {_ms(med['first_audio_ms'])} | "
                     f"{_ms(med['request_to_token_ms'])} | {len(rows)} |")
    for name, rows in failures.items():
        lines += ["", f"{name}: " + "; ".join(f"{r['clip']}: {r['why']}" for r in rows)]
    s = results["stop"]
    lines += ["", "## Stopping after a close", "",
              f"A reply asked for 400 tokens and closed after {s['tokens']}, then at once a "
              f"one-token request; against the same reply asked for exactly {s['tokens']} tokens "
              "and run to its end (the same prompt cache). Medians of 3.", "",
              "| | ms |", "|---|---:|",
              f"| reply ran to its end → one-token request done | {s['after_finish_ms']:.0f} |",
              f"| reply closed → one-token request done | {s['after_close_ms']:.0f} |",
              f"| close → the server logs the disconnect | {s['log_line_after_ms']:.0f} |",
              f"| decode time per token while streaming | {s['decode_ms_per_token']:.0f} |", "",
              "## Concurrent streams", "",
              "N streaming requests at once, 32 tokens each, different questions (no shared "
              "prompt). llama-cpp-python's server runs one request at a time: the others wait.",
              "", "| concurrent | first token median (ms) | first token max (ms) | "
              "last token max (ms) | tokens/s, all streams |", "|---:|---:|---:|---:|---:|"]
    for r in results["concurrency"]:
        lines.append(f"| {r['n']} | {r['first_token_median_ms']:.0f} | "
                     f"{r['first_token_max_ms']:.0f} | {r['last_token_max_ms']:.0f} | "
                     f"{r['tokens_per_s']:.1f} |")
    if results.get("calls"):
        lines += ["", "## Concurrent calls per worker", "",
                  f"N callers at once on one `pipeline serve` worker (VAD, STT, TTS in it; the LLM "
                  f"in the server above), each saying the clip {results['call_clip']!r} at real "
                  "time over its own WebSocket (bench/serve_calls.py). First audio: the caller's "
                  "last sound → the first `response.output_audio.delta`. Memory: the worker's peak "
                  "RSS over its idle RSS while the calls ran (inference buffers the calls share "
                  "count once), and that divided by the calls.", "",
                  "| calls at once | answered | first audio median (ms) | first audio max (ms) | "
                  "MiB over idle | MiB per call |", "|---:|---:|---:|---:|---:|---:|"]
        for r in results["calls"]:
            lines.append(f"| {r['n']} | {r['answered']} | {_ms(r['first_audio_median_ms'])} | "
                         f"{_ms(r['first_audio_max_ms'])} | {r['mib_over_idle']:.0f} | "
                         f"{r['mib_per_call']:.1f} |")
    mem = results["memory"]
    lines += ["", "## Memory", "", "| | MiB |", "|---|---:|",
              f"| worker RSS, VAD + STT + TTS loaded (endpoint LLM) | {mem['worker_mib']:.0f} |",
              f"| worker RSS, plus the in-process LLM | {mem['worker_with_llm_mib']:.0f} |",
              f"| llama-cpp-python server RSS | {mem['server_mib']:.0f} |",
              f"| Python heap of one call's session (tracemalloc peak) | "
              f"{mem['session_heap_mib']:.1f} |", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.endpoint", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=4, help="caller clips (default 4)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args(argv)
    t_start = time.perf_counter()
    load_start = os.getloadavg()[0]
    from pipeline.call.session import Stages
    from pipeline.stages.llm import LlamaLLM
    from pipeline.stages.llm_openai import OpenAICompatibleLLM

    base = cfg.apply(cfg.Config.default(), {"llm": {"name": "scripted"}})
    clips = caller_clips(args.turns)
    stages = Stages.load(base, progress=lambda m: print(m, file=sys.stderr))
    memory = {"worker_mib": rss_mib()}
    local = LlamaLLM(model_path=str(MODEL))
    memory["worker_with_llm_mib"] = rss_mib()
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.TemporaryDirectory()
    server = LlamaServer.start(MODEL, log=Path(scratch.name) / "server.log")
    try:
        # generous bounds: on a busy machine the default 10 s first-token timeout can trip,
        # and this measures latency rather than the timeout
        remote = OpenAICompatibleLLM(base_url=server.url, first_token_timeout_s=60.0,
                                     total_timeout_s=120.0)
        memory["server_mib"] = rss_mib(server.process.pid)
        base = cfg.Config.default()
        print("time to first audio", file=sys.stderr)
        firsts = first_audio(stages, base, clips,
                             {"in process (llama-cpp)": local, "server (openai-compatible)": remote})
        print("stopping after a close", file=sys.stderr)
        stop = stop_after_close(remote, server)
        print("concurrent streams", file=sys.stderr)
        concurrency = [concurrent_streams(server.url, n) for n in CONCURRENCY]
        memory["session_heap_mib"] = session_heap_mib(dataclasses.replace(stages, llm=remote),
                                                      base, clips[0])
        print("concurrent calls", file=sys.stderr)
        try:
            calls = concurrent_calls(dataclasses.replace(stages, llm=remote), base, clips[0].audio, CALLS)
        except Exception as exc:  # the rest of the run is still worth writing down
            print(f"concurrent calls failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            calls = []
    finally:
        server.stop()
        scratch.cleanup()
    results = {"machine": describe_machine(), "clips": len(clips), "first_audio": firsts,
               "stop": stop, "concurrency": concurrency, "memory": memory, "calls": calls,
               "call_clip": clips[0].name,
               "command": " ".join(["python -m bench.endpoint", *(argv or sys.argv[1:])]),
               "seconds": time.perf_counter() - t_start,
               "load": (load_start, os.getloadavg()[0])}
    text = render(results)
    path = args.out / f"{results['machine']['date'][:10]}-endpoint.md"
    path.write_text(text)
    print(text)
    print(f"written: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
