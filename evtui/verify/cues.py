"""Words that let a rationale name why a sentence supports or refutes a claim.

The verifier decides the stance; these cues only explain it in the user's words ("reports a decrease in risk; the
query asserts a reduction → supports"), and flag non-significant results, which are never "primary" evidence.
"""

from __future__ import annotations

import re

_UP = re.compile(r"\b(?:increas\w*|higher|elevat\w*|rais\w*|greater|promot\w*|induc\w*|enhanc\w*|upregulat\w*|"
                 r"up-regulat\w*|stimulat\w*|caus\w*|activat\w*|worsen\w*|exacerbat\w*)\b", re.I)
_DOWN = re.compile(r"\b(?:decreas\w*|lower\w*|reduc\w*|declin\w*|inhibit\w*|suppress\w*|attenuat\w*|"
                   r"downregulat\w*|down-regulat\w*|diminish\w*|prevent(?:s|ed|ing)?|protect\w*|improv\w*|alleviat\w*)\b", re.I)
_NEGATED = re.compile(r"\b(?:did not|does not|do not|was not|were not|is not|are not|has not|have not|cannot|"
                      r"failed to|no significant|not significantly|no (?:association|effect|difference|evidence|"
                      r"change|increase|decrease|reduction|benefit|correlation)|not associated|unrelated to)\b", re.I)
_ASSOC = re.compile(r"\b(?:associat\w*|correlat\w*|linked|related|predict\w*|risk)\b", re.I)
# A result the authors call non-significant: an explicit phrase, or a p-value above 0.05.
_NONSIG_WORDS = re.compile(r"\b(?:not (?:statistically )?significant(?:ly)?|non-?significant(?:ly)?|"
                           r"insignificant(?:ly)?|no (?:statistically )?significant|"
                           r"did not reach (?:statistical )?significance|n\.s\.)", re.I)
# A result the authors call significant, once the non-significant phrases are taken out ("significantly reduced").
_SIG_WORDS = re.compile(r"\bsignificant(?:ly)?\b", re.I)
_PVALUE = re.compile(r"\bp\s*(=|>|≥|>=)\s*(0?\.\d+)", re.I)
# The Lancet and others print decimals with a raised dot ("p=0·12", "HR 0·63"): read as a decimal point.
_MIDDOT = re.compile(r"(?<=\d)[·⋅](?=\d)")


# A citation of other work: numbered ([18], [37, 39–41]) or author-year ("Smith et al., 2010", "(Smith 2010)").
# "et al." is shown with the author before it and the year after ("Smith et al. 2015"): alone it names no study.
_CITES = re.compile(r"\[\d+(?:\s*[,–-]\s*\d+)*\]|(?:\b[A-Z][\w'’-]*\s+)?\bet al\.(?:,?\s+(?:19|20)\d\d[a-z]?\b)?|"
                    r"\([A-Z][A-Za-z-]+(?: and [A-Z][A-Za-z-]+)?,? (?:19|20)\d\d[a-z]?\)")


def _cited(m: re.Match[str]) -> str:
    """The citation in parentheses, once: "[18]" as "([18])", "(Krause and Ruxton 2002)" as it is."""
    cite = m.group(0)
    return cite if cite.startswith("(") else f"({cite})"


# Sections that recount other studies rather than report the paper's own findings.
BACKGROUND_KINDS = frozenset({"introduction"})
# The same inside a structured abstract, by the sentence's own opening label ("BACKGROUND Observational studies
# report reduced colorectal cancer in regular aspirin users."): 10 of SciFact's 1,025 gold rationales open so, of
# 633 such sentences in its corpus.
_BACKGROUND_LABEL = re.compile(r"^(?:BACKGROUND|CONTEXT|INTRODUCTION|RATIONALE|IMPORTANCE)\b(?![-/])|"
                               r"^(?:Background|Context|Introduction)\s*:")



