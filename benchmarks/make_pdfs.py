"""Typeset JATS articles as journal-style PDFs (two columns, running headers, page numbers, numbered headings, a
numbered reference list) for the PDF-ingest benchmark and the committed test fixtures.

    python benchmarks/make_pdfs.py --jats ../shared/datasets/pmc-jats --out /tmp/pmc-pdf
    python benchmarks/make_pdfs.py --jats ../shared/datasets/pmc-jats --out tests/fixtures/pdf \
        --only PMC2768302,PMC6398430 --unlabelled      # the committed test fixtures

Route (Debian packages): pandoc (JATS reader) + the Lua filter benchmarks/pdf_typeset.lua -> LaTeX body; this script
adds the front matter (title, authors, journal, year, DOI on the first page and in the PDF info), the reference list
from <ref-list>, a fancyhdr running header (journal | short title) and a page-number footer; pdflatex (T1 Latin
Modern, so "fi"/"fl" are real ligature glyphs, and TeX hyphenates line ends) builds the PDF.
    apt-get install pandoc texlive-latex-recommended texlive-fonts-recommended lmodern
Tests never run this: they read the PDFs it wrote under tests/fixtures/pdf/.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

from lxml import etree

HERE = Path(__file__).resolve().parent
FILTER = HERE / "pdf_typeset.lua"

# Characters pdflatex cannot set from T1 text fonts: math-mode equivalents (with glyphtounicode they extract back).
_MATH = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon", "κ": r"\kappa",
    "λ": r"\lambda", "μ": r"\mu", "π": r"\pi", "σ": r"\sigma", "τ": r"\tau", "χ": r"\chi", "ω": r"\omega",
    "Δ": r"\Delta", "Σ": r"\Sigma", "±": r"\pm", "×": r"\times", "≤": r"\leq", "≥": r"\geq", "∼": r"\sim",
    "→": r"\rightarrow", "←": r"\leftarrow", "≈": r"\approx", "∞": r"\infty", "·": r"\cdot", "−": "-",
    "°": r"^{\circ}", "′": r"'", "″": r"''", "∗": "*",
}

PREAMBLE = r"""\documentclass[twocolumn,10pt]{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage{lmodern}
\usepackage{textcomp}
\usepackage{amsmath,amssymb}
\usepackage[a4paper,margin=18mm,top=22mm,bottom=20mm]{geometry}
\usepackage{graphicx}
\usepackage{booktabs}
\usepackage{caption}
\providecommand{\uline}[1]{#1}
\usepackage{fancyhdr}
\usepackage[hidelinks]{hyperref}
\input{glyphtounicode}\pdfgentounicode=1
\providecommand{\tightlist}{\setlength{\itemsep}{0pt}\setlength{\parskip}{0pt}}
\pagestyle{fancy}\fancyhf{}
\fancyhead[L]{\footnotesize\itshape %(journal)s}
\fancyhead[R]{\footnotesize\itshape %(short)s}
\fancyfoot[C]{\footnotesize\thepage}
\fancypagestyle{plain}{\fancyhf{}\fancyfoot[C]{\footnotesize\thepage}\renewcommand{\headrulewidth}{0pt}}
\hypersetup{pdftitle={%(title)s},pdfauthor={%(authors)s},pdfsubject={doi:%(doi)s}}
\setlength{\emergencystretch}{3em}
\begin{document}
\twocolumn[{\begin{center}
{\footnotesize %(journal)s, %(year)s \hfill doi: %(doi)s}\par\vspace{1.2em}
{\LARGE\bfseries %(title)s\par}\vspace{1em}
{\normalsize %(authors)s\par}\vspace{1em}
\end{center}
\noindent\textbf{Abstract}\par\noindent %(abstract)s\par\vspace{1.5em}}]
\thispagestyle{plain}
"""


def tex_escape(s: str) -> str:
    s = s.replace("\\", r"\textbackslash{}")
    s = re.sub(r"([&%$#_{}])", r"\\\1", s)
    return s.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")


def fix_unicode(tex: str) -> str:
    """Math equivalents for Greek and symbols; accents composed; anything else pdflatex lacks becomes '?'."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFC", tex):
        if ch in _MATH:
            rep = _MATH[ch]
            out.append(rep if not rep.startswith("\\") and "^" not in rep else f"\\ensuremath{{{rep}}}")
        elif ord(ch) < 0x250 or ch in "–—‘’“”…•€":
            out.append(ch)
        elif unicodedata.category(ch).startswith("Z"):
            out.append(" ")
        else:
            out.append("?")
    return "".join(out)


def _text(el: etree._Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def front(path: Path) -> dict[str, str]:
    root = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)).getroot()
    meta = next(root.iter("{*}article-meta", "article-meta"))
    title = _text(next(meta.iter("{*}article-title", "article-title"), None))
    authors = []
    for c in meta.iter("{*}contrib", "contrib"):
        if c.get("contrib-type", "author") != "author":
            continue
        given = _text(next(c.iter("{*}given-names", "given-names"), None))
        sur = _text(next(c.iter("{*}surname", "surname"), None))
        if sur:
            authors.append(f"{given} {sur}".strip())
    doi = next((_text(a) for a in meta.iter("{*}article-id", "article-id") if a.get("pub-id-type") == "doi"), "")
    year = next((_text(y) for y in meta.iter("{*}year", "year")), "")
    journal = _text(next(root.iter("{*}journal-title", "journal-title"), None)) or "Journal"
    abstract = next((a for a in meta.iter("{*}abstract", "abstract") if a.get("abstract-type") is None), None)
    abs_text = " ".join(_text(p) for p in abstract.iter("{*}p", "p")) if abstract is not None else ""
    refs = []
    for ref in root.iter("{*}ref", "ref"):
        cit = next((c for c in ref if etree.QName(c).localname in ("mixed-citation", "element-citation",
                                                                      "citation", "nlm-citation")), None)
        txt = _text(cit)
        if txt:
            refs.append(txt)
    return {"title": title, "authors": ", ".join(authors), "doi": doi, "year": year, "journal": journal,
            "abstract": abs_text, "refs": "\n".join(refs)}


