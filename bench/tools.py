"""Tool choice with the real model: does it call the right tool, with the caller's arguments?

The labelled set (`bench/tool_set.json`, 64 caller lines as Whisper writes them) covers the refund
desk (examples/refund_desk.py) and the front desk (examples/front_desk.py), both with `end_call`:
lines that need a tool (with the arguments the caller gave), lines that need a question back
(something the tool needs is missing), and lines that need none (numbers quoted without asking,
a quotation, small talk). Each line is one user turn under the session's instructions, with the
model's own tool dialect (`pipeline.tools.dialect`) and, unless `--free`, the session's grammar.

Prompt variants (`--prompts`): `plain` is the session's instructions as configured; `guided` adds
one general paragraph on when to call a tool (GUIDANCE: only for what the caller asked, only
with what the caller said, a question back when something is missing). Each line belongs to
the `tune` half (even positions in the set) or the `check` half (odd positions): prompt changes
are judged on `tune` and `check` says whether they hold on lines they were not made on.

Reported per model: recall (lines that need a tool calling the right one), false calls (lines
that need none or a question calling one), arguments right (of the right calls), and what the
grounding guard refuses (side-effecting calls whose arguments the line does not hold: invented
ones stopped, and right ones wrongly stopped), first token, first chunk (the first sentence or
clause the chunker lets go, or a call's spoken argument: the holding line) and first audio (that
chunk synthesised by Piper; `--no-audio` leaves it out). It asserts nothing.

    python -m bench.tools                                  # the configured model, the table
    python -m bench.tools --models smollm2-135m,qwen2.5-coder-0.5b --out bench/results/x.json
    python -m bench.tools --models qwen2.5-coder-0.5b --prompts plain,guided --free --half tune
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
from pipeline.chunker import SentenceChunker
from pipeline.stages.llm import Generation
from pipeline.tools import ToolRegistry, parse_tool_call
from pipeline.tools.ask import asking_for, names_a_tool, question
from pipeline.tools.choice import asked_for, must_close, offered
from pipeline.tools.dialect import JSON
from pipeline.tools.evidence import Evidence
from pipeline.tools.given import lacking, stated_ids
from pipeline.tools.provenance import trace
from pipeline.tools.stream import CallMarkup, ToolCallStream, called_name, starts_tool_call

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SET = Path(__file__).resolve().with_name("tool_set.json")
CASES: list[dict[str, Any]] = json.loads(SET.read_text(encoding="utf-8"))["cases"]
PROMPTS = CASES  # the name bench.ttfa sizes its progress by
QUICK_PROMPTS = 4
HALVES = ("tune", "check")

# The `guided` variant's paragraph: when to call, in general terms (no line of the set in it).
GUIDANCE = ("Call a tool only when the caller asks for what it does, and only with values the "
            "caller said: never make up an order number, amount, name or date. If the caller "
            "has not given something the tool needs, ask for it in words instead. When the caller "
            "only mentions numbers, quotes something or chats, answer in words without a tool. "
            "Call end_call only when the caller says goodbye or that they are done.")
PROMPT_VARIANTS = {"plain": "", "guided": GUIDANCE}


def half_of(index: int) -> str:
    """The half of the set a line (by its position) belongs to."""
    return HALVES[index % 2]


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


def judge(case: dict[str, Any], text: str, registry: ToolRegistry,
          offered_names: set[str] | None = None) -> dict[str, Any]:
    """One line's verdict: what was called, was it right, would the guard let it run, and what
    the caller would get in a session (`session`, see `session_outcome`)."""
    written = False
    try:
        call = parse_tool_call(text, registry.specs())
        parsed, error = True, None
        if call is None:  # a call written inside the words (a markdown block, after a sentence)
            markup = CallMarkup()
            markup.push(text)
            if markup.call:
                call = parse_tool_call(markup.call, registry.specs())
                written = call is not None
    except ValueError as exc:
        call, parsed, error = None, False, str(exc)
    picked = call.name if call is not None else (None if parsed else "unparsed")
    wanted = case["tool"] if case["expect"] == "tool" else None
    args_ok = None
    if call is not None and picked == wanted and case.get("arguments"):
        args_ok = all(_same(call.arguments.get(k, ""), v) for k, v in case["arguments"].items())
    refused = None
    if call is not None and registry[call.name].side_effect:
        refused = bool(trace(registry[call.name], call.arguments, Evidence(said=[case["line"]])).missing)
    return {"parsed": parsed, "picked": picked, "right_tool": parsed and picked == wanted,
            "args_ok": args_ok, "refused": refused, "error": error, "written": written,
            "arguments": call.arguments if call is not None else None,
            "session": session_outcome(case["line"], text, registry, call, written=written,
                                       refused=bool(refused), offered_names=offered_names)}


def session_outcome(line: str, text: str, registry: ToolRegistry, call: Any, *, written: bool,
                    refused: bool, offered_names: set[str] | None) -> str:
    """What the caller gets in a session from this reply, by the session's own rules: `run:NAME`
    (the call is made and its tool runs), `ask` (a question back: the reply's own, or the one
    the session owes for a tool the caller has not given enough for, `pipeline.tools.ask`),
    `words` (an answer with no question) or `silence`.

    A call at the reply's start is made (the grammar offered it); a call written in the words
    is made only where the reply was offered its tool (`ToolDesk.offers`); a side effect the
    grounding guard refuses runs nothing and its reply asks for what was refused."""
    markup = CallMarkup()
    words = (markup.push(text) + markup.finish()).strip() if not starts_tool_call(text) else ""
    if call is not None and (not written or offered_names is None or call.name in offered_names):
        if refused:
            return "ask"
        return f"run:{call.name}"
    chunker = SentenceChunker()
    sentences = chunker.push(words + " ") + chunker.flush()
    said = Evidence(said=[line])

    def about(sentence: str) -> str | None:  # not said: the tool it is about ("" none); None: said
        if invented := stated_ids(sentence, registry.specs(), said):  # an id nobody gave: asked for
            spec = asking_for(invented[0][1], registry.specs(), lambda s: lacking(s, said))
            return spec.name if spec is not None else ""
        return names_a_tool(sentence, registry.specs())

    named = [(x, about(x)) for x in sentences]
    talked = [n for _x, n in named if n is not None]
    words = " ".join(x for x, n in named if n is None)  # a sentence naming a tool is never said
    if "?" in words:
        return "ask"
    name = call.name if call is not None else None
    if name is None and markup.call:  # cut off mid-call: its name, where it got that far
        name = called_name(markup.call)
    name = name or next((t for t in talked if t), None)
    spec = registry.get(name) if name else None
    if spec is None and offered_names is not None:  # asked for by name, not offered: asked back
        spec = asked_for(registry.specs(), line)
    if spec is not None and question(spec, lacking(spec, said)):
        return "ask"
    return "words" if words else "silence"


def run_tools(llm: Any, instructions: str, *, quick: bool = False, grammar: bool = True,
              progress: Callable[[], None] | None = None, cases: slice | None = None,
              on_row: Callable[[dict[str, Any]], None] | None = None, half: str | None = None,
              tts: Any = None, choice: bool = False) -> dict[str, Any]:
    desks = desk_tools()
    dialect = getattr(llm, "tool_dialect", JSON)
    rows = []
    indexed = list(enumerate(CASES))
    chosen = indexed[:QUICK_PROMPTS] if quick else indexed[cases or slice(None)]
    for index, case in chosen:
        if half is not None and half_of(index) != half:
            continue
        registry = desks[case["desk"]]
        specs = registry.specs()
        system = instructions + "\n\n" + dialect.prompt(specs)  # what Responder.messages() sends
        messages = [{"role": "system", "content": system}, {"role": "user", "content": case["line"]}]
        gen = Generation()
        chunker = SentenceChunker()
        call = ToolCallStream(registry.get)
        t0 = perf_s()
        first = first_chunk_at = None
        first_chunk = ""
        pieces = []
        # the session's tool choice (`pipeline.tools.choice`): the grammar offers only these
        choosable = offered(specs, Evidence(said=[case["line"]]), last_said=case["line"]) if choice else specs
        forced = must_close(choosable, case["line"]) if choice else []
        for piece in llm.stream(messages, cancel=threading.Event(), result=gen,
                                grammar=dialect.grammar(forced or choosable, allow_text=not forced)
                                if grammar else None):
            first = first if first is not None else perf_s()
            pieces.append(piece)
            if first_chunk_at is None:
                text = "".join(pieces)
                said = (call.progress(text)[1] if starts_tool_call(text)
                        else chunker.push(piece) if starts_tool_call(text) is False else [])
                if said:
                    first_chunk_at, first_chunk = perf_s(), said[0]
        text = "".join(pieces)
        if first_chunk_at is None and not starts_tool_call(text):
            rest = chunker.flush()
            if rest:
                first_chunk_at, first_chunk = perf_s(), rest[0]
        first_audio_ms = None
        if tts is not None and first_chunk_at is not None:
            t1 = perf_s()
            tts.synthesize(first_chunk)
            first_audio_ms = round((first_chunk_at - t0 + perf_s() - t1) * 1000)
        rows.append({"index": index, "half": half_of(index), "desk": case["desk"], "prompt": case["line"],
                     "expect": case["expect"], "expected": case["tool"], "output": text.strip(),
                     "tokens": gen.output_tokens,
                     "first_ms": round((first - t0) * 1000) if first is not None else None,
                     "first_chunk_ms": round((first_chunk_at - t0) * 1000) if first_chunk_at else None,
                     "first_audio_ms": first_audio_ms,
                     "ms": round((perf_s() - t0) * 1000),
                     **judge(case, text, registry, {x.name for x in choosable} if choice else None)})
        if on_row:
            on_row(rows[-1])
        if progress:
            progress()
    return tally(rows)


def _print_row(row: dict[str, Any]) -> None:
    """One line's verdict as it is made, so a long run that is stopped still says something."""
    print(json.dumps({k: row[k] for k in ("index", "desk", "prompt", "expect", "expected", "picked", "args_ok", "session",
                                          "refused", "first_ms", "first_audio_ms", "ms")}),
          file=sys.stderr, flush=True)