def background_label(text: str, section_kind: str) -> str:
    """The structured abstract's background label the sentence opens with ("background", "context"), or ""."""
    m = _BACKGROUND_LABEL.match(text.strip())
    return m.group(0).rstrip(" :").lower() if m and section_kind != "results" else ""


def second_hand(text: str, section_kind: str) -> str:
    """Why a finding may be another study's, or no finding at all ("" when nothing says so): an abstract's aim
    states what the study set out to test, its background and the introduction recount earlier work, and a
    sentence that cites a reference may report what the cited study found."""
    stripped = text.strip()
    if section_kind != "results" and (label := plans(stripped)):  # its aim, design, participants or measures
        return f"the abstract's {label.lower()}: what the study set out to test, not a finding"
    if label := background_label(stripped, section_kind):
        return f"the abstract's {label}: may recount earlier work, not this study's finding"
    cite = _CITES.search(text)
    if section_kind in BACKGROUND_KINDS:  # "check the cited study" only where one is cited
        return "in the introduction: may recount earlier work" + (f", check the cited study {_cited(cite)}"
                                                                   if cite else "")
    if section_kind != "results" and cite:
        return f"cites other work {_cited(cite)}: may report another study's finding"
    return ""


# A sentence that asks ("Does aspirin increase gastrointestinal bleeding?", a structured abstract's question)
# reports no finding; the verifier read that one as refuting "aspirin does not increase bleeding" (P 0.70).
_ASKS = re.compile(r"\?\s*[\"”’)\]]?\s*$")


def asks(text: str) -> bool:
    """The sentence is a question: it states no finding, so it takes no side."""
    return bool(_ASKS.search(text))


# A structured abstract's aims, design, setting, participants, interventions or outcome measures say what a study set
# out to do, not what it found: "MAIN OUTCOME MEASURES Remission of type 2 diabetes (HbA1c < 6.2% …)" was read as
# refuting "Metformin lowers HbA1c" (P 0.71). Of 303 such sentences in the SciFact training claims' evidence papers
# none is a gold rationale (METHODS, BACKGROUND and CONTEXT are: 10 of 121, so they are not listed). The label as
# PubMed prints it (upper case), or in title case before a colon.
_PLAN_LABELS = (r"OBJECTIVES?|AIMS?|PURPOSE|GOALS?|(?:STUDY\s+)?DESIGN|SETTINGS?|PARTICIPANTS|PATIENTS|SUBJECTS|INTERVENTIONS?|"
                r"(?:MAIN\s+|PRIMARY\s+)?OUTCOMES?(?:\s+AND)?\s+MEASURES?|(?:MAIN\s+|PRIMARY\s+)OUTCOMES?")
_PLAN = re.compile(rf"^\s*(?:{_PLAN_LABELS})\b(?![-/])(?!\s+(?:AND\s+)?(?:RESULTS|FINDINGS)\b)")
_PLAN_TITLE = re.compile(rf"^\s*(?:{_PLAN_LABELS})\s*:", re.I)
# A sentence splitter may run the next heading in ("MAIN OUTCOME MEASURES: 30-day complications … RESULTS: We
# studied 133,589 patients …"): then it holds a finding after all.
_FINDING_LABEL = re.compile(r"\b(?:RESULTS?|FINDINGS|CONCLUSIONS?|INTERPRETATION)\b")


def plans(text: str) -> str:
    """The structured-abstract label ("MAIN OUTCOME MEASURES") when the sentence states a study's aim, design,
    participants or measures rather than a finding; "" otherwise. Such a sentence takes no side."""
    m = _PLAN.match(text) or _PLAN_TITLE.match(text)
    if not m or _FINDING_LABEL.search(text, m.end()):
        return ""
    return " ".join(m.group(0).rstrip(": ").split())


