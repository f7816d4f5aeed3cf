"""The paper channel indexes `plain_text(text)` with the built-in whitespace / simple tokenizers, which must give
exactly the tokens the sentence index's regex tokenizers give for `text` (so old paper indexes, built from the
text itself, answer the same): checked on real sentences, on every kind of character next to letters, digits and
joiners, and on random strings of the awkward ones."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import tantivy

from evtui.index import SCI_TOKENIZER, SPLIT_TOKENIZER, _analyzers
from evtui.papers import _schema, plain_analyzers, plain_text, split_text

DEMO = Path(__file__).parents[2] / "data" / "demo" / "scifact_corpus.jsonl.gz"
OLD = _analyzers()
NEW = plain_analyzers(SCI_TOKENIZER, SPLIT_TOKENIZER)
# letters, digits, joiners, spaces, punctuation, marks that are alphanumeric to Rust but no letter (U+0345, Ⓐ),
# combining accents, Greek, CJK, no-break and em spaces, an emoji, tabs, the query parser's quote and backslash
AWKWARD = list("aZ9é-'’ \t\n.,;:()[]/\"\\_+=%αβΩ中\u0345\u24b6\u0301\u00a0\u2003\U0001f600-'’0Æ\u2010\u2212")


def _same(text: str) -> None:
    plain = plain_text(text)
    for name in (SCI_TOKENIZER, SPLIT_TOKENIZER):
        assert NEW[name].analyze(plain) == OLD[name].analyze(text), (name, text, plain)


def test_real_sentences_give_the_same_tokens() -> None:
    with gzip.open(DEMO, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            row = json.loads(line)
            _same(" ".join([row.get("title", ""), *row["abstract"]]))
            if i >= 400:
                break


def test_every_character_between_letters_digits_and_joiners() -> None:
    rng = random.Random(3)
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    cases = [f"a{ch}b 9{ch}-x {ch}'s x-{ch} {ch}" for ch in map(chr, [*range(0x3000), *rng.sample(cps, 6000)])]
    for n in range(0, len(cases), 64):  # 64 cases a text (spaces keep their tokens apart): 60x fewer analyser calls
        chunk = cases[n:n + 64]
        try:
            _same(" ".join(chunk))
        except AssertionError:
            for case in chunk:  # the case that differs, by itself
                _same(case)
            raise


def test_random_awkward_strings() -> None:
    rng = random.Random(7)
    for _ in range(4000):
        _same("".join(rng.choice(AWKWARD) for _ in range(rng.randint(1, 40))))
    _same("x" * 59 + " " + "y" * 60 + "-" + "z" * 3)  # the long-token filter sees the same tokens


def test_an_index_of_plain_text_scores_as_one_of_the_text(tmp_path: Path) -> None:
    texts = ["IL-6 and TNF-α raised CRP in Crohn's disease", "aspirin-induced asthma: a review",
             "Ⓐ\u0345 marks and 'quoted' words -- dashes", "COVID-19 severity rose with interleukin 6"]
    scores = []
    for plain, analyzers in ((False, OLD), (True, NEW)):
        (tmp_path / str(plain)).mkdir()
        ix = tantivy.Index(_schema(SCI_TOKENIZER, SPLIT_TOKENIZER), path=str(tmp_path / str(plain)))
        for name, analyzer in analyzers.items():
            ix.register_tokenizer(name, analyzer)
        w = ix.writer(heap_size=15_000_000, num_threads=1)
        for i, t in enumerate(texts):
            body = plain_text(t) if plain else t
            w.add_document(tantivy.Document(paper_id=str(i), text=body, text_split=body))
        w.commit()
        ix.reload()
        out = []
        for q in ("IL-6", "il 6", "tnf-α", "Crohn's", "aspirin", "induced", "19", "dashes", "quoted"):
            qq = plain_text(q) if plain else q
            try:  # a phrase of two tokens is refused by these freq-only fields, alike (PaperIndex skips it)
                query = ix.parse_query(f'"{qq}"', ["text", "text_split"], {"text": 1.0, "text_split": 0.6})
            except ValueError as exc:
                out.append(str(exc))
                continue
            res = ix.searcher().search(query, 10)
            out.append([(round(s, 5), ix.searcher().doc(a).get_first("paper_id")) for s, a in res.hits])
        scores.append(out)
    assert scores[0] == scores[1]
    assert sum(isinstance(r, list) and len(r) > 0 for r in scores[1]) >= 5


def test_sentence_index_split_field_and_queries() -> None:
    """The sentence index keeps its regex analyser for the stored `text`, indexes `text_split` from split_text
    with the simple tokenizer, and sends every query as plain_text to both."""
    rng = random.Random(11)
    samples = ["".join(rng.choice(AWKWARD) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    samples += [f"a{chr(c)}b x-{chr(c)}y" for c in range(0x3000)]
    for t in samples:
        assert NEW[SPLIT_TOKENIZER].analyze(split_text(t)) == OLD[SPLIT_TOKENIZER].analyze(t), t
        for name in (SCI_TOKENIZER, SPLIT_TOKENIZER):
            assert OLD[name].analyze(plain_text(t)) == OLD[name].analyze(t), (name, t)
