"""The times and days a tool's arguments hold: written as the schema asks, and said again as the
caller said them where the model wrote them wrong (`provenance.trace` calls these).

- `written_as`: how a schema asks a moment written. A date with `"format": "date"` (or
  YYYY-MM-DD / ISO 8601 in its description) is "2026-06-06"; a time with its day (`"format":
  "date-time"`, or "date and time" / an example) is "2026-06-06T18:00".
- `restated`: told "tomorrow at 2 pm" on June 3rd, a small model books "2026-06-09". Where the
  caller's last words that name a moment name exactly one of the kind asked ("tomorrow", not
  "Monday or Tuesday"; "at six pm", not "at six"), that one is the value, and it is the
  caller's. "At six" is one where the instructions give opening hours ("open 8:00 to 18:00")
  and only one of its readings is in them. None where they name none, or several, or a day gone
  by ("we came on May 20th": told of, not a moment to act at).
- `spread_days`: the same for the several days of one call ("from tomorrow to Saturday": a
  reschedule's current and new day; "Friday, bringing it back Monday": a hire's two days), where
  the model wrote days nobody said: the days the caller's last words name, those the call holds
  right taken out, one to each day written wrong, the earliest to the one the model wrote
  earliest (it knew which came first; it misread when) or, where its days do not read, in the
  order said; where they name one for every day of the call, all are placed so ("tomorrow till
  Friday" written as today and tomorrow is tomorrow and Friday). None where the count differs,
  or the words name several days for one moment.
- `took_back`: "No, five pm, not five in the morning": the caller's last words take 05:00 back,
  so an earlier "at five" no longer gives it, as "make it Sunday instead" takes back an earlier
  Saturday; nor does "around seven" give 07:00 at a place open
  in the evening only, nor "Sunday" a date written "Sunday, June 3" (a Wednesday).
- `the_clock`: the instructions' "Today is June 3, it is 10:00" say when the call is, not a day
  anyone asked for: "Do you have gluten free pasta?" checks no table for today.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime
from functools import partial
from typing import Any

from .asks import corrects
from .evidence import Evidence
from .spoken import ValueKind
from .spoken.days import days_at, its_weekday, month_of
from .spoken.kinds import name_words
from .spoken.numbers import numbers_said
from .spoken.times import (
    Moment,
    Written,
    days_named,
    days_of_month_alone,
    in_hours,
    moments,
    moved_to,
    one_moment,
    open_hours,
    own_correction,
    taken_back,
)
from .spoken.words import Word, is_number_word, read_ordinal, spoken_number, words

__all__ = ["MOMENTS", "as_hhmm", "in_its_month", "moved", "restated", "spread_days", "the_clock", "took_back",
           "written_as"]

MOMENTS: dict[ValueKind, Written] = {ValueKind.TIME: "time", ValueKind.DATE: "date",
                                     ValueKind.DATETIME: "datetime"}
_ISO_ASKED = re.compile(r"YYYY-MM-DD|ISO[ -]?8601|\d{4}-\d{2}-\d{2}")
_CLOCK_WRITTEN = re.compile(r"\s*\d{1,2}:\d{2}\s*(?:[ap]\.?m\.?)?\s*", re.I)  # "14:00 AM": a clock, misread
_DATETIME_ASKED = re.compile(r"\bdate and time\b|\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|YYYY-MM-DD[T ]HH", re.I)


def written_as(kind: ValueKind | None, prop: dict[str, Any], description: str) -> Written | None:
    """How the schema asks a moment written (see the module); None: as the model writes it."""
    if kind is ValueKind.DATE and (prop.get("format") == "date" or _ISO_ASKED.search(description)):
        return "date"
    if kind in (ValueKind.TIME, ValueKind.DATETIME) and (
            prop.get("format") == "date-time" or _DATETIME_ASKED.search(description)):
        return "datetime"
    return None


def restated(value: Any, kind: ValueKind | None, written: Written | None, evidence: Evidence) -> str | None:
    """The one moment of this kind the caller's last words naming one name, for a moment the
    model wrote that nobody said (see the module); None where there is no such one."""
    if kind not in MOMENTS or not _a_moment(value, evidence) or evidence.now is None:
        return None  # not a moment the model meant to write: judged as it is
    asked, hours = written or MOMENTS[kind], open_hours(evidence.instructions)
    for k, text in enumerate(map(partial(own_correction, now=evidence.now), reversed(evidence.said))):
        if (found := one_moment(text, evidence.now, asked, hours=hours)
                or k == 0 and asked == "time" and one_moment(text, evidence.now, asked, hours=_near_read_back(evidence))):
            gone = asked != "time" and found < evidence.now.isoformat()[:len(found)]
            return None if gone or taken_back(found, text, evidence.now) else found  # "Monday is no longer good"
        named = moments(words(text), evidence.now)
        if any(m.days if asked == "date" else m.spans if asked == "time" else True for m in named):
            return None  # the caller's last words of this kind name several, or a part of a day
    return None


_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_HHMM = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")


def _near_read_back(evidence: Evidence) -> tuple[tuple[int, int], ...]:
    """The six hours either side of the last time the agent read back ("to end at 17:00"): "Nah,
    half five." is 17:30 there, not 05:30."""
    if (found := _HHMM.findall(evidence.last_asked)) == []:
        return ()
    minute = int(found[-1][0]) * 60 + int(found[-1][1])
    return ((max(0, minute - 360), min(24 * 60, minute + 360)),)


