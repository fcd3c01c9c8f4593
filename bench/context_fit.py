"""What fitting the conversation into the context costs per turn, over a 200-turn call.

A scripted call grows by one turn at a time (a caller line, the agent's reply, a refund call with
its result every tenth turn); before each reply the whole conversation is fitted into the prompt
budget (context window minus the reply's max_tokens), with one cache kept for the call, as the
responder does. Counted twice: by ScriptedLLM's word estimate (the fitting logic alone) and by
SmolLM2's own tokenizer through LlamaLLM (the real cost: the chat template rendered and
tokenized), when models/ has it.

    python -m bench.context_fit            # a markdown table on stdout
    python -m bench.context_fit --turns 50
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from pipeline.base.conversation import Item
from pipeline.base.models import model_file
from pipeline.call.context import fit_conversation

LLM_PATH = model_file("llm/SmolLM2-135M-Instruct.Q4_1.gguf")
INSTRUCTIONS = ("You are a helpful voice assistant on a phone call. Answer in one or two short, "
                "plain sentences. No lists, no markdown.\n\nYou can use tools. To use one, reply "
                'with only a JSON object: {"name": "<tool>", "arguments": {...}}. Tools:\n'
                "- refund: Refund an order. Arguments: order_id (string), holding_line (string, "
                "spoken)")
WORDS = ("order refund card delivery package tomorrow address account payment number please "
         "thanks could you check when where why status arrive week today email phone").split()


def grow(turn: int, rng: random.Random) -> list[Item]:
    """One turn of a scripted call: the caller, maybe a tool call and its result, the reply."""
    said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 18))).capitalize() + "?"
    reply = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))).capitalize() + "."
    items = [Item(type="message", role="user", text=said)]
    if turn % 10 == 9:
        call_id = f"call_{turn}"
        items += [Item(type="function_call", call_id=call_id, name="refund",
                       arguments=json.dumps({"order_id": f"A{turn}",
                                             "holding_line": "One moment while I check."})),
                  Item(type="function_call_output", call_id=call_id, name="refund",
                       output=json.dumps({"refunded": True, "card_last4": "4242"}))]
    return items + [Item(type="message", role="assistant", text=reply)]


def one_call(count_tokens: Callable[[list[dict[str, Any]]], int], *, turns: int,
             max_prompt_tokens: int) -> dict[str, float]:
    rng = random.Random(16)
    items: list[Item] = []
    cache: dict[Any, int] = {}
    times_us, calls, omitted = [], [], 0
    for turn in range(turns):
        new = grow(turn, rng)
        items += new[:-1]  # the reply is fitted for before it exists
        t0 = time.perf_counter_ns()
        fit = fit_conversation(INSTRUCTIONS, items, count_tokens=count_tokens,
                               max_prompt_tokens=max_prompt_tokens, cache=cache)
        times_us.append((time.perf_counter_ns() - t0) / 1000)
        calls.append(fit.count_calls)
        omitted = fit.turns_omitted
        items.append(new[-1])
    t0 = time.perf_counter_ns()
    fit_conversation(INSTRUCTIONS, items, count_tokens=count_tokens,
                     max_prompt_tokens=max_prompt_tokens)
    cold_us = (time.perf_counter_ns() - t0) / 1000
    times_us.sort()
    return {"median_us": statistics.median(times_us),
            "p90_us": times_us[int(0.9 * (len(times_us) - 1))], "max_us": times_us[-1],
            "median_counts": statistics.median(calls), "omitted": omitted, "cold_us": cold_us}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_fit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv)
    from pipeline.stages.fakes import ScriptedLLM

    counters: list[tuple[str, Any]] = [("ScriptedLLM (word estimate)", ScriptedLLM())]
    if LLM_PATH.is_file():
        from pipeline.stages.llm import LlamaLLM

        counters.append(("LlamaLLM (SmolLM2 tokenizer)", LlamaLLM(model_path=str(LLM_PATH))))
    print(f"Fitting a {args.turns}-turn call, turn by turn (one cache for the call); "
          "budget = context window - max_tokens.\n")
    print("| counter | budget | median µs/turn | p90 µs | max µs | counts/turn (median) "
          "| turns omitted at the end | one cold fit of the whole call, µs |")
    print("|---|---|---|---|---|---|---|---|")
    for name, llm in counters:
        budget = llm.context_window - llm.max_tokens
        r = one_call(llm.count_tokens, turns=args.turns, max_prompt_tokens=budget)
        print(f"| {name} | {budget} | {r['median_us']:.0f} | {r['p90_us']:.0f} | "
              f"{r['max_us']:.0f} | {r['median_counts']:.0f} | {r['omitted']} | "
              f"{r['cold_us']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
