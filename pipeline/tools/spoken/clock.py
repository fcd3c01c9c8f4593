"""Which times of day a caller's words name, in minutes after midnight.

"six pm", "6 pm", "6pm", "18:00", "six o'clock", "half past five", "quarter to seven", "ten past
six", "six thirty", "eighteen hundred hours", "noon", "midnight"; a part of the day ("morning",
"this evening", "tonight") is a range. An hour said without am or pm names both ("at six": 6:00
and 18:00) until a part of the day in the same clause settles it ("six in the evening": 18:00).

A bare number is a time only where the words make it one: a clock word after it (pm, o'clock),
or a word that places a time before it ("at six", "by 7", "around eight") with nothing after it
that makes it something else ("at 5 Elm Street"). An hour with its minutes ("seven thirty", "half
nine") is a time by itself, marked `bare`: a price is said the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .days import month_of, weekday_of
from .words import TENS, Word, read_group

Span = tuple[int, int]  # minutes after midnight, both ends included; a point is (m, m)

# The hours a part of the day spans: a common reading, not a measurement
DAYPARTS: dict[str, Span] = {
    "morning": (5 * 60, 12 * 60), "afternoon": (12 * 60, 18 * 60),
    "evening": (17 * 60, 22 * 60), "night": (19 * 60, 24 * 60), "tonight": (17 * 60, 24 * 60),
    "tonite": (17 * 60, 24 * 60), "lunchtime": (11 * 60 + 30, 14 * 60),
}
_CLOCK_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::\d{2})?")
_DOTTED = re.compile(r"(\d{1,2})\.(\d{2})")  # "6.30 pm"
_DAY_WORDS = {"today", "tomorrow", "tonight", "tonite"}
_PLACING = {"at", "around", "by", "until", "till", "til", "before", "after", "from", "between",
            "about"}
_FOLLOWS_TIME = {"today", "tonight", "tomorrow", "please", "then", "this", "in", "on", "and",
                 "or", "sharp", "ish", "latest", "the", "if", "so", "that", "is", "works", "would",
                 "instead", "not", "rather", "next", "yesterday", "to", "for", "with", "at", "again",
                 "suit", "suits", "work", "do", "ok", "okay", "fine"}  # "Would Monday at ten suit?"
_DAYPART_AFTER = [["in", "the", p] for p in ("morning", "afternoon", "evening")] + [
    ["this", p] for p in ("morning", "afternoon", "evening")] + [["at", "night"]]
_AFTER_HOUR = {"past": 1, "after": 1, "to": -1, "till": -1, "til": -1, "before": -1}


@dataclass(frozen=True)
class Clock:
    """Times of day named by ws[start:end]: points (a said time) or one range (a part of the
    day); `settled` when am or pm is known."""

    start: int
    end: int
    spans: tuple[Span, ...]
    settled: bool
    daypart: bool = False
    bare: bool = False  # only the words' shape says time ("seven thirty"): a price reads alike


def clock_at(ws: list[Word], i: int, *, written: bool = False) -> Clock | None:
    """The time of day named by the words starting at ws[i], if any. `written`: a value a model
    wrote ("6", "6:00"), where a bare hour is an hour without a word to place it."""
    t = ws[i].text
    if t in ("noon", "midday"):
        return Clock(i, i + 1, ((720, 720),), True)
    if t == "midnight":
        return Clock(i, i + 1, ((0, 0),), True)
    if t in DAYPARTS:
        if i > 0 and ws[i - 1].text == "good" and not written:
            return None  # "Good morning": a greeting, no time asked for
        return Clock(i, i + 1, (DAYPARTS[t],), True, daypart=True)
    if t == "this" and i + 1 < len(ws) and ws[i + 1].text in DAYPARTS:
        return Clock(i, i + 2, (DAYPARTS[ws[i + 1].text],), True, daypart=True)
    if t == "lunch" and i + 1 < len(ws) and ws[i + 1].text == "time":
        return Clock(i, i + 2, (DAYPARTS["lunchtime"],), True, daypart=True)
    return _to_or_past(ws, i) or _hour_minutes(ws, i, written=written)


def _to_or_past(ws: list[Word], i: int) -> Clock | None:
    """ "half past five", "quarter to seven", "quarter of seven", "ten past six", "twenty five
    minutes to eight", "half nine"."""
    t = ws[i].text
    if t == "half" and (hour := _hour_of(ws, i + 1)) is not None and not ws[i + 1].after_break:
        h, end = hour  # "half nine": half past nine, as said in Britain
        spans = tuple(((b + 30) % 1440,) * 2 for b in ((h % 12) * 60, (h % 12 + 12) * 60))
        return _suffixed(ws, Clock(i, end, spans, False))
    if t == "half":
        minutes, j = 30, i + 1
    elif t == "quarter" or (t == "a" and i + 1 < len(ws) and ws[i + 1].text == "quarter"):
        minutes, j = 15, i + 1 + (t == "a")
    elif (group := read_group(ws, i)) is not None and 1 <= group[0] <= 30 \
            and group[0] == int(group[0]) and _texts(ws, i - 1, 1) not in (["from"], ["between"]):
        minutes, j = int(group[0]), group[2]  # not "from 5 to 7", a range
        if j < len(ws) and ws[j].text in ("minutes", "minute", "mins"):
            j += 1
        elif minutes % 5:
            return None  # "fae eight till eleven": no one says 10:52 so, without "minutes"
    else:
        return None
    quarter_of = j < len(ws) and ws[j].text == "of" and t in ("quarter", "a")  # "quarter of six": 5:45, in America
    if j >= len(ws) or ws[j].text not in _AFTER_HOUR and not quarter_of or ws[j].after_break:
        return None
    sign = -1 if quarter_of else _AFTER_HOUR[ws[j].text]
    if ws[j].text in ("after", "before", "till", "til") and t not in ("half", "quarter", "a"):
        if not (j + 1 < len(ws) and _hour_word(ws, j + 1)):
            return None
    hour = _hour_of(ws, j + 1)
    if hour is None:
        return None
    h, end = hour
    base = [h * 60] if h in (0, 12) and ws[j + 1].text in ("noon", "midnight") else \
        [(h % 12) * 60, (h % 12 + 12) * 60] if h <= 12 else [h * 60]
    spans = tuple(((b + sign * minutes) % 1440,) * 2 for b in base)
    return _suffixed(ws, Clock(i, end, spans, len(spans) == 1))


