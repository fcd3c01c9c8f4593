"""The session's tool choice: which tools the model may open a reply with, this reply.

The grammar (`grammar`) then keeps every other call out of the model's reach, so a small model
that reaches for a tool it cannot use answers in words instead:

- a tool with a required argument nothing given so far could fill (`given.lacking`: no time
  said for a booking's time, no number the caller's words could make its id): a call would be
  refused anyway (`provenance`), a look-up would look up an invented value, and the model is to
  ask for them (a small model offered only the refund's neighbour, the order look-up, calls that
  instead);
- a tool that ends the call (`ToolSpec.closes`), unless the caller's last words close it
  ("that's all, goodbye"): a small model ends the call on "What time do you close?" or after a
  refund's result;
- in the reply about a turn's results, the tools that turn already called: a small model writes
  the call it answers again, word for word;
- on a line that only tells of the past and asks for nothing (`asks.tells_only`: "Dr. Okafor
  saw me last Thursday and she was lovely"), none but a hang-up the caller asked for: Qwen2.5-0.5B
  booked the appointment, with values all given;
- on a line that only asks about something (`asks.asks_about_only`: "My booking reference is
  WCF-6H1P4. Do I need to print the ticket?"), nothing that may act (`asks.may_act`: a side
  effect, or a client's function whose verb does more than look): Qwen2.5-0.5B cancelled that booking;
  and a look-up only where the question names it, or gives one of its values, though not by the
  day or count of a question checked with a tag or about a price or the hours ("I'm still booked
  for Saturday, aren't I?", "How much for six of us on a Thursday?", "What time are you open till
  on a Sunday?": free slots were looked up), nor by a word every tool of the desk has ("How much
  is a mini skip these days?" at a skip hire: the caller's hire was looked up); a question of how
  a thing stands ("Is my car ready yet?") asks of a look-up of its status or details;
- where the caller's words name one tool by a word of its name no other tool's name has (`_named_apart`:
  "I want to give you a meter reading" for `submit_meter_reading` beside `book_meter_visit` and
  `get_balance`), only that one: Qwen2.5-0.5B looked the balance up instead; and in a reply to
  the caller, where their words fit one tool's declared words clearly better than any other's
  (`fit.best_fit`: "Could ye book the Links" for `book_tee_time`, whose course may be "links",
  beside `book_lesson`), only that one;
- in a reply about a side effect's outcome (`telling`), none: it is to say the outcome, and
  Qwen2.5-0.5B looked the order up again instead, so the refund was never told;
- where the caller asks for a side effect by its name and has not given what it needs
  (`asked_for`: "Refund order 4417, please.", no card), no other tool: Qwen2.5-0.5B, kept from
  the refund, looked the order up instead; the reply is to ask (`tools.ask`);
  likewise where the tool the caller's words fit best (`fit.best_fit`) may act and has not got
  what it needs ("Can I keep the skip a bit longer? Not sure how long yet.": the hire was looked up),
  unless the words ask for another by its verb ("after cleanin' the eavestroughs himself ... so ye
  can cancel Friday's": the cancel, not the cleaning the words fit best);
- where the caller's first request says a day or a time "instead" ("That repair visit on
  Tuesday, can the engineer come Wednesday instead?"), the one tool that moves a thing to a new
  day or time (`_moved_instead`): Qwen2.5-0.5B booked the visit again, or the room the words named.

And one it must make (`must_close`): a caller who closes and asks nothing more ("That's all,
thanks, goodbye.") is answered by the hang-up tool, whose spoken goodbye the model writes; a
small model otherwise says goodbye in words and leaves the line open. Likewise (`called_for`) a
caller who asks for a tool by its verb and its object ("Please freeze the card ending 0387" for
`freeze_card`, "cancel the appointment for Hannah Cole on Friday" for `cancel_appointment`), with
everything it requires given: Qwen2.5-0.5B otherwise calls a neighbour (a travel notice for the
freeze) or nothing; or by a verb no other tool has, said as a request ("could you extend K H seven
zero three three eight", "so please cancel it"). Not where the verb is past ("I booked"), denied
("don't cancel"), or an "if".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .argrules import rules
from .asks import ABOUT, asks_about_only, called_off, checks_with_tag, may_act, tells_only
from .evidence import Evidence
from .fit import best_fit, declared, object_elsewhere
from .given import lacking, offers_value
from .schema import ToolSpec
from .spoken import ValueKind
from .spoken.kinds import name_words, stem
from .spoken.times import moments
from .spoken.words import Word, sentences, words
from .unasked import act_said, asks_state, known_acts, same_act

# Words that close a conversation; "thanks" alone does not (the caller may go on).
_CLOSING = re.compile(r"\b(good ?bye|bye|bye-bye|that'?s (all(?! right)|it|everything)|that is (all(?! right)|it)|"
                      r"nothing else|no more questions|have a (nice|good|great|lovely|blessed) (day|night|evening|one)|"
                      r"talk (to you )?later|see you|hang up)\b", re.I)


def sounds_closing(text: str) -> bool:
    """The caller's words close the call ("Okay, bye!", "That's everything, have a nice day.")."""
    return bool(_CLOSING.search(text.replace("’", "'")))