def body_tex(path: Path) -> str:
    """The article body (no front matter, no abstract) as LaTeX through pandoc's JATS reader and our filter."""
    root = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)).getroot()
    # pandoc would print the front matter and abstract itself: hand it the <body> and floats only
    for tag in ("front", "back"):
        for el in list(root.iter("{*}" + tag, tag)):
            el.getparent().remove(el)
    # figures and tables become floats we typeset ourselves (pandoc's JATS reader prints some of them as run-on
    # body text): a placeholder paragraph in their place, swapped for the LaTeX float after pandoc
    floats: dict[str, str] = {}
    for el in list(root.iter("{*}fig", "fig", "{*}table-wrap", "table-wrap")):
        if el.getparent() is None:
            continue
        marker = f"EVTUIFLOAT{len(floats)}X"
        floats[marker] = _float_tex(el)
        p = etree.Element("p")
        p.text = marker
        el.getparent().replace(el, p)
    with tempfile.NamedTemporaryFile("wb", suffix=".xml", delete=False) as fh:
        fh.write(etree.tostring(root))
        tmp = fh.name
    try:
        tex = subprocess.run(["pandoc", "-f", "jats", "-t", "latex", "--lua-filter", str(FILTER), tmp],
                             check=True, capture_output=True, text=True, timeout=120).stdout
    finally:
        Path(tmp).unlink()
    for marker, float_tex in floats.items():
        tex = tex.replace(marker, "\n" + float_tex + "\n")
    return tex


def _float_tex(el: etree._Element) -> str:
    """A figure as a captioned box, a table as a captioned float of its first rows (scriptsize, as journals)."""
    label = _text(next(el.iter("{*}label", "label"), None)).replace("\xa0", " ")
    caption = _text(next(el.iter("{*}caption", "caption"), None))
    cap = tex_escape(f"{label}: {caption}" if label else caption)
    if etree.QName(el).localname == "fig":
        return ("\\begin{figure}[tp]\\centering\\fbox{\\parbox[c][6em][c]{0.9\\linewidth}{\\centering }}"
                f"\n\\caption*{{{cap}}}\\end{{figure}}")
    rows = []
    for tr in list(el.iter("{*}tr", "tr"))[:20]:
        cells = [tex_escape(_text(c)) for c in tr if etree.QName(c).localname in ("td", "th")][:8]
        if cells:
            rows.append(cells)
    ncol = max((len(r) for r in rows), default=1)
    spec = f"p{{{0.95 / ncol:.3f}\\textwidth}}" * ncol
    body = "\n".join(" & ".join(r + [""] * (ncol - len(r))) + " \\\\" for r in rows)
    return (f"\\begin{{table*}}[tp]\\centering\\caption*{{{cap}}}\\scriptsize\n\\begin{{tabular}}{{{spec}}}\\hline\n"
            f"{body}\n\\hline\\end{{tabular}}\\end{{table*}}")