def non_significant(text: str) -> bool:
    """True when the sentence reports a non-significant result and no significant one beside it ("Aspirin
    significantly reduced cancer incidence, with no significant increase in bleeding" reports a significant one)."""
    text = _MIDDOT.sub(".", text)
    # (operator, value) of each "p = 0.12" / "p > 0.05": "p > 0.05" is non-significant whatever the value.
    found = [(op, float(v)) for op, v in _PVALUE.findall(text) if v.replace(".", "", 1).isdigit()]
    small = re.search(r"\bp\s*(?:<|≤|<=)\s*0?\.0\d*", text, re.I) or any(op == "=" and v <= 0.05 for op, v in found)
    if _NONSIG_WORDS.search(text):
        return not (small or _SIG_WORDS.search(_NONSIG_WORDS.sub(" ", text)))
    return bool(found) and not small


# A direction word's agent noun names a thing, not a change: "ACE inhibitors cause angioedema" asserts "cause" (the
# rationale read "the query asserts “inhibitors”"), and a gene's promoter or a plasminogen activator reports nothing.
_AGENT = re.compile(r"(?:inhibit|activat|suppress|promot|induc|enhanc|stimulat)(?:or|er)s?", re.I)


def _direction(words: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first of `words` in `text` that says a change (not an agent noun such as "inhibitor")."""
    return next((m for m in words.finditer(text) if not _AGENT.fullmatch(m.group(0))), None)


def _reading(text: str) -> tuple[str, str]:
    """The finding's direction ("neg", "up", "down", or "" for an association or nothing) and the word that says
    it, e.g. ("down", "lowered"), ("neg", "did not"), ("", "associated")."""
    if m := _NEGATED.search(text):
        return "neg", m.group(0).lower()
    up, down = _direction(_UP, text), _direction(_DOWN, text)
    if up and (not down or up.start() < down.start()):
        return "up", up.group(0).lower()
    if down:
        return "down", down.group(0).lower()
    m = _ASSOC.search(text)
    return "", m.group(0).lower() if m else ""


def null_claim(claim: str) -> bool:
    """The claim asserts no effect or no association ("Aspirin does not reduce ...", "X is not associated with Y"),
    so a non-significant result can support it."""
    return _reading(claim)[0] == "neg"


def _cue_side(s: str, q: str) -> str:
    """The side the sentence's and the claim's directions alone point to ("" when they do not): a negated finding
    against a directional claim refutes; two directions support when they agree."""
    if s == "neg" and q in ("up", "down"):
        return "refutes"
    if s in ("up", "down") and q in ("up", "down"):
        return "supports" if s == q else "refutes"
    return ""


def explain(claim: str, sentence: str, stance: str, p: float, lean: tuple[str, float] | None = None) -> str:
    """Why the verifier's stance, as a clause for the rationale. `lean`: for a neutral, the side the verifier
    found more probable than neutral but below the threshold for taking it (so "no side" does not read as "no
    effect" when the model merely was not sure enough)."""
    if stance == "neutral" and lean is not None:
        return f"leans to {'supporting' if lean[0] == 'supports' else 'refuting'} (P {lean[1]:.2f}), too unsure to take a side"
    if stance == "neutral":
        return f"takes no side on the claim (P(neutral) {p:.2f})"
    (s_dir, s_word), (q_dir, q_word) = _reading(sentence), _reading(claim)
    s_cue, q_cue = (f"“{w}”" if w else "" for w in (s_word, q_word))
    arrow = "supports" if stance == "supports" else "refutes"
    if s_cue and q_cue and _cue_side(s_dir, q_dir) not in ("", stance):
        # The words point the other way ("did not" under a "supports"): say so rather than give them as the reason.
        # Not a veto: on SciFact and Check-COVID gold rationales the model was right 6 of the 8 times they disagreed.
        return (f"the verifier reads it as {'supporting' if stance == 'supports' else 'refuting'} the query "
                f"(P {p:.2f}), although it reports {s_cue} where the query asserts {q_cue}: read it")
    if s_cue and q_cue:
        return f"reports {s_cue}, the query asserts {q_cue} → {arrow} (P {p:.2f})"
    if s_cue:
        return f"reports {s_cue} → {arrow} (P {p:.2f})"
    return f"the verifier reads it as {'supporting' if stance == 'supports' else 'refuting'} the query (P {p:.2f})"