def asked_for(specs: Iterable[ToolSpec], last_said: str) -> ToolSpec | None:
    """The tool the caller's last words ask for by its name ("refund" in "Refund order 4417,
    please."; `book_table` as "book table") or by its verb and object ("I'd like to book an
    appointment" for `book_appointment`), not in a question about it; a side effect first."""
    if ABOUT.match(last_said):
        return None
    text = last_said.replace("’", "'")
    ws, specs = words(text), [spec for spec in specs if not spec.closes]
    named = [spec for spec in specs if re.search(rf"\b{re.escape(spec.name.replace('_', ' '))}\b", text, re.I)
             or _by_verb(spec, [w.text for w in ws]) or _by_own_verb(spec, specs, ws)]
    return next((s for s in named if s.side_effect), named[0] if named else None)


def offered(specs: Iterable[ToolSpec], evidence: Evidence, *, last_said: str,
            called: Iterable[str] = (), telling: bool = False, narrow: bool = True) -> list[ToolSpec]:
    """The tools this reply may call (see the module's list); `called`: the names this turn
    called, for the reply about their results (empty for a reply to the caller); `telling`:
    the reply is about a side effect's outcome; `narrow`: to the one tool the words name or fit
    best, where one does (not for an answer to a read-back, whose question names the tool)."""
    if telling:
        return []
    specs, done = list(specs), set(called)
    if not done and (tells_only(last_said, evidence.asked[-1] if evidence.asked else "", specs) or called_off(last_said)):
        return [s for s in specs if s.closes and sounds_closing(last_said)]
    if not done and _only_closing(specs, last_said, evidence):
        return [s for s in specs if s.closes]  # "Alright, that's everything I needed. Y'all have a blessed day now."
    if (wanted := asked_for(specs, last_said)) is not None and lacking(wanted, evidence):
        return [s for s in specs if s.closes and sounds_closing(last_said)]
    if not done and not ABOUT.match(last_said) and (fit := best_fit(specs, last_said)) is not None \
            and may_act(fit) and lacking(fit, evidence) and all(s is fit for s in called_for(specs, last_said)):
        return [s for s in specs if s.closes and sounds_closing(last_said)]
    ws = words(last_said.replace("’", "'"))  # a question about a thing, no tool asked for: look-ups only
    about = asks_about_only(last_said) and not any(_by_verb(s, [w.text for w in ws]) or _by_own_verb(s, specs, ws)
                                                   for s in specs if not s.closes)
    said, common = [w.text.lower() for w in ws], _everyones(specs) if about else frozenset()
    out = [s for s in specs if s.name not in done and (not s.closes or sounds_closing(last_said))
           and not lacking(s, evidence) and not (about and (may_act(s) or not _asked_of(
               s, said, last_said, evidence, by_value=not checks_with_tag(last_said) and not _PRICE_ASKED.search(last_said),
               common=common)))]
    named = [s for s in out if not s.closes and _named_apart(s, specs, said)
             and not _other_act(s, specs, last_said)] if narrow else []
    if narrow and not done and (moved := _moved_instead(out, last_said, evidence)) is not None:
        named = [moved]  # "That repair visit on Tuesday, can the engineer come Wednesday instead?"
    if narrow and len(named) != 1 and not done and (fit := best_fit(out, last_said)) is not None:
        named = [fit]
    return [*named, *(s for s in out if s.closes)] if len(named) == 1 else out


