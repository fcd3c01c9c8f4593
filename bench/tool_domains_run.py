"""The multi-domain tool set (`bench/tool_domains.json`) through the embedded model, two ways.

Each caller line is a fresh call, with its domain's instructions and tools declared as a realtime
client declares them (JSON Schema functions, no code behind them), its `context` turns as the
conversation before it, the line as a typed user item, then one response (and the reply the
session makes itself about a call the provenance guard withheld):

- `in_process`: a `Session` on the real clock, the domain's tools offered with `use_tools` as
  `tool_domains.registry` declares them (the ones that act marked as side effects);
- `realtime`: one `pipeline serve` server in this process (`pipeline.testing.ServerThread`) and a
  WebSocket client per line that sends `session.update` (the tools, text output, no server VAD),
  `conversation.item.create` and `response.create`, and reads what any client reads. A client
  cannot say which of its functions act on the world: none is marked as a side effect.

The LLM is the configured one (`llm.model`, by default Qwen2.5-Coder-0.5B); the audio stages are
fakes, as nothing here is heard or said. Lines are said at the set's `now` (2026-06-03 10:00): the
session's `ToolDesk.now` is set to it, so "tomorrow" is 2026-06-04 to the guard as to the labels.
Scored by `bench/tool_domains_score.py`; it asserts nothing.

    python -m bench.tool_domains_run --limit 4                      # a smoke run
    python -m bench.tool_domains_run --split dev --out bench/results/x.json
    python -m bench.tool_domains_run --domains taxi,hotel --paths realtime
    python -m bench.tool_domains_run --category correction          # the read-backs put right
    python -m bench.tool_domains_run --ceiling                      # no model: the choice's ceiling
    python -m bench.tool_domains_run --rescore bench/results/x.json # no model: judge it again
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from pipeline.base import events as ev
from pipeline.base.clock import RealClock, perf_s
from pipeline.base.config import Config, build_stage
from pipeline.call.session import Session, Stages
from pipeline.stages.fakes import ScriptedSTT, ToneTTS
from pipeline.testing import ServerThread
from pipeline.turns import HeuristicCompleteness

from . import tool_domains as td
from . import tool_domains_score as score

LINE_CAP_S = 240.0  # a line that has not settled by then is recorded as an error
FOLLOW_UP_S = 3.0  # after a withheld call, how long the client waits for the session's own reply
QUIET_S = 0.5  # after any other response, how long nothing more must come


class _Silence:
    """No caller audio reaches these sessions: every window is silence."""

    def probability(self, window: Any) -> float:
        return 0.0

    def fork(self) -> _Silence:
        return self


class _Mute:
    """Text-only replies: no agent audio is written."""

    def write_output(self, samples: Any, rate_hz: int, at_s: float) -> None:
        pass


def text_stages(llm: Any) -> Stages:
    """The real LLM; fakes where nothing is heard or said."""
    return Stages(vad=_Silence(), stt=ScriptedSTT(transcripts=[""]), completeness=HeuristicCompleteness(),
                  llm=llm, tts=ToneTTS())


class _SaidAtTheSetsNow:
    """A server's call watcher (`RealtimeServer.call_watchers`): each session reads "tomorrow"
    from the set's `now`, as the in-process sessions do; nothing follows the call."""

    def __init__(self, session: Session, _session_id: str = "") -> None:
        session.tools.now = lambda: td.NOW

    def finish(self, reason: str | None) -> None:
        pass


# --- in process ----------------------------------------------------------------------------------

async def in_process(stages: Stages, config: Config, case: dict[str, Any], *,
                     cap_s: float = LINE_CAP_S) -> dict[str, Any]:
    """One line through a fresh session; its events as a realtime client would read them."""
    session = Session(config, stages, clock=RealClock(), sink=_Mute())
    _SaidAtTheSetsNow(session)
    events: list[dict[str, Any]] = []
    session.listeners.add(lambda e: events.append(e.to_dict()), ev.EventPhase.OBSERVER)
    session.client.update(instructions=td.DOMAINS[case["domain"]]["instructions"], text_only=True,
                          server_vad=False, create_response=False)
    session.use_tools(td.registry(case["domain"]))
    session.start()
    session.mark_ready()
    error = None
    try:
        for turn in [*case.get("context", []), {"role": "user", "content": case["line"]}]:
            session.client.add_message(turn["role"], turn["content"])
        t0 = perf_s()
        session.client.request_response()
        while not session.idle:
            if perf_s() - t0 > cap_s:
                error = f"not settled within {cap_s:g} s"
                break
            await asyncio.sleep(0.02)
        seconds = perf_s() - t0
    finally:
        await session.close()
    return {**score.outcome_of(events), "seconds": round(seconds, 2), "error": error}


