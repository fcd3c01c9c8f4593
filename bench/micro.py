"""Two model-level comparisons on recorded text, off the call path.

- The quick first fragment: the same replies through the chunker with and without it, and the
  first chunk synthesized each way. Same text, same voice: only the chunking differs.
- The LLM completeness signal: what one `probability()` call costs, next to the heuristic's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from pipeline.base.clock import perf_s
from pipeline.chunker import SentenceChunker
from pipeline.turns import HeuristicCompleteness, LLMCompleteness

from .summary import describe, median, pair_ratios

# Three syntheses per chunk and the median: one stray scheduling hiccup does not decide it.
REPEATS = 3
# Unfinished phrases next to the finished transcripts, so the completeness timing covers both.
UNFINISHED = ("I want to book a table for", "My order number is four four", "And so, um")


def first_chunk(text: str, *, quick: bool, min_fragment_words: int) -> str:
    """The first chunk the chunker would hand to TTS if `text` streamed in word by word."""
    chunker = SentenceChunker(quick_first_fragment=quick, min_fragment_words=min_fragment_words)
    for i, word in enumerate(text.split(" ")):
        chunks = chunker.push(("" if i == 0 else " ") + word)
        if chunks:
            return chunks[0]
    rest = chunker.flush()
    return rest[0] if rest else ""


def _synth_ms(tts: Any, text: str) -> tuple[float, float]:
    """Median synthesis time (ms) and the audio length (s) of one chunk."""
    times, seconds = [], 0.0
    for _ in range(REPEATS):
        t0 = perf_s()
        audio = tts.synthesize(text)
        times.append((perf_s() - t0) * 1000.0)
        seconds = len(audio) / tts.sample_rate_hz
    return float(median(times) or 0.0), seconds


def quick_fragment(tts: Any, replies: Sequence[str], *, min_fragment_words: int,
                   progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """Per reply: the first chunk with and without the quick fragment, and its synthesis time."""
    rows = []
    for reply in replies:
        row: dict[str, Any] = {"reply": reply}
        for quick in (True, False):
            key = "quick" if quick else "sentence"
            chunk = first_chunk(reply, quick=quick, min_fragment_words=min_fragment_words)
            ms, seconds = _synth_ms(tts, chunk) if chunk else (0.0, 0.0)
            row |= {f"{key}_chunk": chunk, f"{key}_words": len(chunk.split()),
                    f"{key}_synth_ms": round(ms, 1), f"{key}_audio_s": round(seconds, 3)}
        row["differs"] = row["quick_chunk"] != row["sentence_chunk"]
        rows.append(row)
        if progress:
            progress()
    by = {i: r["quick_synth_ms"] for i, r in enumerate(rows)}
    base = {i: r["sentence_synth_ms"] for i, r in enumerate(rows)}
    return {
        "rows": rows,
        "replies_with_a_fragment": sum(r["differs"] for r in rows),
        "quick_synth_ms": describe(by.values()),
        "sentence_synth_ms": describe(base.values()),
        "ratio_quick_to_sentence": median(pair_ratios(by, base)),
        "ratio_where_it_differs": median(pair_ratios(
            {i: v for i, v in by.items() if rows[i]["differs"]}, base)),
    }


class _Capture:
    """Stands in for the LLM to read the exact prompt the completeness signal sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def next_token_logprobs(self, messages: list[dict[str, Any]], candidates: list[str]
                            ) -> dict[str, float]:
        self.messages = messages
        return {}


def _one_token_ms(llm: Any, text: str) -> float:
    """The signal's prompt, completed by one token: the same forward pass over the same prompt,
    without the log-probabilities."""
    capture = _Capture()
    LLMCompleteness(llm=capture).probability(text)
    cancel = threading.Event()
    t0 = perf_s()
    for _ in llm.stream(capture.messages, cancel=cancel, max_tokens=1):
        cancel.set()
    return (perf_s() - t0) * 1000.0


def _time_signal(signal: Any, texts: Sequence[str]) -> tuple[list[float], list[float]]:
    signal.probability("Hello there.")  # the first call pays one-off set-up, not the signal
    times, probs = [], []
    for text in texts:
        t0 = perf_s()
        probs.append(round(signal.probability(text), 3))
        times.append((perf_s() - t0) * 1000.0)
    return times, probs


def completeness_cost(llm: Any, texts: Sequence[str]) -> dict[str, Any]:
    """Milliseconds per `probability()` call, LLM signal and heuristic, on the same texts.

    If the LLM cannot give log-probabilities, the LLM row times its prompt with a one-token
    completion instead and says so (`method`, `error`)."""
    out: dict[str, Any] = {"texts": list(texts)}
    times, probs = _time_signal(HeuristicCompleteness(), texts)
    out["heuristic"] = {"ms": describe(times), "probabilities": probs}
    try:
        times, probs = _time_signal(LLMCompleteness(llm=llm), texts)
        out["llm"] = {"ms": describe(times), "probabilities": probs, "method": "probability()"}
    except Exception as exc:  # report what failed, and still time the prompt
        _one_token_ms(llm, "Hello there.")
        times = [_one_token_ms(llm, text) for text in texts]
        out["llm"] = {"ms": describe(times), "probabilities": None,
                      "error": f"{type(exc).__name__}: {exc}",
                      "method": "one-token completion of the signal's prompt "
                                "(probability() failed)"}
    return out
