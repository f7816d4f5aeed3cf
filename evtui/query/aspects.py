"""A claim or hypothesis -> its aspects: concept phrases and relation words, in the order of the text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import NamedTuple

from evtui.models import Aspect
from evtui.query.abbreviations import _match_long
from evtui.query.terms import (
    FILLER,
    PART_RE,
    STOPWORDS,
    concept_variants,
    is_capital_stopword,
    is_relation_verb,
    relation_family,
    relation_terms,
)

# A word (hyphens, apostrophes and slashes inside it), or punctuation that ends a concept: "aspirin | | cancer" and
# "+aspirin -cancer" name two concepts, not the phrase "aspirin cancer". A sign glued to a word's end stays part of
# the run (CD4+ T cells).
# A chemical's locants stay on its name ("1,25-dihydroxyvitamin D3" was the concepts "1" and "25-dihydroxy…").
# A bracket inside a chemical's name stays too ("25(OH)D", "1,25(OH)2D3").
_TOKEN = re.compile(r"\d+(?:,\d+)*\([A-Za-z]{1,4}\)\d*[A-Za-z]*\d*(?![\w(])|(?:\d+(?:,\d+)+-)?[^\W_]+(?:[-'’/][^\W_]+)*|[,;:.!?()\[\]{}\"|&<>=~^*`$#@\\]|(?<!\S)[-+–—/]")


# Words that set two arms side by side ("metformin versus placebo", "A vs. B", "A compared with B"): they end a
# concept, never join it ("Metformin vs" was one concept, "vs" another).
_COMPARATORS = frozenset({"versus", "vs", "compared", "comparing"})
# A PICO frame's labels ("P: adults … I: metformin C: placebo O: HbA1c") end a concept ("metformin C" was one).
_PICO_LABEL = re.compile(r"(?:(?<=^)|(?<=[\s;,.(]))(?:[PICO]|population|patients?|participants|interventions?|"
                         r"comparators?|comparisons?|controls?|outcomes?)\s*:", re.I)
# A pasted structured abstract's headings ("BACKGROUND Healthy life expectancy …" was one concept): in capitals only.
_ABSTRACT_LABEL = re.compile(r"\b(?:BACKGROUND|CONTEXT|INTRODUCTION|OBJECTIVES?|AIMS?|PURPOSE|DESIGN|SETTINGS?|METHODS?|"
                             r"FINDINGS|RESULTS|INTERPRETATION|CONCLUSIONS?|FUNDING|IMPORTANCE|MAIN OUTCOME MEASURES?)"
                             r"\b(?![-/])\s*:?")
# A citation beside a claim ("(Smith et al., 2019)", "[12]", "[3, 5-7]"): the paper's name, no concept of the claim.
_CITATION = re.compile(r"[(\[]\s*(?:[A-Z][\w'’-]+(?:\s+(?:et\s+al\.?|and|&)(?:\s+[A-Z][\w'’-]+)?)?,?\s*"
                       r"(?:19|20)\d\d[a-z]?\s*[;,]?\s*)+[)\]]|\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]")
# A term in quotes, of two to four words: "…" or ‘…’, or '…' not inside a word (an apostrophe).
_QUOTED = re.compile(r"[\"“]([^\W\d_][^\"“”]{1,60}?)[\"”]|(?<!\w)['‘]([^\W\d_][^'‘’]{1,60}?)['’](?!\w)")
# A quantity is no concept ("by 20%", "a 10 mg dose", "2-fold", "half"): a number alone matched any "20" in the
# library. The words that only qualified it ("approximately 5%", "at least 10 mg", "up to 2-fold") go with it: left
# behind, "approximately" joined the concept before it ("Caenorhabditis elegans exhibit approximately").
_QUALIFIER = (r"(?:(?:approximately|approx\.?|about|around|nearly|almost|roughly|circa|ca\.|only|just|over|under|"
              r"above|below|some|at\s+(?:least|most)|up\s+to|(?:no\s+)?(?:more|less|fewer)\s+than|"
              r"as\s+(?:much|many|few|little)\s+as|an?\s+estimated)\s+)*")
_AMOUNT = (r"(?:\d+[-\s](?:day|week|month|year)s?[-\s]old(?![\w-])"  # an age: "7-day-old", "1-day old"
           r"|[<>≤≥~±]?\d+(?:[.,·]\d+)?(?:\s*[-–]\s*\d+(?:[.,·]\d+)?)?"  # a range too: "76-85%", "5-6 years"
           r"\s*(?:%|percent\b|(?:[mμµnp]?g|kg|m?l|[mμµnp]?mol|[mμµnc]m|mmhg|kcal|ppm|mg/dl|mg/kg|mmol/l|iu|"
           r"units?|days?|weeks?|months?|years?|hours?|h|minutes?|min|seconds?)(?:/\w+)?(?![\w-]))"
           r"|\d+(?:[.,·]\d+)?-?fold(?![\w-])"
           r"|\d{1,3}(?:,\d{3})+(?![\w,])"  # "1,000 children" was "1" and "000 children"
           r"|(?:two|three|four|five|six|seven|eight|nine|ten|several|many)-?fold(?![\w-])"
           # a count in words ("five of the singers", "up to three hours"); "type two" is kept as a kind
           r"|(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
           r"(?:-(?:one|two|three|four|five|six|seven|eight|nine))?|two|three|four|five|six|seven|eight|nine|ten|"
           r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|hundreds?|"
           r"thousands?|millions?|dozens?)(?:\s+(?:days?|weeks?|months?|years?|hours?|minutes?))?(?![\w-])"
           # a fraction: "half", "a third" ("the third ventricle" is no amount)
           r"|(?:(?:one|a)[-\s])?half(?![\w-])|(?:one|a)[-\s](?:third|quarter)(?![\w-])"
           r"|(?:two|three)-(?:thirds|quarters)(?![\w-]))")
# A bare count is an amount only with a qualifier ("about 30 patients": the qualifier group repeated one or more
# times, not zero); alone it may be a name's part ("p 53").
# A statistic reported beside a claim ("(HR 0.8)", "(n = 120)", "p < 0.05", "95% CI 0.70-0.91") and a bare decimal
# ("0.8"): figures, no concept ("HR 0", "8", "n" and "120" were four). The statistics' names are matched in their
# own case ("OR 1.5", not "or 5 mg"); a one-letter one only with its sign ("p 53" is a protein).
_NUM = r"[-−–]?\d+(?:[.·]\d+)?"
_STAT = (r"(?-i:(?:a|adjusted\s+)?(?:HR|OR|RR|IRR|SMD|WMD|AUC|ICC|VE)\s*[=:<>≤≥]?\s*"
         r"|(?:p|P|n|N|r|t|F|z|d|MD|RD|CI|I2|I²|R2|R²|χ2|χ²|β|ρ)\s*[=<>≤≥]\s*)"
         + _NUM + r"(?:\s*(?:[-–]|to)\s*" + _NUM + r")?(?:\s*%)?(?![\w/-]|[.,]\d)"
         r"|\d+(?:\.\d+)?\s*%\s*(?-i:CI)\s*[:=,]?\s*" + _NUM + r"\s*(?:[-–,]|to)\s*" + _NUM + r"(?![\w/-]|[.,]\d)")
# tried after an amount, so a decimal with its unit or "times" goes whole ("1.5 percent", "3.57 times")
_DECIMAL = r"\d+[.·]\d+(?:\s+times)?(?![\w/-]|[.,]\d)"
_QUANTITY = re.compile(r"(?<![\w.,/-])(?:" + _STAT + "|" + _QUALIFIER + _AMOUNT + "|" + _QUALIFIER.removesuffix("*")
                       + r"+\d+(?:[.,·]\d+)?(?![\w.,/-])|" + _DECIMAL + ")", re.I)
# A bracketed aside that holds only figures ("(HR 0.8, 95% CI 0.70-0.91)", "(p < 0.05)", "[n = 120]").
_FIGURES_ASIDE = re.compile(r"\s*[(\[]([^()\[\]]{1,200})[)\]]")


def without_asides(text: str) -> str:
    """The claim without what sits beside it: citations and bracketed statistics. The verifier never saw them in
    training ("Statins reduce mortality (HR 0.8) [12]" moved its reading and, through the paper channel's words
    "hr", "12", which papers were read); an abbreviation's brackets ("systemic lupus erythematosus (SLE)") stay."""
    def figures_only(m: re.Match[str]) -> str:
        inner = _QUANTITY.sub(" ", m.group(1))
        return "" if not re.sub(r"[\s,;:=<>≤≥±%–-]+", "", inner) and m.group(1).strip() else m.group(0)

    plain = _FIGURES_ASIDE.sub(figures_only, _CITATION.sub(" ", text))
    if plain == text:
        return text
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", plain)).strip()


