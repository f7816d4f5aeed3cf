"""Query text -> mode and aspects; aspects -> highlight spans in sentences."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from evtui.errors import QueryError
from evtui.models import QUERY_MODES, Aspect, ParsedQuery, Span

_STEM = snowballstemmer.stemmer("english")
TOKEN_RE = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
PART_RE = re.compile(r"[^\W_]+")

STOPWORDS = frozenset("""
a an the and or nor but if then than that this these those there here of in on at to for from by with without
within into onto over under about above below between among through during before after against via per as
is are was were be been being am do does did doing have has had having will would shall should can could may
might must it its itself they them their theirs we our ours us you your he she his her him i me my which who whom
whose what when where why how whether not no so such both each either neither all any some many much more most
less least very also only just even still yet too other others another same own further furthermore however thus
hence therefore while whereas although though because since upon due one ones
""".split())
FILLER = frozenset("""
hypothesis hypothesize hypothesise hypothesized hypothesised hypothesizing propose proposed suggest suggests
suggested evidence study studies show shows shown showed demonstrate demonstrated find found finding findings
report reported reports claim claims examine examined investigate investigated assess assessed test tested
whereby likely possibly potentially significantly significant generally often typically frequently
""".split())

# Relation families: every member is matched by stem; a query word in a family expands to all of it.
RELATION_FAMILIES: dict[str, tuple[str, ...]] = {
    "inhibit": ("inhibit", "suppress", "reduce", "decrease", "lower", "block", "attenuate", "diminish",
                "downregulate", "impair", "abolish", "prevent", "inhibitor", "inhibition", "reduction"),
    "cause": ("cause", "induce", "trigger", "increase", "promote", "elicit", "provoke", "produce",
              "induction"),
    "treat": ("treat", "therapy", "improve", "alleviate", "ameliorate", "relieve", "cure", "efficacy",
              "effective", "benefit", "treatment"),
    "associate": ("associate", "association", "correlate", "correlation", "link", "relate", "risk",
                  "predict", "associated"),
    "activate": ("activate", "stimulate", "upregulate", "enhance", "potentiate", "activation", "augment"),
    "bind": ("bind", "binding", "interact", "interaction", "target", "complex"),
    "protect": ("protect", "protective", "preserve", "prevent", "protection", "safeguard"),
    "regulate": ("regulate", "modulate", "control", "mediate", "regulation", "affect", "influence"),
    "increase": ("increase", "higher", "elevate", "raise", "greater", "rise", "upregulate", "enhance", "more"),
    "decrease": ("decrease", "lower", "reduce", "decline", "fall", "drop", "less", "downregulate", "diminish"),
    "express": ("express", "expression", "overexpress", "present", "detect"),
    "require": ("require", "need", "necessary", "essential", "depend"),
}
_ALIASES = {
    "reduce": "inhibit", "suppress": "inhibit", "block": "inhibit", "attenuate": "inhibit",
    "induce": "cause", "trigger": "cause", "promote": "cause", "elicit": "cause", "provoke": "cause",
    "improve": "treat", "alleviate": "treat", "ameliorate": "treat", "relieve": "treat",
    "correlate": "associate", "link": "associate", "relate": "associate",
    "stimulate": "activate", "enhance": "activate", "upregulate": "activate",
    "interact": "bind", "modulate": "regulate", "mediate": "regulate", "affect": "regulate",
    "elevate": "increase", "raise": "increase", "higher": "increase", "greater": "increase",
    "lower": "decrease", "decline": "decrease", "diminish": "decrease", "downregulate": "decrease",
}

ABBREVIATIONS: dict[str, str] = {
    "NSAID": "non-steroidal anti-inflammatory drug", "COX": "cyclooxygenase", "MI": "myocardial infarction",
    "CHD": "coronary heart disease", "BMI": "body mass index", "HIV": "human immunodeficiency virus",
    "ROS": "reactive oxygen species", "TNF": "tumor necrosis factor", "LDL": "low-density lipoprotein",
    "HDL": "high-density lipoprotein", "COPD": "chronic obstructive pulmonary disease",
    "ACE": "angiotensin-converting enzyme", "ARB": "angiotensin receptor blocker",
    "SSRI": "selective serotonin reuptake inhibitor", "CRC": "colorectal cancer", "T2D": "type 2 diabetes",
}
GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "κ": "kappa", "ε": "epsilon"}


_STEMS: dict[str, str] = {}  # surface form -> stem; a plain dict lookup is the hot path of highlighting


def stem(word: str) -> str:
    s = _STEMS.get(word)
    if s is None:
        if len(_STEMS) > 500_000:
            _STEMS.clear()
        s = _STEMS[word] = _stem_cached(word.lower())
    return s


@lru_cache(maxsize=200_000)
def _stem_cached(word: str) -> str:
    return _STEM.stemWord(word)


def _build_family_index() -> tuple[dict[str, str], dict[str, list[str]]]:
    by_stem: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    for fam, words in RELATION_FAMILIES.items():
        members[fam] = list(words)
        by_stem.setdefault(stem(fam), fam)
    for alias, fam in _ALIASES.items():
        by_stem.setdefault(stem(alias), fam)
    for fam, words in RELATION_FAMILIES.items():
        for w in words:
            by_stem.setdefault(stem(w), fam)
    return by_stem, members


_FAMILY_BY_STEM, _FAMILY_MEMBERS = _build_family_index()
# Only these words start a relation aspect inside a claim; nouns like "risk" or "therapy" stay concepts.
_RELATION_VERB_STEMS = frozenset(stem(w) for w in (
    *RELATION_FAMILIES, *_ALIASES, "cause", "inhibit", "prevent", "protect", "bind", "express", "regulate",
    "decrease", "increase", "reduce", "associated", "correlated", "linked", "lead", "result", "induce"))


def relation_family(word: str) -> str | None:
    return _FAMILY_BY_STEM.get(stem(word.split()[0])) if word.strip() else None


def relation_terms(label: str) -> list[str]:
    fam = relation_family(label)
    terms = [label]
    if fam:
        terms += [w for w in _FAMILY_MEMBERS[fam] if w.lower() != label.lower()]
    return _dedupe(terms)


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for it in items:
        key = it.lower().strip()
        if key and key not in seen:
            seen.add(key)
            out.append(it.strip())
    return out


def concept_variants(label: str, abbreviations: Mapping[str, str] | None = None) -> list[str]:
    """Surface variants: hyphenation, Greek letters, known abbreviations (plurals/stems are matched by stem)."""
    out = [label]
    if "-" in label:
        out += [label.replace("-", " "), label.replace("-", "")]
    for g, name in GREEK.items():
        if g in label:
            out.append(label.replace(g, name).replace("-" + name, "-" + name))
            out.append(label.replace(g, " " + name).replace("- ", "-"))
    m = re.fullmatch(r"([A-Za-z]+)-?(\d+)", label)
    if m:  # IL-6 ~ IL6
        out += [f"{m.group(1)}-{m.group(2)}", f"{m.group(1)}{m.group(2)}"]
    table = {**ABBREVIATIONS, **(abbreviations or {})}
    words = label.split()
    for i, w in enumerate(words):
        long = table.get(w) or table.get(w.rstrip("s")) if w.isupper() or w.rstrip("s").isupper() else None
        if long:
            out.append(" ".join([*words[:i], long, *words[i + 1:]]))
    low = label.lower()
    for short, long in table.items():
        if long.lower() in low and len(short) >= 2:
            out.append(re.sub(re.escape(long), short, label, flags=re.IGNORECASE))
    return _dedupe(out)


# -- parsing ---------------------------------------------------------------------------------------
_TRIPLET_PAREN = re.compile(r"^\s*[\(\[]\s*(.+?)\s*[\)\]]\s*$", re.S)
_HEDGE = re.compile(
    r"(^\s*(hypothesis\s*:|we\s+hypothesi[sz]e|it\s+is\s+hypothesi[sz]ed|does|do|is|are|can|could|whether)\b)"
    r"|\b(may|might|could|whether|possibly|potentially|hypothesi[sz]e[sd]?)\b|\?\s*$",
    re.I,
)
# Control characters, and lone surrogates (a command-line argument that was not valid UTF-8 arrives with them):
# neither can be encoded for the tokenizers, the seeded random draw or the terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
MAX_QUERY_CHARS = 2000


def _triplet_parts(text: str) -> list[str] | None:
    m = _TRIPLET_PAREN.match(text)
    if m:
        parts = [p.strip() for p in m.group(1).split(",")]
        if len(parts) == 3 and all(parts):
            return parts
        return None
    if text.count("|") == 2:
        parts = [p.strip() for p in text.split("|")]
        if all(parts):
            return parts
    return None


def detect_mode(text: str) -> str:
    if _triplet_parts(text):
        return "triplet"
    return "hypothesis" if _HEDGE.search(text) else "claim"


def parse_query(text: str, mode: str | None = None, *, abbreviations: Mapping[str, str] | None = None) -> ParsedQuery:
    if not isinstance(text, str):
        raise QueryError("the query must be text")
    notes: list[str] = []
    clean = _CONTROL.sub(" ", text).strip()
    if len(clean) > MAX_QUERY_CHARS:
        clean = clean[:MAX_QUERY_CHARS]
        notes.append(f"query truncated to its first {MAX_QUERY_CHARS} characters")
    if not PART_RE.search(clean):
        raise QueryError("empty query: type a hypothesis, a claim or a (head, relation, tail) triplet")
    if mode in (None, "", "auto"):
        mode = detect_mode(clean)
        notes.insert(0, f"mode detected: {mode}")
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
    else:
        aspects = _concepts(clean, abbreviations, notes)
    if not aspects:
        raise QueryError(f"nothing searchable in {text[:80]!r}")
    return ParsedQuery(text=clean, mode=mode, aspects=aspects, notes=notes)


def _concepts(text: str, abbreviations: Mapping[str, str] | None, notes: list[str]) -> list[Aspect]:
    body = re.sub(r"^\s*hypothesis\s*:\s*", "", text, flags=re.I)
    chunks: list[list[str]] = [[]]
    relations: list[tuple[float, str]] = []
    dropped: list[str] = []
    for m in re.finditer(r"[^\W_]+(?:[-'’/][^\W_]+)*|[,;:.!?()\[\]\"]", body):
        tok = m.group(0)
        low = tok.lower()
        if not PART_RE.match(tok) or low in STOPWORDS:
            chunks.append([])
            continue
        if low in FILLER:
            dropped.append(tok)
            chunks.append([])
            continue
        st = stem(low)
        if st in _RELATION_VERB_STEMS and not tok.isupper():
            relations.append((len(chunks) - 0.5, tok))  # after the chunk it closes, before the next
            chunks.append([])
            continue
        chunks[-1].append(tok)
    # order concepts and relations by position in the text
    items: list[tuple[float, str, str]] = []
    for i, ch in enumerate(chunks):
        while len(ch) > 4:  # long runs of content words: keep pairs together
            items.append((i, "concept", " ".join(ch[:2])))
            ch = ch[2:]
        if ch:
            items.append((i, "concept", " ".join(ch)))
    seen_fam: set[str] = set()
    for i, tok in relations:
        fam = relation_family(tok) or tok.lower()
        if fam not in seen_fam:
            seen_fam.add(fam)
            items.append((i, "relation", tok))
    items.sort(key=lambda x: x[0])
    if dropped:
        notes.append("dropped filler words: " + ", ".join(dropped))
    aspects: list[Aspect] = []
    seen: set[str] = set()
    for _i, role, label in items:
        if label.lower() in seen:
            continue
        seen.add(label.lower())
        terms = relation_terms(label) if role == "relation" else concept_variants(label, abbreviations)
        aspects.append(Aspect(f"a{len(aspects) + 1}", label, terms, role))
    if len(aspects) == 1 and not relations and len(aspects[0].label.split()) >= 3:
        # A verbless claim ("ACE inhibitor cough") is several concepts, not one phrase no sentence contains.
        units = _noun_units(aspects[0].label.split())
        if len(units) > 1:
            notes.append("no verb: split into concepts " + " · ".join(units))
            aspects = [Aspect(f"a{i + 1}", u, concept_variants(u, abbreviations), "concept")
                       for i, u in enumerate(units)]
    if not aspects:
        words = [w for w in PART_RE.findall(body)]
        if words:
            label = " ".join(words[:6])
            aspects.append(Aspect("a1", label, [label], "concept"))
    return aspects


# Nouns that head a unit with the word before them ("ACE inhibitor", "vitamin D deficiency"), and adjective
# endings that bind a word to the next ("colorectal cancer", "cardiovascular mortality").
_HEAD_NOUNS = frozenset("""inhibitor inhibitors blocker blockers antagonist antagonists agonist agonists receptor
receptors deficiency deficiencies therapy therapies level levels supplementation supplement supplements
exposure infection infections use intake resistance expression vaccine vaccines vaccination""".split())
_ADJ_END = re.compile(r"(al|ic|ive|ous|ary|ar|ine|oid|ial|ed)$", re.I)


def _noun_units(words: list[str]) -> list[str]:
    """Split a verbless run of words into noun units: a one-character word (vitamin D, type 2) and a head noun
    (ACE inhibitor) join the word before them; an adjective (colorectal) joins the word after it."""
    units: list[list[str]] = []
    for w in words:
        joins_prev = bool(units) and (len(w) == 1 or w.isdigit() or w.lower() in _HEAD_NOUNS)
        prev_adj = bool(units) and len(units[-1][-1]) > 4 and bool(_ADJ_END.search(units[-1][-1])) \
            and units[-1][-1].lower() not in _HEAD_NOUNS
        if joins_prev or prev_adj:
            units[-1].append(w)
        else:
            units.append([w])
    return [" ".join(u) for u in units]


def search_terms(aspect: Aspect) -> list[list[str]]:
    out: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for t in aspect.terms:
        words = [w.lower() for w in PART_RE.findall(t)]
        key = tuple(words)
        if words and key not in seen:
            seen.add(key)
            out.append(words)
    return out


# -- highlighting ----------------------------------------------------------------------------------
@dataclass(slots=True)
class Matcher:
    """Per-aspect stem sequences, matched against a sentence's tokens (hyphen parts count as tokens too)."""

    patterns: list[tuple[str, tuple[str, ...]]]  # (aspect id, stems), longest first
    loose: list[tuple[str, tuple[str, ...]]]  # a multi-word label's words, matched apart when the phrase is absent

    def spans(self, text: str) -> list[Span]:
        # Linear in the sentence: patterns are looked up through each stem's positions, and overlap with an
        # aspect's earlier spans is one flag per token (checking every earlier span made a long sentence with
        # many matches quadratic: 135 s for 1 MB).
        toks = [(m.start(), m.end(), stem(m.group(0))) for m in PART_RE.finditer(text)]
        if not toks:
            return []
        out: list[Span] = []
        positions: dict[str, list[int]] = {}
        for i, t in enumerate(toks):
            positions.setdefault(t[2], []).append(i)
        stems = [t[2] for t in toks]
        taken: dict[str, bytearray] = {}  # aspect -> 1 per token already inside one of its spans
        for aid, pat in self.patterns:
            n = len(pat)
            for i in positions.get(pat[0], ()):
                if (n > 1 and tuple(stems[i:i + n]) != pat) or i + n > len(stems):
                    continue
                cover = taken.get(aid)
                if cover is None:
                    cover = taken[aid] = bytearray(len(toks))
                elif cover.find(1, i, i + n) != -1:
                    continue
                cover[i:i + n] = b"\x01" * n
                out.append(Span(aid, toks[i][0], toks[i + n - 1][1]))
        for aid, words in self.loose:
            if aid in taken:
                continue
            hits = [positions.get(w, ()) for w in words]
            if all(hits):
                for h in hits:
                    out.extend(Span(aid, toks[j][0], toks[j][1]) for j in h)
        out.sort(key=lambda s: (s.start, s.end))
        return _merge_hyphenated(out, text)