def _only_closing(specs: list[ToolSpec], last_said: str, evidence: Evidence) -> bool:
    """Do the caller's words close the call and ask nothing: no question, no tool asked for by
    name or verb, no day, time, number or code a tool could take ("That's all, thanks, have a
    blessed day")? Not "Book me in for Friday at ten, that's all, bye"."""
    plain = _NOW.sub(" ", last_said)  # "have a blessed day now", "that's all for now": no moment
    return sounds_closing(last_said) and "?" not in last_said and asked_for(specs, last_said) is None and not any(
        offers_value(s, plain, evidence, loose=(ValueKind.TEXT, ValueKind.ADDRESS, ValueKind.NAME))
        for s in specs if not s.closes)


_NOW = re.compile(r"\bnow\b", re.I)


def _moved_instead(specs: list[ToolSpec], last_said: str, evidence: Evidence) -> ToolSpec | None:
    """The one tool that moves or changes a thing, where the caller's first words of a request
    say a day or a time "instead" ("Can the lechon come on Sunday instead, same time?", "can
    shift my Friday night booking ... to Saturday instead?"): a thing on file is to change, not
    be booked again. Not a correction of what this call asked for ("Actually, make it Sunday
    instead": an earlier turn said when), nor "instead of" ("couriered back instead of me coming in")."""
    sentence = next((s for s in sentences(last_said) if _INSTEAD.search(s)), None)
    if sentence is None or not moments(words(sentence), evidence.now) or any(
            moments(words(text), evidence.now) for text in evidence.said[:-1]):
        return None
    if known_acts({w.text.lower() for w in words(sentence)}) - _MOVES - same_act("book"):
        return None  # "could you send them to my flat on Saturday instead?": another act, asked
    moving = [s for s in specs if not s.closes and name_words(s.name)[:1] and name_words(s.name)[0] in _MOVES
              and any(r.kind in _WHEN for r in rules(s).values())]  # a move has a new day or time
    return moving[0] if len(moving) == 1 else None


_INSTEAD = re.compile(r"\binstead\b(?!\s+of\b)", re.I)
_MOVES = same_act("reschedule")
_WHEN = (ValueKind.DATE, ValueKind.TIME, ValueKind.DATETIME)


def _asked_of(spec: ToolSpec, said: list[str], last_said: str, evidence: Evidence, *, by_value: bool = True,
              common: frozenset[str] = frozenset()) -> bool:
    """Is this look-up what a question asks of: the words name what it is about (a word of its
    name after its verb, or of its description: "free slots" for `check_slots`), or give one of
    its days, times or names ("anything on Monday the 22nd?" for `check_availability`'s date; a
    number could be any id, and names none)? Not "What's the excess on my policy?" for
    `check_claim_status`, whose claim only the record holds: Qwen2.5-0.5B looked it up, on
    questions the instructions answer. A question checked with a tag ("Eoin's still coming out to
    me on the twelfth, isn't he?") asks of a look-up only by its words, not by its day: Qwen
    looked up free slots for the caller's own booking (`by_value`)."""
    verb, *objects = name_words(spec.name)
    own = _tool_words(spec) - {verb}
    if _HAVE_GOT.match(last_said) and verb in ("check", "search", "find"):
        return True  # "Have you got Wolf Hall as an audiobook?", "Has Gareth got anything free on Monday?"
    if asks_state(last_said) and _OF_A_STATE & set(objects):
        return True  # "Is my car ready yet?" asks of `check_job_status`, whatever the desk's words
    return bool(own - _SLIGHT - _PLAIN - common & {stem(w) for w in said}) or by_value and offers_value(
        spec, last_said, evidence, loose=(ValueKind.TEXT, ValueKind.ADDRESS, ValueKind.CODE, ValueKind.NUMBER))


