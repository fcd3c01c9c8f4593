"""`python -m pipeline test PATH…`: run scenario files, print a table, write JUnit XML and each
scenario's artefacts (events.jsonl, timeline.txt, call.wav); exit 1 when an expectation fails.

A voiced scenario whose models are missing is skipped, and the table says so; with
PIPELINE_REQUIRE_MODELS set (as CI sets it for the model tests) it is an error instead."""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pipeline.base.errors import ModelMissingError, PipelineError

from .scenario import find, load
from .scenario_expect import timeline
from .scenario_run import run
from .scenario_vary import run_varied


@dataclass
class Outcome:
    """One scenario file's verdict, as plain values (it comes back from a worker process)."""

    path: Path
    name: str
    status: str = "ERROR"  # pass, FAIL, ERROR (could not run), skip (a voiced one without models)
    call_s: float | None = None
    wall_s: float = 0.0
    summary: str = "could not run"  # the table's last column: "6/6 met", "9 of 9 runs passed"
    message: str = ""  # the first failure, or the error's last line
    details: str = ""  # every failure with its events, or the error
    timeline: str = ""  # the (first failing) run's


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "scenario"


def play_file(path: Path, out: Path | None) -> Outcome:
    """Run one scenario file to its verdict; never raises (a crash is that scenario's error)."""
    o = Outcome(path, path.name.removesuffix(".scenario.toml"))
    try:
        scenario = load(path)
        o.name = scenario.name
        folder = out / _slug(path.name.removesuffix(".scenario.toml")) if out else None
        if scenario.vary:
            repeated = run_varied(scenario, artefacts=folder)
            result = next((r for _, r in repeated.runs if not r.passed), repeated.runs[0][1])
            passed, o.wall_s, o.summary = repeated.passed, repeated.wall_s, repeated.summary()
            o.details = repeated.report()
            o.message = o.summary
        else:
            result = run(scenario, artefacts=folder)
            passed, o.wall_s = result.passed, result.wall_s
            o.summary = f"{len(scenario.expect) - len(result.failures)}/{len(scenario.expect)} met"
            o.details = "\n".join(map(str, result.failures))
            if result.failures:
                o.message = f"expected {result.failures[0].expectation}: {result.failures[0].why}"
        o.status, o.call_s, o.timeline = "pass" if passed else "FAIL", result.call_s, timeline(result)
    except ModelMissingError as exc:  # a clean clone without the models: said, not failed
        o.status = "ERROR" if os.environ.get("PIPELINE_REQUIRE_MODELS") else "skip"
        o.summary, o.message, o.details = "models missing", str(exc), str(exc)
    except PipelineError as exc:
        o.message = o.details = str(exc)
    except Exception:  # a crash in the agent's own code is that scenario's error, not the run's
        o.details = traceback.format_exc(limit=6)
        o.message = o.details.strip().splitlines()[-1]
    return o


def run_paths(paths: list[str | Path], *, out: Path | None = None, jobs: int = 1,
              progress: Callable[[str], None] | None = None) -> list[Outcome]:
    """Every scenario file under the paths, `jobs` at a time (each worker process loads its own
    models: a voiced scenario's are a few hundred MB)."""
    files = find(paths)
    outcomes: list[Outcome] = []
    if jobs <= 1 or len(files) <= 1:
        for path in files:
            outcomes.append(play_file(path, out))
            if progress is not None:
                progress(f"{outcomes[-1].status:5} {path}")
        return outcomes
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(play_file, path, out) for path in files]
        for path, future in zip(files, futures, strict=True):
            outcomes.append(future.result())
            if progress is not None:
                progress(f"{outcomes[-1].status:5} {path}")
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    rows = [("result", "scenario", "call s", "wall s", "expectations")]
    for o in outcomes:
        call = "-" if o.call_s is None else f"{o.call_s:.1f}"
        wall = "-" if o.call_s is None else f"{o.wall_s:.2f}"
        rows.append((o.status, o.name, call, wall, o.summary))
    width = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)).rstrip() for row in rows)


def junit(outcomes: list[Outcome]) -> ET.ElementTree:
    suite = ET.Element("testsuite", name="scenarios", tests=str(len(outcomes)),
                       failures=str(sum(o.status == "FAIL" for o in outcomes)),
                       errors=str(sum(o.status == "ERROR" for o in outcomes)),
                       skipped=str(sum(o.status == "skip" for o in outcomes)),
                       time=f"{sum(o.wall_s for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname=str(o.path), name=o.name, time=f"{o.wall_s:.3f}")
        kind = {"skip": "skipped", "ERROR": "error", "FAIL": "failure"}.get(o.status)
        if kind is not None:
            ET.SubElement(case, kind, message=o.message).text = o.details if kind != "skipped" else None
        if o.timeline:
            ET.SubElement(case, "system-out").text = o.timeline
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.ElementTree(root)


def main(paths: list[str | Path], *, junit_path: Path | None = None, out: Path | None = None,
         jobs: int = 1) -> int:
    outcomes = run_paths(paths, out=out, jobs=jobs, progress=lambda m: print(m, file=sys.stderr))
    if not outcomes:
        print("no *.scenario.toml files found", file=sys.stderr)
        return 2
    print(table(outcomes))
    for o in outcomes:
        if o.status == "pass":
            continue
        print(f"\n{o.status} {o.path}: {o.name}")
        print(o.details.rstrip())
    if junit_path is not None:
        junit(outcomes).write(junit_path, encoding="utf-8", xml_declaration=True)
        print(f"\nwrote {junit_path}", file=sys.stderr)
    if out is not None:
        print(f"artefacts (events.jsonl, timeline.txt, call.wav) under {out}/", file=sys.stderr)
    return 0 if all(o.status in ("pass", "skip") for o in outcomes) else 1
