"""Tool choice with the real model: does its output parse, and does it pick the right tool?

The refund desk's tools (examples/refund_desk.py), the session's own tool prompt and grammar,
one user turn each. This reports; it asserts nothing (a 135M model is expected to miss some).

    python -m bench.tools              # prints the table
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.base.clock import RealClock, perf_s
from pipeline.call.desk import tools_prompt
from pipeline.stages.llm import Generation
from pipeline.tools import ToolRegistry, parse_tool_call, tool_call_grammar

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# (what the caller said, as Whisper would write it; the tool it calls for, None for a plain
# answer; the order the call is about)
PROMPTS: tuple[tuple[str, str | None, str | None], ...] = (
    ("I'd like a refund for order 4417 to my card ending 1234.", "refund", "4417"),
    ("Can you refund order 5120, please? The card ends in 9876.", "refund", "5120"),
    ("Refund order 4417 to the card ending 5678.", "refund", "4417"),
    ("The skillet from order 4417 arrived cracked. I want my money back on the card ending 4321.",
     "refund", "4417"),
    ("Where is my order 5120?", "look_up_order", "5120"),
    ("What's the status of order 4417?", "look_up_order", "4417"),
    ("Please look up order 4417 for me.", "look_up_order", "4417"),
    ("Has order 5120 shipped yet?", "look_up_order", "5120"),
    ("What are your opening hours?", None, None),
    ("Thanks, that's all for today.", None, None),
)
QUICK_PROMPTS = 2


def refund_desk_tools() -> ToolRegistry:
    """The example's tools; only their schemas are used (nothing is run)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import refund_desk

    return refund_desk.build_tools(refund_desk.PaymentProvider(clock=RealClock()))


def _judge(text: str, registry: ToolRegistry, expected: str | None,
           order: str | None) -> dict[str, Any]:
    try:
        call = parse_tool_call(text, registry.specs())
        parsed, error = True, None
    except ValueError as exc:
        call, parsed, error = None, False, str(exc)
    picked = call.name if call is not None else (None if parsed else "unparsed")
    args_ok = None
    if call is not None and order is not None:
        args_ok = str(call.arguments.get("order_id", "")).strip() == order
    return {"parsed": parsed, "picked": picked, "right_tool": parsed and picked == expected,
            "right_order": args_ok, "error": error}


def run_tools(llm: Any, instructions: str, *, quick: bool = False,
              progress: Callable[[], None] | None = None) -> dict[str, Any]:
    registry = refund_desk_tools()
    grammar = tool_call_grammar(registry.specs())  # what Session.tool_grammar() builds
    system = instructions + "\n\n" + tools_prompt(registry)  # what Session._messages() sends
    rows = []
    for prompt, expected, order in PROMPTS[:QUICK_PROMPTS] if quick else PROMPTS:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        gen = Generation()
        t0 = perf_s()
        text = "".join(llm.stream(messages, cancel=threading.Event(), grammar=grammar, result=gen))
        ms = (perf_s() - t0) * 1000.0
        rows.append({"prompt": prompt, "expected": expected, "output": text.strip(),
                     "tokens": gen.output_tokens, "finish": gen.finish_reason, "ms": round(ms),
                     **_judge(text, registry, expected, order)})
        if progress:
            progress()
    calls = [r for r in rows if r["expected"] is not None]
    with_order = [r for r in calls if r["right_order"] is not None]
    return {
        "rows": rows,
        "n": len(rows),
        "parsed": sum(r["parsed"] for r in rows),
        "right_tool": sum(r["right_tool"] for r in rows),
        "calls_expected": len(calls),
        "calls_made": sum(r["picked"] not in (None, "unparsed") for r in calls),
        "right_order": sum(bool(r["right_order"]) for r in with_order),
        "plain_expected": len(rows) - len(calls),
        "plain_right": sum(r["right_tool"] for r in rows if r["expected"] is None),
    }


def summary_line(t: dict[str, Any]) -> str:
    return (f"{t['parsed']}/{t['n']} parsed; "
            f"right tool (or rightly none) {t['right_tool']}/{t['n']}; "
            f"called a tool when one was needed {t['calls_made']}/{t['calls_expected']}; "
            f"right order id {t['right_order']}/{t['calls_expected']}; "
            f"answered in words when no tool applied {t['plain_right']}/{t['plain_expected']}")


COLUMNS = (("prompt", "caller said"), ("expected", "expected"), ("picked", "model picked"),
           ("right_order", "right order id"), ("tokens", "tokens"), ("ms", "ms"))


def main(argv: list[str] | None = None) -> int:
    from pipeline.base.config import build_stage
    from pipeline.transports.runtime import add_config_args, load_config

    from .summary import markdown_table

    parser = argparse.ArgumentParser(prog="python -m bench.tools", description=__doc__)
    add_config_args(parser)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_PROMPTS} prompts only")
    args = parser.parse_args(argv)
    config = load_config(args)
    llm = build_stage("llm", config.llm)
    result = run_tools(llm, config.response.instructions, quick=args.quick)
    print(markdown_table(result["rows"], COLUMNS))
    print()
    print(summary_line(result))
    print(json.dumps([r["output"] for r in result["rows"]], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

