"""Judging a played scenario: each expectation against the call's events, the heard words, the
ledger and the world; a failure names the expectation and carries the timeline lines that show why.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.base import events as ev
from pipeline.base.audio import FRAME_SAMPLES, INPUT_RATE_HZ, dbfs

from .scenario import Expect
from .scenario_caller import SOUND_DBFS
from .scenario_result import Failure, ScenarioResult

STEP_S = FRAME_SAMPLES / INPUT_RATE_HZ  # 20 ms: the resolution of dead air


def timeline(result: ScenarioResult) -> str:
    """The call as lines `  12.34s what happened`: the record's account, each caller line as it
    started, and how the call ended."""
    rows: list[tuple[float, str]] = []
    for line in result.record.timeline().splitlines():
        try:
            rows.append((float(line[:7]), line))
        except ValueError:
            rows.append((rows[-1][0] if rows else 0.0, line))
    for i, clip in enumerate(result.caller.clips, 1):
        if clip.started_s is not None:
            rows.append((clip.started_s, f"{clip.started_s:7.2f}s line {i}: caller {clip.label}"))
    for at, words in result.persona_lines:
        rows.append((at, f"{at:7.2f}s persona: {words}"))
    end = result.caller.ended_at_s or 0.0
    rows.append((end, f"{end:7.2f}s call ended by {result.caller.ended_by}"))
    rows.sort(key=lambda r: r[0])  # stable: events keep their order within an instant
    return "\n".join(text for _, text in rows)


def _lines(result: ScenarioResult, *, pattern: str | None = None, between: tuple[float, float] | None = None,
           limit: int = 24) -> list[str]:
    out = []
    for line in timeline(result).splitlines():
        if pattern is not None and not re.search(pattern, line):
            continue
        if between is not None:
            try:
                t = float(line[:7])
            except ValueError:
                continue
            if not between[0] <= t <= between[1]:
                continue
        out.append(line.rstrip())
    return out[-limit:]


def dead_air(result: ScenarioResult) -> tuple[float, float]:
    """The longest silence that the agent ended: (seconds, when it began). Silence the caller
    ends is theirs to choose; silence after the last sound is the call winding down."""
    caller = result.caller
    n = len(caller.inner.mic) + 1
    for at, seconds, _ in caller.agent_frames:
        n = max(n, int(round((at + seconds) / STEP_S)) + 1)
    heard_caller = [False] * n
    heard_agent = [False] * n
    for i, frame in enumerate(caller.inner.mic):
        heard_caller[i] = dbfs(frame) > SOUND_DBFS
    for at, seconds, audible in caller.agent_frames:
        if audible:
            for i in range(int(round(at / STEP_S)), int(round((at + seconds) / STEP_S))):
                heard_agent[min(i, n - 1)] = True
    longest, since, quiet_from = 0.0, 0.0, None
    for i in range(n):
        sound = heard_caller[i] or heard_agent[i]
        if not sound:
            if quiet_from is None and i and (heard_caller[i - 1] or heard_agent[i - 1]):
                quiet_from = i
            continue
        if quiet_from is not None and heard_agent[i] and not heard_caller[i]:
            gap = (i - quiet_from) * STEP_S
            if gap > longest:
                longest, since = gap, quiet_from * STEP_S
        quiet_from = None
    return longest, since


def _said_in_full(result: ScenarioResult, pattern: str) -> bool:
    for done in result.record.done:
        r = done.response
        text = " ".join(c.get("transcript", "") for o in r["output"] for c in o.get("content", []))
        if r["status"] == "completed" and re.search(pattern, text, re.IGNORECASE):
            return True
    return False


def _check(result: ScenarioResult, e: Expect) -> tuple[str, list[str]] | None:
    """None when met, else (why, the timeline lines that show it)."""
    record = result.record
    calls = [c for c in record.events if isinstance(c, ev.FunctionCallArgumentsDone)]
    tool_lines = _lines(result, pattern=r"s (call |result )") or _lines(result)
    replies = _lines(result, pattern=r"s (resp_\S+|caller:|line \d|x\.log)")
    kind = e.kind
    if kind == "tool_called":
        named = [c for c in calls if c.name == e.tool_called]
        matching = [c for c in named if _args_match(json.loads(c.arguments or "{}"), e.arguments or {})]
        if e.times is not None and len(matching) != e.times:
            return f"{e.tool_called} was called {len(matching)} time(s) that way", tool_lines
        if e.times is None and not matching:
            return (f"{e.tool_called} was called {len(named)} time(s), none with those arguments" if named
                    else f"{e.tool_called} was never called"), tool_lines
    elif kind == "no_tool":
        bad = [c for c in calls if e.no_tool is True or c.name == e.no_tool]
        if bad:
            return f"{', '.join(c.name for c in bad)} was called", tool_lines
    elif kind in ("said", "not_said"):
        pattern = (e.said if kind == "said" else e.not_said) or ""
        heard = [line for line in record.agent_lines if re.search(pattern, line, re.IGNORECASE)]
        if kind == "not_said" and heard:
            return f"the agent said {heard[0]!r}", replies
        if kind == "said":
            if e.times is not None and len(heard) != e.times:
                return f"the agent said it {len(heard)} time(s)", replies
            if not heard:
                return "the caller never heard the agent say that", replies
            if e.in_full and not _said_in_full(result, pattern):
                return "no reply saying it was heard to its end (cut short or cancelled)", replies
    elif kind == "max_dead_air_s":
        gap, since = dead_air(result)
        if e.max_dead_air_s is not None and gap > e.max_dead_air_s:
            return (f"{gap:.2f} s of silence from {since:.2f} s until the agent spoke",
                    _lines(result, between=(since - 2.0, since + gap + 0.5)))
    elif kind == "ledger" and e.ledger is not None:
        row = result.ledger.get(e.ledger)
        rows = [f"ledger {r.business_key}: {r.state}, told={r.told}, calls={len(r.call_ids)}"
                for r in result.ledger.rows()]
        if row is None:
            return "no such ledger row", rows + tool_lines
        wrong = [f"{name} is {have!r}, not {want!r}" for name, have, want in
                 (("state", row.state, e.state), ("told", row.told, e.told), ("calls", len(row.call_ids), e.calls))
                 if want is not None and have != want]
        if wrong:
            return "; ".join(wrong), rows + replies
    elif kind == "ended_by":
        caller = result.caller
        if caller.ended_by != e.ended_by:
            return f"the call was ended by {caller.ended_by}", _lines(result, limit=10)
        if e.within_s is not None and (caller.ended_at_s or 0.0) > e.within_s:
            return f"it ended at {caller.ended_at_s:.2f} s", _lines(result, limit=10)
    elif kind in ("cancelled", "resumed"):
        if kind == "cancelled":
            n = sum(d.response["status"] == "cancelled" for d in record.done)
        else:
            n = len(record.stages("false_interruption"))
        if bool(n) != getattr(e, kind):
            what = "replies were cancelled" if kind == "cancelled" else "replies resumed after a false interruption"
            return f"{n} {what}", _lines(result, pattern=r"s (resp_|barge_in|caller:|line )")
    elif kind == "world" and e.world is not None:
        value = _world(result.world, e.world)
        have = len(value) if e.count is not None else value
        want = e.count if e.count is not None else e.equals
        if have != want:
            return f"{e.world} is {have!r}" + (f" ({value!r})" if e.count is not None else ""), tool_lines
    return None


def _args_match(have: dict[str, Any], want: dict[str, Any]) -> bool:
    return all(k in have and (have[k] == v or str(have[k]) == str(v)) for k, v in want.items())


def _world(world: dict[str, Any], path: str) -> Any:
    name, *attrs = path.split(".")
    if name not in world:
        return f"<no world object {name!r}>"
    value = world[name]
    for attr in attrs:
        value = getattr(value, attr)
    return value


def _unplayed(result: ScenarioResult) -> list[Failure]:
    """A line that never started is a failed scenario whatever else passed: the call it
    describes did not happen."""
    out = []
    caller = result.caller
    for i, (line, clip) in enumerate(zip(caller.lines, caller.clips, strict=True), 1):
        if clip.started_s is not None or (line.hang_up and caller.ended_by == "caller"):
            continue
        why = (f"its trigger never came; the call was ended by {caller.ended_by} at {caller.ended_at_s:.2f} s"
               if clip.at_s is None else
               f"it was due at {clip.at_s:.2f} s, but the call was ended by {caller.ended_by} at {caller.ended_at_s:.2f} s")
        out.append(Failure(f"line {i} {line.describe()}", why, _lines(result, limit=12)))
    return out


def judge(result: ScenarioResult) -> list[Failure]:
    failures = _unplayed(result)
    for e in result.scenario.expect:
        found = _check(result, e)
        if found is not None:
            failures.append(Failure(e.describe(), found[0], found[1]))
    return failures

