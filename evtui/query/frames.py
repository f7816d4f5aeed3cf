"""A claim's frame: who holds it, when, or that there is evidence for it ("Researchers at the University of Hong Kong
estimated", "A new study suggests that", "In November,", "There is little evidence that"). It names nothing the
claim is about: the parser does not search for an attribution, and the judge reads the claim's subject after all of it.
"""

from __future__ import annotations

import re

from evtui.query.terms import TOKEN_RE

# An attribution needs its "that", or a verb of saying, so that "Trials of aspirin showed …" keeps aspirin.
_SAYING = (r"(?:estimated|estimates?|says?|said|believes?|believed|warns?|warned|argues?|argued|claims?|claimed|"
           r"predicts?|predicted|projects?|projected)")
_SHOWING = (r"(?:found|finds?|shows?|showed|shown|suggests?|suggested|indicates?|indicated|reports?|reported|"
            r"demonstrates?|demonstrated|reveals?|revealed|confirms?|confirmed|concludes?|concluded|discovered|"
            r"determined|proves?|proved|notes?|noted)")
# Who holds the claim, or that there is evidence for it: said by someone, not about them. A person says or finds
# ("Scientists have found traces of …"); a study, its data or its results hold a claim with "that", or by a verb of
# saying ("The results clearly demonstrated that …", "Some studies estimate …").
_WHOSE = (r"(?:(?:an?|the|one|this|that|some|many|most|several|other|recent|new|preliminary|previous|early|initial|"
          r"large|small|further)\s+)*")
_ATTRIBUTION = (
    rf"{_WHOSE}(?:researchers?|scientists?|experts?|investigators?|authors?|doctors?|physicians?|officials?)\b"
    rf"[^.;:]{{0,100}}?\b(?:have\s+|has\s+)?(?:{_SHOWING}|{_SAYING})\s+(?:that\s+)?"
    rf"|{_WHOSE}(?:studies|study|research|data|reports?|analys[ie]s|trials?|evidence|survey|paper|results|findings|"
    r"observations|models?|modell?ing)\b[^.;:]{0,100}?\b"
    rf"(?:(?:have\s+|has\s+)?(?:{_SHOWING}|{_SAYING})\s+that|{_SAYING})\s+"
    r"|there\s+(?:is|are|was|were|has\s+been|have\s+been)\s+(?:no|little|some|strong|limited|growing|insufficient|"
    r"clear|good|weak|increasing|mounting|new)?\s*(?:scientific\s+|clinical\s+|clear\s+)?evidence\s+"
    r"(?:that|to\s+suggest\s+that|suggesting\s+that|showing\s+that)\s+"
    r"|it\s+is\s+(?:possible|impossible|likely|unlikely|probable|known|true|clear|thought|believed|estimated|"
    r"predicted)\s+(?:that\s+)?"
    r"|it\s+(?:was|has\s+been|is)\s+(?:found|shown|reported|estimated|suggested|thought|believed|known|"
    r"demonstrated|confirmed)\s+that\s+")
# When or where it holds, and connectives: the setting ("In British men,") is searched for, but it is not the
# claim's subject.
_SETTING = (r"(?:in|at|from|during|by|after|before|since|as\s+of|until|through)\s[^,;]{1,80},\s*"
            r"|(?:however|meanwhile|moreover|additionally|furthermore|overall|importantly|notably|interestingly|also|"
            r"and|but|the\s+same\s+day)\b,?\s*")
# That a relation exists, said before what it relates ("There is no association between HNF4A mutations and diabetes
# risks", "There was no impact on the mental health of …"): searched for (the relation word is the claim's), but
# neither its subject ("positive" was, for "There is a positive correlation between hip fractures and statin use")
# nor its outcome.
_EXISTS = (r"there\s+(?:is|are|was|were|has\s+been|have\s+been|exists?)\s+(?:no|not\s+an?|an?|any|some|little)?\s*"
           r"(?:[^\W\d_][\w-]*\s+){0,3}?(?:(?:associations?|correlations?|relationships?|relations?|links?|"
           r"connections?|differences?|interactions?)\s+between|(?:effects?|impacts?|influences?)\s+(?:of|on))\s+")
# (after any opening quote or stray mark: "/There is …" typed into the app read "There" as the subject)
_ATTRIBUTED = re.compile(rf"^[^\w]*(?:{_ATTRIBUTION})", re.I)
_FRAME = re.compile(rf"^[^\w]*(?:{_SETTING}|{_ATTRIBUTION}|{_EXISTS})", re.I)


def _strip(text: str, pattern: re.Pattern[str]) -> str:
    rest = text
    while (m := pattern.match(rest)) and m.end() < len(rest):
        rest = rest[m.end():]
    return rest if TOKEN_RE.search(rest) else text


def claim_core_text(text: str) -> str:
    """The claim without its frame (setting and attribution, as often as one opens it); the claim itself when
    nothing would be left."""
    return _strip(text, _FRAME)


def attribution(text: str) -> str:
    """The attribution that opens the claim ("Some scientists estimated that "), "" when none does."""
    return text[:len(text) - len(_strip(text, _ATTRIBUTED))]
