"""An act nobody asked for: every value on file, and nothing the caller said names it.

A caller's record in the instructions makes a tool's values given whatever the line says: with
one repair visit on file, `cancel_visit(job_id=<the visit's>, reason=<the model's own words>)` has
nothing for the provenance guard to refuse, and Qwen2.5-0.5B made that call on "Could I order
two of the drawers?", on "The washing machine's playing up. Can I book an engineer?" and on "We're
having a new kitchen fitted in the autumn". What is wrong there is not a value but the act.

So a call that may act on the world (`asks.may_act`) runs only where the call rests on the
caller: one of its traced values comes from their words in this call (in any role), or a choice
of the schema's they named ("our recycling"), or their words (or the
agent's question they answered: "Shall I cancel it?" "Yes.") name the tool. A tool is named by
its verb, the first word of its name, or a word English uses for it ("move" for `reschedule_`,
"call off" for `cancel_`), where the verb is one of those; by any other word of its name where it
is not ("refund" for `issue_refund`, "lockout" for `dispatch_lockout`), or a word of its description. A tool that takes no value
at all, and one that ends the call, are not judged here.

A client's look-up is judged the same way (Qwen looked up the ticket on file on "How much would a
setup be on an acoustic? I'm just pricing it up"); a status look-up is named by words that ask
how a thing stands ("Is my car ready yet?"); its day, where that is today, rests it on nothing
("What're ya payin' for canola today?"). Our own tools' look-ups are not judged here.

Nothing here knows a domain: the verbs are English's, the rest is the tool's own name.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .argrules import rules
from .asks import may_act
from .evidence import Evidence
from .picks import word_choices
from .provenance import given
from .schema import ToolSpec
from .spoken import Source, said_in
from .spoken.kinds import name_words, stem
from .spoken.names import choice_said

__all__ = ["NO_LONGER", "STATE_WORDS", "act_said", "asks_state", "named", "phrased_acts", "same_act", "unasked", "unasked_refusal"]

# Words English uses for one act; a tool's verb among them is named by any of them.
_SAME_ACT = [frozenset(group.split()) for group in (
    "cancel scrap void terminate withdraw unbook",
    "reschedule move change rearrange postpone prepone push shift swap switch rebook amend modify update "
    "exchange bring",
    "book reserve schedule arrange make",
    "renew extend longer",  # "could we hang onto it a wee bit longer?" (not "no longer": `NO_LONGER`)
    "freeze block stop lock suspend pause",
    "report log raise",
    "add join include",
    "remove delete",
    "transfer connect",
    "approve accept authorise authorize proceed",
    "return send post mail resend email",
    "collect pick",
    "deliver drop",
)]
_KNOWN_VERBS = frozenset().union(*_SAME_ACT)
NO_LONGER = re.compile(r"\b(?:no|any) longer\b", re.I)  # "we no longer need it": no extension
# words of a name that say nothing of the act ("issue_refund" is named by "refund")
_PLAIN = frozenset("issue make create submit request process place handle do get set new my the a an "
                   "to for of on in up out".split())
_PEOPLE = frozenset("caller customer user guest client patient member their them they this that with "
                    "from into your".split())  # a description's words that name no act
# acts said in phrases: "call it off", "I won't be needing Saturday's appointment anymore" (a
# cancel); "go ahead and fix it" (an approval)
_SAID_AS = {"cancel": ("call off", "call it off", "calling off", "won't be needing", "no longer need",
                       "don't need it anymore", "don't need it any more", "knock it on the head", "pull the plug"),
            "approve": ("go ahead",)}
# words that ask how a thing stands: a status look-up is named by them
STATE_WORDS = frozenset("ready sorted progress status".split())
# ... and a phrase that asks where a thing has got to ("where my KRA PIN thing has reached")
_WHERE_AT = re.compile(r"\bwhere(?:'s| is| has| have)?\b[^.?!]{0,40}?\b(?:reached|got to|gotten to|at now|up to now)\b")


def asks_state(text: str) -> bool:
    """Do the words ask how a thing stands ("Is my car ready yet?", "where has it reached")?"""
    lowered = text.replace("’", "'").lower()
    return bool(STATE_WORDS & set(name_words(lowered))) or bool(_WHERE_AT.search(lowered))


def unasked(spec: ToolSpec, arguments: dict[str, Any], evidence: Evidence) -> bool:
    """Is this call an act that rests on nothing the caller said (see the module)? A client's
    look-up is judged so too; our own and an MCP server's look-ups are not."""
    if spec.closes or not may_act(spec) and spec.fn is not None:
        return False
    traced = {name: rule for name, rule in rules(spec).items() if name in arguments and rule.traced}
    if not traced:
        return False
    if _asked_otherwise(spec, evidence):
        return True
    for name, rule in traced.items():
        caller = replace(rule, sources=frozenset({Source.CALLER}))
        values = arguments[name] if isinstance(arguments[name], list) else [arguments[name]]
        if not may_act(spec) and rule.written == "date" and evidence.now is not None and values == [evidence.now.date().isoformat()]:
            continue  # "What're ya payin' for canola today?": a look-up's today, said in passing, asks for nothing
        if values and all(given(v, caller, evidence) or any(  # said, whatever role it was said in
                rule.kind is not None and said_in(v, text, kind=rule.kind, now=evidence.now) for text in evidence.said) for v in values):
            return False
    tool = {stem(w) for w in name_words(spec.name)}
    for name, value in arguments.items():  # a choice the caller named ("our recycling": "recycling")
        choices = word_choices(spec, name)
        # by a word of its own, not one of the tool's name: "the big plot" names no `overgrown_plot`
        # of `report_plot_issue`, a plot being what every report is about
        own = {stem(w) for w in name_words(str(value))} - tool
        if value in choices and own and any(choice_said(value, choices, text) and own & {
                stem(w) for w in name_words(text)} for text in evidence.said):
            return False
    return not named(spec, evidence)


