"""Who is calling, and whose the record is: the words a caller gives their own name in, and what
a name said in lower case or as a title is.

The instructions may hold the caller's account (`record`). It is the caller's only where the
caller is the person on file or one of theirs: a caller who gives a name of their own the record
holds nowhere ("Name's Dale Hruska", "It's Geordie Bell, Whitchester Farm"), or who rings about a
friend's or a neighbour's thing ("I'm ringing for me neighbour, Doreen Platt"), gave none of its
values (`a_stranger`), whatever the model copies from it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .kin import kin_word
from .record import NOT_NAMES
from .spoken.days import CALENDAR
from .spoken.names import name_said
from .spoken.words import is_number_word, sentences

__all__ = ["a_stranger", "introduced", "own_for_another", "said_lowercase", "spelt_with", "titled"]


def titled(value: str, said: list[str]) -> bool:
    """A title the caller said as one, a number word inside it ("three boxes of Dailies Total One"):
    every word capitalised ("iPhone" too), the first no number, written so in their words."""
    ws = re.findall(r"[^\W_]+", value)
    return len(ws) >= 2 and not is_number_word(ws[0].lower()) and all(
        w[:1].isupper() or w.isdigit() or w[:1].islower() and w[1:2].isupper() for w in ws) \
        and any(re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text) for text in said)


def said_lowercase(value: str, said: list[str]) -> bool:
    """Was every word of this name said in lower case only, in words that write names with
    capitals (a capital inside a sentence somewhere): a thing, not a name ("jackdaws")?"""
    ws = [w.lower() for w in re.findall(r"[^\W\d_]{3,}", value)]
    cased = any(re.search(r"[\w,;] +[A-Z][a-z]", text) for text in said)
    found = [m.group() for text in said for w in ws for m in re.finditer(rf"\b{re.escape(w)}\b", text, re.I)]
    return cased and bool(ws) and bool(found) and all(f[:1].islower() for f in found) \
        and all(any(f.lower() == w for f in found) for w in ws)

# how a caller gives their own name: "my name's Dale Hruska", "I'm Rhonda Peltier", "here is Jürgen
# Albrecht", "Name Gary Ong." opening a sentence, "Mi name Omar Reid", "Conor Hegarty here", a name
# and its spelling, a name and an address opening a sentence
_INTRO = re.compile(r"\b(?:[Mm][yi] name is|[Mm][yi] name's|[Mm]i name|[Nn]ame's|[Nn]ame is|(?<![\w,] )[Nn]ame:?|I'm|I am|[Tt]his is|[Hh]ere is)"
                    r"\s+((?:[A-Z][\w'\-]+)(?:\s+[A-Z][\w'\-]+){0,2})|\b([A-Z][\w'\-]+\s+[A-Z][\w'\-]+)"
                    r"(?:\s+here\b|,?\s+(?:that's\s+)?[A-Z](?:-[A-Z]){2,}"  # "Brianna Solheim, S-O-L-H-E-I-M"
                    r"|,\s+(?:\d+[A-Za-z]?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[a-z]+teen|"
                    r"twenty|thirty|forty|fifty)\b[\s-]+[A-Z][a-z])")  # a sign-off: "Yusuf Jacobs, 4 Durban Road"


# "It's Geordie Bell, Whitchester Farm", "it's Marty here": a full name or a name and "here" (not
# "It's Lewis, not Liam", "It's Unit 4", "It's School Lane", "It's Niamh, N-I-A-M-H, Gallagher": a daughter's)
_ITS = re.compile(r"\b[Ii]t's\s+((?:[A-Z][\w'\-]+)(?=\s+here\b)|[A-Z][\w'\-]+\s+(?!(?:Road|Street|Lane|Avenue|Close|"
                  r"Drive|Way|Crescent|Terrace|Place|Court|Gardens|Park|Farm|Hall|House|Primary|School)\b)[A-Z][\w'\-]+(?=[\s,.!?]|$))")
# "Eileen Byrne's the name", "Yeah, g'day, Tom Reilly, I rent one of yours": a full name given as
# the caller's own, after a greeting that opens the turn or before "'s the name"
_NAMED = re.compile(r"\b([A-Z][\w'\-]+\s+[A-Z][\w\-]+)(?:'s|\s+is)\s+the\s+name\b|(?:^|[.!?]\s+)(?i:(?:yeah|yes|oh|hi|hello|"
                    r"hiya|hey|g'day|gidday|howya|howdy|morning|good\s+(?:morning|afternoon|evening)|kia\s+ora)(?:\s+po)?,?\s+)+"
                    r"(?!(?:Good|Morning|Afternoon|Evening)\b)([A-Z][\w'\-]+\s+[A-Z][\w'\-]+(?:\s+[A-Z][\w'\-]+)?)(?=,|\.\s|$)")
_FRIENDS = "friend mate buddy pal neighbour neighbor colleague boss".split()  # not the caller's kin, nor on file
_OUTSIDER = re.compile(rf"\b(?:(?:my|me|a|our)\s+(?:{'|'.join(_FRIENDS)})(?:'s(?!\s+(?:got|gotten|gone|been|"
                       r"gonna|just|not|had|a|an|the|always|sellin'?g?))|\s+of\s+(?:mine|ours)(?=\s*[?.!]|\s*$|,?\s+(?:(?:she|he|they)\s+)?(?:has|had|have|is|was|booked|"
                       r"ordered|wants|needs|asked|would|can'?t|couldn'?t)\b))|"
                       rf"(?:ringing|calling|phoning|booking|ordering)\s+for\s+(?:my|me|a|our)\s+(?:{'|'.join(_FRIENDS)}))\b",
                       re.I)  # "my buddy's repair", "a friend of mine has a berth booked", "I'm ringing for me neighbour"
# (not "My buddy's got a whole trailer-load he's sellin' me": the buddy has, not owns the thing asked of;
# nor "A neighbour of mine made me an offer": a story, no thing of theirs)


# a thing under another's name, that name unsaid: "it's booked under me husband's name, and I haven't
# a clue what the reference is" (not "under my name", nor "under my husband's name, Ciarán Doyle")
_UNDER_ANOTHER = re.compile(r"\bunder\s+(?:my|me|ma|our|mi)\s+(?!own\b)([a-z\-]+)(?:'s|s')\s+name\b"
                            r"(?![,:]?\s+(?:it's\s+|which\s+is\s+)?[A-Z])")
# a thing of kin's or a friend's, as the caller tells of it: "My brother had an appointment made with ye",
# "My auntie order durian from you", "Me mate booked a pitch for Sunday", "my uncle booked your people"
# (not "my dad had a fall")
_KINS_OWN = re.compile(r"\b(?:my|me|ma|our|mi)\s+([a-z]+)\s+(?:booked|ordered|(?:[\w']+\s+){1,5}?(?:from|with)\s+"
                       r"(?:you|ye|yous|y'all))\b", re.I)
_OUTSIDERS = frozenset([*_FRIENDS, "landlord", "landlady"])
_KIN_WORDS = {"mam": "mother", "mum": "mother", "mom": "mother", "mama": "mother", "mammy": "mother", "ma": "mother",
              "da": "father", "dad": "father", "daddy": "father", "papa": "father", "pa": "father",
              "missus": "wife", "hubby": "husband", "fella": "partner"}


# a caller new to the desk: "I've not used you before", "I'm not with you before", "I'm a new customer"
_NEWCOMER = re.compile(r"\b(?:not|never)\s+(?:used|been\s+with|with|rung|called)\s+(?:you|yous|ye)(?:\s+\w+)?\s+before\b|"
                       r"\bnew\s+customer\b|\bfirst\s+time\s+(?:I've|I\s+have|calling|ringing|using)\b", re.I)


def spelt_with(value: str, said: Sequence[str]) -> bool:
    """Is this name only a word the caller spells a letter with ("V for Victor", "B as in Bravo"),
    said nowhere else: a letter's word, no person's name?"""
    word = value.strip()
    if not word or " " in word:
        return False
    found = [m for text in said for m in re.finditer(rf"\b{re.escape(word)}\b", text, re.I)]
    return bool(found) and all(re.search(r"\b[A-Za-z]\s+(?:for|as\s+in)\s+$", m.string[:m.start()]) for m in found)


_PLACES = frozenset("inn hotel motel lodge house hall farm court centre center park school church hospital "
                    "station cottage barn mill manor suites apartments flats village estate".split())


def introduced(said: Sequence[str], *, surely: bool = False, outright: bool = False) -> list[str]:
    """The names the caller gives as their own ("I'm Dawn Fenwick", "Conor Hegarty here", "It's
    Geordie Bell", "Eileen Byrne's the name", "G'day, Tom Reilly, I rent ..."), titles and days
    aside, in the order said; a name given only by its spelling or a sign-off ("Patrick Hynes,
    H-Y-N-E-S") is none where another is given outright ("I'm Gloria Dalton"), nor at all given
    `outright`. `surely`: not "Name is ..." or "Here is ...", which give a guest's
    name as often ("register one guest for me ... Name is Farhan")."""
    out, weak = [], set()  # a name spelled or signed off with is weaker than "I'm Gloria Dalton" said too
    for text in said:
        for m in sorted([*_INTRO.finditer(text), *_ITS.finditer(text), *_NAMED.finditer(text)], key=lambda m: m.start()):
            if surely and m.re is _INTRO and re.match(r"(?:[Nn]ame|[Hh]ere)\b", m.group(0)):
                continue
            if m.re is _INTRO and m.group(2) and not re.search(r"(?:^|[.!?]\s+)$", text[:m.start()]):
                continue  # "book it for Emily Carter, C-A-R-T-E-R", "by Abraham Verghese, that's V-E-...": not theirs
            name = [w for w in (re.sub(r"'s$", "", w) for w in (m.group(1) or m.group(2)).split())
                    if w.lower() not in NOT_NAMES and w.lower() not in CALENDAR and len(w) > 1]
            if m.re is _NAMED and len(name) < 2:
                continue  # "Oh, Saturday Morning, is that free?": no full name
            if name and name[-1].lower() not in _PLACES:  # "Hampton Inn, 4105 West Wall Street": a place
                out.append(" ".join(name))
                if m.re is _INTRO and m.group(2) and not m.group(0).rstrip().endswith("here"):
                    weak.add(" ".join(name))
    return [n for n in out if n not in weak] if set(out) - weak or outright else out  # "Patrick Hynes, H-Y-N-E-S ... I'm Gloria Dalton"


def a_stranger(said: Sequence[str], instructions: str) -> bool:
    """Does the caller give a name of their own that the record holds nowhere ("Name's Dale Hruska"
    on a line whose account is Travis Dunlap's)? Then the account is not theirs: its bookings,
    cards and people are no values they gave (a small model moved Travis's drop-off on "my kid's
    BMX ... can I drop it off Friday?"). So where they call about a friend's thing ("Can you cancel
    my buddy's repair?"): the account holds the caller's and their kin's, not a friend's; nor a
    newcomer's ("Eileen Moss, I've not used you before"); nor a thing "under my husband's name"
    whose name the caller does not say, or one of kin's ("My auntie order durian from you"), where
    the record holds no such kin of theirs."""
    if not instructions:
        return False
    if any(_OUTSIDER.search(text := t.replace("\u2019", "'")) or _NEWCOMER.search(text) or any(
            not re.search(rf"\b(?:{kin}|{_KIN_WORDS.get(kin, kin)})\b", instructions, re.I)
            for kin in _UNDER_ANOTHER.findall(text)) or any(
            kin.lower() in _OUTSIDERS or (word := kin_word(kin)) and not re.search(rf"\b(?:{kin}|{word})\b", instructions, re.I)
            for kin in _KINS_OWN.findall(text)) for t in said):
        return True  # the thing is a friend's, or another's by a name unsaid, or the caller new: none of theirs
    return any(all(name_said(w, instructions) is None for w in name.split())  # as Whisper may misspell it
               for name in introduced(said))


def own_for_another(value: str, said: str) -> bool:
    """Is this the name the caller gives outright as their own in these words, which give someone
    else's too ("Hi po, Joy Dela Cruz. Can I book my mother for an appraisal? Lourdes Abellana,
    A-B-E-L-L-A-N-A")? Not one spelled alone ("... Ray Milburn, M-I-L-B-U-R-N": the dad's)."""
    names = introduced([said], surely=True, outright=True)
    every = [name for sentence in sentences(said) for name in introduced([sentence], surely=True)]
    mine = set(names[0].lower().split()) if names else set()
    return bool(names) and name_said(value, names[0]) is not None and any(not mine & set(n.lower().split()) for n in every)