def build(jats: Path, out_dir: Path) -> Path:
    f = front(jats)
    short = f["title"] if len(f["title"]) < 60 else f["title"][:57].rsplit(" ", 1)[0] + " ..."
    fields = {k: tex_escape(v) for k, v in f.items()}
    fields["short"] = tex_escape(short)
    body = body_tex(jats)
    body = re.sub(r"\\hypertarget\{[^}]*\}\{%?\n?", "{", body)  # anchors pandoc adds: not needed in print
    refs = "\n".join(f"\\bibitem{{r{i}}} {tex_escape(r)}" for i, r in enumerate(f["refs"].split("\n"), 1)
                     if r.strip())
    tex = (PREAMBLE % fields) + body + ("\n\\begin{thebibliography}{99}\n" + refs + "\n\\end{thebibliography}\n"
                                        if refs else "") + "\\end{document}\n"
    tex = fix_unicode(tex)
    pid = jats.name.split(".")[0]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "paper.tex").write_text(tex, encoding="utf-8")
        for _ in range(2):  # twice: float placement settles
            subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp,
                           capture_output=True, timeout=300)
        pdf = Path(tmp) / "paper.pdf"
        if not pdf.exists():
            log = (Path(tmp) / "paper.log").read_text(errors="replace")
            raise RuntimeError(f"{jats.name}: pdflatex failed:\n{log[-2000:]}")
        out_dir.mkdir(parents=True, exist_ok=True)
        dest = out_dir / f"{pid}.pdf"
        shutil.copy(pdf, dest)
    return dest


# A one-page paper in LaTeX's plain article style: an abstract with no "Abstract" label, an affiliation in a larger
# regular font, a bare page number far from the edge (tests/fixtures/pdf/unlabelled-abstract.pdf).
UNLABELLED = r"""\documentclass[twocolumn]{article}\usepackage[T1]{fontenc}\usepackage{lmodern}
\begin{document}\title{Aspirin lowers fever in adults: a trial}\author{Ann Poe and Bo Lee\\ University of Examples, Town}
\date{}\maketitle
We tested whether aspirin lowers fever in adults. In a randomised trial of 200 adults, aspirin lowered body
temperature by 1.2 degrees within two hours. Adverse events were rare. These findings support aspirin as an
antipyretic in adults.

\section{Introduction}
Fever is common. Aspirin has been used for a century.
\section{Results}
Temperature fell by 1.2 degrees.
\end{document}
"""


def build_unlabelled(out_dir: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "paper.tex").write_text(UNLABELLED, encoding="utf-8")
        subprocess.run(["pdflatex", "-interaction=nonstopmode", "paper.tex"], cwd=tmp, capture_output=True,
                       timeout=120)
        out_dir.mkdir(parents=True, exist_ok=True)
        dest = out_dir / "unlabelled-abstract.pdf"
        shutil.copy(Path(tmp) / "paper.pdf", dest)
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--jats", required=True, type=Path, help="folder of JATS .xml/.nxml files")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--only", default="", help="comma-separated ids (file stems) to build")
    ap.add_argument("--unlabelled", action="store_true", help="also the one-page unlabelled-abstract test paper")
    args = ap.parse_args()
    if args.unlabelled:
        print(build_unlabelled(args.out))
    only = {x for x in args.only.split(",") if x}
    for f in sorted(args.jats.iterdir()):
        if f.suffix not in (".xml", ".nxml") or (only and f.name.split(".")[0] not in only):
            continue
        try:
            dest = build(f, args.out)
            print(f"{dest} {dest.stat().st_size:,} bytes")
        except (RuntimeError, subprocess.SubprocessError) as exc:
            print(f"FAILED {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
