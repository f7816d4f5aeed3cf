"""Query text -> mode (triplet, claim, hypothesis) and aspects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from evtui.errors import QueryError
from evtui.models import QUERY_MODES, Aspect, ParsedQuery
from evtui.query.aspects import claim_aspects, without_asides
from evtui.query.frames import attribution
from evtui.query.terms import (
    PART_RE,
    TOKEN_RE,
    concept_variants,
    is_relation_verb,
    relation_family,
    relation_terms,
)

_TRIPLET_PAREN = re.compile(r"^\s*[\(\[]\s*(.+?)\s*[\)\]]\s*$", re.S)
# An opening bracket never closed, with a comma or bar inside: a triplet whose ")" was not typed.
_UNCLOSED = re.compile(r"^\s*[\(\[]\s*([^()\[\]]*[,;|][^()\[\]]*?)\s*$", re.S)
_HEDGE = re.compile(
    r"(^\s*(hypothesis\s*:|we\s+hypothesi[sz]e|it\s+is\s+hypothesi[sz]ed|does|do|is|are|can|could|whether)\b)"
    r"|\b(may|might|could|whether|possibly|potentially|hypothesi[sz]e[sd]?)\b|\?\s*$",
    re.I,
)
# Control characters, and lone surrogates (a command-line argument that was not valid UTF-8 arrives with them):
# neither can be encoded for the tokenizers, the seeded random draw or the terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
# A terminal's escape sequences, as a query copied from coloured output carries them ("\x1b[31maspirin\x1b[0m"):
# removed whole, or their parameters ("[31m") were read as a concept; C1 controls (\x80-\x9f) with them.
_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                     r"|\x1b[ -/]*[0-~]|[\x80-\x9f]")
# An identifier pasted as a query names a paper, not a finding: searched, "10.1056/NEJMoa1215490" was the concepts
# "10" and "1056/NEJMoa1215490", and ranked sentences that hold neither.
_IDENTIFIER = re.compile(r"^\s*(?:(?P<doi>(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?10\.\d{4,9}/\S+)"
                         r"|(?P<pmid>PMID:?\s*\d{1,9})|(?P<pmc>PMCID:?\s*PMC\d+|PMC\d{4,})"
                         r"|(?P<url>https?://\S+))\s*$", re.I)
MAX_QUERY_CHARS = 2000
# A query of stopwords and filler alone parses to no aspect: searched, it matched any sentence at all (and a paper
# "refuted" "the of and"), so it finds nothing and says why.
ONLY_COMMON_WORDS = "only common words: nothing to search for; name what you are looking for (a drug, a gene, an outcome)"
# A pasted paragraph splits into dozens of aspects: a dot column wider than the sentence, a pool no sentence covers.
# Every EvidenceBench hypothesis (at most 14) and SciFact claim (at most 12) stays whole.
MAX_ASPECTS = 16


class CommonWordsOnly(QueryError):
    """The query holds words, but only stopwords and filler: `parsed` is it with no aspect, for a search that finds
    nothing and says why (its last note) rather than fail."""

    def __init__(self, parsed: ParsedQuery) -> None:
        super().__init__(f"{parsed.text[:80]!r}: {ONLY_COMMON_WORDS}")
        self.parsed = parsed


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside brackets, and, for a comma, not between two digits: a chemical's locants
    ("1,25-dihydroxyvitamin D3") and an aside ("IL-6 (interleukin, 6)") stay in their part."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == sep and depth == 0 and not (sep == "," and 0 < i < len(text) - 1 and text[i - 1].isdigit()
                                               and text[i + 1].isdigit()):
            parts.append(text[start:i])
            start = i + 1
    return [p.strip() for p in [*parts, text[start:]]]


def _balanced(part: str) -> str:
    """A part without the closing brackets it never opened ("(a, b, c))" gave the tail "c)")."""
    while part and part[-1] in ")]" and part.count(part[-1]) > part.count("(" if part[-1] == ")" else "["):
        part = part[:-1].rstrip()
    return part


def _inner(text: str) -> tuple[str, bool] | None:
    """What a bracketed triplet holds, and whether its closing bracket is missing ("(aspirin, reduce, cancer")."""
    if m := _TRIPLET_PAREN.match(text):
        return m.group(1), False
    m = _UNCLOSED.match(text)
    return (m.group(1), True) if m else None


def _triplet_parts(text: str) -> list[str] | None:
    inner = _inner(text)
    if inner is not None:  # (head, relation, tail), or (head | relation | tail) in brackets
        body = inner[0]
        # bars, else commas, else semicolons ("(aspirin; reduce; colorectal cancer)")
        parts = next((p for sep in "|,;" if len(p := _split_top(body, sep)) == 3), _split_top(body, ","))
        parts = [_balanced(p) for p in parts]
        if len(parts) == 3 and all(parts):
            return parts
        return None
    if text.count("|") == 2:
        parts = [p.strip() for p in text.split("|")]
        if all(parts):
            return parts
    return None


def _empty_slot(text: str) -> bool:
    """Written as a triplet, but with a part left empty ("(aspirin, , cancer)", "aspirin | | cancer")."""
    inner = _inner(text)
    body = inner[0] if inner else text
    sep = "|" if body.count("|") == 2 else "," if inner and len(_split_top(body, ",")) == 3 else None
    return sep is not None and not all(p.strip() for p in _split_top(body, sep))


def detect_mode(text: str) -> str:
    if _triplet_parts(text):
        return "triplet"
    return "hypothesis" if hedged(text) else "claim"


def hedged(text: str) -> bool:
    """A claim asked ("Does vitamin D reduce fracture risk?") or hedged ("… may reduce …"), as the mode detection
    reads it: one relation between a subject and an outcome, as a claim states it."""
    return bool(_HEDGE.search(text))


def parse_query(text: str, mode: str | None = None, *, abbreviations: Mapping[str, str] | None = None) -> ParsedQuery:
    if not isinstance(text, str):
        raise QueryError("the query must be text")
    notes: list[str] = []
    clean = _CONTROL.sub(" ", _ESCAPE.sub("", text)).strip()
    if m := _IDENTIFIER.match(clean):
        kind = "a DOI" if m.group("doi") else "a PMID" if m.group("pmid") else "a PMC id" if m.group("pmc") \
            else "a web address"
        raise QueryError(f"{clean[:80]!r} is {kind}, which names a paper, not a finding: search for what it says "
                         "(a claim, a hypothesis or a (head, relation, tail) triplet); find the paper in the "
                         "Library (key l, or `evtui papers`)")
    pasted = len(clean)
    if pasted > MAX_QUERY_CHARS:
        clean = clean[:MAX_QUERY_CHARS]
        notes.append(f"query truncated to its first {MAX_QUERY_CHARS} characters")
    if not PART_RE.search(clean):
        if (inner := _inner(clean)) and re.search(r"[,;|]", inner[0]):  # "(,,)", "( | | )": a triplet's empty frame
            raise QueryError("a triplet needs all three parts: (head, relation, tail), e.g. "
                             "(aspirin, reduce, colorectal cancer)")
        raise QueryError("empty query: type a hypothesis, a claim or a (head, relation, tail) triplet")
    if mode in (None, "", "auto"):
        mode = detect_mode(clean)
        notes.insert(0, f"mode detected: {mode}")
        if mode != "triplet" and _empty_slot(clean):
            notes.insert(1, "a triplet needs all three parts (head, relation, tail): searched as a claim of the "
                            "parts given")
        elif (inner := _inner(clean)) and inner[1]:  # "(aspirin, reduce, cancer" with its ")" never typed
            bracket = ")" if clean.lstrip()[0] == "(" else "]"
            notes.insert(1, f"the triplet lacks its closing {bracket!r}: " + (
                "read as (" + ", ".join(_triplet_parts(clean) or []) + ")" if mode == "triplet" else
                "a triplet needs three parts (head, relation, tail); searched as a claim of the parts given"))
    elif mode not in QUERY_MODES:
        raise QueryError(f"unknown mode {mode!r}; choose one of: auto, {', '.join(QUERY_MODES)}")
    if mode == "triplet":
        parts = _triplet_parts(clean)
        if parts is None:
            bare = clean.strip("()[] ")
            parts = [p.strip() for p in re.split(r"\s*[|,]\s*", bare)]
            if len(parts) != 3 or not all(parts):
                raise QueryError("a triplet needs three parts: (head, relation, tail) or head | relation | tail")
        aspects = [
            Aspect("head", parts[0], concept_variants(parts[0], abbreviations), "head"),
            Aspect("relation", parts[1], relation_terms(parts[1]), "relation"),
            Aspect("tail", parts[2], concept_variants(parts[2], abbreviations), "tail"),
        ]
        aspects = [a for a in aspects if any(PART_RE.search(t) for t in a.terms)]
        if relation_family(parts[1]) is None and not any(is_relation_verb(w) for w in TOKEN_RE.findall(parts[1])):
            # "(IL-6, TNF-alpha, fever)": three concepts typed as a triplet, the middle one read as how the others
            # relate; said, so a user who meant three concepts sees why a sentence naming all three is half-covered
            notes.append(f"the relation {parts[1]!r} holds no relation word (reduce, cause, associated with…): "
                         "matched as written; for three concepts, drop the brackets")
    else:
        # who holds the claim, or that there is evidence for it, is no concept a sentence must name
        if framed := attribution(clean):
            notes.append(f"the claim's frame is not searched for: “{framed.strip()}”")
        aspects = claim_aspects(clean[len(framed):], abbreviations, notes)
    if not aspects:  # only stopwords and filler ("the of and", "what is it?"): any sentence at all would match
        raise CommonWordsOnly(ParsedQuery(text=clean, mode=mode, aspects=[], notes=[*notes, ONLY_COMMON_WORDS]))
    if len(aspects) > MAX_ASPECTS:
        cut = f"the query names {len(aspects)} concepts and relations"
        if pasted > MAX_QUERY_CHARS:  # a pasted abstract: one note for both cuts, not two
            notes.remove(f"query truncated to its first {MAX_QUERY_CHARS} characters")
            cut = (f"a long query ({pasted:,} characters) names {len(aspects)} concepts and relations in its first "
                   f"{MAX_QUERY_CHARS:,}")
        notes.append(f"{cut}: searching with the first {MAX_ASPECTS} (a claim reads best as one sentence)")
        aspects = aspects[:MAX_ASPECTS]
    parsed = ParsedQuery(text=clean, mode=mode, aspects=aspects, notes=notes)
    if reason := no_claim(parsed):  # said where the query is read, so search, judge, verify and the app agree
        notes.append(no_claim_note(reason))
        # "What is the effect of X on Y?" asks about X and Y: "effect" is how it asks, and the finding that answers
        # ("X lowered Y by 0.8 points") seldom says it, so as an aspect it marked the best answer as half-covered.
        framing = [a for a in aspects if a.role == "concept" and a.label.lower() in _QUESTION_FRAMES]
        if framing and len(framing) < len(aspects):
            parsed.aspects = [replace(a, id=f"a{n}") for n, a in enumerate(
                (a for a in aspects if a not in framing), 1)]
            said = next((i for i, n in enumerate(notes) if n.startswith("dropped filler words: ")), None)
            words = ", ".join(a.label for a in framing)
            if said is None:
                notes.append(f"dropped filler words: {words}")
            else:
                notes[said] += f", {words}"
    return parsed


# A yes/no question, or a "whether" clause: the verifier was trained on statements only, and reads "Does vitamin D
# reduce fracture risk?" against "insufficiency … increased the risk of fractures" as refuting (P 0.69), where the
# statement reads it as no side; without its auxiliary and question mark the question reads as the statement does.
# A question often opens with its setting ("In adults with type 2 diabetes, does metformin lower HbA1c?").
_SETTING = r"(?P<setting>(?:in|among|for|during|after)\s+[^,?]{1,80},\s*)?"
_YES_NO = re.compile(r"^\s*" + _SETTING + r"(?:does|do|did|is|are|was|were|can|could|may|might|will|would|should|has|have|had)\s+"
                     r"(?P<rest>\S.*?)[\s?]*\?[\s?]*$", re.I | re.S)
_THERE = re.compile(r"^\s*(?P<aux>is|are|was|were)\s+there\s+(?P<rest>\S.*?)[\s?]*\?[\s?]*$", re.I | re.S)
_WHETHER = re.compile(r"^\s*(?:(?:we\s+|i\s+|to\s+)?(?:test|ask|examine|investigate|determine|assess|evaluate|explore|"
                      r"check|know|wonder)\w*\s+)?whether\s+(?P<rest>\S.*?)[\s.?]*$", re.I | re.S)


# A query that asserts nothing: an open question ("What is the effect of metformin on HbA1c?"), a topic ("effect of
# exercise on depression"), a PICO frame or a bare comparison ("metformin vs. placebo for HbA1c"). Against it
# "supports" / "refutes" mean nothing (the verifier read "What is the effect of metformin on HbA1c" as supported by
# "nateglinide and repaglinide … reduce HbA1c", P 0.66), so no stance is taken on it anywhere.
_OPEN_QUESTION = re.compile(r"^\s*" + _SETTING + r"(?P<wh>what|which|how|why|when|where|who|whom|whose)\b", re.I)
_TOPIC = re.compile(r"^\s*(?:the\s+)?(?:effects?|impacts?|roles?|influence|efficacy|safety|associations?|"
                    r"relationships?|comparisons?|outcomes?)\s+(?:of|between)\b", re.I)
_COMPARISON = re.compile(r"\b(?:versus|vs|compared|comparing)\b", re.I)
# Auxiliaries and copulas: a sentence that has one asserts something ("The effect of X on Y is dependent on Z").
_FINITE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|can|could|may|might|will|would|"
                     r"should|must)\b", re.I)
PICO_LABEL = re.compile(r"(?:(?<=^)|(?<=[\s;,.(]))(?:[PICO]|population|patients?|participants|interventions?|"
                        r"comparators?|comparisons?|controls?|outcomes?)\s*:", re.I)
NO_CLAIM = "no claim to verify"
# How a question or a topic asks, not what it asks about ("the effect of X on Y", "the role of X in Y").
_QUESTION_FRAMES = frozenset({"effect", "effects", "impact", "impacts", "role", "roles", "influence"})


def no_claim(parsed: ParsedQuery) -> str:
    """Why the query asserts nothing a sentence could support or refute ("" when it does assert something): an
    open question, or, with no verb, a topic, a PICO frame or a comparison. A yes/no question asks about a claim
    (`verifier_claim` reads it as that claim), and a triplet is one."""
    if parsed.mode == "triplet":
        return ""
    text = parsed.text
    # "WHO Growth Standards …" names the organisation: a wh-word in capitals asks nothing (unless all is capitals)
    if (m := _OPEN_QUESTION.match(text)) and not (m.group("wh").isupper() and any(c.islower() for c in text)):
        return f"an open question (“{m.group('wh').capitalize()} …”)"
    if _FINITE.search(text) or any(a.role == "relation" for a in parsed.aspects):
        return ""
    if len(PICO_LABEL.findall(text)) >= 2 or text.count(";") >= 2:
        return "a PICO frame"
    if _TOPIC.match(text):
        return "a topic phrase"
    if _COMPARISON.search(text):
        return "a comparison that claims no result"
    return ""


def no_claim_note(reason: str) -> str:
    return f"{NO_CLAIM} in {reason}: stances stay neutral; state a claim (“metformin lowers HbA1c”) to verify one"


def claim_text(parsed: ParsedQuery) -> str:
    """The query's own words, as the paper channel, the dense vectors and the verifier read them: without the
    citations and bracketed statistics pasted beside a claim ("(HR 0.8, 95% CI 0.7-0.9) [12]")."""
    return without_asides(parsed.text) or parsed.text


def verifier_claim(parsed: ParsedQuery) -> str:
    """The query as the claim the verifier reads: a triplet as its three parts in order ("aspirin reduce colorectal
    cancer"), so "(a, b, c)" and "a | b | c" get one verdict, and no bracket or bar the verifier never saw in
    training sways it; a yes/no question or a "whether" clause as the statement it asks about ("vitamin D
    supplementation reduce fracture risk"); a claim or hypothesis otherwise as written."""
    if parsed.mode == "triplet" and parsed.aspects:
        return " ".join(a.label for a in parsed.aspects)
    text = claim_text(parsed)
    if m := _THERE.match(text):  # "Is there an association between X and Y?" asks "there is an …"
        return f"there {m.group('aux').lower()} {m.group('rest')}"
    for pattern in (_YES_NO, _WHETHER):
        if m := pattern.match(text):
            return (m.groupdict().get("setting") or "") + m.group("rest")
    return text.rstrip(" ?") or text
