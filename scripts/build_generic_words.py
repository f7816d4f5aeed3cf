"""Write evtui/resources/generic_words.txt: the words too common in scientific abstracts to name a concept alone.

The honest result filter (evtui/honest.py) shows a row that holds half of a concept's words, but only when one of
them is specific: "crows" for "urban crows" counts, "protein" for "caspase-11 protein" does not. "Common" is
measured, not listed by hand: a word (as evtui stems it; a hyphenated name is one unit) is generic when it occurs
in at least 2% of the 5,183 SciFact corpus abstracts (title + abstract). No claim or label is read.

    python scripts/build_generic_words.py [--shared ../shared] [--min-share 0.02]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from evtui.honest import unit
from evtui.query.terms import STOPWORDS, TOKEN_RE

OUT = Path(__file__).resolve().parents[1] / "evtui" / "resources" / "generic_words.txt"


def document_frequencies(corpus: Path) -> tuple[Counter[str], int]:
    df: Counter[str] = Counter()
    n = 0
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            doc = json.loads(line)
            n += 1
            text = " ".join([doc.get("title") or "", *(doc.get("abstract") or [])])
            df.update({unit(t) for t in TOKEN_RE.findall(text) if t.lower() not in STOPWORDS and not t.isdigit()})
    return df, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    ap.add_argument("--min-share", type=float, default=0.02, help="share of abstracts a generic word occurs in")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    corpus = args.shared / "datasets" / "scifact" / "corpus.jsonl"
    df, n = document_frequencies(corpus)
    words = sorted(w for w, c in df.items() if c >= args.min_share * n)
    args.out.write_text(
        f"# evtui generic words: stems in >= {args.min_share:.0%} of {n:,} SciFact corpus abstracts "
        f"({len(words)} words; scripts/build_generic_words.py)\n" + "\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} generic words from {n:,} abstracts -> {args.out}")


if __name__ == "__main__":
    main()
