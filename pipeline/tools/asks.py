"""Does the caller's line ask for anything? A line that only tells of the past offers no tool.

A small model calls a tool on any line that holds a tool's values: told "Dr. Okafor saw me last
Thursday and she was lovely", Qwen2.5-0.5B booked an appointment; told "I flew with you to Denver
in April", it looked the caller's flight up from the record in the instructions. The values are
all given (said, or on file), so the provenance guard has nothing to refuse: what is wrong is the
line, which asks for nothing.

`tells_only` is that line: it tells of something done (a verb in the past, "used to", "last
week", "yesterday") and has none of the marks of a request:
- a question, or a word that asks ("please", "want", "need", "can", "could", "would", "I'd",
  "help", "wondering", "calling");
- a tool's own verb as said to ask ("cancel" in "cancel the booking I made", not "cancelled");
- a problem, which asks for a remedy without saying so ("I lost my card yesterday", "someone
  used my card, that wasn't me", "my order never came": a denial, a loss, a fault).
And it answers no question: after the agent asked one, "Yes, I did" or "On the 12th, I think"
are answers, whatever their tense.

Nothing here is any domain's: the marks are English's for asking and for something gone wrong,
and the verbs are the tools' own names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .schema import ToolSpec
from .spoken.kinds import name_words
from .spoken.words import is_number_word, words

_ASKING = frozenset("please pls want wants wanna need needs needed can could would will "
                    "might shall should must help let let's lets wondering hoping trying calling "
                    "i'd i'll we'd we'll you'd gotta gonna going how".split())
_PROBLEM = frozenset("not never no nobody nothing none lost stolen missing broken broke damaged wrong "
                     "late delayed cancelled canceled forgot forgotten left charged overcharged twice "
                     "double fraud unauthorized problem problems issue issues error failed declined "
                     "stuck yet sick ill hurt injured pain complaint again".split())
_PAST = frozenset("was were had did saw took went came got made paid flew bought said told gave found "
                  "brought kept spent sent drove rode ate sat stood met felt knew heard been done "
                  "seen gone taken given ran wrote spoke chose stayed enjoyed loved liked "
                  "yesterday ago".split())
_PAST_PHRASE = re.compile(r"\b(used to|last (night|week|month|year|time|summer|winter|spring|autumn|"
                          r"fall|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|back when|"
                          r"the other day|(i|we)'ve been)\b", re.I)
_TAKEN_BACK = re.compile(r"\bnever ?mind\b", re.I)
_TELLING = re.compile(r"\bi (?:must|have to|gotta|got to|will) (?:say|admit)\b", re.I)  # "Very happy, I must say": no "must" asked
# sayings with a "no" or a "n't" that tell of no problem: "it slithered off on its own, no dramas";
# "Dad hasn't stopped yakking about it"
_NO_TROUBLE = re.compile(r"\bno (?:dramas?|worries|problems?|bother|rush|stress|fuss|harm done|complaints)\b"
                         r"|\b\w+n't (?:stopped|stop) \w+ing\b", re.I)
# "I wanted to book" asks; "I just wanted to say thank you", "wanted someone to know" tell
_WANTED_TO_TELL = re.compile(r"\bwanted (?:to (?:say|tell|let|thank|mention|share|pass (?:(?:that|it|this) )?on)"
                             r"|(?:someone|somebody|you) to know)\b")


# A line that corrects what was said or read back: "No, five pm", "Sorry, I meant Friday",
# "Actually, make it Sunday instead", after a sound first ("Ah, no, it's the sixteenth", "Hang on,
# no. Four.") (`corrects`)
_CORRECTING = re.compile(r"^\W*(?:(?:o+h+|a+h+|hmm+|um+|uh|er+m?|well|hang on|hold on|hold up|ay+e?|ai+|eish|ag|a?ch|och|aw+|eh|ugh|oops|whoops)\W+)*"
                         r"(no|nope|nah|naw|sorry|actually|wait|i said|it'?s|(?:yes|yeah|yep),? but)\b"
                         r"|\b(not|instead|i meant|more like|make (it|that)|mek (it|that)|scratch (it|that)|my mistake|(read|got|said|wrote) (that|it) wrong|"
                         r"wrong (one|number|code|day|date|time))\b", re.I)
# A no that calls the action off rather than changing a value ("No, don't, I'll ring back Tuesday")
# ("No, don't, I'll ring back Tuesday", "Actually, don't cancel it"), not a reason given beside a
# change ("can it be the afternoon? I don't want the dog near the spray")
_DECLINING = re.compile(r"(?:^|[.!?,;:]\s*)(?:(?:no|nah|nope|oh|ah|actually|well|then|just|please|sorry|wait|"
                        r"on second thoughts?)\W+)*(?:don'?t|do not)\b"
                        r"|\b(?:i|we) (?:don'?t|do not) (?:want|need) (?:it|that|them|one)(?: any ?more)?\s*(?:[.!?,]|$)"
                        r"|\b(never ?mind|forget (it|that|about it)|changed my mind|leave it|"
                        r"no thanks|no thank you|not now|call it off)\b", re.I)
# A change asked as a question ("Can we make it Friday instead?", "Could it be half eleven?", "How
# about the afternoon?"): a correction put politely, not a question about something ("Is it
# Sunday?", "Can you tell me when you close?")
_CHANGE_ASKED = re.compile(r"\b(instead|rather|make (it|that)|change (it|that)|move (it|that)|switch|swap)\b"
                           r"|(?:^|[.!?,;:]\s*)(?:(?:oh|ah|actually|sorry|so|well|hang on|wait|but|and|yes|yeah|no|nah|"
                           r"erm|um|och)\W+)*(?:can|could|would|will)\s+(?:we|you|it|that|i|he|she|they)\b"
                           r"|\b(how|what) about\b", re.I)
# an act meant and then not asked for ("I was going to cancel ..., but ..."), `called_off`
_MEANT = re.compile(r"\b(?:was|were|wis|had\s+been)\s+(?:going\s+to|gonna|gonnae|about\s+to|meaning\s+to|planning\s+to|"
                    r"thinking\s+(?:of|about))\b|\bdid\s+a\s+go\b|\bmeant\s+to\b|\b(?:wanted|would\s+like)\s+me\s+to\b", re.I)
_BUT = re.compile(r"\bbut\b", re.I)
_REQUESTED = re.compile(r"\b(?:can|could|would|will)\s+(?:you|ye|yous|ya|y'all|u)\b|\bplease\b|\bI'd\s+like\b|"
                        r"\bI\s+(?:want|need)\b|\binstead\b|\?", re.I)
_ASKS_TO_KNOW = re.compile(r"\b(tell me|let me know|check|do you know|is there|are there)\b", re.I)


def corrects(said: str) -> bool:
    """Do these words correct a value, rather than ask about one ("No, five pm, not five in the
    morning", "Actually, make it Sunday instead", "Yes, but at seven", or asked: "Could we do
    Friday instead?"; not "Is it Sunday?")?"""
    said = said.replace("’", "'")
    return bool(_CORRECTING.search(said)) and "?" not in said or asks_for_a_change(said)


def asks_for_a_change(said: str) -> bool:
    """Do these words ask, as a question, for a value changed ("Ah, could we do the half four one
    instead?", "Sorry, can it be the afternoon?"), rather than about something ("Is it Sunday?",
    "Could you check if Friday's free?")?"""
    said = said.replace("’", "'")
    return "?" in said and bool(_CHANGE_ASKED.search(said)) and not _ASKS_TO_KNOW.search(said)


def declines(said: str) -> bool:
    """Do these words call an action off ("No, don't bother", "Forget it, I'll ring back")?"""
    return bool(_DECLINING.search(said.replace("’", "'")))


# A question about a thing ("How long does a refund take?", "Do little ones go free?") asks for no action.
ABOUT = re.compile(r"\W*(how|what|when|why|where|who|which|whose|is|are|was|were|does|do|did|has|"
                   r"have(?= (?:you|ye|yous|youse|y'all|ya|we|they|i)\b))\b", re.I)  # "Has Ngaire got anything free?"
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_REQUEST_ASKED = re.compile(r"\W*(is there any (way|chance)|is it possible|are you able|is there (room|space) for me)\b",
                            re.I)  # "Is there any way I could be seen tomorrow?": a request


# "Tomorrow night got any large room or not?", "This Sunday still got rooms or not?": whether there is,
# as Singapore's and Malaysia's English asks it ("Can book or not?" asks for the booking)
_GOT_OR_NOT = re.compile(r"^(?!\W*(?:can|could|help)\b)[^?]*\bgot\b[^?]*\bor not\b", re.I)
# "I'm still on every four weeks, aren't I?": a tag asks whether what was said is so
# a sentence that orders ("How much is it? Book it for Friday then."): it asks, whatever came before
_ORDER = re.compile(r"\W*(?:(?:just|then|so|and|oh|ok|okay|right|please|well)\W+)*(?:book|cancel|move|change|put|make|"
                    r"send|add|reserve|schedule|arrange|give|sign|take|set|sort|pop|stick|bring|push|"
                    r"switch|swap|freeze|renew|extend|update|charge|pay|deliver|collect|ring|email|"
                    r"text|post|log|report|drop|hold)\b", re.I)
# "Just checking you're still coming Friday at eight?": a question that checks what it says is so
_CHECKING = re.compile(r"\W*(?:(?:just|only|i'm|i am|we're)\W+)*(?:checking|confirming)\W+(?:that\W+|if\W+)?"
                       r"(?:you're|you are|you've|we're|we are|we've|i'm|i am|i've|it's|it is|that's|there's|"
                       r"he's|she's|they're|my|our|the)\b", re.I)
_ME_YOU = frozenset("i i'd i'll i'm i've we we'd we'll we're you you'd you'll me us my our please let let's".split())
# a sentence about someone else: a name or a word for kin, then what they want ("Mam wants one")
_TOLD_OF = re.compile(r"\W*(?:[A-Z][a-z]+|he|she|they|his|her|their)\b(?:'s)?\s+(?:wants?|needs?|would|will|might)\b")
_TELLS = re.compile(r"\W*(?:i|i've|i'm|he|she|he's|she's|it|it's|we|we've|we're|they|they've|they're|my|his|her|"
                    r"our|their)\b", re.I)  # a sentence about someone, not an order ("Put it down ...")
_TAG = re.compile(r",\s*(?:(?:is|are|was|were|do|does|did|have|has|had)n'?t"
                  r"\s+(?:i|it|we|you|they|he|she|there|that)|right|is that right|yeah|correct|aye|eh|yes)\W*$", re.I)


def checks_with_tag(said: str) -> bool:
    """Does a question of these words check what it says with a tag ("I'm still booked for
    Saturday at eight, aren't I?")?"""
    return any(s.rstrip().endswith("?") and _TAG.search(s.rsplit(":", 1)[-1])
               for s in _SENTENCES.split(said.replace("’", "'").strip()))


def asks_about_only(said: str) -> bool:
    """Do the caller's words only ask about something ("My booking reference is WCF-6H1P4. Do I
    need to print the ticket?", "Does my cover include the garden shed?", "I'm still on every four
    weeks, aren't I? At twenty-two pounds?"): every question opens with a word that asks about a
    thing (after a lead-in, "I just wanted to check: do I ...") or checks what it says with a tag,
    and no other sentence asks for anything? Such a line asks for no action (unless it asks for a tool
    by its verb: `choice`): a small model cancelled the booking it named."""
    text = said.replace("’", "'")
    if "?" not in text:
        return False
    tagged = False
    sentences = _SENTENCES.split(text.strip())
    for sentence in sentences:
        if sentence.rstrip().endswith("?"):
            question = sentence.rsplit(":", 1)[-1]
            if _TAG.search(question) or tagged and not any(w.text in _ASKING for w in words(question)):
                tagged = True  # "..., aren't I? At twenty-two pounds?": what it checks, said after
                continue
            if not (ABOUT.match(question) or _CHECKING.match(question) or _GOT_OR_NOT.search(question)) \
                    or _REQUEST_ASKED.match(question):
                return False
        elif any(w.text in _ASKING for w in words(sentence)) and (
                _TOLD_OF.match(sentence) is None or any(w.text in _ME_YOU for w in words(sentence))) \
                or _ORDER.match(sentence):
            return False  # "Mam wants one for the day but she's fretting": told of her, not asked of us
    # "It's fourteen days, isn't it? Put the leaving date down as the nineteenth": a tag checks, and
    # what follows may ask in a way no word here tells ("Put ..."): only tags, questions and what
    # someone tells of ("She keeps asking me and I've lost the email") are about
    return not tagged or all(s.rstrip().endswith("?") or _TELLS.match(s) for s in sentences)


_LOOKING = frozenset("get check find search list lookup look track show query fetch view read see".split())


def may_act(spec: ToolSpec) -> bool:
    """Does this tool act on the world? Ours and an MCP server's say so (`side_effect`); a realtime
    client's function (no code here: the client runs it) may, unless its name's verb only looks
    ("check_claim_status", "search_catalogue")."""
    verb = name_words(spec.name)[:1]
    return spec.side_effect or (spec.fn is None and bool(verb) and verb[0] not in _LOOKING)


def tells_only(said: str, asked: str, specs: Iterable[ToolSpec]) -> bool:
    """The caller's line `said` tells of the past and asks for nothing (see the module); `asked`:
    the agent's words before it."""
    if "?" in said or "?" in asked:
        return False
    text = _NO_TROUBLE.sub(" ", _TELLING.sub(" ", _TAKEN_BACK.sub(" ", said.replace("’", "'")))).lower()
    if re.search(r"(?:^|[.!?,;]\s*)better\s+(?!than\b|off\b)[a-z]+", text):
        return False  # "... done his back. Better knock it on the head, mate.": asked, as "we'd better" is
    said_words = [w.text.lower() for w in words(text)]
    if not said_words:
        return False
    verbs = {name_words(spec.name)[0] for spec in specs if name_words(spec.name)}
    for w in said_words:
        if w in _ASKING or w in _PROBLEM or w.endswith("n't") or w in verbs \
                or w == "wanted" and not _WANTED_TO_TELL.search(text):
            return False
    return bool(_PAST_PHRASE.search(text)) or any(w in _PAST or _regular_past(w) and not _describes(said_words[:i])
                                                  for i, w in enumerate(said_words))


_DETERMINERS = frozenset("of a an the some my your our their his her this that these those".split())


def _describes(before: list[str]) -> bool:
    """Is an "-ed" word after these words one that describes a thing ("three kilos of chopped
    lechon", "the smoked one", "two dried"), not a verb in the past?"""
    return bool(before) and (before[-1] in _DETERMINERS or is_number_word(before[-1]) or before[-1].isdigit())


def called_off(said: str) -> bool:
    """Does the line tell of an act the caller meant to ask for and then did not ("I was going to
    cancel Saturday's ride with all the rain, but sure look, we'll chance it"; "Ah wis gonnae cancel
    Friday, but ach, naw, leave it"; "Mi did a go cancel di fittin', but ...")? Not where a request
    follows the "but" ("I was going to book online, but could you do it?")."""
    text = said.replace("’", "'")
    meant = _MEANT.search(text)
    turn = _BUT.search(text, meant.end()) if meant else None
    return turn is not None and not _REQUESTED.search(text, turn.end())


def _regular_past(word: str) -> bool:
    """"booked", "weighed", "opened"; not "need", "red" or "speed"."""
    return len(word) > 4 and word.endswith("ed") and not word.endswith("eed")