_RANGE = frozenset("till until til to through thru".split())
_BEGINS = frozenset("start starting begin from".split())  # a call's one time that is a range's start
_PM = frozenset("afternoon arvo evening tonight pm".split())
_AM = frozenset("morning am".split())
_SETTLING = frozenset("in the morning afternoon evening night arvo pm am".split())


def spread_times(names: list[str], evidence: Evidence) -> dict[str, str]:
    """A call's start and end times (`names`, the schema's two time arguments in its order) from a
    range the caller's last words say ("One till half five" tomorrow arvo: 13:00 and 17:30; "midday
    till five"; "seven in the morning through to four"; "from six in the evening right through till
    Saturday at ten"): each side read as a clock, a bare hour both ways, and of the readings the one
    pair where the end comes after the start (another day between them aside), within the hours
    the instructions give, in the part of the day the words name where that leaves two. {} where
    the words say no one such range. A call with one time, a start by its name (`start_time`), is
    the range's start ("a study room tomorrow from two till five": 14:00, not the model's 17:00)."""
    if not (len(names) == 2 or len(names) == 1 and _BEGINS & set(name_words(names[0]))) \
            or evidence.now is None or not evidence.said:
        return {}
    ws = words(evidence.said[-1])
    said = [m for m in moments(ws, evidence.now) if m.spans and not m.daypart]
    heard = {w.text for w in ws}
    found = []
    for r, w in enumerate(ws):
        if w.text not in _RANGE or (r > 0 and ws[r - 1].text in _RANGE):
            continue
        i = r - 1 - (r > 1 and ws[r - 1].text == "right")
        while i > 0 and r - i <= 5 and ws[i].text in _SETTLING:  # "seven in the morning through to four"
            i -= 1
        left = _clock_side(ws, said, i, end=True)
        k = r + 1 + (r + 1 < len(ws) and ws[r + 1].text in _RANGE)
        crossing = k < len(ws) and bool(days_at(ws, k, evidence.now.date()))
        while k < len(ws) and k - r <= 4 and (ws[k].text in ("at", "on") or days_at(ws, k, evidence.now.date())):
            k += 1
        right = _clock_side(ws, said, k, end=False)
        if left and right:
            pairs = [(a, b) for a in left for b in right if crossing or a < b]
            if len(pairs) > 1 and (hours := open_hours(evidence.instructions)):  # "from four till seven" at a studio open 10 to 21
                pairs = [(a, b) for a, b in pairs if min(h[0] for h in hours) <= a and b <= max(h[1] for h in hours)] or pairs
            if len(pairs) > 1 and (part := heard & _PM or heard & _AM):
                pairs = [(a, b) for a, b in pairs if all((x >= 720) == bool(part & _PM) for x in (a, b) if x != 720)]
            if len(pairs) == 1:
                found.append(pairs[0])
    if len(found) != 1:
        return {}
    return {name: f"{t // 60:02d}:{t % 60:02d}" for name, t in zip(names, found[0], strict=False)}