# Verbs and adverbs that say how a claim's concepts relate, or how often, without naming a relation to search for
# ("C. elegans exhibit …", "IL-6 signaling plays a role", "remission occurs", "is rarely observed", "100 mg daily"):
# they end a concept, as a stopword does ("Caenorhabditis elegans exhibit" was one concept no sentence contains).
# Surface forms, not stems: "development" stems to "develop".
_HOW_WORDS = frozenset("""
exhibit exhibits exhibited exhibiting display displays displayed displaying occur occurs occurred occurring
play plays played playing act acts acted experience experiences experienced seen observed known
give gives gave giving given contribute contributes contributed contributing remain remains remained become becomes
became appear appears appeared tend tends tended undergo undergoes underwent undergone undergoing receive receives
received receiving harbor harbors harboured harbour harbours harbored possess possesses possessed contain contains
contained exert exerts exerted confer confers conferred represent represents constitute constitutes serve serves
served lacking involved die dies died supports
rarely seldom infrequently commonly usually directly indirectly strongly weakly markedly substantially dramatically
slightly modestly considerably greatly largely mainly primarily predominantly partially partly fully completely
entirely daily weekly monthly yearly annually twice initially later subsequently eventually previously every
don't doesn't didn't isn't aren't wasn't weren't won't can't cannot couldn't
make makes get gets got come comes came go goes went exist exists say says said seem seems take takes took keep keeps
begin begins began continue continues need needs want wants
""".split())