def tally(rows: list[dict[str, Any]], *, halves: bool = True) -> dict[str, Any]:
    need = [r for r in rows if r["expect"] == "tool"]
    other = [r for r in rows if r["expect"] != "tool"]
    with_args = [r for r in need if r["args_ok"] is not None]
    side = [r for r in rows if r["refused"] is not None]
    firsts = [r["first_ms"] for r in rows if r["first_ms"] is not None]
    audio = [r["first_audio_ms"] for r in rows if r.get("first_audio_ms") is not None]
    out = {
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
        # what the caller gets in a session (`session_outcome`)
        "session_runs_right": sum(r.get("session") == f"run:{r.get('expected')}" for r in need),
        "session_false_runs": sum(str(r.get("session", "")).startswith("run:") for r in other),
        "session_asks_right": sum(r["expect"] == "ask" and r.get("session") == "ask" for r in rows),
        "session_silent": sum(r.get("session") == "silence" for r in rows),
        "first_ms_median": round(statistics.median(firsts)) if firsts else None,
        "first_audio_ms_median": round(statistics.median(audio)) if audio else None,
        "ms_median": round(statistics.median(r["ms"] for r in rows)) if rows else None,
    }
    if halves:  # each half on its own: were the prompts made to fit the lines they were tried on?
        out["halves"] = {h: {k: v for k, v in tally([r for r in rows if r.get("half") == h],
                                                     halves=False).items() if k != "rows"}
                         for h in HALVES if any(r.get("half") == h for r in rows)}
    return out


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
            f"in a session: the right tool runs {_pct(t['session_runs_right'], t['calls_expected'])}, "
            f"a tool runs where none should {_pct(t['session_false_runs'], t['plain_expected'])}, "
            f"asked back {_pct(t['session_asks_right'], t['asks_expected'])}, silent {t['session_silent']}; "
            f"first token median {t['first_ms_median']} ms, first audio "
            f"{t.get('first_audio_ms_median')} ms, whole reply {t['ms_median']} ms")