def _clock_side(ws: list[Word], said: list[Moment], i: int, *, end: bool) -> set[int]:
    """The minutes of the day the clock ending (`end`) or starting at ws[i] may be: a moment's
    points, or a bare hour's two readings ("four": 04:00 or 16:00)."""
    if not 0 <= i < len(ws):
        return set()
    for m in said:
        if (m.end - 1 if end else m.start) == i:
            return {a for a, b in m.spans if a == b}
    hour = spoken_number(ws[i].text) if is_number_word(ws[i].text) or ws[i].text.isdigit() else None
    if hour is None or not 1 <= hour <= 12 or hour != int(hour):
        return set()
    return {int(hour) % 12 * 60, (int(hour) % 12 + 12) * 60}


_STARTS = frozenset("start pickup pick collect collection arrival arrive checkin check in from begin outward".split())
_ENDS = frozenset("end return returning checkout out until finish back".split())


def in_span_order(values: dict[str, Any], evidence: Evidence) -> dict[str, str]:
    """A call's two days of one span (`values`: its date arguments in the schema's order), a start's
    and an end's by their names (`pickup_date`, `return_date`), written the wrong way round: "Pick
    up on the twelfth ... bring it back on the sixteenth" written pickup 16th, return 12th. Each
    day to its place; {} where they are in order, or are not a start's and an end's."""
    if len(values) != 2 or evidence.now is None:
        return {}
    (first, a), (second, b) = values.items()
    start, end = (set(name_words(n)) for n in (first, second))  # "pickup_date", "returnDate"
    if not (start & _STARTS and end & _ENDS and not start & _ENDS and not end & _STARTS):
        return {}
    days = [as_date(v, evidence) if isinstance(v, str) else None for v in (a, b)]
    if days[0] is None or days[1] is None or days[0] <= days[1]:
        return {}
    return {first: days[1], second: days[0]}


def spread_days(wrong: dict[str, Any], right: dict[str, Any], evidence: Evidence, *,
                order: list[str] | None = None) -> dict[str, str]:
    """The caller's day for each argument written as a date (`wrong`: those holding a day nobody
    said, `right`: those holding one said; each name to the model's value; `order`: the schema's
    order of the names, the order the days are said in); see the module. {} where the caller's
    last words naming a day do not name one for each wrong one."""
    if not wrong or not all(_a_moment(value, evidence) for value in wrong.values()):
        return {}  # "soonest" is no day the model meant to write: judged as it is
    if any(in_its_month(value, evidence) for value in [*wrong.values(), *right.values()]):
        return {}  # "the seventh, not the fifth. The Monday.": one day of the month talked of, not two of this one
    if (last := _last_days(evidence)) is None:
        return {}
    _, named = last
    every = {**wrong, **right}
    every = {n: every[n] for n in [*(order or []), *every] if n in every}  # a start before its end
    written = {name: as_date(value, evidence) if isinstance(value, str) else None for name, value in every.items()}
    if len(named) == len(every) > 1 and (placed := _in_order(list(every), named, written)):
        pass  # a day said in the wrong place ("tomorrow" as the return) is set right with the others
    elif len(free := [day for day in named if day not in {written[n] for n in right}]) != len(wrong):
        return {}
    else:
        placed = _in_order(list(wrong), free, written) or dict(zip(wrong, free, strict=True))
    # a start's and an end's, the start first ("From Saturday the twentieth to the Tuesday after")
    return {**placed, **in_span_order({n: placed.get(n, every[n]) for n in every}, evidence)}