# --- over the realtime protocol ------------------------------------------------------------------

def _message(role: str, text: str) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "conversation.item.create",
            "item": {"type": "message", "role": role, "content": [{"type": part, "text": text}]}}


async def over_the_wire(url: str, case: dict[str, Any], *, cap_s: float = LINE_CAP_S) -> dict[str, Any]:
    """One line as a realtime client sends it, on a fresh connection; what the client read."""
    domain = td.DOMAINS[case["domain"]]
    events: list[dict[str, Any]] = []
    async with connect(url, max_size=None) as ws:

        async def until(kind: str) -> dict[str, Any]:
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), cap_s))
                events.append(event)
                if event["type"] == "error":
                    raise RuntimeError(event.get("error", event))
                if event["type"] == kind:
                    return event

        await until("session.created")
        await ws.send(json.dumps({"type": "session.update", "session": {
            "type": "realtime", "instructions": domain["instructions"], "tools": domain["tools"],
            "output_modalities": ["text"], "audio": {"input": {"turn_detection": None}},
            "include_local_events": True}}))
        await until("session.updated")
        for turn in case.get("context", []):
            await ws.send(json.dumps(_message(turn["role"], turn["content"])))
        await ws.send(json.dumps(_message("user", case["line"])))
        t0 = perf_s()
        await ws.send(json.dumps({"type": "response.create"}))
        active, wait_s, last_done, error = 0, cap_s, t0, None
        while True:
            try:
                event = json.loads(await asyncio.wait_for(ws.recv(), wait_s))
            except TimeoutError:
                if active:
                    error = f"no response.done within {cap_s:g} s"
                break
            events.append(event)
            if event["type"] == "error":
                error = json.dumps(event.get("error", event))
            elif event["type"] == "response.created":
                active += 1
            elif event["type"] == "response.done":
                active, last_done = active - 1, perf_s()
            if event["type"] in ("response.created", "response.done"):
                withheld = any(o.get("type") == "function_call" and o.get("status") == "incomplete"
                               for o in event.get("response", {}).get("output", []))
                wait_s = cap_s if active else (FOLLOW_UP_S if withheld else QUIET_S)
    return {**score.outcome_of(events), "seconds": round(last_done - t0, 2), "error": error}


