"""Words of a query: tokens, stems, stopwords, relation families and a concept's surface variants."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import tantivy

from evtui.models import Aspect

# Snowball English (Porter2) as the engine runs it, in Rust: the same stems as the pure-Python snowballstemmer
# (compared on every token of the demo and SciFact sentences, 64k forms) at 1/16 of the time, which was most of
# a bm25 query's highlighting on a cold process.
_STEM = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.stemmer("english")).build()
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
    # A comparison's outcome ("A is superior / non-inferior to B"): a relation, not a concept to find verbatim.
    "superior": ("superior", "superiority", "inferior", "non-inferior", "noninferior", "non-inferiority",
                 "noninferiority", "better", "worse", "equivalent", "outperform"),
    # A harm made worse ("smoking worsens asthma control"): "increase" would find any rise, not a worsening.
    "worsen": ("worsen", "exacerbate", "aggravate", "deteriorate"),
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
    # past tenses the stemmer leaves apart ("SBP fell" was one concept), and "represses" (was "cells represses")
    "fell": "decrease", "repress": "inhibit",
    "inferior": "superior", "non-inferior": "superior", "noninferior": "superior", "better": "superior",
    "worse": "superior", "outperform": "superior",
}

# Relation verbs known by their verb forms only, not by stem: their stem is also a noun's or an adjective's that names
# a concept ("cognitive impairment", "potential", "predictive", "COPD exacerbations", "slow", "delayed onset",
# "prolonged activation"). Unlisted, each joined the concept before it ("Troponin predicts mortality" was one
# concept, "Smoking worsens asthma control" four). form -> family. Measured on the benchmark claims they change,
# "accelerate", "disrupt" and "alter" made EvidenceBench items rank worse: they are left out.
_VERB_FORMS: dict[str, str] = {
    **dict.fromkeys(("predict", "predicts", "predicting"), "associate"),
    **dict.fromkeys(("worsen", "worsens", "worsened", "worsening", "exacerbate", "exacerbates", "exacerbated",
                     "exacerbating", "aggravate", "aggravates", "aggravated", "aggravating"), "worsen"),
    **dict.fromkeys(("impair", "impairs", "impairing", "abolish", "abolishes", "abolished", "abolishing",
                     "mitigate", "mitigates", "mitigated", "mitigating", "impede", "impedes", "impeded", "impeding",
                     "hinder", "hinders", "hindered", "hindering", "slows", "slowed", "slowing", "delays",
                     "delaying"), "inhibit"),
    **dict.fromkeys(("shorten", "shortens", "shortened", "shortening"), "decrease"),
    **dict.fromkeys(("potentiate", "potentiates", "potentiated", "potentiating"), "activate"),
    **dict.fromkeys(("boost", "boosts", "boosted", "prolong", "prolongs"), "increase"),
    **dict.fromkeys(("drives", "drove"), "cause"),
    **dict.fromkeys(("restore", "restores", "restored", "rescue", "rescues", "rescued"), "treat"),
}

ABBREVIATIONS: dict[str, str] = {
    "NSAID": "non-steroidal anti-inflammatory drug", "COX": "cyclooxygenase", "MI": "myocardial infarction",
    "CHD": "coronary heart disease", "BMI": "body mass index", "HIV": "human immunodeficiency virus",
    "ROS": "reactive oxygen species", "TNF": "tumor necrosis factor", "LDL": "low-density lipoprotein",
    "HDL": "high-density lipoprotein", "COPD": "chronic obstructive pulmonary disease",
    "ACE": "angiotensin-converting enzyme", "ARB": "angiotensin receptor blocker",
    "SSRI": "selective serotonin reuptake inhibitor", "CRC": "colorectal cancer", "T2D": "type 2 diabetes",
}
# Drug classes a query names by their WHO INN stem ("statins"): the class word also names each member drug
# ("atorvastatin"), as a variant (so the search finds it) and, by the member suffix, in highlighting (so an unlisted
# member lights too). The suffix is the INN stem, stricter than the class word: "-vastatin", not "-statin", which
# would light somatostatin, nystatin, cystatin and follistatin (all in the demo library, none a statin).
DRUG_CLASSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "statin": ("vastatin", ("atorvastatin", "cerivastatin", "fluvastatin", "lovastatin", "mevastatin",
                            "pitavastatin", "pravastatin", "rosuvastatin", "simvastatin")),
    "sartan": ("sartan", ("azilsartan", "candesartan", "eprosartan", "irbesartan", "losartan", "olmesartan",
                          "telmisartan", "valsartan")),
    "coxib": ("coxib", ("celecoxib", "etoricoxib", "lumiracoxib", "parecoxib", "rofecoxib", "valdecoxib")),
    "gliptin": ("gliptin", ("alogliptin", "linagliptin", "saxagliptin", "sitagliptin", "vildagliptin")),
    "gliflozin": ("gliflozin", ("canagliflozin", "dapagliflozin", "empagliflozin", "ertugliflozin")),
}
# Boolean operators a search-engine user types in capitals: never a concept, even in a mixed-case query.
_OPERATORS = frozenset({"AND", "OR", "NOT", "NOR"})
GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "κ": "kappa", "ε": "epsilon"}
_GREEK_LETTER = {name: letter for letter, name in GREEK.items()}
# A Greek letter spelled out as a word or a name's suffix (beta-blockers, IL-1beta, NF-kappaB), not inside a word
# (alphabet, betamethasone).
_GREEK_NAME = re.compile(r"(?<![A-Za-z])((?i:" + "|".join(GREEK.values()) + r"))(?![a-z])")


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
    tokens = _STEM.analyze(word)
    return tokens[0] if tokens else word


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
RELATION_VERB_STEMS = frozenset(stem(w) for w in (
    *RELATION_FAMILIES, *_ALIASES, "cause", "inhibit", "prevent", "protect", "bind", "express", "regulate",
    "decrease", "increase", "reduce", "associated", "correlated", "linked", "lead", "result", "induce"))


def drug_class(st: str) -> str | None:
    """The class a stem names ("statin"), or the class of a member drug named by its INN stem ("simvastatin" ->
    "statin"); None for any other stem."""
    if st in DRUG_CLASSES:
        return st
    for cls, (suffix, _members) in DRUG_CLASSES.items():
        if st.endswith(suffix) and len(st) > len(suffix):
            return cls
    return None


def is_capital_stopword(token: str) -> bool:
    """A stopword written in capitals, as an abbreviation is (NO for nitric oxide, ALL for acute lymphoblastic
    leukaemia, AS for ankylosing spondylitis): a concept, matched only in capitals. Boolean operators are not."""
    return len(token) >= 2 and token.isupper() and token.lower() in STOPWORDS and token not in _OPERATORS


def is_relation_verb(word: str) -> bool:
    """A word that states a relation inside a claim ("reduces", "predicts"), not a noun like "risk" or "therapy"."""
    low = word.lower()
    return low in _VERB_FORMS or stem(low) in RELATION_VERB_STEMS


def relation_family(word: str) -> str | None:
    """The family of a relation: of its first relation verb, so a triplet's "is associated with" or "does not
    reduce" is read as "associated" or "reduce" is (it was matched only as the whole phrase, which "was associated
    with" is not); else of its first word."""
    words = TOKEN_RE.findall(word)
    if not words:
        return None
    low = next((w for w in words if is_relation_verb(w)), words[0]).lower()
    return _VERB_FORMS.get(low) or _FAMILY_BY_STEM.get(stem(low))


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