def moved(value: Any, evidence: Evidence) -> str | None:
    """The day a call's one new day is moved to, where the caller's last words naming days say
    two and move it to one ("my appointment tomorrow ... could we move it to Monday", "push it from
    tomorrow until Friday": `times.moved_to`), and the model wrote another (the old day, or one
    nobody said); None otherwise."""
    if evidence.now is None or not _a_moment(value, evidence) or (last := _last_days(evidence)) is None:
        return None
    to = moved_to(last[0], evidence.now)
    return to if to is not None and to != (as_date(value, evidence) if isinstance(value, str) else None) else None


def _last_days(evidence: Evidence) -> tuple[str, list[str]] | None:
    """The caller's last words that name a day to act on, and the days (`days_named`); None where
    none do, or those words name days but not which one is meant."""
    assert evidence.now is not None
    for text in reversed(evidence.said):
        if (named := days_named(text, evidence.now)) is None:
            return None
        if named:
            return text, named
    return None


def _in_order(names: list[str], days: list[str], written: dict[str, str | None]) -> dict[str, str]:
    """Each day to a name, the earliest to the one the model wrote earliest; {} where its days do
    not all read, or two are one."""
    if not all(written[n] for n in names) or len({written[n] for n in names}) != len(names):
        return {}
    return dict(zip(sorted(names, key=lambda n: str(written[n])), sorted(days), strict=True))


def _a_moment(value: Any, evidence: Evidence) -> bool:
    """Did the model mean to write a moment here: one that reads, or a clock or a day of the month
    that does not ("14:00 AM" for "half four", "7th" for "Wednesday the seventeenth")?"""
    if evidence.now is None or not isinstance(value, str):
        return False
    ws = words(value)
    return bool(moments(ws, evidence.now, written=True) or _CLOCK_WRITTEN.fullmatch(value)
                or len(ws) == 1 and read_ordinal(ws, 0) is not None)


def took_back(value: Any, kind: ValueKind | None, evidence: Evidence, written: Written | None = None) -> bool:
    """Is this moment not the caller's, though its words match theirs: taken back by their last
    words ("No, five pm, not five in the morning"), the reading of "around seven" outside the
    opening hours the instructions give (07:00 at a restaurant open 18:00 to 22:30), or a day
    asked for as a date that names no one day ("Sunday, June 3, 2026": June 3 is a Wednesday)?"""
    if kind not in MOMENTS or not isinstance(value, str) or not evidence.said:
        return False
    if written == "date" and evidence.now is not None and ((day := as_date(value, evidence)) is None
                                                           or _a_year_nobody_said(int(day[:4]), evidence)):
        return True  # "Sunday, June 3, 2026" (a Wednesday); "2066-09-26" for "the twenty-sixth of September"
    hours, hhmm = open_hours(evidence.instructions), as_hhmm(value) if kind is ValueKind.TIME else None
    if hours and hhmm is not None and not _open(hhmm, hours) and _open(_other_half(hhmm), hours):
        return True
    return taken_back(value, evidence.said[-1], evidence.now) or _replaced(value, kind, evidence) \
        or kind is ValueKind.DATE and in_its_month(value, evidence) not in (None, as_date(value, evidence)) \
        or written == "date" and _weekday_taken_back(value, evidence)


def _weekday_taken_back(value: str, evidence: Evidence) -> bool:
    """ "I'm leaving on the Saturday, not the Sunday" after "to Sunday, June 14" was read back: a
    weekday said alone and taken back is that weekday of whichever week the call spoke of."""
    if (day := as_date(value, evidence)) is None:
        return False
    name = calendar.day_name[date.fromisoformat(day).weekday()].lower()
    return re.search(rf"\bnot (?:on )?(?:the |a )?{name}s?\b(?!,? (?:the )?\d|,? (?:the )?\w+(?:st|nd|rd|th)\b)",
                     evidence.said[-1].lower()) is not None


def _a_year_nobody_said(year: int, evidence: Evidence) -> bool:
    """A year more than one from the call's own, which no number the caller said is."""
    assert evidence.now is not None
    return abs(year - evidence.now.year) > 1 and not any(
        year in n.values for text in evidence.said for n in numbers_said(text))