_OF_A_STATE = frozenset("status details progress".split())  # a look-up's words for how a thing stands
_HAVE_GOT = re.compile(r"\W*(?:has|have)\b(?:\s+[\w']+){0,2}?\s+(?:got|any|anything|room|space)\b", re.I)  # whether there is
_PLAIN = frozenset("the and for with you your this that from are can any has have was will its day time".split())
# a question about a price ("How much would it be for six of us on a Thursday?") asks of no
# look-up by the day or the count it gives: only one whose words it says (a quote, a price list)
_PRICE_ASKED = re.compile(r"\bhow much\b|\bwhat (?:would|does|will|did) (?:it|that|this) cost\b|"
                          r"\b(?:open|opens|close|closes|shut|shuts) (?:till|until|at)\b|\bopening (?:hours|times)\b", re.I)


def _everyones(specs: list[ToolSpec]) -> frozenset[str]:
    """The words every one of three or more tools has in its name or description: the desk's own
    ("skip" at a skip hire), which name none of them ("How much is a mini skip these days?")."""
    owns = [_tool_words(s) for s in specs if not s.closes]
    return frozenset(set.intersection(*owns)) if len(owns) >= 3 else frozenset()


def _tool_words(spec: ToolSpec) -> set[str]:
    """The words of a tool's name and description (of three letters or more), as stems."""
    return {stem(w) for w in [*name_words(spec.name), *re.findall(r"[a-z]{3,}", spec.description.lower())]}


def _other_act(spec: ToolSpec, specs: list[ToolSpec], last_said: str) -> bool:
    """Do the words say another tool's act and not this one's ("call off that hayride": the
    cancel, though only `book_hayride` has "hayride" in its name)?"""
    verb = name_words(spec.name)[0]
    return not act_said(verb, last_said) and any(
        act_said(name_words(s.name)[0], last_said) for s in specs if s is not spec and not s.closes)


_SLIGHT = frozenset("up in out on off to for of at by from with my new get set add make do".split())  # no name's own


def _named_apart(spec: ToolSpec, specs: list[ToolSpec], said: list[str]) -> bool:
    """The caller's words name this tool by a word of its name no other tool's name has ("a meter
    reading" for `submit_meter_reading` beside `book_meter_visit`; "no power on the street" for
    `report_power_cut`), not held back ("if anyone cancels"); not by a word every other tool
    declares ("hall" at a hall), nor by its verb alone where what follows is another tool's choice."""
    others = {stem(w) for s in specs if s is not spec for w in name_words(s.name)}
    theirs = [declared(s) for s in specs if s is not spec and not s.closes]
    desk = set.intersection(*theirs) if len(theirs) >= 2 else set()  # "hall" at a hall: every tool's word
    verb = stem(name_words(spec.name)[0])
    own = {stem(w) for w in name_words(spec.name)} - others - _SLIGHT - desk
    return any(stem(w) in own and not _HELD_BACK & set(said[max(0, i - 3):i])
               and not (stem(w) == verb and object_elsewhere(spec, specs, said[i + 1:i + 7]))
               for i, w in enumerate(said))


def must_close(specs: Iterable[ToolSpec], last_said: str) -> list[ToolSpec]:
    """The closing tools this reply must choose from (see the module), or [] when it may talk."""
    if "?" in last_said or not sounds_closing(last_said):
        return []
    return [s for s in specs if s.closes]


_HELD_BACK = frozenset("not don't dont never if whether without n't no".split())  # before the verb


def called_for(specs: Iterable[ToolSpec], last_said: str) -> list[ToolSpec]:
    """The tools the caller's last words ask for by their verb and object, or by a verb no other
    tool has, said as a request (see the module), from `specs` (the tools this reply is offered,
    none lacking what it requires); [] where none is, or the words ask about one rather than for it."""
    if ABOUT.match(last_said) or sounds_closing(last_said):
        return []
    ws = words(last_said.replace("’", "'"))
    specs = [spec for spec in specs if not spec.closes]
    return [spec for spec in specs if _by_verb(spec, [w.text for w in ws]) or _by_own_verb(spec, specs, ws)]