COLUMNS = (("desk", "desk"), ("prompt", "caller said"), ("expect", "needs"), ("expected", "tool"),
           ("picked", "model called"), ("args_ok", "args right"), ("refused", "guard refused"),
           ("session", "in a session"),
           ("first_ms", "first token ms"), ("first_audio_ms", "first audio ms"), ("ms", "ms"))


def rejudge(path: Path, out: Path | None) -> int:
    """`--rejudge`: the stored replies of a run judged again (the latencies are the run's)."""
    from .summary import markdown_table

    results = json.loads(path.read_text(encoding="utf-8"))
    desks = desk_tools()
    for label, result in results["models"].items():
        rows = []
        for row in result["rows"]:
            case = CASES[row["index"]]
            registry = desks[case["desk"]]
            names = ({s.name for s in offered(registry.specs(), Evidence(said=[case["line"]]), last_said=case["line"])}
                     if results.get("choice") else None)
            rows.append({**row, **judge(case, row["output"], registry, names)})
        results["models"][label] = tally(rows)
        print(f"## {label} (re-judged from {path.name})\n")
        print(markdown_table(rows, COLUMNS))
        print()
        print(summary_line(results["models"][label]))
        for h, t in results["models"][label]["halves"].items():
            print(f"- {h} half: {summary_line(t)}")
        print(flush=True)
    results["rejudged_from"] = path.name
    if out:
        out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


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
    parser.add_argument("--prompts", default="plain", help="prompt variants, comma separated: "
                        + ", ".join(PROMPT_VARIANTS))
    parser.add_argument("--choice", action="store_true",
                        help="the session's tool choice: the grammar offers only the tools the line "
                        "can ground, and end_call only when it closes the call (pipeline.tools.choice)")
    parser.add_argument("--half", choices=HALVES, help="only one half of the set (see above)")
    parser.add_argument("--no-audio", action="store_true", help="no Piper: first audio not measured")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument("--note", default="", help="a note for the results (e.g. the machine's load)")
    parser.add_argument("--rejudge", type=Path, metavar="JSON",
                        help="no model: judge the replies stored in an earlier --out file again, with "
                        "this code's judge (what a session now does with them), and report that")
    args = parser.parse_args(argv)
    if args.rejudge is not None:
        return rejudge(args.rejudge, args.out)
    config = load_config(args)
    names = args.models.split(",") if args.models else [None]
    part = slice(*(int(x) if x else None for x in args.cases.split(":"))) if args.cases else None
    variants = args.prompts.split(",")
    for v in variants:
        if v not in PROMPT_VARIANTS:
            parser.error(f"--prompts: {v!r} is not a variant; choose from {', '.join(PROMPT_VARIANTS)}")
    results: dict[str, Any] = {"machine": describe_machine(), "note": args.note,
                               "grammar": not args.free, "choice": args.choice, "cases": args.cases or "all",
                               "half": args.half or "both", "models": {}}
    tts = None if args.no_audio else build_stage("tts", config.tts)
    for name in names:
        stage = config.llm if name is None else StageConfig("llama-cpp", {**config.llm.params, "model": name})
        llm = build_stage("llm", stage)
        for variant in variants:
            instructions = " ".join(x for x in (config.response.instructions, PROMPT_VARIANTS[variant]) if x)
            result = run_tools(llm, instructions, quick=args.quick, grammar=not args.free,
                               cases=part, on_row=_print_row, half=args.half, tts=tts, choice=args.choice)
            label = f"{name or config.llm.name} / {variant}" + (", tool choice" if args.choice else "")
            results["models"][label] = result
            print(f"## {label} ({'grammar' if not args.free else 'no grammar'})\n")
            print(markdown_table(result["rows"], COLUMNS))
            print()
            print(summary_line(result))
            for h, t in result["halves"].items():
                print(f"- {h} half: {summary_line(t)}")
            print(flush=True)
        del llm
    print(machine_line(results["machine"]) + (f"; {args.note}" if args.note else ""))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
