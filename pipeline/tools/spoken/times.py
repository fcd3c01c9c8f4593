"""Was this time or date said? Both sides read into days and times of day before comparing.

A value ("18:00", "2026-06-04T18:00", "6 PM", "Thursday", "now") and the caller's words ("a cab
at six in the evening", "next Thursday", "right now") are read the same way (`days`, `clock`),
relative to `now`, the moment the words were said; the value was said when every part it states
is among what the words name: its day among the days said, its time of day within a time said
(a point, or a part of the day: "tomorrow morning" holds 09:30). "14:00" is not "at 6 pm".

"now", "right now", "as soon as possible", "in twenty minutes" name the moment they were said
in: a value within `slack_min` of it was said. Without a `now`, they match only a value that is
itself such a word. A value that names a time of day but no day ("pickup 18:00"), or a day and
time where the caller named only the time ("at six": today or tomorrow), is held to the time."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Literal

from .clock import DAYPARTS, Clock, Span, clock_at, settle
from .days import Day, as_day, day_matches, days_at, its_day, its_weekday, month_of, weekday_of
from .words import Word, is_number_word, read_group, spoken_number, turned_down, words

_REFERENCE = datetime(2000, 1, 3, 12, 0)  # stands for "now" when none is given: both sides alike
_NOW_WORDS = (("right", "now"), ("right", "away"), ("straight", "away"), ("straightaway",),
              ("immediately",), ("asap",), ("a", "s", "a", "p"), ("as", "soon", "as", "possible"),
              ("as", "soon", "as", "you", "can"), ("at", "once"), ("now",))
_NOT_NOW_BEFORE = {"until", "till", "by", "for", "just", "before", "from", "right"}
# "done ninety thousand miles now", "two years now", "a while now": how much so far, not a time
_SO_FAR_BEFORE = {"miles", "kilometres", "kilometers", "km", "years", "months", "weeks", "days", "times",
                  "while", "ages", "old", "us", "them", "people"}  # "it's six of us now": how many, not when
_DURATIONS = {"minute": 1, "minutes": 1, "mins": 1, "min": 1, "hour": 60, "hours": 60, "hrs": 60}
_ISO_TIME = re.compile(r"[Tt ](\d{1,2}):(\d{2})")
# How far after "now" a time may be and still be "now" (a car or a table that soon), and how far before
SLACK_MIN = 20  # (the words were said a moment ago): choices, not measurements; `slack_min` overrides
_PAST_SLACK_MIN = 5


@dataclass(frozen=True)
class Moment:
    """What ws[start:end] name: days, times of day, and whether it is "now" itself."""

    start: int
    end: int
    days: frozenset[Day] = frozenset()
    spans: tuple[Span, ...] = ()
    now: bool = False
    daypart: bool = field(default=False, compare=False)
    at: datetime | None = field(default=None, compare=False)  # "right now", "in 20 minutes": when


def moments(ws: list[Word], now: datetime | None, *, written: bool = False,
            slack_min: int = SLACK_MIN) -> list[Moment]:
    """Every day, time of day and "now" the words name, as they come."""
    ref = now or _REFERENCE
    found: list[Moment] = []
    clocks: list[Clock] = []
    i = 0
    while i < len(ws):
        if (m := _now_at(ws, i, now, slack_min)) is not None:
            found.append(m)
            i = m.end
        elif (d := days_at(ws, i, ref.date(), written=written)) is not None:
            found.append(Moment(d.start, d.end, days=d.days))
            if ws[i].text in ("tonight", "tonite"):
                clocks.append(Clock(i, d.end, (DAYPARTS["tonight"],), True, daypart=True))
            i = d.end
            if (iso := _iso_time(ws[d.start].text)) is not None:
                clocks.append(Clock(d.start, d.end, ((iso, iso),), True))
        elif (c := clock_at(ws, i, written=written)) is not None:
            if written or not _read_out(ws, c.start, c.end):
                clocks.append(c)
            i = c.end
        else:
            i += 1
    return found + [Moment(c.start, c.end, spans=c.spans, daypart=c.daypart) for c in _settled(ws, clocks)]


def _read_out(ws: list[Word], start: int, end: int) -> bool:
    """Digits of a code read out, not a time: ws[start:end] come straight after a letter or a digit
    ("P T two oh six nine eight", "BA two fifteen", "four four one oh nine") or go straight on in
    digits ("two oh six nine eight"; not "the half eight one")."""
    prev = ws[start - 1].raw if start > 0 else ""
    before = not ws[start].after_break and prev.isalpha() and prev.isupper() and (
        len(prev) == 1 and prev not in "AI" or 2 <= len(prev) <= 3)  # not "A two o'clock slot"
    before = before or start > 0 and not ws[start].after_break and _a_digit(ws[start - 1])  # "four four one oh nine"
    after = end < len(ws) and not ws[end].after_break and _a_digit(ws[end])
    return all(w.text[:1].isalpha() for w in ws[start:end]) and (before or after)


def _a_digit(w: Word) -> bool:
    """A digit said or written, "oh" among them; not "one", which is as often "the half eight one"."""
    value = spoken_number(w.text) if is_number_word(w.text) else None
    return w.text[:1].isdigit() or w.text == "oh" or value is not None and value < 10 and w.text != "one"


def time_said(value: str, text: str, now: datetime | None, *,
              slack_min: int = SLACK_MIN) -> tuple[int, int] | Literal[False] | None:
    """Where the text says the time or date this value is (characters start, end); None when it
    does not; False when the value names no time or date at all (judge it as text)."""
    vws = words(value)
    wanted = moments(vws, now, written=True, slack_min=0)
    if not wanted:
        return False
    want_days = frozenset().union(*(m.days for m in wanted))
    want_spans = tuple(s for m in wanted for s in m.spans)
    want_now = any(m.now for m in wanted) and now is None
    ws, said = _read(text, now, slack_min)
    hits: list[Moment] = []
    if want_spans:
        hit = next((m for m in said if any(_overlap(s, w) for s in m.spans for w in want_spans) and not (m.daypart and any(
            p.start > m.start and p.spans and not p.daypart for p in said))), None)  # "Her Thursday evening one ... at ten?"
        if hit is None:
            return None
        hits.append(hit)
    if want_now:
        hit = next((m for m in said if m.now), None)
        if hit is None:
            return None
        hits.append(hit)
    if want_days:
        hit = next((m for m in said if any(day_matches(s, w) for s in m.days for w in want_days)), None)
        if hit is not None:
            hits.append(hit)
        elif not (hits and not any(m.days for m in said) and _soon(want_days, now)):
            return None  # a time said with no day: today's, or tomorrow's when it has passed
    if not hits:
        return None
    return ws[min(m.start for m in hits)].start, ws[max(m.end for m in hits) - 1].end


@lru_cache(maxsize=64)  # one text is asked about many values
def _read(text: str, now: datetime | None, slack_min: int) -> tuple[list[Word], list[Moment]]:
    ws = words(text)
    return ws, moments(ws, now, slack_min=slack_min)


def _now_at(ws: list[Word], i: int, now: datetime | None, slack_min: int) -> Moment | None:
    for phrase in _NOW_WORDS:
        if tuple(w.text for w in ws[i:i + len(phrase)]) != phrase:
            continue
        end = i + len(phrase)
        if phrase == ("now",) and (_before(ws, i) in _NOT_NOW_BEFORE | _SO_FAR_BEFORE or _opens_clause(ws, i) or is_number_word(_before(ws, i)) or _before(ws, i).isdigit()):
            return None  # "for now", "Now, about my ...", "ninety thousand miles now", "more like sixteen now": no time
        return _at_offset(i, end, now, 0, slack_min, now_itself=True)
    return _in_a_while(ws, i, now, slack_min)


def _in_a_while(ws: list[Word], i: int, now: datetime | None, slack_min: int) -> Moment | None:
    """ "in twenty minutes", "in half an hour", "in an hour", "in a few minutes"."""
    if ws[i].text != "in":
        return None
    texts = [w.text for w in ws[i + 1:i + 5]]
    if texts[:3] in (["half", "an", "hour"], ["a", "half", "hour"]):
        return _at_offset(i, i + 4, now, 30, slack_min)
    if texts[:2] in (["an", "hour"], ["one", "hour"]):
        return _at_offset(i, i + 3, now, 60, slack_min)
    if texts[:3] in (["a", "few", "minutes"], ["a", "couple", "minutes"]) or texts[:2] == ["a", "minute"]:
        return _at_offset(i, i + 1 + (3 if texts[1] != "minute" else 2), now, 5, slack_min)
    group = read_group(ws, i + 1)
    if group is None or group[2] >= len(ws) or ws[group[2]].text not in _DURATIONS:
        return None
    offset = int(group[0] * _DURATIONS[ws[group[2]].text])
    return _at_offset(i, group[2] + 1, now, offset, slack_min)


def _at_offset(start: int, end: int, now: datetime | None, offset_min: int, slack_min: int,
               *, now_itself: bool = False) -> Moment:
    if now is None:
        return Moment(start, end, now=now_itself)
    at = now + timedelta(minutes=offset_min)
    minute = at.hour * 60 + at.minute
    low, high = max(0, minute - min(slack_min, _PAST_SLACK_MIN)), min(24 * 60, minute + slack_min)
    return Moment(start, end, days=frozenset({as_day(at.date())}), spans=((low, high),),
                  now=now_itself, at=at)


def _settled(ws: list[Word], clocks: list[Clock]) -> list[Clock]:
    """Times said without am or pm, settled by a part of the day in the same clause; a part of
    the day used so names no range of its own ("six in the evening" is not 19:00)."""
    parts = [c for c in clocks if c.daypart]
    used: set[int] = set()
    out: list[Clock] = []
    for c in clocks:
        if c.daypart or c.settled:
            out.append(c)
            continue
        near = next((p for p in parts if _same_clause(ws, c, p)), None)
        if near is not None and (settled := settle(c, near.spans[0])).settled:
            used.add(id(near))
            c = settled
        out.append(c)
    return [c for c in out if id(c) not in used]


def _same_clause(ws: list[Word], a: Clock, b: Clock) -> bool:
    lo, hi = (a, b) if a.start < b.start else (b, a)  # a comma and a "the" keep them one ("in the evening, the eight o'clock one")
    glued = all(w.text in ("the", "at", "around", "about") and w.raw.islower() for w in ws[lo.end:hi.start]) \
        and not any(w.after_break for w in ws[lo.end + 1:hi.start + 1])  # not "... evening. The eight o'clock one is full"
    return hi.start - lo.end <= 4 and (hi.start == lo.end or glued or not any(w.after_break for w in ws[lo.end:hi.start + 1]))


def _iso_time(token: str) -> int | None:
    """The time in a written date-time ("2026-06-04T18:00:00"), in minutes after midnight."""
    m = _ISO_TIME.search(token)
    return int(m.group(1)) * 60 + int(m.group(2)) if m is not None else None


def _overlap(a: Span, b: Span) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _soon(days: frozenset[Day], now: datetime | None) -> bool:
    if now is None:
        return True
    near = {as_day(now.date()), as_day(now.date() + timedelta(1))}
    return any(day_matches(n, d) for d in days for n in near)


def _before(ws: list[Word], i: int) -> str:
    return ws[i - 1].text if i > 0 and not ws[i].after_break else ""


def _opens_clause(ws: list[Word], i: int) -> bool:
    return (i == 0 or ws[i].after_break) and i + 1 < len(ws) and ws[i + 1].after_break


# Words that take back the moment after them: "five pm, not five in the morning"
_TAKEN_BACK = (("not",), ("not", "at"), ("not", "on"), ("not", "the"), ("instead", "of"), ("rather", "than"))


Written = Literal["time", "date", "datetime"]


def one_moment(text: str, now: datetime, kind: Written, *, written: bool = False,
               hours: tuple[Span, ...] = ()) -> str | None:
    """The one time ("18:00"), day ("2026-06-04") or both ("2026-06-04T18:00") these words name,
    written so; None where they name none, or more than one ("at six": morning or evening;
    "Monday or Tuesday"). A moment the words take back ("not five in the morning") is not named.
    `written`: the text is a value a model wrote ("Saturday", "6/20"), not speech. `hours`: the
    times the business is open (`open_hours`): "at 7:30" at a restaurant open 18:00 to 22:30 is
    19:30, the one of its readings in them."""
    ws = words(text)
    said = moments(ws, now, written=written)
    # a bare "now" is as often "much better now" as a time: only "right now", "in ten minutes"
    kept = [m for m in said if not _taken_back(ws, m.start)
            and not (m.end - m.start == 1 and ws[m.start].text == "now")]
    exact = {m.at.replace(second=0, microsecond=0) for m in kept if m.at is not None}
    if len(exact) > 1:
        return None
    at = next(iter(exact), None)
    days = {d for m in kept if m.at is None for d in m.days}
    points = {s for m in kept if m.at is None and not m.daypart for s in m.spans}
    if at is not None:
        days |= {as_day(at.date())}
        points |= {(at.hour * 60 + at.minute,) * 2} if kind != "date" else set()
    if kind == "date":
        return _day_text(days, now) if len(days) == 1 else None
    if len(points) > 1 and hours and all(a == b for a, b in points):  # morning or evening
        points = {p for p in points if in_hours(p[0], hours)}
    if len(points) != 1 or (point := next(iter(points)))[0] != point[1]:
        return None
    clock = f"{point[0] // 60:02d}:{point[0] % 60:02d}"
    if kind == "time":
        return clock
    if not days:  # "at six pm": today's, or tomorrow's where it has passed
        day = now.date() + timedelta(days=1 if point[0] < now.hour * 60 + now.minute - _PAST_SLACK_MIN else 0)
        days = {as_day(day)}
    return f"{_day_text(days, now)}T{clock}" if len(days) == 1 else None


_TOLD_OF = frozenset({"since", "ago", "last"})  # "limping since the weekend": a day gone by, told of


def days_named(text: str, now: datetime) -> list[str] | None:
    """The days these words name to act on, each once, in the order said ("from tomorrow to
    Saturday": ["2026-06-04", "2026-06-06"]); a day told of ("since the weekend"), taken back ("Friday,
    not Monday", "Monday is no longer good") or rough ("in a week or so") is not one. None where a moment names several ("the
    weekend"), two are choices ("Monday or Tuesday"), or one is gone by: which is meant is not said."""
    ws, out, last = words(text), list[str](), -1
    for m in (said := moments(ws, now)):  # a weekday alone of another day said is it ("the Saturday ... the 13th")
        if not m.days or _taken_back(ws, m.start) or turned_down(text[ws[m.end - 1].end:]) or (m.start and ws[m.start - 1].text in _TOLD_OF) or any(
                o.days != m.days and not o.now and not _taken_back(ws, o.start) and its_day(ws[m.start:m.end], o.days, now.year)
                for o in said):  # not of one taken back: "not this Saturday, next Saturday"
            continue
        if [w.text for w in ws[m.end:m.end + 2]] in (["or", "so"], ["or", "two"], ["or", "thereabouts"]):
            last = m.end + 2  # "I'll be in a week or so": how long, roughly
            continue
        if len(m.days) != 1 or (out and "or" in (w.text for w in ws[last:m.start])):
            return None
        last = m.end
        if (day := _day_text(set(m.days), now)) < now.date().isoformat():
            return None
        if day not in out:
            out.append(day)
    return out


_MOVED_TO = frozenset({"to", "till", "until", "onto", "into", "be"})  # "move it to Monday", "could it be Friday": where it goes


def moved_to(text: str, now: datetime) -> str | None:
    """Of the days these words name to act on (`days_named`), the one thing is moved to ("push my
    delivery from tomorrow to Monday", "my appointment tomorrow ... could we move it to Monday"):
    the one day said after "to" ("until", "till") or before "instead"; None where no one day is."""
    if not (named := days_named(text, now)) or len(named) < 2:
        return None
    ws = words(text)
    toward = {_day_text(set(m.days), now) for m in moments(ws, now) if len(m.days) == 1 and (
              m.start and ws[m.start - 1].text in _MOVED_TO or m.end < len(ws) and ws[m.end].text == "instead")}
    return next(iter(toward)) if len(toward) == 1 and next(iter(toward)) in named else None


def taken_back(value: str, text: str, now: datetime | None) -> bool:
    """Do these words take this moment back ("Friday, not Monday" for "2026-06-08"; "the thirteenth...
    no, hang on, the twentieth" for the thirteenth; "Monday is no longer good for me")?"""
    wanted = moments(words(value), now, written=True, slack_min=0)
    ws = words(text)
    said = moments(ws, now)
    over = [m for m, _ in _said_over(ws, now)]
    back = [m for m in said if _taken_back(ws, m.start) or m in over or turned_down(text[ws[m.end - 1].end:])]
    return any(any(_overlap(s, w) for s in m.spans for w in v.spans) or
               any(day_matches(s, w) for s in m.days for w in v.days)
               for m in back for v in wanted)


def days_of_month_alone(text: str, now: datetime) -> tuple[list[tuple[int, bool]], set[int]]:
    """The days of the month these words say with no month ("the seventh, not the fifth": 7, and 5
    taken back), and the weekdays they say alone ("The Monday": 0): what a correction says of a
    day whose month an earlier turn gave."""
    ws, alone, weekdays = words(text), list[tuple[int, bool]](), set[int]()
    for m in moments(ws, now):
        said = [w.text for w in ws[m.start:m.end]]
        if len(m.days) != 1 or any(month_of(w, written=False) for w in said):
            continue
        named = {d for w in said if (d := weekday_of(w, written=False)) is not None}
        if named:
            weekdays |= named if len(said) <= 2 else set()
        else:
            alone.append((next(iter(m.days))[2], _taken_back(ws, m.start)))
    return alone, weekdays


_OWN_WORDS_BACK = frozenset("no sorry wait rather mean".split())  # "... no, hang on, ..." ("actually" follows the new one)


def own_correction(text: str, now: datetime | None) -> str:
    """The words after the caller took a moment back in the same breath ("for the thirteenth... no,
    hang on, the twentieth": "no, hang on, the twentieth"); the text itself where they did not."""
    ws = words(text)
    over = _said_over(ws, now)
    return text[ws[over[-1][0].end].start:] if over and over[-1][0].end < len(ws) else text


def _said_over(ws: list[Word], now: datetime | None) -> list[tuple[Moment, Moment]]:
    """Each moment the words take back for the next one said ("the thirteenth... no, hang on, the
    twentieth"), with it: not where the next is itself taken back ("Sunday, sorry, not Saturday")."""
    said = sorted(moments(ws, now), key=lambda m: m.start)  # as said: days and times are found apart
    return [(m, later) for m, later in zip(said, said[1:], strict=False)
            if _another(m, later) and corrected_between(ws, m.end, later.start) and not _taken_back(ws, later.start)
            and not its_weekday(m.days, ws[later.start:later.end], (now or _REFERENCE).year)]


def _another(m: Moment, later: Moment) -> bool:
    """Is `later` another day (or time) than `m`: of its kind, not "now", not the same one said
    again ("the seventh, actually. The Tuesday.")?"""
    if m.now or later.now or bool(m.days) != bool(later.days):
        return False
    if m.days:
        return not any(day_matches(a, b) for a in m.days for b in later.days)
    return not any(_overlap(a, b) for a in m.spans for b in later.spans)


def corrected_between(ws: list[Word], start: int, end: int) -> bool:
    """Do the words just before the later moment (or choice: `picks`) take the first back ("the thirteenth... no, hang on,
    the twentieth", "at two, sorry, I mean three"; not "eight, sorry. The kids have netball till five")?"""
    between = [w.text for w in ws[start:end]][-5:]
    return bool(set(between) & _OWN_WORDS_BACK) or any(
        pair in zip(between, between[1:], strict=False) for pair in (("hang", "on"), ("hold", "on"), ("scratch", "that")))


def _taken_back(ws: list[Word], i: int) -> bool:
    before = tuple(w.text for w in ws[max(0, i - 2):i])
    if before == ("i", "said") and any(w.text in ("but", "meant") for w in ws[i + 1:]):
        return True  # "I said half two but I meant half three"
    return any(before[-len(p):] == p for p in _TAKEN_BACK if len(before) >= len(p))


def _day_text(days: set[Day], now: datetime) -> str:
    year, month, day = next(iter(days))
    if year is None:  # "June 15th", "May 20th": the one nearest the day it was said
        year = min((now.year - 1, now.year, now.year + 1),
                   key=lambda y: abs((_date_or_last(y, month, day) - now.date()).days))
    return f"{year:04d}-{month:02d}-{day:02d}"


def _date_or_last(year: int, month: int, day: int) -> date:
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


_HOURS = re.compile(r"\b(\d{1,2})[:.](\d{2})\s*(?:to|until|till|-|–)\s*(\d{1,2})[:.](\d{2})\b")


def open_hours(text: str) -> tuple[Span, ...]:
    """The spans of the day a text gives as "HH:MM to HH:MM" (a business's opening hours, in
    minutes of the day): "open 12:00 to 15:00 and 18:00 to 22:30"."""
    spans = []
    for m in _HOURS.finditer(text):
        h1, m1, h2, m2 = (int(g) for g in m.groups())
        if h1 < 24 and h2 <= 24 and m1 < 60 and m2 < 60 and h1 * 60 + m1 < h2 * 60 + m2:
            spans.append((h1 * 60 + m1, h2 * 60 + m2))
    return tuple(spans)


def in_hours(minute: int, hours: tuple[Span, ...]) -> bool:
    """Is this minute of the day inside one of the spans (`open_hours`)?"""
    return any(a <= minute <= b for a, b in hours)