_TABLES: list[tuple[Mapping[str, str] | None, int, dict[str, str], list[tuple[str, str, str]]]] = []


def _abbreviation_table(
        abbreviations: Mapping[str, str] | None) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """The built-in abbreviations merged with a library's, and (short, long, long lowercased) of those with a short
    form of 2+ characters: built once per library mapping, not at every aspect of every query (a library holds
    thousands, and lowercasing each of them per call was most of a bm25 query's time before the engine)."""
    for mapping, size, table, lowered in _TABLES:
        if mapping is abbreviations and size == len(abbreviations or ()):
            return table, lowered
    table = {**ABBREVIATIONS, **(abbreviations or {})}
    lowered = [(short, long, long.lower()) for short, long in table.items() if len(short) >= 2]
    _TABLES[:] = [(abbreviations, len(abbreviations or ()), table, lowered), *_TABLES[:3]]
    return table, lowered


def concept_variants(label: str, abbreviations: Mapping[str, str] | None = None) -> list[str]:
    """Surface variants: hyphenation, Greek letters, known abbreviations (plurals/stems are matched by stem)."""
    out = [label]
    if "-" in label:
        out += [label.replace("-", " "), label.replace("-", "")]
    for g, name in GREEK.items():
        if g in label:
            out.append(label.replace(g, name).replace("-" + name, "-" + name))
            out.append(label.replace(g, " " + name).replace("- ", "-"))
    if _GREEK_NAME.search(label):  # and back: TGF-beta ~ TGF-β, NF-kappaB ~ NF-κB, IL-1beta ~ IL-1β
        lettered = _GREEK_NAME.sub(lambda m: _GREEK_LETTER[m.group(1).lower()], label)
        out += [lettered, re.sub(r"-(?=[αβγδκε])", "", lettered)]
    for micro, mu in (("µ", "μ"), ("μ", "µ")):  # the micro sign and the Greek mu: papers print both
        if micro in label:
            out.append(label.replace(micro, mu))
    m = re.fullmatch(r"([A-Za-z]+)-?(\d+)", label)
    if m:  # IL-6 ~ IL6
        out += [f"{m.group(1)}-{m.group(2)}", f"{m.group(1)}{m.group(2)}"]
    table, lowered = _abbreviation_table(abbreviations)
    words = label.split()
    for i, w in enumerate(words):
        long = table.get(w) or table.get(w.rstrip("s")) if w.isupper() or w.rstrip("s").isupper() else None
        if long:
            out.append(" ".join([*words[:i], long, *words[i + 1:]]))
    low = label.lower()
    for short, long, long_low in lowered:
        if long_low in low:
            out.append(re.sub(re.escape(long), short, label, flags=re.IGNORECASE))
    for i, w in enumerate(words):  # "statins" -> "atorvastatin", ...; "statin therapy" -> "atorvastatin therapy", ...
        cls = stem(w) if stem(w) in DRUG_CLASSES else None
        if cls:
            out += [" ".join([*words[:i], m, *words[i + 1:]]) for m in DRUG_CLASSES[cls][1]]
    return _dedupe(out)


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
