"""Query text -> mode and aspects; aspects -> highlight spans in sentences.

One module per job: `terms` (tokens, stems, stopwords, relation families, a concept's surface variants),
`aspects` (a claim or hypothesis -> its aspects), `parse` (mode detection and `parse_query`), `highlight` (aspects
-> spans in a sentence), `abbreviations` (abbreviations defined in a library's text). Import from here.
"""

from evtui.query.abbreviations import extract_abbreviations
from evtui.query.aspects import claim_aspects
from evtui.query.highlight import Matcher, compile_matcher, covered_aspects, find_spans
from evtui.query.parse import MAX_QUERY_CHARS, detect_mode, parse_query, verifier_claim
from evtui.query.terms import (
    ABBREVIATIONS,
    FILLER,
    GREEK,
    PART_RE,
    RELATION_FAMILIES,
    STOPWORDS,
    TOKEN_RE,
    concept_variants,
    relation_family,
    relation_terms,
    search_terms,
    stem,
)

__all__ = [
    "ABBREVIATIONS", "FILLER", "GREEK", "MAX_QUERY_CHARS", "PART_RE", "RELATION_FAMILIES", "STOPWORDS", "TOKEN_RE",
    "Matcher", "claim_aspects", "compile_matcher", "concept_variants", "covered_aspects", "detect_mode",
    "extract_abbreviations", "find_spans", "parse_query", "relation_family", "relation_terms", "search_terms",
    "stem", "verifier_claim",
]