def _suffixed(ws: list[Word], clock: Clock) -> Clock:
    """ "half past five pm": the am or pm after a time said another way."""
    suffix = _suffix(ws, clock.end)
    if suffix is None or suffix[0] not in ("am", "pm"):
        return clock
    kept = tuple(s for s in clock.spans if (s[0] >= 720) == (suffix[0] == "pm"))
    return Clock(clock.start, suffix[1], kept, True) if kept else clock


def _hour_word(ws: list[Word], j: int) -> bool:
    return _hour_of(ws, j) is not None


def _hour_of(ws: list[Word], j: int) -> tuple[int, int] | None:
    if j >= len(ws):
        return None
    if ws[j].text == "noon":
        return 12, j + 1
    if ws[j].text == "midnight":
        return 0, j + 1
    group = read_group(ws, j)
    if group is not None and group[0] == int(group[0]) and 1 <= group[0] <= 12:
        return int(group[0]), group[2]
    return None


def _hour_minutes(ws: list[Word], i: int, *, written: bool) -> Clock | None:
    """ "6 pm", "six thirty", "18:00", "6.30pm", "seven o'clock", "eighteen hundred hours"."""
    t = ws[i].text
    padded = False
    taken: tuple[int, int] | None = None
    if (m := _CLOCK_TIME.fullmatch(t)) is not None:
        h, minute, j, clocky = int(m.group(1)), int(m.group(2)), i + 1, True
        padded = m.group(1).startswith("0")
    elif (m := _DOTTED.fullmatch(t)) is not None and _suffix(ws, i + 1) is not None:
        h, minute, j, clocky = int(m.group(1)), int(m.group(2)), i + 1, True
    else:
        group = read_group(ws, i)
        if group is None or group[0] != int(group[0]):
            return None
        value, j = int(group[0]), group[2]
        if 100 <= value <= 2359 and value % 100 < 60 and _texts(ws, j, 1) in (["hours"], ["hrs"]):
            return Clock(i, j + 1, ((value // 100 * 60 + value % 100,) * 2,), True)
        if value > 24:
            return None
        h, minute, clocky = value, 0, False
        taken = _minutes_after(ws, j, pointed=i > 0 and ws[i - 1].text in ("the", "that", "this"))
        if taken is not None:
            minute, j = taken
    if h > 24 or minute > 59:
        return None
    suffix = _suffix(ws, j)
    if suffix is not None:
        half, j = suffix
        if half in ("am", "pm"):
            if not 1 <= h <= 12:
                return None
            return Clock(i, j, (((h % 12 + (12 if half == "pm" else 0)) * 60 + minute,) * 2,), True)
        clocky = True  # o'clock
    bare = False
    if not (clocky or written or _placed(ws, i, j)):
        if taken is None or not 1 <= h <= 12:
            return None
        bare = True  # "seven thirty": an hour and its minutes, or a price said the same way
    if padded or h == 0 or h > 12:
        return Clock(i, j, (((h % 24) * 60 + minute,) * 2,), True, bare=bare)
    spans = (((h % 12) * 60 + minute,) * 2, ((h % 12 + 12) * 60 + minute,) * 2)
    return Clock(i, j, spans, False, bare=bare)


def _minutes_after(ws: list[Word], j: int, *, pointed: bool = False) -> tuple[int, int] | None:
    """The minutes of "six thirty", "six oh five", "7 45" (not after a pause). `pointed`: the time
    follows "the", where "one" after its tens is the thing ("the ten-thirty one": 10:30, not 10:31)."""
    if j >= len(ws) or ws[j].after_break:
        return None
    if pointed and ws[j].text in TENS and j + 1 < len(ws) and ws[j + 1].text == "one" and not ws[j + 1].hyphened:
        return TENS[ws[j].text], j + 1
    if ws[j].text in ("oh", "o") and (group := read_group(ws, j + 1)) is not None \
            and 0 <= group[0] <= 9 and group[2] == j + 2:
        return int(group[0]), group[2]
    group = read_group(ws, j)
    if group is not None and group[0] == int(group[0]) and 10 <= group[0] <= 59 \
            and len(group[1]) == 2:
        return int(group[0]), group[2]
    return None


def _suffix(ws: list[Word], j: int) -> tuple[str, int] | None:
    """ "am" / "pm" (also "a.m.", "p m") or "o'clock" at ws[j], and the index after it."""
    if j >= len(ws):
        return None
    t = ws[j].text
    if t in ("am", "pm"):
        return t, j + 1
    if t in ("a", "p") and j + 1 < len(ws) and ws[j + 1].text == "m":
        return t + "m", j + 2
    if t in ("o'clock", "oclock"):
        return "oclock", j + 1
    if t == "o" and j + 1 < len(ws) and ws[j + 1].text == "clock":
        return "oclock", j + 2
    return None


def _placed(ws: list[Word], i: int, j: int) -> bool:
    """Is the bare number at ws[i:j] a time by the words around it: "at six", "six tonight"?"""
    after = ws[j] if j < len(ws) else None
    if _texts(ws, j, 3) in _DAYPART_AFTER or _texts(ws, j, 2) in _DAYPART_AFTER \
            or _texts(ws, j, 1) in (["tonight"], ["tonite"]):
        return True  # "six in the evening", "six tonight", "eleven at night", not "one night"
    before = ws[i - 1].text if i > 0 and not ws[i].after_break else ""
    day = i > 0 and (weekday_of(ws[i - 1].text, written=False) is not None or ws[i - 1].text in _DAY_WORDS)
    if before not in _PLACING and not day:  # "a week on Saturday, eleven again": after its day
        return False
    if after is None or after.after_break:
        return True
    if after.text in _FOLLOWS_TIME or weekday_of(after.text, written=False) is not None \
            or month_of(after.text, written=False) is not None:
        return True
    return False


def settle(clock: Clock, part: Span) -> Clock:
    """A time said without am or pm, read in the part of the day said with it."""
    kept = tuple(s for s in clock.spans if part[0] <= s[0] <= part[1])
    return Clock(clock.start, clock.end, kept, True) if kept else clock


def _texts(ws: list[Word], i: int, n: int) -> list[str]:
    return [w.text for w in ws[i:i + n]]


def said_clock(minute_of_day: int) -> str:
    """A time of day as a person says it: 1110 minutes is "6:30 PM", 1080 is "6 PM"."""
    hour, minute = divmod(minute_of_day % (24 * 60), 60)
    return f"{hour % 12 or 12}{f':{minute:02d}' if minute else ''} {'PM' if hour >= 12 else 'AM'}"
