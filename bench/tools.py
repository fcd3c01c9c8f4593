"""Tool choice with the real model: does it call the right tool, with the caller's arguments?

The labelled set (`bench/tool_set.json`, 64 caller lines as Whisper writes them) covers the refund
desk (examples/refund_desk.py) and the front desk (examples/front_desk.py), both with `end_call`:
lines that need a tool (with the arguments the caller gave), lines that need a question back
(something the tool needs is missing), and lines that need none (numbers quoted without asking,
a quotation, small talk). Each line is one user turn under the session's instructions, with the
model's own tool dialect (`pipeline.tools.dialect`) and, unless `--free`, the session's grammar.

Reported per model: recall (lines that need a tool calling the right one), false calls (lines
that need none or a question calling one), arguments right (of the right calls), and what the
grounding guard refuses (side-effecting calls whose arguments the line does not hold: invented
ones stopped, and right ones wrongly stopped). It asserts nothing.

    python -m bench.tools                                  # the configured model, the table
    python -m bench.tools --models smollm2-135m,qwen2.5-coder-0.5b --out bench/results/x.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.base.clock import RealClock, perf_s
from pipeline.call.callctl import end_call_tool
from pipeline.stages.llm import Generation
from pipeline.tools import ToolRegistry, parse_tool_call
from pipeline.tools.dialect import JSON
from pipeline.tools.grounding import Evidence, ungrounded

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SET = Path(__file__).resolve().with_name("tool_set.json")
CASES: list[dict[str, Any]] = json.loads(SET.read_text(encoding="utf-8"))["cases"]
PROMPTS = CASES  # the name bench.ttfa sizes its progress by
QUICK_PROMPTS = 4


def desk_tools() -> dict[str, ToolRegistry]:
    """The examples' tools, with end_call; only their schemas are used (nothing is run)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import front_desk
    import refund_desk

    clock = RealClock()
    refund = refund_desk.build_tools(refund_desk.PaymentProvider(clock=clock))
    front = front_desk.build_tools(clock)
    return {"refund": ToolRegistry(specs=[*refund.specs(), end_call_tool()]),
            "front": ToolRegistry(specs=[*front.specs(), end_call_tool()])}


def refund_desk_tools() -> ToolRegistry:
    return desk_tools()["refund"]


def _same(a: Any, b: Any) -> bool:
    def norm(v: Any) -> str:
        return re.sub(r"[^a-z0-9]", "", str(v).lower())
    return norm(a) == norm(b)


def judge(case: dict[str, Any], text: str, registry: ToolRegistry) -> dict[str, Any]:
    """One line's verdict: what was called, was it right, and would the guard let it run."""
    try:
        call = parse_tool_call(text, registry.specs())
        parsed, error = True, None
    except ValueError as exc:
        call, parsed, error = None, False, str(exc)
    picked = call.name if call is not None else (None if parsed else "unparsed")
    wanted = case["tool"] if case["expect"] == "tool" else None
    args_ok = None
    if call is not None and picked == wanted and case.get("arguments"):
        args_ok = all(_same(call.arguments.get(k, ""), v) for k, v in case["arguments"].items())
    refused = None
    if call is not None and registry[call.name].side_effect:
        refused = bool(ungrounded(registry[call.name], call.arguments, Evidence(said=[case["line"]])))
    return {"parsed": parsed, "picked": picked, "right_tool": parsed and picked == wanted,
            "args_ok": args_ok, "refused": refused, "error": error,
            "arguments": call.arguments if call is not None else None}