def named(spec: ToolSpec, evidence: Evidence) -> bool:
    """Do the caller's words in this call, or the questions they answered, name this tool?"""
    lowered = [NO_LONGER.sub("", t.replace("’", "'").lower()) for t in evidence.exchanged]
    said = [name_words(text) for text in lowered]
    heard = {form for ws in said for w in ws for form in _forms(w)}
    heard |= {a + b for ws in said for x, b in zip(ws, ws[1:], strict=False) for a in _forms(x)}  # "locked out": lockout
    verb, *rest = name_words(spec.name) or [""]
    if "status" in rest and (heard & STATE_WORDS or any(_WHERE_AT.search(t) for t in lowered)):
        return True  # "Is my car ready yet?" asks for `check_job_status`
    if verb in _KNOWN_VERBS:
        return _act_said(verb, lowered, heard)
    # a verb English has no other word for here ("request_callback", "dispatch_lockout"): any word of
    # its name, or of what its description says it does ("Ask the shop to ring the caller back")
    own = {stem(w) for w in [verb, *rest, *(w for w in name_words(spec.description) if len(w) > 3)]}
    return bool(own - _PLAIN - _PEOPLE & heard)


def same_act(verb: str) -> frozenset[str]:
    """The words English uses for this verb's act ("move", "shift" ... for "reschedule"); none for
    a verb not among them."""
    return frozenset().union(*(group for group in _SAME_ACT if verb in group))


def known_acts(heard: set[str]) -> frozenset[str]:
    """The words among these that say an act English has other words for ("send", "cancel")."""
    return frozenset(w for w in heard if w in _KNOWN_VERBS)


def phrased_acts(text: str) -> set[str]:
    """The acts the words say in a phrase ("call off that hayride": cancel), by their verbs."""
    lowered = text.replace("’", "'").lower()
    return {verb for verb, phrases in _SAID_AS.items() if any(p in lowered for p in phrases)}


def act_said(verb: str, text: str) -> bool:
    """Do these words say the act of this verb ("call off that hayride" for "cancel")? False for a
    verb English has no other word for here."""
    if verb not in _KNOWN_VERBS:
        return False
    last = NO_LONGER.sub("", text.replace("’", "'").lower())
    return _act_said(verb, [last], {form for w in name_words(last) for form in _forms(w)})


def _act_said(verb: str, lowered: list[str], heard: set[str]) -> bool:
    """Is this known verb's act said: a word English uses for it among `heard` (the words of
    `lowered`, each as the verbs it may be), or a phrase for it ("won't be needing")?"""
    same = same_act(verb)
    return bool(same & heard) or any(same & phrased_acts(t) for t in lowered)


# asked for as a request: "can you check order O, seven, seven ...", "could you shift it to Wednesday"
_REQUEST = r"(?:(?:can|could|would|will) (?:you|we|i|ye|y'all) (?:please |just )?|^\W*(?:please |just )?)"
_LOOK_ASKED = re.compile(_REQUEST + r"(?:check|track|look up|find out)\b")
_MOVE_ASKED = re.compile(_REQUEST + r"(?:move|shift|push|reschedule|rearrange|postpone) (?:it|that|this|them)\b")
_BOOKS = _SAME_ACT[2]  # "book reserve schedule arrange make"


def _asked_otherwise(spec: ToolSpec, evidence: Evidence) -> bool:
    """Do the caller's last words ask for another act by its verb, as a request, and name none of
    this tool's? "Can you check order O, seven, seven, three, one?" asks for a look, not
    `cancel_order` (which Qwen called, the order said); "can you shift it to Wednesday?" moves a
    visit, and `book_visit` of the visit on file would book it twice. Whatever values the call has."""
    verb = name_words(spec.name)[:1]
    if not evidence.said or not verb or verb[0] not in _KNOWN_VERBS or not may_act(spec):
        return False
    last = evidence.said[-1].replace("’", "'").lower()
    if _act_said(verb[0], [last], {form for w in name_words(last) for form in _forms(w)}):
        return False
    sentences = re.split(r"(?<=[.!?,])\s+", last)  # each clause, its request at its start
    return any(_LOOK_ASKED.search(t) for t in sentences) or verb[0] in _BOOKS and any(
        _MOVE_ASKED.search(t) for t in sentences)


def unasked_refusal(spec: ToolSpec) -> dict[str, Any]:
    """The tool error the model reads instead of a result: nothing was done, nobody asked for it."""
    return {"status": "not_run", "error": "not asked for by the caller",
            "message": f"{spec.name} was not run: nothing the caller said asks for it. Answer what "
                       "they asked; if it is not clear what they want done, ask them."}


def _forms(word: str) -> set[str]:
    """A said word as the verb it may be: "moving" move, "cancelled" cancel, "books" book."""
    out = {word, stem(word)}
    for end in ("ing", "ed", "d", "s"):
        if len(word) > len(end) + 2 and word.endswith(end):
            base = word[:-len(end)]
            out |= {base, base + "e", base[:-1] if base[-1:] == base[-2:-1] else base}
    return out