class WordClasses(NamedTuple):
    finite: frozenset[str]  # only ever a finite verb ("identifies", "transmit", "came")
    adverbs: frozenset[str]  # only ever an adverb ("currently", "never")
    either: frozenset[str]  # a finite verb or a noun ("touch", "control", "cases"): a verb where the next word says so


@cache
def word_classes() -> WordClasses:
    """The word classes of evtui/resources/word_classes.txt (from lemminflect's lexicon by
    scripts/build_word_classes.py). The parser has no tagger: a verb or an adverb inside a run of content words is no
    part of a concept ("identifies coronavirus proteins", "novel coronavirus fails", "People naturally" were concepts
    no sentence contains)."""
    lists: dict[str, set[str]] = {}
    head = ""
    for line in resources.files("evtui").joinpath("resources/word_classes.txt").read_text().splitlines():
        if line.startswith("["):
            head = line.strip("[]")
        elif line and not line.startswith("#"):
            lists.setdefault(head, set()).add(line)
    return WordClasses(*(frozenset(lists.get(k, ())) for k in ("finite verbs", "adverbs", "finite verbs or nouns")))


# What may follow a verb but never a noun inside a noun phrase: "People touch their eyes", "lncRNAs control the
# expression of …", "Charcoal shows no benefit". Not "a" ("300 cases a day") nor "this" ("cases this year").
_AFTER_VERB = frozenset("the their its his her our your no both each every".split())


# An adverb's ending, for words the lexicon lacks ("synergistically", "ventrally", "dose-dependently"); no English
# noun or adjective of seven letters or more ends so.
_ADVERB_END = re.compile(r"(?:ically|ally|ously|ively|ently|antly|edly|ingly)$")


def _trim_adverbs(chunk: list[str]) -> list[str]:
    """A run of content words without the "-ly" adverbs it ends on ("COVID-19 vaccine currently", "probably"): an
    adverb before its word stays ("critically ill patients", "highly active antiretroviral therapy")."""
    adverbs = word_classes().adverbs
    while chunk and not chunk[-1].isupper() and (
            (low := chunk[-1].lower()) in adverbs or (len(low) >= 7 and _ADVERB_END.search(low))):
        chunk = chunk[:-1]
    return chunk


