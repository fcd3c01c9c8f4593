"""What kind of value an argument holds, and where its value may come from, read from its schema.

Every argument's value must come from somewhere (`Source`): what the caller said, an earlier
tool result, the instructions (which hold what the deployment put there: an account, a CRM
record), or text the agent composes (a holding line, a summary). Its kind (`ValueKind`) says how
"said" is judged (`match.said_in`) and which sources it may have by default (`default_sources`):
a name, an id, a code, a date, a time, a number or an address must be said; free prose may be
composed.

The kind comes from the JSON Schema property (`kind_from_schema`): its `x-kind`; its `format`
(date, time, date-time, email); the words of its name, the head word first ("pickup_time" is a
time, "phone_number" a code, "number_of_guests" a number), then of its description; its `type`
(integer, number); a `pattern` (a code). A short string nothing else places is a name: what is
not prose must be said. A property can set its sources itself: `"x-source": "caller"`,
`"composed"`, or a list (`["caller", "instructions"]`), read by `sources_of`.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

SOURCE_KEY = "x-source"
KIND_KEY = "x-kind"
CUES_KEY = "x-cues"


class ValueKind(Enum):
    TIME = "time"
    DATE = "date"
    DATETIME = "datetime"
    CODE = "code"
    NUMBER = "number"
    NAME = "name"
    ADDRESS = "address"
    TEXT = "text"


class Source(Enum):
    CALLER = "caller"
    RESULT = "result"
    INSTRUCTIONS = "instructions"
    COMPOSED = "composed"


SAID = frozenset({Source.CALLER, Source.RESULT, Source.INSTRUCTIONS})
ANY = frozenset(Source)

_FORMATS = {"date": ValueKind.DATE, "time": ValueKind.TIME, "date-time": ValueKind.DATETIME,
            "email": ValueKind.CODE, "idn-email": ValueKind.CODE, "uuid": ValueKind.CODE,
            "hostname": ValueKind.CODE, "ipv4": ValueKind.CODE, "ipv6": ValueKind.CODE,
            "uri": ValueKind.CODE, "phone": ValueKind.CODE}
# English words that say what a property holds, in any domain; first listed, first placed
_WORDS: tuple[tuple[ValueKind, frozenset[str]], ...] = (
    (ValueKind.CODE, frozenset(
        "id ids uuid guid code codes ref reference pin zip zipcode postcode iban swift bic sku "
        "plate license licence confirmation locator ticket serial tracking membership "
        "passport vin phone mobile tel telephone email mail username login handle extension "
        "pnr digits last4 lastfour ssn ein tin account registration reg".split())),
    (ValueKind.DATETIME, frozenset("datetime timestamp when".split())),
    (ValueKind.DATE, frozenset("date day dob birthday birthdate".split())),
    (ValueKind.TIME, frozenset("time hour clock".split())),
    (ValueKind.ADDRESS, frozenset(
        "address street location destination origin pickup dropoff city town place venue "
        "airport station where addr postal".split())),
    (ValueKind.NAME, frozenset("name names surname firstname lastname fullname person who "
                               "contact holder company business".split())),
    (ValueKind.NUMBER, frozenset(
        "count size quantity qty num total price cost fee sum limit percent percentage seats "
        "people persons guests nights adults children age weight height duration rating "
        "score tip minutes dollar dollars euro euros pound pounds cent cents usd eur gbp "
        "fare charge balance deposit".split())),
    (ValueKind.TEXT, frozenset(
        "reason note notes message summary description comment comments details detail text "
        "body subject remark remarks explanation question line greeting topic request requests "
        "problem issue complaint feedback symptoms".split())),
)
_LENGTHS = frozenset("hours days nights weeks months years".split())  # an integer so named is a length
_CODE_EXAMPLE = re.compile(r"\b(?:(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{2,}|\d{1,4}-\d{3,})\b")  # "AB12", "BW-1234567", "24-0817"
_PROSE_LENGTH = 80  # a string allowed more characters than a name or an address is prose
# Words people use for the same thing in any domain: a record's "mobile 07712 448390" is the
# number a `phone_number` wants, "my cell" names it as "my phone" does
_SAME = (frozenset("phone mobile cell cellphone telephone tel landline".split()),
         frozenset("postcode zip zipcode postal".split()),
         frozenset("email mail".split()),
         frozenset("children kid kiddy kiddie wean bairn youngster".split()),  # "twelve kids", "sixteen weans": how many
         frozenset("seat ticket".split()))  # "four tickets" is four seats
_STOP = frozenset("a an the of to for in on at by with from and or is are be it its this that "
                  "as if any e g eg ie etc how many much what which your my our their his her "
                  "caller user please said gave given asked told".split())  # "if the caller said"


def kind_from_schema(name: str, schema: dict[str, Any]) -> ValueKind | None:
    """The kind of value this property holds; None for one with nothing to trace (a boolean, a
    constant, an object: the schema or the model's own judgement bounds it)."""
    if (explicit := schema.get(KIND_KEY)) is not None:
        try:
            return ValueKind(explicit)
        except ValueError:
            raise ValueError(f"The argument {name!r} has \"{KIND_KEY}\": {explicit!r}; use one of "
                             f"{', '.join(k.value for k in ValueKind)}.") from None
    kind = schema.get("type")
    if kind == "array":
        return kind_from_schema(name, schema.get("items") or {})
    if kind in ("boolean", "object", "null") or "const" in schema:
        return None
    if (fmt := schema.get("format")) in _FORMATS:
        return _FORMATS[fmt]
    if (found := _by_words(name_words(name), head_first=True)) is not None:
        if kind in ("integer", "number") and found in (ValueKind.TIME, ValueKind.DATE) \
                and (name_words(name)[-1] in _LENGTHS or "per" in name_words(name)):
            return ValueKind.NUMBER  # "hours": 3 is how long, "doses_per_day": 2 how often; no moment
        return found
    if (found := _by_words(_words_of(schema.get("description", "")), head_first=False)) is not None:
        return found
    if kind in ("integer", "number"):
        return ValueKind.NUMBER
    if "pattern" in schema:
        return ValueKind.CODE
    if "enum" in schema or schema.get("maxLength", 0) > _PROSE_LENGTH:
        return ValueKind.TEXT
    if _code_example(str(schema.get("description", ""))):
        return ValueKind.CODE  # "such as AB12 CDE": its example is a code
    return ValueKind.NAME


def _code_example(description: str) -> bool:
    """The description shows a code ("such as AB12 CDE"), standing alone: not a piece of a titled
    name ("e.g. iPhone 13 Pro or Samsung Galaxy S23" is a make and model, a name said in words)."""
    for m in _CODE_EXAMPLE.finditer(description):
        before = re.findall(r"[^\W_]+", description[:m.start()])[-1:]
        after = re.findall(r"[^\W_]+", description[m.end():])[:1]
        if not any(w[:1].isalpha() and any(ch.islower() for ch in w) and any(ch.isupper() for ch in w)
                   for w in before + after):
            return True
    return False


def default_sources(kind: ValueKind | None) -> frozenset[Source]:
    """Where a value of this kind may come from when its property says nothing: prose (and a
    value with nothing to trace) from anywhere, the agent's own words included; everything
    else from what was said (by the caller, a result or the instructions)."""
    return ANY if kind in (None, ValueKind.TEXT) else SAID


def sources_of(name: str, schema: dict[str, Any]) -> frozenset[Source]:
    """Where this property's value may come from: its `x-source`, or its kind's default."""
    raw = schema.get(SOURCE_KEY)
    if raw is None:
        return default_sources(kind_from_schema(name, schema))
    listed = [raw] if isinstance(raw, str) else raw
    try:
        found = frozenset(Source(v) for v in listed)
    except (TypeError, ValueError):
        found = frozenset()
    if not found or not isinstance(listed, list | tuple):
        raise ValueError(f"The argument {name!r} has \"{SOURCE_KEY}\": {raw!r}; use one of "
                         f"{', '.join(s.value for s in Source)}, or a list of them.")
    return found


def cue_words(name: str, schema: dict[str, Any]) -> frozenset[str]:
    """The words a property's name and description say it is, singular: what a caller's words
    around a number may name it by ("party_size", "number of guests": party, size, guest), and
    any it lists as `x-cues` (a card's "visa", "mastercard")."""
    declared = [w for cue in schema.get(CUES_KEY) or () for w in _words_of(str(cue))]
    own = {stem(w) for w in [*name_words(name), *_words_of(schema.get("description", "")), *declared]
           if w not in _STOP and not w.isdigit()}
    return frozenset(own.union(*(same for same in _SAME if own & same)))


# Greetings a caller opens with, in the Englishes and the languages callers mix in: written where a
# name goes ("Kia ora" as a member's name), they name nobody
_GREETINGS = frozenset(["hello", "hi", "hiya", "hey", "howdy", "g'day", "gday", "good morning", "good afternoon",
                        "good evening", "morning", "afternoon", "evening", "kia ora", "bore da", "prynhawn da",
                        "dia dhuit", "dia duit", "madainn mhath", "namaste", "namaskar", "salaam", "salam",
                        "assalamu alaikum", "shalom", "hola", "bonjour", "ciao", "hallo", "guten tag", "aloha",
                        "talofa", "malo e lelei", "sawubona", "yo", "cheers", "ahoy",
                        # and the sounds a line opens with ("Och, naw, sorry, the morning.": a child "Och")
                        "och", "ach", "aye", "naw", "nah", "oh", "ah", "um", "uh", "er", "erm", "hmm", "ooh", "eh",
                        "aiyah", "aiya", "aiyoh", "aiyo", "alamak", "wah", "wah gwaan", "wagwan", "oi", "crikey",
                        "blimey", "jeez", "gosh", "golly", "ayy", "ehh", "arrah", "wisha", "sheesh", "yikes"])


def is_greeting(value: str) -> bool:
    """Is this value a greeting or an opening sound, no name ("Kia ora", "G'day", "Och")?"""
    return " ".join(re.findall(r"[a-z']+", value.lower().replace("’", "'"))) in _GREETINGS


def name_words(name: str) -> list[str]:
    """A property name's words: "pickupTime", "pickup_time" and "pickup-time" are pickup, time;
    "last4" is last4."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def stem(word: str) -> str:
    """A word without its plural or possessive ending: "guests" and "guest's" are "guest"."""
    word = word.lower().removesuffix("'s")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


_NUMBERED = frozenset("number numbers no nr num".split())  # "phone number": the phone's


def _by_words(ws: list[str], *, head_first: bool) -> ValueKind | None:
    """The kind these words name. In a name the head word leads: the last, or the one before
    "of" ("number_of_guests": number); "X_number" is an id, "number_of_X" a count."""
    if not ws:
        return None
    if head_first:
        if "of" in ws and ws.index("of") > 0:
            head = ws.index("of") - 1
            if ws[head] in ("number", "num", "count"):
                return ValueKind.NUMBER
        else:
            head = len(ws) - 1
        if ws[head] in ("number", "no", "nr", "account") and head > 0:
            return ValueKind.CODE
        for w in [ws[head], *reversed(ws[:head]), *ws[head + 1:]]:
            if (found := _kind_of_word(w)) is not None:
                return _with_date_and_time(found, ws)
        return None
    # a kind's word that only tells which thing the noun after it is ("The phone model": a make
    # and model, no phone number; "the account holder's name") names no kind
    kinds = {k for w, after in zip(ws, [*ws[1:], ""], strict=True) if (k := _kind_of_word(w)) is not None
             and (not after or after in _STOP or after in _NUMBERED or _kind_of_word(after) is not None or after.isdigit())}
    for kind, _ in _WORDS:
        if kind in kinds:
            return _with_date_and_time(kind, ws)
    return None


def _kind_of_word(word: str) -> ValueKind | None:
    if re.fullmatch(r"last_?(4|four)|[a-z]{2,}code", word):
        return ValueKind.CODE  # "last4"; "eircode", "passcode", "barcode": codes by their name
    for kind, names in _WORDS:
        if word in names or stem(word) in names:
            return kind
    return None


def _with_date_and_time(kind: ValueKind, ws: list[str]) -> ValueKind:
    """ "date_time", "the date and time of the visit": both, a date-time."""
    if kind in (ValueKind.DATE, ValueKind.TIME) and {"date", "day"} & set(ws) and "time" in ws:
        return ValueKind.DATETIME
    return kind