def in_its_month(value: Any, evidence: Evidence) -> str | None:
    """A day of the month the caller's last words say alone, where the turns before were about one
    other month ("from the first to the fifth of September", then "Ooh, no, the seventh, not the
    fifth. The Monday."): that month's day, September 7, not June 7 or the Monday June 8. Of a value
    on a day so said, the day; of one on a day so taken back, the one day said instead; None where
    the words say no day alone of the value's, or a weekday with it that is not its own."""
    day = as_date(value, evidence) if isinstance(value, str) and len(evidence.said) > 1 else None
    if day is None or evidence.now is None or int(day[5:7]) == evidence.now.month:
        return None  # a day of this month is read so already
    before = [*evidence.said[:-1], *evidence.asked[:len(evidence.said)]]
    months = {m for text in before for w in words(text) if (m := month_of(w.text, written=False))}
    alone, weekdays = days_of_month_alone(evidence.said[-1], evidence.now)
    kept = {d for d, back in alone if not back}
    if months != {int(day[5:7])} or int(day[8:]) not in {d for d, _ in alone} or len(kept) != 1:
        return None
    meant = f"{day[:8]}{kept.pop():02d}"
    try:
        return meant if not weekdays or weekdays == {date.fromisoformat(meant).weekday()} else None
    except ValueError:
        return None  # "the thirty-first" of a month of thirty days



