""""Same time", "same day": a moment the caller keeps from the booking they are changing.

"Me infill on Friday, can yer shift it to Monday instead? Same time's grand." says the new day and
keeps the time: the time of the booking the call changes, which the record holds ("appointment
A-6610, acrylic infill ... on Friday, June 5 at 11:30"), though the caller never said it. The call
names that booking by another argument's code (`appointment_ref: "A-6610"`); the one entry of the
record holding that code gives the moment. Nothing is kept where the words point at another
booking ("same time as this Friday": which one is the words' to say), where no argument names a
booking on file, or where the entry holds no one such moment.
"""

from __future__ import annotations

import re
from typing import Any

from .argrules import Rule
from .evidence import Evidence
from .record import ENTRY
from .spoken import Source, ValueKind
from .spoken.codes import codes_in, squash
from .spoken.times import one_moment

__all__ = ["kept_from_booking"]

# "same time", "same time of day", "same day and time", "same night, same time"; not "same time as ..."
_SAME = re.compile(r"\bsame\s+(?:(?P<a>time|hour|day|date|night)(?:\s+(?:and|&)\s+(?P<b>time|day|date))?)"
                   r"(?!\s+(?:as|of (?:the )?(?:week|month))\b)", re.I)
_TIMES = frozenset({"time", "hour"})
_DAYS = frozenset({"day", "date", "night"})


def kept_from_booking(value: Any, rule: Rule, evidence: Evidence, others: list[Any]) -> str | None:
    """The time (or day) of the booking on file the call changes, where the caller's last words
    keep it ("same time's fine"), written as the schema asks; None where they keep none, or no
    argument of the call names one booking on file (see the module)."""
    if rule.kind not in (ValueKind.TIME, ValueKind.DATE) or Source.CALLER not in rule.sources \
            or not evidence.said or not evidence.instructions or evidence.now is None:
        return None
    kept = {w.lower() for m in _SAME.finditer(evidence.said[-1]) for w in m.groups() if w}
    if not kept & (_TIMES if rule.kind is ValueKind.TIME else _DAYS):
        return None
    named = {squash(str(v)) for v in others if isinstance(v, str) and any(ch.isdigit() for ch in v)}
    entries = [entry for entry in ENTRY.split(evidence.instructions)
               if named & {squash(code) for _, _, code in codes_in(entry, pauses=False)}]
    if len(entries) != 1:
        return None
    return one_moment(entries[0], evidence.now, "time" if rule.kind is ValueKind.TIME else "date", written=True)