def run_tools(llm: Any, instructions: str, *, quick: bool = False, grammar: bool = True,
              progress: Callable[[], None] | None = None, cases: slice | None = None,
              on_row: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    desks = desk_tools()
    dialect = getattr(llm, "tool_dialect", JSON)
    rows = []
    chosen = CASES[:QUICK_PROMPTS] if quick else CASES[cases or slice(None)]
    for case in chosen:
        registry = desks[case["desk"]]
        specs = registry.specs()
        system = instructions + "\n\n" + dialect.prompt(specs)  # what Responder.messages() sends
        messages = [{"role": "system", "content": system}, {"role": "user", "content": case["line"]}]
        gen = Generation()
        t0 = perf_s()
        first = None
        pieces = []
        for piece in llm.stream(messages, cancel=threading.Event(), result=gen,
                                grammar=dialect.grammar(specs) if grammar else None):
            first = first if first is not None else perf_s()
            pieces.append(piece)
        text = "".join(pieces)
        rows.append({"desk": case["desk"], "prompt": case["line"], "expect": case["expect"],
                     "expected": case["tool"], "output": text.strip(), "tokens": gen.output_tokens,
                     "first_ms": round((first - t0) * 1000) if first is not None else None,
                     "ms": round((perf_s() - t0) * 1000), **judge(case, text, registry)})
        if on_row:
            on_row(rows[-1])
        if progress:
            progress()
    return tally(rows)


def _print_row(row: dict[str, Any]) -> None:
    """One line's verdict as it is made, so a long run that is stopped still says something."""
    print(json.dumps({k: row[k] for k in ("desk", "prompt", "expect", "expected", "picked", "args_ok",
                                          "refused", "first_ms", "ms")}), file=sys.stderr, flush=True)


def tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    need = [r for r in rows if r["expect"] == "tool"]
    other = [r for r in rows if r["expect"] != "tool"]
    with_args = [r for r in need if r["args_ok"] is not None]
    side = [r for r in rows if r["refused"] is not None]
    firsts = [r["first_ms"] for r in rows if r["first_ms"] is not None]
    return {
        "rows": rows,
        "n": len(rows),
        "parsed": sum(r["parsed"] for r in rows),
        "right_tool": sum(r["right_tool"] for r in rows),
        "calls_expected": len(need),
        "calls_made": sum(r["right_tool"] for r in need),
        "args_checked": len(with_args),
        "args_right": sum(bool(r["args_ok"]) for r in with_args),
        "plain_expected": len(other),
        "false_calls": sum(r["picked"] not in (None, "unparsed") for r in other),
        "asks_expected": sum(r["expect"] == "ask" for r in rows),
        "asks_right": sum(r["expect"] == "ask" and r["picked"] is None for r in rows),
        "side_effect_calls": len(side),
        "guard_refused": sum(bool(r["refused"]) for r in side),
        # refused although the call was the right one with the right arguments
        "guard_wrongly_refused": sum(bool(r["refused"]) and bool(r["args_ok"]) for r in side),
        # let through although the call was wrong (another tool was needed, or none)
        "invented_let_through": sum(r["refused"] is False and not r["right_tool"] for r in side),
        "first_ms_median": round(statistics.median(firsts)) if firsts else None,
        "ms_median": round(statistics.median(r["ms"] for r in rows)) if rows else None,
    }


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "–"


def summary_line(t: dict[str, Any]) -> str:
    return (f"recall {_pct(t['calls_made'], t['calls_expected'])}; "
            f"false calls {_pct(t['false_calls'], t['plain_expected'])}; "
            f"arguments right {_pct(t['args_right'], t['args_checked'])}; "
            f"asked back when it should {_pct(t['asks_right'], t['asks_expected'])}; "
            f"side-effect calls refused by the guard {t['guard_refused']}/{t['side_effect_calls']} "
            f"(right calls wrongly refused {t['guard_wrongly_refused']}, wrong calls let through "
            f"{t['invented_let_through']}); {t['parsed']}/{t['n']} parsed; "
            f"first token median {t['first_ms_median']} ms, whole reply {t['ms_median']} ms")


COLUMNS = (("desk", "desk"), ("prompt", "caller said"), ("expect", "needs"), ("expected", "tool"),
           ("picked", "model called"), ("args_ok", "args right"), ("refused", "guard refused"),
           ("first_ms", "first token ms"), ("ms", "ms"))


def main(argv: list[str] | None = None) -> int:
    from pipeline.base.config import StageConfig, build_stage
    from pipeline.transports.runtime import add_config_args, load_config

    from .machine import describe_machine, machine_line
    from .summary import markdown_table

    parser = argparse.ArgumentParser(prog="python -m bench.tools", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_args(parser)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_PROMPTS} lines only")
    parser.add_argument("--models", help="embedded models by name (llm.model), comma separated; "
                        "default: the configured LLM")
    parser.add_argument("--free", action="store_true", help="no grammar: the model writes freely")
    parser.add_argument("--cases", default="", metavar="A:B",
                        help="only these lines of the set (a Python slice), to split a long run")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument("--note", default="", help="a note for the results (e.g. the machine's load)")
    args = parser.parse_args(argv)
    config = load_config(args)
    names = args.models.split(",") if args.models else [None]
    part = slice(*(int(x) if x else None for x in args.cases.split(":"))) if args.cases else None
    results: dict[str, Any] = {"machine": describe_machine(), "note": args.note,
                               "grammar": not args.free, "cases": args.cases or "all", "models": {}}
    for name in names:
        stage = config.llm if name is None else StageConfig("llama-cpp", {**config.llm.params, "model": name})
        llm = build_stage("llm", stage)
        result = run_tools(llm, config.response.instructions, quick=args.quick, grammar=not args.free,
                           cases=part, on_row=_print_row)
        label = name or config.llm.name
        results["models"][label] = result
        print(f"## {label} ({'grammar' if not args.free else 'no grammar'})\n")
        print(markdown_table(result["rows"], COLUMNS))
        print()
        print(summary_line(result))
        print(flush=True)
        del llm
    print(machine_line(results["machine"]) + (f"; {args.note}" if args.note else ""))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