# --- the run -------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    """What the figures were measured on: lscpu's model name, the cores, the load average."""
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines() if ln.startswith("Model name")), "")
    except OSError:
        model = ""
    return {"cpu": model, "cores": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def chosen(split: str | None, domains: str | None, limit: int | None,
           category: str | None = None) -> list[dict[str, Any]]:
    """The lines to run (numbered by their place in the set), at most `limit` per domain; of one
    `category` ("action", "correction", "partial", "mention") where one is named."""
    wanted = set(domains.split(",")) if domains else None
    unknown = (wanted or set()) - set(td.DOMAINS)
    if unknown:
        raise SystemExit(f"--domains: unknown {', '.join(sorted(unknown))}; the set has "
                         f"{', '.join(td.DOMAINS)}.")
    out, per_domain = [], dict.fromkeys(td.DOMAINS, 0)
    for index, case in enumerate(td.cases()):
        if (split and case["split"] != split) or (wanted and case["domain"] not in wanted) or \
                (category and case.get("category") != category):
            continue
        if limit is not None and per_domain[case["domain"]] >= limit:
            continue
        per_domain[case["domain"]] += 1
        out.append({**case, "index": index})
    return out


def row(case: dict[str, Any], path: str, outcome: dict[str, Any]) -> dict[str, Any]:
    keep = ("index", "split", "domain", "category", "expect", "line", "tool", "arguments")
    return {**{k: case.get(k) for k in keep}, "path": path, **outcome, **score.judge(case, outcome)}


def report(results: dict[str, Any]) -> str:
    summaries = score.by_split_and_path(results["rows"])
    m, end = results["machine"], results.get("machine_end", results["machine"])
    lines = ["| split | path | unsaid = 0 | recall >= 90% | false calls <= 10% |", "|---|---|---|---|---|"]
    for split, paths in summaries.items():
        for path, s in paths.items():
            met = score.met(s)
            lines.append(f"| {split} | {path} | " + " | ".join(
                "-" if met[k] is None else ("met" if met[k] else "not met") for k in score.TARGETS) + " |")
    return "\n".join([score.table(summaries), "", *lines, "", score.kinds_table(summaries), "",
                      f"Machine: {m['cpu']}, {m['cores']} cores; load average (1, 5, 15 min) "
                      f"{m['load_average']} at the start, {end['load_average']} at the end. "
                      f"LLM: {results['llm']}."])


async def run(cases: list[dict[str, Any]], paths: list[str], config: Config, *, out: Path | None,
              done: list[dict[str, Any]]) -> dict[str, Any]:
    llm = build_stage("llm", config.stage("llm"))
    stages = text_stages(llm)
    results: dict[str, Any] = {"machine": machine(), "llm": f"{config.stage('llm').name} "
                               f"{config.stage('llm').params.get('model', '')}".strip(),
                               "now": td.NOW.isoformat(), "paths": paths, "rows": list(done)}
    have = {(r["index"], r["path"]) for r in done}
    server = ServerThread(stages, config) if "realtime" in paths else None
    if server is not None:
        server.server.call_watchers.append(_SaidAtTheSetsNow)
        server.start()
    try:
        # a domain's lines one path after the other: each line's prompt is new to the model's
        # cache on both paths (the domain's instructions and tools are cached for both alike)
        order = [(case, path) for domain in td.DOMAINS for path in paths
                 for case in cases if case["domain"] == domain]
        for case, path in order:
            if (case["index"], path) in have:
                continue
            try:
                outcome = (await in_process(stages, config, case) if path == "in_process"
                           else await over_the_wire(server.url, case))  # type: ignore[union-attr]
            except Exception as exc:  # one line failing must not lose the run
                outcome = {"calls": [], "withheld": [], "dropped": [], "reply": "", "seconds": None,
                           "error": f"{type(exc).__name__}: {exc}"}
            results["rows"].append(r := row(case, path, outcome))
            print(json.dumps({k: r[k] for k in ("index", "path", "domain", "expect", "line", "calls",
                                                "withheld", "reply", "seconds", "error")},
                             ensure_ascii=False), file=sys.stderr, flush=True)
            if out is not None:
                out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    finally:
        if server is not None:
            server.stop()
    results["machine_end"] = machine()
    results["summary"] = score.by_split_and_path(results["rows"])
    return results


def main(argv: list[str] | None = None) -> int:
    from pipeline.transports.runtime import add_config_args, load_config

    parser = argparse.ArgumentParser(prog="python -m bench.tool_domains_run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_args(parser)
    parser.add_argument("--split", choices=td.SPLITS, help="one split only (default: both)")
    parser.add_argument("--domains", help="these domains only, comma separated")
    parser.add_argument("--limit", type=int, help="at most this many lines per domain")
    parser.add_argument("--category", choices=("action", "correction", "partial", "mention"),
                        help="lines of this category only (a correction: the caller puts a read-back right)")
    parser.add_argument("--paths", default=",".join(score.PATHS), help="in_process, realtime or both")
    parser.add_argument("--out", type=Path, help="write every line's outcome and the figures here (JSON), "
                        "after each line")
    parser.add_argument("--resume", action="store_true", help="keep the lines --out already holds")
    parser.add_argument("--rescore", type=Path, metavar="JSON", help="no model: judge the outcomes an "
                        "earlier --out file holds again, with this code's scoring, and print the tables")
    parser.add_argument("--ceiling", action="store_true", help="no model: on how many lines the "
                        "session's tool choice offers the expected tool at all, and which it does not")
    args = parser.parse_args(argv)
    if args.ceiling:
        table, left_out = score.ceiling(chosen(args.split, args.domains, args.limit, args.category))
        print("\n".join([table, "", *left_out]))
        return 0
    if args.rescore is not None:
        results = json.loads(args.rescore.read_text(encoding="utf-8"))
        cases = td.cases()
        results["rows"] = [{**r, **score.judge(cases[r["index"]], r)} for r in results["rows"]]
        print(report(results))
        return 0
    paths = args.paths.split(",")
    if not set(paths) <= set(score.PATHS):
        parser.error(f"--paths: choose from {', '.join(score.PATHS)}")
    done = []
    if args.resume and args.out is not None and args.out.is_file():
        done = [r for r in json.loads(args.out.read_text(encoding="utf-8"))["rows"] if not r.get("error")]
    started = time.monotonic()
    results = asyncio.run(run(chosen(args.split, args.domains, args.limit, args.category), paths, load_config(args),
                              out=args.out, done=done))
    results["wall_s"] = round(time.monotonic() - started, 1)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