def _merge_hyphenated(spans: list[Span], text: str) -> list[Span]:
    """Join one aspect's spans that only a hyphen separates, so TNF-α highlights as one piece."""
    merged: list[Span] = []
    for sp in spans:
        prev = next((m for m in reversed(merged[-3:]) if m.aspect == sp.aspect), None)
        if prev is not None and text[prev.end:sp.start] in ("-", "‐", "–") :
            prev.end = max(prev.end, sp.end)
            continue
        merged.append(Span(sp.aspect, sp.start, sp.end))
    for sp in merged:  # "(ACE) inhibitors": a phrase across a bracket takes the whole bracket, not "ACE) inhibitors"
        inner = text[sp.start:sp.end]
        if inner.count(")") > inner.count("(") and sp.start > 0 and text[sp.start - 1] == "(":
            sp.start -= 1
        elif inner.count("(") > inner.count(")") and text[sp.end:sp.end + 1] == ")":
            sp.end += 1
    return merged


def compile_matcher(aspects: Sequence[Aspect]) -> Matcher:
    pats: list[tuple[str, tuple[str, ...]]] = []
    for a in aspects:
        seen: set[tuple[str, ...]] = set()
        for words in search_terms(a):
            key = tuple(stem(w) for w in words)
            if key and key not in seen:
                seen.add(key)
                pats.append((a.id, key))
    pats.sort(key=lambda p: -len(p[1]))
    loose = []
    for a in aspects:
        terms = search_terms(a)
        if terms and len(terms[0]) > 1 and a.role != "relation":
            loose.append((a.id, tuple(stem(w) for w in terms[0])))
    return Matcher(pats, loose)