def claim_aspects(text: str, abbreviations: Mapping[str, str] | None, notes: list[str]) -> list[Aspect]:
    """Concept phrases and relation words (one per relation family) in text order; a verbless claim is
    split into noun units. What was dropped or split is added to `notes`."""
    body = re.sub(r"^\s*hypothesis\s*:\s*", "", text, flags=re.I)
    body = _PICO_LABEL.sub(" ; ", body)
    body = _ABSTRACT_LABEL.sub(" ; ", body)
    if cited := [m.group(0) for m in _CITATION.finditer(body)]:
        body = _CITATION.sub(" ; ", body)
        notes.append("citations are not searched for: " + ", ".join(cited))
    body, defined, forms = _defined_abbreviations(body)
    if defined:  # the query's own "long form (SF)" first: one concept matched by either name
        abbreviations = {**(abbreviations or {}), **defined}
    quantities = [m.group(0).strip() for m in _QUANTITY.finditer(body) if not _kind_number(body, m)]
    body = _QUANTITY.sub(lambda m: m.group(0) if _kind_number(body, m) else " , ", body)
    # A defined long form is one concept even with a relation word inside ("fibroblast activation protein (FAP)")
    held = [(m.start(), m.end()) for f in forms for m in re.finditer(re.escape(f), body)]
    # A short quoted term is one concept too ("the 'hygiene hypothesis'" lost "hypothesis" as filler)
    # (words only, so a full stop inside the quote stays out; one with a relation word is read as any text is)
    held += [(m.start(g) + w[0].start(), m.start(g) + w[-1].end()) for m in _QUOTED.finditer(body)
             if 2 <= len(w := list(_TOKEN.finditer(m.group(g := m.lastindex or 1)))) <= 4 and not any(
                 t.lower() in STOPWORDS or t.lower() in _HOW_WORDS or is_relation_verb(t)
                 or not PART_RE.match(t) for t in (x.group(0) for x in w))]
    whole: set[int] = set()  # chunks that are a defined long form: never split into pairs
    chunks: list[list[str]] = [[]]
    relations: list[tuple[float, str]] = []
    dropped: list[str] = []
    # A stopword in capitals is an abbreviation (NO, ALL) unless the whole query is in capitals.
    capitals = any(c.islower() for c in body)
    tokens = list(_TOKEN.finditer(body))
    finite, adverbs, either = word_classes()
    # A headline ("Aspirin Reduces Colorectal Cancer") capitalises its verbs too: no word of it is read as a name.
    headline = all(w[0].isupper() for w in re.findall(r"[^\W\d_]{4,}", body) if w.lower() not in STOPWORDS)
    for n, m in enumerate(tokens):
        tok = m.group(0)
        low = tok.lower()
        if span := next(((a, b) for a, b in held if a <= m.start() < b), None):
            if m.start() == span[0] and chunks[-1]:
                chunks.append([])
            chunks[-1].append(tok)
            whole.add(len(chunks) - 1)
            if m.end() >= span[1]:
                chunks.append([])
            continue
        if not PART_RE.match(tok) or (low in STOPWORDS and not (capitals and is_capital_stopword(tok))):
            chunks.append([])
            continue
        if low in _COMPARATORS:
            chunks.append([])
            continue
        if low in FILLER:
            dropped.append(tok)
            chunks.append([])
            continue
        if low.replace("’", "'") in _HOW_WORDS and not tok.isupper():
            chunks.append([])
            continue
        if is_relation_verb(low) and not tok.isupper() and (headline or not _in_name(tokens, n)):
            relations.append((len(chunks) - 0.5, tok))  # after the chunk it closes, before the next
            chunks.append([])
            continue
        if (low in finite and not tok.isupper() and (headline or not _in_name(tokens, n))) or (
                low in either and len(low) > 2 and tok.islower() and chunks[-1] and n + 1 < len(tokens)
                and tokens[n + 1].group(0).lower() in _AFTER_VERB):
            # a verb no relation list knows ("disrupts", "identifies"): the claim's relation all the same
            relations.append((len(chunks) - 0.5, tok))
            chunks.append([])
            continue
        if low in adverbs and not low.endswith("ly") and not tok.isupper() and (headline or not _in_name(tokens, n)):
            chunks.append([])  # an adverb that is no "-ly" modifier ("never", "across") ends a concept
            continue
        chunks[-1].append(tok)
    chunks = [ch if i in whole else _trim_adverbs(ch) for i, ch in enumerate(chunks)]
    # order concepts and relations by position in the text
    items: list[tuple[float, str, str]] = []
    for i, ch in enumerate(chunks):
        for part in ([ch] if i in whole else _split_run(ch)):
            if part:
                items.append((i, "concept", " ".join(part)))
    seen_fam: set[str] = set()
    for at, tok in relations:
        fam = relation_family(tok) or tok.lower()
        if fam not in seen_fam:
            seen_fam.add(fam)
            items.append((at, "relation", tok))
    items.sort(key=lambda x: x[0])
    if dropped:
        notes.append("dropped filler words: " + ", ".join(dropped))
    if quantities:
        notes.append("quantities are not searched for (the result's own figures vary): " + ", ".join(quantities))
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
    return aspects


