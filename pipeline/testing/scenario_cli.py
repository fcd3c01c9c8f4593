"""`python -m pipeline test PATH…`: run scenario files, print a table, write JUnit XML and each
scenario's artefacts (events.jsonl, timeline.txt, call.wav); exit 1 when an expectation fails.

A voiced scenario whose models are missing is skipped, and the table says so; with
PIPELINE_REQUIRE_MODELS set (as CI sets it for the model tests) it is an error instead."""

from __future__ import annotations

import os
import re
import sys
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.base.errors import ModelMissingError, PipelineError

from .scenario import find, load
from .scenario_expect import timeline
from .scenario_result import ScenarioResult
from .scenario_run import run
from .scenario_vary import Repeated, run_varied


@dataclass
class Outcome:
    path: Path
    name: str
    result: ScenarioResult | None = None
    error: str | None = None  # the scenario could not be run (a bad file, a crash)
    skipped: bool = False  # a voiced scenario without the models
    repeated: Repeated | None = None  # a scenario with `vary`: every run (`result` is the first failing)

    @property
    def status(self) -> str:
        if self.skipped:
            return "skip"
        if self.error:
            return "ERROR"
        passed = self.repeated.passed if self.repeated is not None else self.result.passed  # type: ignore[union-attr]
        return "pass" if passed else "FAIL"

    @property
    def wall_s(self) -> float:
        return self.repeated.wall_s if self.repeated is not None else self.result.wall_s if self.result else 0.0

    def failures_text(self) -> str:
        if self.error:
            return self.error.rstrip()
        if self.repeated is not None:
            return self.repeated.report()
        return "\n".join(map(str, self.result.failures))  # type: ignore[union-attr]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "scenario"


def run_paths(paths: list[str | Path], *, out: Path | None = None,
              progress: Callable[[str], None] | None = None) -> list[Outcome]:
    outcomes = []
    for path in find(paths):
        name = path.name.removesuffix(".scenario.toml")
        try:
            scenario = load(path)
            name = scenario.name
            folder = out / _slug(path.name.removesuffix(".scenario.toml")) if out else None
            if scenario.vary:
                repeated = run_varied(scenario, artefacts=folder)
                first = next((r for _, r in repeated.runs if not r.passed), repeated.runs[0][1])
                outcomes.append(Outcome(path, name, first, repeated=repeated))
            else:
                outcomes.append(Outcome(path, name, run(scenario, artefacts=folder)))
        except ModelMissingError as exc:  # a clean clone without the models: said, not failed
            required = os.environ.get("PIPELINE_REQUIRE_MODELS")
            outcomes.append(Outcome(path, name, error=str(exc), skipped=not required))
        except PipelineError as exc:
            outcomes.append(Outcome(path, name, error=str(exc)))
        except Exception:  # a crash in the agent's own code is that scenario's error, not the run's
            outcomes.append(Outcome(path, name, error=traceback.format_exc(limit=6)))
        if progress is not None:
            progress(f"{outcomes[-1].status:5} {path}")
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    rows = [("result", "scenario", "call s", "wall s", "expectations")]
    for o in outcomes:
        r = o.result
        if r is None:
            rows.append((o.status, o.name, "-", "-", "models missing" if o.skipped else "could not run"))
            continue
        met = len(r.scenario.expect) - len(r.failures)
        said = o.repeated.summary() if o.repeated else f"{met}/{len(r.scenario.expect)} met"
        rows.append((o.status, o.name, f"{r.call_s:.1f}", f"{o.wall_s:.2f}", said))
    width = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)).rstrip() for row in rows)


def junit(outcomes: list[Outcome]) -> ET.ElementTree:
    suite = ET.Element("testsuite", name="scenarios", tests=str(len(outcomes)),
                       failures=str(sum(o.status == "FAIL" for o in outcomes)),
                       errors=str(sum(o.status == "ERROR" for o in outcomes)),
                       skipped=str(sum(o.skipped for o in outcomes)),
                       time=f"{sum(o.wall_s for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname=str(o.path), name=o.name,
                             time=f"{o.wall_s:.3f}")
        if o.skipped:
            ET.SubElement(case, "skipped", message=str(o.error))
        elif o.error:
            ET.SubElement(case, "error", message=o.error.strip().splitlines()[-1]).text = o.error
        elif o.status == "FAIL":
            first = o.result.failures[0]  # type: ignore[union-attr]
            message = o.repeated.summary() if o.repeated else f"expected {first.expectation}: {first.why}"
            ET.SubElement(case, "failure", message=message).text = o.failures_text()
        if o.result:
            ET.SubElement(case, "system-out").text = timeline(o.result)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.ElementTree(root)


def main(paths: list[str | Path], *, junit_path: Path | None = None, out: Path | None = None) -> int:
    outcomes = run_paths(paths, out=out, progress=lambda m: print(m, file=sys.stderr))
    if not outcomes:
        print("no *.scenario.toml files found", file=sys.stderr)
        return 2
    print(table(outcomes))
    for o in outcomes:
        if o.status == "pass":
            continue
        print(f"\n{o.status} {o.path}: {o.name}")
        print(o.failures_text())
    if junit_path is not None:
        junit(outcomes).write(junit_path, encoding="utf-8", xml_declaration=True)
        print(f"\nwrote {junit_path}", file=sys.stderr)
    if out is not None:
        print(f"artefacts (events.jsonl, timeline.txt, call.wav) under {out}/", file=sys.stderr)
    return 0 if all(o.status in ("pass", "skip") for o in outcomes) else 1
