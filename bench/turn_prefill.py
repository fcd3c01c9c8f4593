"""What a second turn prefills, with and without the conversation evaluated ahead.

After a reply is heard to its end, the session evaluates the conversation with it up to where the
caller's next words go (`call/prefill.py`, `LlamaLLM.prefill(upto_words=True)`): the reply's end
and the caller's header. Here, on the embedded LLM alone (no audio): a first question and the
stage's reply to it, then a second question, its first token timed, with and without that step
between them; the two alternate, round by round. Greedy (temperature 0): the step evaluates in
other batches than the request would, which can move the logits' last digits, so the report
also says whether the second reply's words were the same with the step and without.

    python -m bench.turn_prefill            # bench/results/<date>-turn-prefill.{md,json}
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
from pathlib import Path
from typing import Any

from pipeline.base.clock import perf_s
from pipeline.base.protocols import Generation

from .machine import describe_machine, machine_line
from .summary import publish

RESULTS = Path(__file__).resolve().parent / "results"
# (first question, second question): a call's first two turns at a desk
CALLS = (("What time do you close today?", "Do you have any rooms left for Friday night?"),
         ("I'd like a refund for my last order, please.", "It was the blue kettle."),
         ("Can I book a table for two at seven tonight?", "Under the name Smith."),
         ("My package never arrived. What can I do about it?", "The order number is four seven nine two."))


def ask(llm: Any, messages: list[dict[str, Any]]) -> tuple[str, float, int]:
    """The reply, its first token's ms, and the prompt tokens evaluated for it."""
    result, t0, first, text = Generation(), perf_s(), None, ""
    for piece in llm.stream(messages, cancel=threading.Event(), result=result):
        first = first if first is not None else perf_s() - t0
        text += piece
    evaluated = (result.prompt_tokens or 0) - (result.cached_tokens or 0)
    return text, 1000 * (first or 0.0), evaluated


def greedy_llm(model: str) -> Any:
    """The embedded LLM at temperature 0, its kernels warmed by one reply under the default
    instructions (each bench's first timed request then finds only its own costs)."""
    from pipeline.base.config import DEFAULT_INSTRUCTIONS
    from pipeline.stages.llm import LlamaLLM

    llm = LlamaLLM(model=model, temperature=0.0)
    ask(llm, [{"role": "system", "content": DEFAULT_INSTRUCTIONS}, {"role": "user", "content": "Hello."}])
    return llm


def second_turn(llm: Any, instructions: str, first: str, second: str, ahead: bool) -> dict[str, Any]:
    messages = [{"role": "system", "content": instructions}, {"role": "user", "content": first}]
    reply, _, _ = ask(llm, messages)
    messages.append({"role": "assistant", "content": reply})
    ahead_tokens = llm.prefill([*messages, {"role": "user", "content": ""}], upto_words=True) if ahead else 0
    answer, first_ms, evaluated = ask(llm, [*messages, {"role": "user", "content": second}])
    return {"question": second, "ahead": ahead, "ahead_tokens": ahead_tokens, "first_token_ms": round(first_ms, 1),
            "evaluated": evaluated, "first_reply": reply, "reply": answer}


def main(argv: list[str] | None = None) -> int:
    from pipeline.base.config import DEFAULT_INSTRUCTIONS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    llm, instructions = greedy_llm(args.model), DEFAULT_INSTRUCTIONS
    rows = []
    for r in range(args.rounds):
        for ahead in ((False, True) if r % 2 == 0 else (True, False)):
            rows += [second_turn(llm, instructions, a, b, ahead) | {"round": r} for a, b in CALLS]
    machine = describe_machine()

    def med(ahead: bool, key: str) -> float:
        return statistics.median(x[key] for x in rows if x["ahead"] is ahead)

    matched = [(a, b) for a in rows if not a["ahead"]
               for b in rows if b["ahead"] and b["round"] == a["round"] and b["question"] == a["question"]]
    pairs = [(a["first_token_ms"], b["first_token_ms"]) for a, b in matched]
    alike = [a["reply"] == b["reply"] for a, b in matched if a["first_reply"] == b["first_reply"]]
    results = {"machine": machine, "load_average": [load_before, os.getloadavg()], "model": args.model,
               "rows": rows}
    lines = [f"# A second turn's prefill, with the conversation evaluated ahead: {machine['date'][:10]}", "",
             f"Machine: {machine_line(machine)}; load average (1, 5, 15 min) before "
             f"{' '.join(f'{x:.2f}' for x in load_before)}, after {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
             "", f"Command: `python -m bench.turn_prefill --model {args.model} --rounds {args.rounds}`", "",
             "| second turn | prompt tokens evaluated (median) | first token, ms (median) |", "|---|---|---|",
             f"| as the request finds it | {med(False, 'evaluated'):g} | {med(False, 'first_token_ms'):.0f} |",
             f"| the conversation evaluated ahead ({med(True, 'ahead_tokens'):g} tokens) | "
             f"{med(True, 'evaluated'):g} | {med(True, 'first_token_ms'):.0f} |", "",
             f"Per question and round, ahead against not: median "
             f"{statistics.median(b - a for a, b in pairs):+.0f} ms, sooner in "
             f"{sum(b < a for a, b in pairs)} of {len(pairs)}. The second reply's words the same with and "
             f"without the step in {sum(alike)} of {len(alike)} pairs whose first replies were the same "
             f"(of {len(matched)})."]
    publish(RESULTS, f"{machine['date'][:10]}-turn-prefill", results, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