def _in_name(tokens: list[re.Match[str]], n: int) -> bool:
    """Token n is a Title-case word inside a name: after a Title-case word that does not open the query, or before
    one ("Surveillance, Epidemiology, and End Results", "Cancer Prevention Study"), where "Results" or "Prevention"
    is no relation."""
    if not _TITLE.fullmatch(tokens[n].group(0)):
        return False
    before = n > 1 and bool(_TITLE.fullmatch(tokens[n - 1].group(0)))
    return before or (n + 1 < len(tokens) and bool(_TITLE.fullmatch(tokens[n + 1].group(0))))


# Nouns that head a unit with the word before them ("ACE inhibitor", "vitamin D deficiency"), and adjective
# endings that bind a word to the next ("colorectal cancer", "cardiovascular mortality").
_HEAD_NOUNS = frozenset("""inhibitor inhibitors blocker blockers antagonist antagonists agonist agonists receptor
receptors deficiency deficiencies therapy therapies level levels supplementation supplement supplements
exposure infection infections use intake resistance expression vaccine vaccines vaccination""".split())
_ADJ_END = re.compile(r"(al|ic|ive|ous|ary|ar|ine|oid|ial|ed)$", re.I)
# A classifier with its number names a kind of the next word: "type 2 diabetes", "stage 3 cancer", "grade II glioma".
_CLASSIFIERS = frozenset("type stage grade class phase".split())


# A Title-case word ("National", "Kingdom"): two in a row are one name ("National Cancer Institute", "Skagit County").
_TITLE = re.compile(r"[A-Z][a-z]+")
_NEVER = 100.0  # the cost of cutting inside a name: only where no other cut exists
# Nouns that mostly head a compound with the noun before them ("stem cells", "growth factor", "fatty acids").
_COMPOUND_HEADS = frozenset("cell cells factor factors acid acids virus system response stress marker markers".split())
# Nouns with an adjective's ending ("trial last June" is no "trial last"): they bind to the next word no more than
# any noun does.
_NOUNS_LIKE_ADJ = frozenset("""trial trials signal signals animal animals interval intervals hospital hospitals
material materials journal journals potential individual individuals arrival removal approval survival""".split())


def _bond(a: str, b: str) -> float:
    """How costly it is to cut a run of content words between a and b. A name, a classifier with its number (Phase
    1 trial) and a one-letter part (vitamin D, CD8 T cells) are never cut; an adjective before its noun (endoplasmic
    reticulum), an adverb before its word (rectally transmitted) and a noun before its head (ACE inhibitor, stem
    cells) seldom; after a plural (or a verb the word lists miss, "encodes") a phrase most likely ends."""
    if (_TITLE.fullmatch(a) and _TITLE.fullmatch(b)) or len(b) == 1 or a.lower() in _CLASSIFIERS \
            or (b.isdigit() and len(b) <= 2):
        return _NEVER
    low = a.lower()
    # not a participle ("-ed"): "government subsidized | domestic tourism program" reads as well as any other cut
    adjective = len(a) > 4 and bool(_ADJ_END.search(a) or low.endswith(("able", "ible"))) and not low.endswith("ed") \
        and low not in _HEAD_NOUNS and low not in _NOUNS_LIKE_ADJ
    if len(a) == 1 or adjective or (len(a) > 4 and low.endswith("ly")) or b.lower() in _HEAD_NOUNS \
            or b.lower() in _COMPOUND_HEADS:
        return 3.0
    if len(a) > 3 and a.endswith("s") and not a.endswith(("ss", "us", "is")):
        return 0.3
    return 1.0


