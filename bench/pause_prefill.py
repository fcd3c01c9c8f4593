"""Does evaluating the caller's words in their pause change the reply? (`response.prefill_pause`)

In the caller's pause the session evaluates the last partial's words through the words, in
4-token steps (`call/prefill.py`, `LlamaLLM.prefill(through_words=True)`); the reply's request then
evaluates the rest (the words the partial lacked, the assistant's header) in a batch of its own.
llama.cpp's sums over other batches can differ in their last digits, and a greedy reply can then
take other words. Here, on the embedded LLM alone (no audio), each caller line is answered
greedily twice, the conversation up to the caller's words evaluated ahead both times (as the
session does): once as the request finds it, once after the partial's words (the line without its
last word and its closing mark, as a partial often has them) were evaluated in the pause. Reported:
the tokens each request evaluated, its first token, and whether the two replies say the same words.

    python -m bench.pause_prefill [--model qwen2.5-coder-0.5b] [--lines N]
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path
from typing import Any

from .machine import describe_machine, machine_line
from .summary import publish
from .turn_prefill import ask, greedy_llm
from .wire import QUESTIONS

RESULTS = Path(__file__).resolve().parent / "results"
LINES = Path(__file__).resolve().parent / "eou_lines.txt"


def caller_lines(n: int) -> list[str]:
    """The wire's questions, then every k-th line of bench/eou_lines.txt (many domains; its `|`
    marks dropped), `n` in all."""
    written = [" ".join(x.replace("|", " ").split()) for x in LINES.read_text().splitlines()
               if x.strip() and not x.startswith("#") and not x.startswith("agent:")]
    more = max(0, n - len(QUESTIONS))
    step = max(1, len(written) // max(1, more))
    return [*QUESTIONS, *written[::step][:more]]


def partial_of(line: str) -> str:
    """The words a partial often has at the first trailing window: all but the last word, no mark."""
    words = line.rstrip(".?!").split()
    return " ".join(words[:-1]) if len(words) > 1 else ""


def answer(llm: Any, instructions: str, line: str, pause: bool) -> dict[str, Any]:
    llm.forget()
    ahead = [{"role": "system", "content": instructions}, {"role": "user", "content": ""}]
    llm.prefill(ahead, upto_words=True)
    paused = llm.prefill([ahead[0], {"role": "user", "content": partial_of(line)}], through_words=True) if pause else 0
    reply, first_ms, evaluated = ask(llm, [ahead[0], {"role": "user", "content": line}])
    return {"line": line, "pause": pause, "paused_tokens": paused, "evaluated": evaluated,
            "first_token_ms": round(first_ms, 1), "reply": reply}


def main(argv: list[str] | None = None) -> int:
    from pipeline.base.config import DEFAULT_INSTRUCTIONS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--lines", type=int, default=40)
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    llm = greedy_llm(args.model)
    rows = []
    for k, line in enumerate(caller_lines(args.lines)):
        for pause in ((False, True) if k % 2 == 0 else (True, False)):
            rows.append(answer(llm, DEFAULT_INSTRUCTIONS, line, pause))
    machine = describe_machine()
    pairs = [(a, b) for a in rows if not a["pause"] for b in rows if b["pause"] and b["line"] == a["line"]]
    differ = [(a, b) for a, b in pairs if a["reply"] != b["reply"]]

    def med(pause: bool, key: str) -> float:
        return statistics.median(x[key] for x in rows if x["pause"] is pause)

    lines = [f"# The caller's words evaluated in the pause, and the reply: {machine['date'][:10]}", "",
             f"Machine: {machine_line(machine)}; load average (1, 5, 15 min) before "
             f"{' '.join(f'{x:.2f}' for x in load_before)}, after {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
             "", f"Command: `python -m bench.pause_prefill --model {args.model} --lines {args.lines}`; greedy.", "",
             "| the request | prompt tokens it evaluated (median) | first token, ms (median) |", "|---|---|---|",
             f"| as it finds the conversation evaluated ahead | {med(False, 'evaluated'):g} | "
             f"{med(False, 'first_token_ms'):.0f} |",
             f"| after the partial's words in the pause ({med(True, 'paused_tokens'):g} tokens) | "
             f"{med(True, 'evaluated'):g} | {med(True, 'first_token_ms'):.0f} |", "",
             f"The same reply, word for word, for {len(pairs) - len(differ)} of {len(pairs)} caller lines. "
             "Where they differ:", "",
             *[f"- \"{a['line']}\": \"{a['reply']}\" / in the pause: \"{b['reply']}\"" for a, b in differ]]
    results = {"machine": machine, "load_average": [load_before, os.getloadavg()], "model": args.model, "rows": rows}
    publish(RESULTS, f"{machine['date'][:10]}-pause-prefill", results, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