def _by_own_verb(spec: ToolSpec, specs: list[ToolSpec], ws: list[Word]) -> bool:
    """The words ask for this tool by a verb no other of `specs` is named by, or a word English
    uses for its act no other's act has ("kindly prepone it" for `reschedule_booking`), said as a
    request."""
    verb = name_words(spec.name)[0]
    act = {verb} | same_act(verb) - _LOOSE
    if sum(name_words(s.name)[0] in act for s in specs) != 1:
        return False
    said = [w.text.lower() for w in ws]
    if verb in _WEAK and not any(stem(w) in {stem(o) for o in name_words(spec.name)[1:]} for w in said):
        return False  # "Can ye get someone out today?" asks for no `get_job_status`; "get me a quote" does
    return (_requested(verb, ws) or any(_requested(v, ws, strict=True) for v in act - {verb})) and not any(
        w == verb and object_elsewhere(spec, specs, said[i + 1:i + 7]) for i, w in enumerate(said))


def _by_verb(spec: ToolSpec, said: list[str]) -> bool:
    """The words ask for this tool by its verb, as said ("book", not "booked"), and an object of
    its name, the verb not held back ("don't cancel", "if I cancel")."""
    verb, *objects = name_words(spec.name)
    at = [i for i, w in enumerate(said) if w.lower() == verb and not _a_label(said, i)]
    stems = {stem(w) for w in said}
    return bool(objects and at and any(stem(o) in stems for o in objects)
                and not all(_HELD_BACK & {w.lower() for w in said[max(0, i - 3):i]} for i in at))


def _a_label(said: list[str], i: int) -> bool:
    """Is said[i] a noun naming a thing on file, not a verb: after "the", "my", "our" ("The order
    number's S two seven seven four") or before its code's first letter or the word for one ("order
    S one eight zero six", "booking number"); not before a count ("book three tickets")?"""
    after = said[i + 1].lower() if i + 1 < len(said) else ""
    return i > 0 and said[i - 1].lower() in _OWNED or after in _CODE_WORDS or len(after) == 1 and after not in ("a", "i")


_OWNED = frozenset("the my our your his her their this that its an".split())
_CODE_WORDS = frozenset("number no ref reference code id".split())
_WEAK = frozenset("get set do make have take give put".split())  # verbs that say little without their object
# words of an act that say others as often: "make it two months", "bring it round Saturday"
_LOOSE = frozenset("make bring send post mail drop pick collect deliver add include join".split())
_ASKING = frozenset("to please kindly you ye yous youse y'all yall can could would and just".split())  # "could you extend ...", "please cancel it"
_WISHES = frozenset("like love want wanted wanting".split())  # "I'd like to ...", a request
_OBJECT = frozenset("the my it our his her a an this that me us them those these".split())


def _requested(verb: str, ws: list[Word], *, strict: bool = False) -> bool:
    """Is the verb said as a request, with what it acts on: after "please", "to", "could you" ("so
    please cancel it", "I'd like to extend it"), or opening a sentence ("Reorder the carprofen");
    not held back ("don't cancel it")? A past ("I reset my password") or a noun ("Ticket INC-2093
    was opened") is none. `strict` (another word for a tool's act): after "to" only where the
    caller wishes it ("I'd like to move it", not "I'll need to move the ute")."""
    for i, w in enumerate(ws):
        if w.text.lower() != verb or _HELD_BACK & {x.text.lower() for x in ws[max(0, i - 5):i]}:
            continue
        before = ws[i - 1].text.lower() if i and not w.after_break else ""
        follows = ws[i + 1].text.lower() if i + 1 < len(ws) and not ws[i + 1].after_break else ""
        if strict and before == "to" and (i < 2 or ws[i - 2].text.lower() not in _WISHES):
            continue  # "I'll need to move the ute": the caller's own doing; "I'd like to move it" asks
        if follows and (before in _ASKING or (not before and follows in _OBJECT)):
            return True
    return False