def find_spans(text: str, aspects: Sequence[Aspect]) -> list[Span]:
    return compile_matcher(aspects).spans(text)


def covered_aspects(spans: Iterable[Span]) -> list[str]:
    return sorted({s.aspect for s in spans})


_ABBR = re.compile(r"\(([A-Za-z][A-Za-z0-9\-αβγ]{1,9})\)")
_ABBR_WINDOW = 400  # characters before "(SF)" searched for its long form: 15 words of ordinary prose fit


def extract_abbreviations(sentences: Iterable[str]) -> dict[str, str]:
    """Schwartz–Hearst: for 'long form (SF)', the shortest preceding words whose initials cover SF."""
    counts: dict[tuple[str, str], int] = {}
    for s in sentences:
        for m in _ABBR.finditer(s):
            short = m.group(1)
            if not any(c.isupper() for c in short) or short.isdigit():
                continue
            # Only the last few words can be the long form: look at a bounded window before the parenthesis
            # (the whole prefix made a long sentence full of parentheses quadratic).
            lo = max(0, m.start() - _ABBR_WINDOW)
            words = re.findall(r"[^\s(]+", s[lo:m.start()].rstrip())
            if lo > 0 and words and all(not c.isspace() and c != "(" for c in s[lo - 1:lo + 1]):
                words = words[1:]  # a word cut by the window's edge
            words = words[-min(len(short) + 5, len(short) * 2):]
            long = _match_long(short, words)
            if long:
                counts[(short, long)] = counts.get((short, long), 0) + 1
    best: dict[str, tuple[int, str]] = {}
    for (short, long), n in counts.items():
        if short not in best or n > best[short][0]:
            best[short] = (n, long)
    return {k: v[1] for k, v in best.items()}


def _match_long(short: str, words: list[str]) -> str | None:
    if not words:
        return None
    cand = " ".join(words)
    s_i = len(short) - 1
    l_i = len(cand) - 1
    sl, cl = short.lower(), cand.lower()
    while s_i >= 0:
        c = sl[s_i]
        if not c.isalnum():
            s_i -= 1
            continue
        while l_i >= 0 and (cl[l_i] != c or (s_i == 0 and l_i > 0 and cl[l_i - 1].isalnum())):
            l_i -= 1
        if l_i < 0:
            return None
        s_i -= 1
        l_i -= 1
    start = cand.rfind(" ", 0, l_i + 1) + 1
    long = cand[start:].strip(" ,;:")
    if len(long) <= len(short) or long.lower().startswith(short.lower()):
        return None
    return long
