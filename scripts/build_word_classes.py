"""Write evtui/resources/word_classes.txt: the English word forms that are only ever a finite verb ("identifies",
"transmit", "came") and those that are only ever an adverb ("currently", "probably", "never"), from lemminflect's
lexicon (MIT; built from NLM's SPECIALIST Lexicon and the AGID word lists). The claim parser reads it to end a
concept at such a word (evtui/query/aspects.py): the parser has no tagger, and "People naturally", "novel
coronavirus fails" and "identifies coronavirus proteins" were concepts no sentence contains.

    pip install -e ".[train]" && python scripts/build_word_classes.py

Participles (-ed, -ing and irregular past participles: "confirmed cases", "broken bones") are left out; a finite
form with a noun or other reading as well ("touch", "control", "cases") goes to a third list, read as a verb only
where the next word shows it ("People touch their eyes").
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "evtui" / "resources" / "word_classes.txt"


def word_classes() -> tuple[list[str], list[str], list[str]]:
    import lemminflect
    from lemminflect.core.Lemmatizer import Lemmatizer

    finite, adverbs, either = [], [], []
    for word, readings in Lemmatizer()._getLemmaDict().items():
        if not word.isalpha() or not word.islower():
            continue
        kinds = set(readings)
        if kinds == {"ADV"}:
            adverbs.append(word)
        elif "VERB" in kinds and not word.endswith(("ed", "ing")) \
                and not any(word in lemminflect.getInflection(lemma, "VBN") for lemma in readings["VERB"]):
            (finite if kinds <= {"VERB", "AUX"} else either).append(word)
    return sorted(finite), sorted(adverbs), sorted(either)


def main() -> None:
    import lemminflect

    finite, adverbs, either = word_classes()
    OUT.write_text(f"# scripts/build_word_classes.py, lemminflect {lemminflect.__version__} (MIT; NLM SPECIALIST Lexicon, "
                   "AGID)\n[finite verbs]\n" + "\n".join(finite) + "\n[adverbs]\n" + "\n".join(adverbs)
                   + "\n[finite verbs or nouns]\n" + "\n".join(either) + "\n")
    print(f"{OUT}: {len(finite)} finite verb forms, {len(adverbs)} adverbs, {len(either)} verb-or-noun forms")


if __name__ == "__main__":
    main()