def _split_run(words: list[str]) -> list[list[str]]:
    """A long run of content words with no verb the word lists know (more than 4) as pairs, as before, except where
    a pair's end would cut a stronger bond (`_bond`) than a phrase of 3, 1 or 4 words would: fixed pairs cut names
    and terms ("National Cancer | Institute …", "general endoplasmic | reticulum stress marker"). A name is never
    cut: the phrase runs on to its end."""
    out: list[list[str]] = []
    while len(words) > 4:
        cut = [_bond(words[j], words[j + 1]) for j in range(len(words) - 1)]
        # the first of the weakest: a pair unless it cuts more; a lone word is a weak concept ("different")
        k = min((2, 3, 1, 4), key=lambda n: cut[n - 1] + (0.5 if n == 1 or n == len(words) - 1 else 0.0))
        while k < len(words) and cut[k - 1] >= _NEVER:
            k += 1
        out.append(words[:k])
        words = words[k:]
    return [*out, words] if words else out


def _noun_units(words: list[str]) -> list[str]:
    """Split a verbless run of words into noun units: a one-character word (vitamin D, type 2) and a head noun
    (ACE inhibitor) join the word before them; an adjective (colorectal) and a classifier with its number (type 2)
    join the word after them."""
    units: list[list[str]] = []
    for w in words:
        joins_prev = bool(units) and (len(w) == 1 or w.isdigit() or w.lower() in _HEAD_NOUNS or (
            units[-1][-1].lower() in _CLASSIFIERS and bool(re.fullmatch(r"[IVX]+[a-c]?", w))))
        prev_adj = bool(units) and len(units[-1][-1]) > 4 and bool(_ADJ_END.search(units[-1][-1])) \
            and units[-1][-1].lower() not in _HEAD_NOUNS
        prev_kind = bool(units) and len(units[-1]) >= 2 and units[-1][-2].lower() in _CLASSIFIERS \
            and (units[-1][-1].isdigit() or bool(re.fullmatch(r"[IVX]+[a-c]?|[A-Z]", units[-1][-1])))
        if joins_prev or prev_adj or prev_kind:
            units[-1].append(w)
        else:
            units.append([w])
    return [" ".join(u) for u in units]


def _kind_number(text: str, m: re.Match[str]) -> bool:
    """A number that names a kind, not an amount: "type 2 diabetes", "stage 3", "phase II", "COVID-19", "IL-6"."""
    before = text[:m.start()].rstrip().rsplit(None, 1)
    prev = before[-1].lower() if before else ""
    return prev in _CLASSIFIERS and not m.group(0).rstrip().endswith("%")


def _defined_abbreviations(text: str) -> tuple[str, dict[str, str], list[str]]:
    """"long form (SF)" written in the query: the parenthesis dropped, {SF: long form} and the long forms as
    written returned, so "non-steroidal anti-inflammatory drugs (NSAIDs)" is one concept matched by either name
    (it was two aspects, and a sentence naming one form covered only half of them)."""
    defined: dict[str, str] = {}
    forms: list[str] = []

    def fold(m: re.Match[str]) -> str:
        short = m.group(2)
        plural = short.endswith("s") and short[:-1].isupper()
        words = m.group(1).split()
        long = _match_long(short[:-1] if plural else short, words[-2 * len(short) - 2:])
        if not long:
            return m.group(0)
        forms.append(long)
        if plural and long.endswith("s"):
            long = long[:-1]
        defined[short[:-1] if plural else short] = long
        return m.group(1)

    return re.sub(r"([^()]+?)\s*\(\s*([A-Za-z][A-Za-z0-9αβγ-]{1,9})\s*\)", fold, text), defined, forms
