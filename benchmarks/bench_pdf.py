"""Score the PDF loader against the JATS loader on the same papers (PDFs made by benchmarks/make_pdfs.py).

    python benchmarks/make_pdfs.py --jats ../shared/datasets/pmc-jats --out /tmp/pmc-pdf
    python benchmarks/bench_pdf.py --jats ../shared/datasets/pmc-jats --pdf /tmp/pmc-pdf [--json]

Per paper and overall:
  * sentence precision / recall / F1: body sentences (no title, headings or captions; the JATS loader has no
    captions) matched as multisets of normalised text (NFKC, lower case, [n] citation markers out, letters and
    digits only);
  * section-kind accuracy over the matched sentences (the PDF's kind equals the JATS kind);
  * title found (normalised equal), DOI found (equal, case-insensitive);
  * reference-list sentences indexed: PDF sentences whose normalised text (>= 25 characters) lies inside one
    entry of the article's <ref-list>;
  * speed: pages per CPU-second of the parse on one core (in-process, time.process_time), and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_pdfs import front  # noqa: E402

from evtui.ingest import iter_papers  # noqa: E402
from evtui.ingest.pdf import CAPTION_KIND, parse_pdf  # noqa: E402
from evtui.models import ParsedPaper  # noqa: E402

_CITE = re.compile(r"\[\s*\d{1,3}(?:\s*[,;–—-]\s*\d{1,3})*\s*\]")


def norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).lower()
    t = _CITE.sub("", t)
    return re.sub(r"[^0-9a-z]+", "", t)


def body(p: ParsedPaper, *, pdf: bool) -> list[tuple[str, str]]:
    out = []
    for s in p.sentences:
        if s.is_heading or s.section_kind == "title" or (pdf and s.section_kind == CAPTION_KIND):
            continue
        n = norm(s.text)
        if n:
            out.append((n, s.section_kind))
    return out


def score(jats: Path, pdf: Path) -> dict[str, object]:
    ref = next(x for x in iter_papers(jats, "jats") if isinstance(x, ParsedPaper))
    t0 = time.process_time()
    got = parse_pdf(pdf)
    cpu = time.process_time() - t0
    want = body(ref, pdf=False)
    have = body(got, pdf=True)
    want_count = Counter(n for n, _k in want)
    have_count = Counter(n for n, _k in have)
    matched = sum((want_count & have_count).values())
    kinds_want: dict[str, list[str]] = {}
    for n, k in want:
        kinds_want.setdefault(n, []).append(k)
    kind_ok = kind_n = 0
    for n, k in have:
        if kinds_want.get(n):
            kind_n += 1
            kind_ok += k == kinds_want[n].pop(0)
    refs = [norm(r) for r in front(jats)["refs"].split("\n") if r.strip()]
    leaked = [s.text for s in got.sentences if len(norm(s.text)) >= 25 and any(norm(s.text) in r for r in refs)]
    return {
        "paper": jats.name.split(".")[0], "pages": got.info.get("pages"), "cpu_s": round(cpu, 3),
        "jats_sentences": len(want), "pdf_sentences": len(have), "matched": matched,
        "kind_ok": kind_ok, "kind_n": kind_n,
        "title_found": norm(got.title) == norm(ref.title),
        "doi_found": (got.doi or "").lower() == (ref.doi or "").lower() and bool(ref.doi),
        "reference_sentences_indexed": len(leaked), "leaked": leaked[:3],
        "captions": sum(1 for s in got.sentences if s.section_kind == CAPTION_KIND),
        "dropped": got.info.get("dropped"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--jats", required=True, type=Path)
    ap.add_argument("--pdf", required=True, type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for f in sorted(args.jats.iterdir()):
        if f.suffix not in (".xml", ".nxml"):
            continue
        pdf = args.pdf / (f.name.split(".")[0] + ".pdf")
        if pdf.exists():
            rows.append(score(f, pdf))
    want = sum(r["jats_sentences"] for r in rows)
    have = sum(r["pdf_sentences"] for r in rows)
    matched = sum(r["matched"] for r in rows)
    p = matched / have if have else 0.0
    r = matched / want if want else 0.0
    pages = sum(r_["pages"] or 0 for r_ in rows)
    cpu = sum(r_["cpu_s"] for r_ in rows)
    summary = {
        "papers": len(rows), "pages": pages,
        "sentence_precision": round(p, 4), "sentence_recall": round(r, 4),
        "sentence_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        "section_kind_accuracy": round(sum(x["kind_ok"] for x in rows) / max(1, sum(x["kind_n"] for x in rows)), 4),
        "title_found": sum(x["title_found"] for x in rows), "doi_found": sum(x["doi_found"] for x in rows),
        "reference_sentences_indexed": sum(x["reference_sentences_indexed"] for x in rows),
        "captions": sum(x["captions"] for x in rows),
        "pages_per_cpu_second": round(pages / cpu, 1) if cpu else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "papers": rows}, indent=2, ensure_ascii=False))
    else:
        for x in rows:
            pr = x["matched"] / max(1, x["pdf_sentences"])
            rc = x["matched"] / max(1, x["jats_sentences"])
            print(f"{x['paper']:<12} pages {x['pages']:>3}  P {pr:.3f}  R {rc:.3f}  kind "
                  f"{x['kind_ok'] / max(1, x['kind_n']):.3f}  title {x['title_found']!s:<5} doi {x['doi_found']!s:<5} "
                  f"refs-indexed {x['reference_sentences_indexed']}")
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