def _replaced(value: str, kind: ValueKind | None, evidence: Evidence) -> bool:
    """A day the caller said earlier, where their last words correct it to another one day ("make
    it Sunday instead" after "Saturday"), or name it beside another ("Sorry, I've got dat wrang,
    Friday I'm on da boat sooth. Thursday, same time." after Friday was read back); not one of a
    span they said ("from the 24th to the 29th": "No, out on the 29th" sets the last day right,
    `spread_days`, not the first). A time, where their correcting words name one other time."""
    if kind not in (ValueKind.DATE, ValueKind.TIME) or evidence.now is None or len(evidence.said) < 2 or not corrects(evidence.said[-1]):
        return False
    if kind is ValueKind.TIME:  # "Ooh, sorry, the morning one. Eleven o'clock." after "at three"
        now = one_moment(evidence.said[-1], evidence.now, "time", hours=open_hours(evidence.instructions))
        return now is not None and (hhmm := as_hhmm(value)) is not None and hhmm != now
    named = days_named(re.sub(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b", " ", evidence.said[-1], flags=re.I),
                       evidence.now)  # "Thursday the eleventh. I'm in the office on Fridays": a habit is no day
    day = as_date(value, evidence)
    spans = [said for text in evidence.said[:-1] if day in (said := days_named(text, evidence.now) or [])]
    return named is not None and day is not None and not any(len(said) > 1 for said in spans) and (len(named) == 1 and day != named[0] or len(
        named) == 2 and day in named and day in (days_named(evidence.last_asked, evidence.now) or []))


def _open(hhmm: str, hours: tuple[tuple[int, int], ...]) -> bool:
    return in_hours(int(hhmm[:2]) * 60 + int(hhmm[3:]), hours)


def _other_half(hhmm: str) -> str:
    """The same hour on the other half of the clock: 07:00 is 19:00."""
    return f"{(int(hhmm[:2]) + 12) % 24:02d}{hhmm[2:]}"


def as_hhmm(value: str, now: datetime | None = None) -> str | None:
    """One time of day written any way ("6 pm", "six thirty PM", "18:30") as HH:MM; None where it
    is not exactly one ("7": morning or evening). Given the day it is, one with more beside it:
    "Friday 6 PM", "19:00 at 9 Mannings Hill Road" (the model's, for a schema's HH:MM)."""
    found = moments(words(value), None, written=True)
    if len(found) != 1 or len(found[0].spans) != 1 or found[0].days:
        return one_moment(value, now, "time") if now is not None else None
    start, end = found[0].spans[0]
    return f"{start // 60:02d}:{start % 60:02d}" if start == end else None


def as_date(value: str, evidence: Evidence) -> str | None:
    """A day the model wrote ("Saturday", "6/20") as the schema asks: "2026-06-06"."""
    return one_moment(value, evidence.now, "date", written=True) if evidence.now is not None else None


def the_clock(value: Any, kind: ValueKind | None, evidence: Evidence) -> bool:
    """Is this moment the call's own day or hour (see the module)?"""
    if kind not in MOMENTS or evidence.now is None or not isinstance(value, str):
        return False
    now = evidence.now
    day, hhmm, hour = as_date(value, evidence), as_hhmm(value), f"{now.hour:02d}:{now.minute:02d}"
    return (day == now.date().isoformat() and hhmm in (None, hour)) or (day is None and hhmm == hour)


def corrected_moment(value: Any, rule: Any, evidence: Evidence) -> str | None:
    """The caller's new day where their last words correct one of the days the agent read back
    (a time: `_corrected_time`): "The twenty-ninth, sorry." to "Boarding from Thursday, June 25 to
    Sunday, June 28. Shall I book it?" is the end's, June 29 (nearer June 28 than June 25), and a
    call still holding June 28 holds June 29. None where the words name no one new day, the value
    was not read back, or the new day is as near another day read back (or over a week from any)."""
    if rule.kind is ValueKind.TIME and rule.written is None:
        return _corrected_time(value, evidence)
    if rule.written != "date" or evidence.now is None or not evidence.said or "?" not in evidence.last_asked:
        return None
    read, named = _days_named(evidence.last_asked, evidence), _days_named(own_correction(evidence.said[-1], evidence.now), evidence)
    new = next(iter(named)) if len(named) == 1 else None
    if new is None or new in read or value not in read or len(read) < 2:
        return None
    apart = sorted((abs((date.fromisoformat(new) - date.fromisoformat(day)).days), day) for day in read)
    return new if apart[0][1] == value and apart[0][0] < min(8, apart[1][0]) else None


def _days_named(text: str, evidence: Evidence) -> set[str]:
    """The days these words name, each as "2026-06-29"; a weekday said of a day already named
    ("the twenty-ninth ... the Monday") is that day."""
    assert evidence.now is not None
    ws, out = words(text), set()
    said = [m for m in moments(ws, evidence.now) if m.days and not m.spans]
    for m in said:
        if any(o is not m and its_weekday(o.days, ws[m.start:m.end], evidence.now.year) for o in said):
            continue
        if (day := one_moment(text[ws[m.start].start:ws[m.end - 1].end], evidence.now, "date")) is not None:
            out.add(day)
    return out


def _corrected_time(value: Any, evidence: Evidence) -> str | None:
    """The one time the caller's correction says, for the one time the agent read back: "Actually,
    the later one, the five o'clock." to "on the 12:00 sailing. Is that right?" is 17:00 (read
    within six hours of the time read back), and a call still holding 12:00 holds 17:00."""
    if evidence.now is None or not evidence.said or "?" not in evidence.last_asked or not corrects(evidence.said[-1]):
        return None
    read = {f"{int(h):02d}:{m}" for h, m in _HHMM.findall(evidence.last_asked)}  # as the agent wrote them
    text, near = own_correction(evidence.said[-1], evidence.now), _near_read_back(evidence)
    if (new := one_moment(text, evidence.now, "time", hours=near)) is None:  # "the half four one instead?
        # We won't be back by three": a sentence's time that is the one read back is taken back
        # and of several, the first sentence's: "the eight o'clock, sorry. The kids have got netball till half five"
        each = [t for s in _SENTENCES.split(text) if (t := one_moment(s, evidence.now, "time", hours=near)) not in read and t]
        new = each[0] if each else None
    # the model's value as written beside them ("9:00" is the "09:00" read back; `as_hhmm` reads a
    # clock that could be either half of the day as none), or a time in words ("noon")
    clock = _HHMM.fullmatch(str(value).strip())
    held = f"{int(clock[1]):02d}:{clock[2]}" if clock else as_hhmm(str(value))
    if held is not None and new is not None and held != new and held[2:] == new[2:] and (int(held[:2]) - int(new[:2])) % 12 == 0:
        held = next(iter(read), held)  # "Ten o'clock, not nine" to "starting at 21:00": 22:00, not the model's 10:00
    return new if len(read) == 1 and held in read and new is not None and new not in read else None
