"""Which calendar days a caller's words name: "tomorrow", "next Thursday", "June 3rd", "the 3rd of
June", "2026-06-03", relative to the moment they were said.

A day is (year, month, day), the year None when the caller did not say one ("June 3rd"). A word
that can mean more than one day names them all: "next Thursday" said on a Monday is the Thursday
of this week to some callers and of the next to others (said on a Friday, when this week's has
gone by, it is the coming one; after "not this Thursday", the next week's); "Thursday" said on a
Thursday is today or a week from today."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from .words import Word, is_number_word, read_group, read_ordinal

Day = tuple[int | None, int, int]  # (year, or None when not said; month; day)

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_SHORT = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # in written values only
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
CALENDAR = frozenset((*WEEKDAYS, *_MONTHS))  # capitalised, yet no name of a thing
_MONTH_SHORT = {m[:3]: n + 1 for n, m in enumerate(_MONTHS)} | {"sept": 9}
_ISO, _SLASHED = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"), re.compile(r"(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?")
_UNITS_OF_DAYS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "fortnight": 14, "fortnights": 14}
_WEEKS = {"a week": 1, "a fortnight": 2, "two weeks": 2}  # "a fortnight today", "two weeks on Friday"


@dataclass(frozen=True)
class Days:
    """Days named by ws[start:end]."""

    start: int
    end: int
    days: frozenset[Day]


def day_matches(said: Day, wanted: Day) -> bool:
    """The same day, a year nobody said matching any year."""
    return said[1:] == wanted[1:] and (said[0] is None or wanted[0] is None or said[0] == wanted[0])


def its_weekday(days: frozenset[Day], named: list[Word], year: int) -> bool:
    """Do these words name only a weekday one of these days falls on ("The twenty-ninth, sorry.
    We fly back on the Monday.": the 29th is that Monday, said again, not taken back)?"""
    weekdays = {k for w in named if (k := weekday_of(w.text, written=False)) is not None}
    return len(weekdays) == 1 and not any(ch.isdigit() for w in named for ch in w.text) and any(
        date(d[0] or year, d[1], d[2]).weekday() in weekdays for d in days)


def its_day(named: list[Word], days: frozenset[Day], year: int) -> bool:
    """Are these words a weekday alone ("the Saturday", not "the Saturday after") that one of these
    days, another the caller names, falls on ("I'm back on the Saturday ... The thirteenth")?"""
    return all(w.text in _BARE or weekday_of(w.text, written=False) is not None for w in named) \
        and its_weekday(days, named, year)


_BARE = frozenset("the on this that next coming".split())


def as_day(d: date) -> Day:
    return (d.year, d.month, d.day)


def month_of(text: str, *, written: bool) -> int | None:
    """A month by its name ("june"), or its short form ("jun", "sept") in a written value."""
    text = text.rstrip(".")
    if text in _MONTHS:
        return _MONTHS.index(text) + 1
    return _MONTH_SHORT.get(text) if written else None


def weekday_of(text: str, *, written: bool) -> int | None:
    text = text.rstrip("s") if text.endswith("days") else text  # "on thursdays"
    if text in WEEKDAYS:
        return WEEKDAYS.index(text)
    if written and text[:3] in _WEEKDAY_SHORT and text in (text[:3], text[:4], "thurs", "tues"):
        return _WEEKDAY_SHORT.index(text[:3])
    return None


def days_at(ws: list[Word], i: int, today: date, *, written: bool = False) -> Days | None:
    """The days named by the words starting at ws[i], if any."""
    t = ws[i].text
    if (m := _ISO.match(t)) is not None:
        found = _valid(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        return Days(i, i + 1, frozenset(found)) if found else None
    if (m := _SLASHED.fullmatch(t)) is not None:
        year = _year_number(int(m.group(3))) if m.group(3) else None
        a, b = int(m.group(1)), int(m.group(2))
        found = _valid(year, a, b) | _valid(year, b, a)  # 6/3: June 3rd, or the 6th of March
        return Days(i, i + 1, frozenset(found)) if found else None
    if t in ("today", "tonight", "tonite"):
        return Days(i, i + 1, frozenset({as_day(today)}))
    if t in ("tomorrow", "tmrw", "tomorrow's", "themorra") or t in ("morra", "morrow") and i and ws[i - 1].text == "the":
        return Days(i, i + 1, frozenset({as_day(today + timedelta(1))}))  # "the morra night", in the north
    if t == "yesterday":
        return Days(i, i + 1, frozenset({as_day(today - timedelta(1))}))
    if _texts(ws, i, 2) in (["day", "after"], ["day", "before"]) and i and ws[i - 1].text == "the" and (
            i + 2 >= len(ws) or ws[i + 2].after_break or ws[i + 2].text in _THEN) and \
            (last := _last_said(ws, i - 1, today)) is not None:  # "on Tuesday ... the day after instead"
        return Days(i, i + 2, frozenset({as_day(last + timedelta(1 if ws[i + 1].text == "after" else -1))}))
    if _texts(ws, i, 3) in (["day", "after", "tomorrow"], ["day", "before", "yesterday"]):  # "the" or not
        sign = 1 if ws[i + 1].text == "after" else -1
        return Days(i, i + 3, frozenset({as_day(today + timedelta(2 * sign))}))
    if (weeks := _WEEKS.get(" ".join(_texts(ws, i, 2)))) and not (i and ws[i - 1].text == "for" and _texts(ws, i + 2, 1) == ["from"]) \
            and (later := _a_week_on(ws, i + 2, today, written=written, weeks=weeks)) is not None:  # not "for two weeks from Monday"
        return later
    if _texts(ws, i, 2) == ["week", "from"] and not ws[i + 1].after_break and not (i and (is_number_word(ws[i - 1].text) or ws[i - 1].text == "a")) \
            and (later := _a_week_on(ws, i + 1, today, written=written)) is not None:
        return Days(i, later.end, later.days)  # "week from Friday", no "a" (not "for one week, from Monday")
    if (named := _weekday(ws, i, today, written=written)) is not None:
        after = _week_after(ws, named, today)
        return _dated(ws, _that_week(ws, after, today) if after == named and not written else after, today,
                      written=written)
    if (named := _month_day(ws, i, today, written=written)) is not None:
        return _weekday_after(ws, named, today, written=written)
    if t == "in" and (named := _in_days(ws, i, today)) is not None:
        return named
    if (nth := _the_nth(ws, i, today)) is not None:
        if (ranged := _month_after(ws, nth, today, written=written)) is not None:
            return ranged
        return _weekday_after(ws, nth, today, written=written, month_said=False)  # "on the 3rd"
    return None


def _the_nth(ws: list[Word], i: int, today: date, *, bare: bool = False) -> Days | None:
    """ "the 3rd", "the sixteenth" ("Di fourteenth", opening a sentence; `bare`: "Sunday 28th"): of
    this month, or the next once it has passed (not "the 3rd of June", read as a month's day)."""
    if not bare and _texts(ws, i, 1) not in (["the"], ["di"], ["da"], ["de"]) or (taken := read_ordinal(ws, i + (not bare))) is None \
            or not 1 <= taken[0] <= 31 or taken[1] < len(ws) and ws[taken[1]].text == "of":
        return None
    return Days(i, taken[1], frozenset(_day_of_month(taken[0], today)))


def _weekday_after(ws: list[Word], dated: Days, today: date, *, written: bool, month_said: bool = True) -> Days:
    """ "the sixteenth, the Tuesday", "June 16th, a Tuesday": a date and the weekday said after it
    are one day where they agree (as "Tuesday the sixteenth" is, `_dated`)."""
    j = dated.end + (_texts(ws, dated.end, 1) in (["the"], ["a"], ["that's"], ["thats"], ["which's"]))
    if j >= len(ws) or (wd := weekday_of(ws[j].text, written=written)) is None:
        return dated
    agree = {d for d in dated.days if _weekday_of(d, today) == wd} if month_said else _agreeing(dated, {wd}, today)
    return Days(dated.start, j + 1, frozenset(agree)) if agree else dated


def _weekday(ws: list[Word], i: int, today: date, *, written: bool) -> Days | None:
    """ "Thursday", "this Thursday", "next Thursday", "last Thursday", "the weekend"."""
    mod = ws[i].text if ws[i].text in ("this", "next", "last", "coming", "past", "the") else None
    j = i + 1 if mod else i
    if mod == "this" and _texts(ws, j, 1) == ["past"]:
        mod, j = "last", j + 1
    if j < len(ws) and ws[j].text == "weekend" and mod != "past":
        if mod is None and i and not ws[i].after_break:
            return None  # "that weekend" (the day said, again), "the bank holiday weekend"
        saturday = today + timedelta((5 - today.weekday()) % 7)
        if mod == "next" and today.weekday() < 5:
            saturday += timedelta(7)
        if mod == "last":
            saturday -= timedelta(7)
        return Days(i, j + 1, frozenset({as_day(saturday), as_day(saturday + timedelta(1))}))
    if j >= len(ws) or (wd := weekday_of(ws[j].text, written=written)) is None:
        return None
    if mod == "the":  # "the Monday, the thirty-first": the date it is; "the Thursday after": none
        named = Days(i, j + 1, frozenset({as_day(today + timedelta((wd - today.weekday()) % 7))}))
        return dated if (dated := _dated(ws, named, today, written=written)) != named else None
    ahead = (wd - today.weekday()) % 7
    if mod is None and not written and _told_of(ws, i):
        mod = "last"  # "the plumber came out on Friday": a day gone by, told of
    if mod in ("last", "past"):
        back = (today.weekday() - wd) % 7 or 7
        return Days(i, j + 1, frozenset({as_day(today - timedelta(back))}))
    if mod == "next":
        first = today + timedelta(ahead or 7)
        if wd < today.weekday():  # gone by this week: "next Tuesday" said on a Wednesday is the coming one
            return Days(i, j + 1, frozenset({as_day(first)}))
        not_this = ["not", "this", ws[j].text] in ([w.text for w in ws[k:k + 3]] for k in range(max(0, i - 6), i))
        return Days(i, j + 1, frozenset({as_day(first + timedelta(7)), *([] if not_this else [as_day(first)])}))
    found = {as_day(today + timedelta(ahead))}
    if ahead == 0:
        found.add(as_day(today + timedelta(7)))
    return Days(i, j + 1, frozenset(found))


# Verbs only ever past ("came", not "paid": "I need it paid on Friday"); any verb in "-ed" counts
# after a subject ("I dropped it in on Monday"; not "I'd like it delivered Friday")
_ONLY_PAST = frozenset("was were had did saw took went came ate ran rang broke drove rode wrote spoke "
                       "chose flew sat stood met knew began forgot".split())
_SUBJECTS = frozenset("i we he she they you".split())
_TOWARD = frozenset("for till until by to from before".split())  # "booked it for Friday": the day aimed at


def _told_of(ws: list[Word], i: int) -> bool:
    """Is the weekday at ws[i] told of in the past, by a past verb before it in its clause ("your
    plumber came out on Friday", "I took it Sunday morning"), not a day aimed at ("I booked it
    for Friday")?"""
    if i and ws[i - 1].text in _TOWARD:
        return False
    k = i - 1
    while k >= 0 and i - k <= 8 and not ws[k + 1].after_break:
        text = ws[k].text
        if text in _ONLY_PAST or (k and ws[k - 1].text in _SUBJECTS | {"just", "already"} and len(text) > 4
                                  and text.endswith("ed") and not text.endswith("eed")):
            return True
        k -= 1
    return False


def _a_week_on(ws: list[Word], j: int, today: date, *, written: bool, weeks: int = 1) -> Days | None:
    """ "a week today", "a week tomorrow", "a week on Monday", "a week from Friday", "a fortnight
    today": that day, a week (or `weeks`) on (ws[j] is the word after "a week")."""
    k = j + 1 if _texts(ws, j, 1) in (["on"], ["from"], ["after"]) else j
    if k >= len(ws) or (base := days_at(ws, k, today, written=written)) is None or len(base.days) != 1:
        return None
    if any(w.after_break for w in ws[k + 1:base.end]):  # "a week on Friday. The twelfth.": that Friday is the 12th
        base = days_at(ws[:k + 1], k, today, written=written) or base
    (year, month, day), = base.days
    if year is None:
        return None
    return Days(j - 2, base.end, frozenset({as_day(date(year, month, day) + timedelta(7 * weeks))}))


_THEN = frozenset("instead then please if would could maybe yeah".split())  # "the Saturday after instead"


def _week_after(ws: list[Word], named: Days, today: date) -> Days:
    """ "Tuesday week" and "the Tuesday after" (said alone, not "after the wedding"): the Tuesday
    after the coming one; "Thursday next week": next week's Thursday; "Thursday this week": this
    week's."""
    after = _texts(ws, named.end, 2)
    if len(named.days) != 1 or not after or ws[named.end].after_break:
        return named
    (year, month, day), = named.days
    if year is None or ws[named.start].text in ("last", "past"):
        return named
    when = date(year, month, day)
    if after[0] == "week":
        return Days(named.start, named.end + 1, frozenset({as_day(when + timedelta(7))}))
    if after[0] == "after" and named.start and ws[named.start - 1].text == "the" and (
            len(after) == 1 or ws[named.end + 1].after_break or after[1] in _THEN):
        return Days(named.start, named.end + 1, frozenset({as_day(_after_the_last(ws, named.start - 1, when, today))}))
    if after in (["next", "week"], ["this", "week"]):
        monday = today - timedelta(today.weekday()) + timedelta(7 if after[0] == "next" else 0)
        return Days(named.start, named.end + 2, frozenset({as_day(monday + timedelta(when.weekday()))}))
    return named


def _that_week(ws: list[Word], named: Days, today: date) -> Days:
    """ "Skye's shoeing on the twelfth, could Lewis do the Saturday instead?": a weekday said with
    "the", after one other day the caller named, is in that day's week (the 13th, not the coming
    Saturday); where a span runs to it ("Saturday the first through to the Monday"), the first such
    weekday after that day. A weekday said just after a day ("the twelfth, the Friday"), or one of
    that week already past, is not."""
    if len(named.days) != 1 or named.end - named.start != 1 or not named.start or ws[named.start - 1].text != "the" \
            or (last := _last_said(ws, named.start - 1, today)) is None:
        return named
    (year, month, day), = named.days
    if year is None or (weekday := date(year, month, day).weekday()) == last.weekday() or any(
            (found := days_at(ws, j, today)) is not None and found.end == named.start - 1 for j in range(named.start - 1)):
        return named  # "Make it the seventh, actually. The Tuesday.": that day's weekday, its month the words' to say
    ranged = named.start >= 2 and ws[named.start - 2].text in _RANGE
    that = last + timedelta((weekday - last.weekday() - 1) % 7 + 1 if ranged else weekday - last.weekday())
    return Days(named.start, named.end, frozenset({as_day(that)})) if that > today else named


def _after_the_last(ws: list[Word], before: int, when: date, today: date) -> date:
    """ "the Friday after": the first such weekday after the last day said before it ("the job on
    the twelfth ... the Friday after": the 19th), or after the coming one where none was said
    ("Saturday's no good, could we go the Saturday after": a week on)."""
    if (last := _last_said(ws, before, today)) is None:
        return when + timedelta(7)
    return last + timedelta((when.weekday() - last.weekday() - 1) % 7 + 1)


def _last_said(ws: list[Word], before: int, today: date) -> date | None:
    """The last one day the words name before ws[before]."""
    last = None
    for j in range(before):
        if (found := days_at(ws, j, today)) is not None and found.end <= before and len(found.days) == 1:
            (year, month, day), = found.days
            last = date(year, month, day) if year is not None else last
    return last


def _dated(ws: list[Word], named: Days, today: date, *, written: bool) -> Days:
    """ "Thursday the eleventh", "Friday, June 12th", "Thursday, June 11, 2026": a weekday and the
    date after it are one day where they agree; where they do not, the weekday alone (the date is
    read on its own, and the two are two days: asked which)."""
    j = named.end
    weekdays = {_weekday_of(d, today) for d in named.days}
    if j >= len(ws) or len(weekdays) != 1:
        return named  # "the weekend" is two weekdays
    if (dated := _month_day(ws, j, today, written=written)) is None:
        if (dated := _the_nth(ws, j, today) or _the_nth(ws, j, today, bare=True)) is None:
            return named
        agree = _agreeing(dated, weekdays, today)
    else:
        agree = {d for d in dated.days if _weekday_of(d, today) in weekdays}
    return Days(named.start, dated.end, frozenset(agree)) if agree else named


_RANGE = frozenset("to till until through thru and".split())


def _month_after(ws: list[Word], nth: Days, today: date, *, written: bool) -> Days | None:
    """ "from the 24th to the 29th of July": the first day of a range takes the month said after
    the last (the month before it where it would come after the last)."""
    j = nth.end + (_texts(ws, nth.end, 1) == ["through"] and _texts(ws, nth.end + 1, 1) == ["to"])
    if j >= len(ws) or ws[j].text not in _RANGE or (last := _month_day(ws, j + 1, today, written=written)) is None \
            or len(last.days) != 1:
        return None
    (year, month, end), = last.days
    (_, _, start), = nth.days
    if start > end:
        year, month = (year - 1 if year is not None and month == 1 else year), (month - 2) % 12 + 1
    found = _valid(year, month, start)
    return Days(nth.start, nth.end, frozenset(found)) if found else None


def _agreeing(nth: Days, weekdays: set[int], today: date) -> set[Day]:
    """ "the 29th, the Wednesday" with no month said: of the next two 29ths from today, the one
    that is a Wednesday (the weekday says which month); none agreeing, none ("Thursday the
    twelfth" said on June 3rd: June 12th is a Friday, July 12th a Sunday: asked which)."""
    (_, _, dom), = nth.days
    ahead = [(today.year + (today.month - 1 + k) // 12, (today.month - 1 + k) % 12 + 1) for k in range(4)]
    held = [date(y, m, dom) for y, m in ahead if _valid(y, m, dom) and date(y, m, dom) >= today][:2]
    return {as_day(d) for d in held if d.weekday() in weekdays}


def _weekday_of(day: Day, today: date) -> int:
    """The weekday of a day; one said without a year is this year's, or next year's once this
    year's has passed."""
    year, month, dom = day
    return date(year if year is not None else today.year + ((month, dom) < (today.month, today.day)),
                month, dom).weekday()


def _month_day(ws: list[Word], i: int, today: date, *, written: bool) -> Days | None:
    """ "June 3rd", "June the third", "the 3rd of June", "3 June", each with a year or not."""
    if i >= len(ws):
        return None  # "from the twenty-fourth to", the words cut off
    if (month := month_of(ws[i].text, written=written)) is not None:
        j = i + 1 + (_texts(ws, i + 1, 1) == ["the"])
        day = _day_number(ws, j)
        if day is None or (j < len(ws) and ws[j].after_break and not written):
            return None
        year, end = _year_at(ws, day[1])
        found = _valid(year, month, day[0])
        return Days(i, end, frozenset(found)) if found else None
    j = i + (ws[i].text == "the")
    day = _day_number(ws, j)
    if day is None:
        return None
    k = day[1] + (_texts(ws, day[1], 1) == ["of"])
    if k >= len(ws) or (month := month_of(ws[k].text, written=written)) is None:
        return None
    year, end = _year_at(ws, k + 1)
    found = _valid(year, month, day[0])
    return Days(i, end, frozenset(found)) if found else None


def _day_number(ws: list[Word], j: int) -> tuple[int, int] | None:
    """A day of the month at ws[j]: "3rd", "third", "3", "three"."""
    if (taken := read_ordinal(ws, j)) is not None:
        return taken if 1 <= taken[0] <= 31 else None
    group = read_group(ws, j)
    if group is not None and group[0] == int(group[0]) and 1 <= group[0] <= 31:
        return int(group[0]), group[2]
    return None


def _year_at(ws: list[Word], j: int) -> tuple[int | None, int]:
    """A year said after a day ("2026", "twenty twenty six"), and the index after it."""
    first = read_group(ws, j)
    if first is None or first[0] != int(first[0]):
        return None, j
    if 1900 <= first[0] <= 2100:
        return int(first[0]), first[2]
    second = read_group(ws, first[2])
    if first[0] in (19, 20) and second is not None and 0 <= second[0] <= 99 \
            and not ws[first[2]].after_break:
        return int(first[0] * 100 + second[0]), second[2]
    return None, j


def _in_days(ws: list[Word], i: int, today: date) -> Days | None:
    """ "in three days", "in a week", "in two weeks"."""
    if _texts(ws, i + 1, 1) == ["a"]:
        count, j = 1, i + 2
    elif (group := read_group(ws, i + 1)) is not None and group[0] == int(group[0]):
        count, j = int(group[0]), group[2]
    else:
        return None
    if j >= len(ws) or ws[j].text not in _UNITS_OF_DAYS:
        return None
    return Days(i, j + 1, frozenset({as_day(today + timedelta(count * _UNITS_OF_DAYS[ws[j].text]))}))


def _day_of_month(day: int, today: date) -> set[Day]:
    """ "the 3rd": of this month, or of the next when this month's has passed."""
    if day >= today.day and (this := _valid(today.year, today.month, day)):
        return this
    nxt = date(today.year + (today.month == 12), today.month % 12 + 1, 1)
    return _valid(nxt.year, nxt.month, day)


def _valid(year: int | None, month: int, day: int) -> set[Day]:
    if not 1 <= month <= 12:
        return set()
    last = calendar.monthrange(year if year is not None else 2000, month)[1]  # 2000: a leap year
    return {(year, month, day)} if 1 <= day <= last else set()


def _year_number(y: int) -> int:
    return y + 2000 if y < 100 else y


def _texts(ws: list[Word], i: int, n: int) -> list[str]:
    return [w.text for w in ws[i:i + n]]
