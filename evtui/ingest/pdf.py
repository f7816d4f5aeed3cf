"""PDF loader: a paper's text layer (pypdfium2, Apache-2.0/BSD) in reading order, with sections.

Layout analysis over pdfium's characters (position, font size, font name):
  * lines -> columns: a two-column page is read left column then right column between full-width blocks;
  * running headers/footers (text repeated in the page margins) and page numbers dropped;
  * headings (larger or bold short lines, numbered or not) -> section kinds as the JATS loader gives them;
  * figure/table captions kept as their own kind ("caption"); small print (table cells, footnotes) left out;
  * the references section never becomes sentences; superscript and [n] citation markers stripped;
  * line-end hyphenation joined (the joined word checked against the paper's own words); ligatures expanded.
Every PDF is parsed in a worker process with a memory limit and a time budget (evtui/ingest/pdf_worker.py): a PDF
bomb or a pathological file costs one file, never the ingest.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evtui.errors import IngestError
from evtui.filehash import content_sha256
from evtui.ingest.sections import CAPTION_KIND, CAPTION_LABEL, mark_metadata, section_kind
from evtui.ingest.splitter import split_sentences
from evtui.models import ParsedPaper, ParsedSentence

MAX_PAGES = 500  # a book, a thesis or a proceedings volume is not one paper: refused, not half-read
MAX_PDF_BYTES = 256 * 1024 * 1024
# The PDF reader's version, stored with each paper read (info "reader"): an unchanged file already read by this
# version is not parsed again (evtui.library). Bump it when a change to this module changes what a PDF reads as.
PDF_READER = "4"
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
              "\ufb06": "st", "\u00ad": "", "\u0002": "-", "\ufffe": "-"}
_LIG_RE = re.compile("[\ufb00-\ufb06\u00ad\u0002\ufffe]")  # U+FFFE: pdfium's mark for a line-end hyphen
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}]+)", re.I)
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_PAGE_NO = re.compile(r"^(page\s*)?[0-9ivxlc]{1,4}(\s*(of|/)\s*[0-9]{1,4})?$", re.I)
_REFERENCES = re.compile(r"^((\d+(\.\d+)*\.?|[IVX]+\.)\s+)?(references?|bibliography|literature cited|works cited|"
                         r"references and notes|cited literature)\s*:?$", re.I)
_ABSTRACT_INLINE = re.compile(r"^(abstract|summary)\s*[:.—–-]?\s+(?=\S)", re.I)
# [1], [2–5], [1, 3, 7-9] citation markers (numeric only: "[Ca2+]" or "[see ref]" stay)
_BRACKET_CITE = re.compile(r"\s?\[\s*\d{1,3}(?:\s*[,;–—-]\s*\d{1,3})*\s*\]")
_SUPER_CITE = re.compile(r"^[0-9,–—\-\s]+$")


@dataclass(slots=True)
class _Line:
    text: str
    x0: float
    x1: float
    y: float  # baseline, PDF units from the bottom
    size: float  # the line's main font size
    bold: bool
    page: int
    col: int = 0  # 0 left/single, 1 right, -1 full width
    cites: int = 0  # superscript citation markers removed from this line


@dataclass
class _Stats:
    pages: int = 0
    pages_read: int = 0
    header_footer_lines: int = 0
    reference_lines: int = 0
    small_print_lines: int = 0
    citation_markers: int = 0
    captions: int = 0
    dehyphenated: int = 0
    front_matter_lines: int = 0


# -- reading the text layer --------------------------------------------------------------------------------------
def _open_document(path: Path) -> Any:
    import pypdfium2 as pdfium

    data: bytes | Path
    if path.name.lower().endswith(".gz"):
        from evtui.ingest.reader import open_capped

        # The shared capped reader (its error names the file), a MiB at a time: read(cap + 1) would allocate the
        # whole cap up front.
        chunks: list[bytes] = []
        with open_capped(path, MAX_PDF_BYTES, transcode=False) as fh:
            while chunk := fh.read(1 << 20):
                chunks.append(chunk)
        data = b"".join(chunks)
    else:
        size = path.stat().st_size
        if size > MAX_PDF_BYTES:
            raise IngestError(str(path), f"PDF is {size / 2**20:.0f} MiB, over the {MAX_PDF_BYTES // 2**20} MiB limit")
        data = path
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        msg = str(exc).lower()
        if "password" in msg:
            raise IngestError(str(path), "encrypted PDF: it needs a password (save an unprotected copy)") from exc
        raise IngestError(str(path), "not a readable PDF (damaged, truncated or not a PDF)") from exc


def _page_lines(page: Any, pno: int) -> tuple[list[_Line], float, float]:
    """The page's text lines in pdfium's order, each with its main font size, boldness and superscript citation
    markers removed. Returns (lines, page width, page height)."""
    import pypdfium2.raw as raw

    width, height = page.get_size()
    textpage = page.get_textpage()
    tp = textpage.raw  # the bare handle: the wrapper object costs a Python call per C call
    try:
        n = raw.FPDFText_CountChars(tp)
        if n <= 0:
            return [], width, height
        text = textpage.get_text_range(0, n)
        if len(text) != n:  # surrogate pairs: one code point per character index instead
            text = "".join(chr(raw.FPDFText_GetUnicode(tp, i)) for i in range(n))
        # the hot loop of PDF ingest: two C calls per character, nothing else
        ox, oy = ctypes.c_double(), ctypes.c_double()
        rx, ry = ctypes.byref(ox), ctypes.byref(oy)
        origin, font_size = raw.FPDFText_GetCharOrigin, raw.FPDFText_GetFontSize
        xs = [0.0] * n
        ys = [0.0] * n
        sizes = [0.0] * n
        for i in range(n):
            origin(tp, i, rx, ry)
            xs[i] = ox.value
            ys[i] = oy.value
            sizes[i] = font_size(tp, i)
        keep = _rejoin(tp, text, xs, ys, sizes)
        pdf_index = list(range(n))
        if keep is not None:
            text = "".join(" " if text[k] in "\r\n" else text[k] for k in keep)
            xs, ys, sizes, pdf_index = [xs[k] for k in keep], [ys[k] for k in keep], [sizes[k] for k in keep], keep
            n = len(keep)
        name = ctypes.create_string_buffer(128)
        flags = ctypes.c_int()
        lines: list[_Line] = []
        start = 0
        for i in range(n + 1):
            if i < n and text[i] not in "\r\n":
                # a new line pdfium did not mark: a jump back to the left or down by more than a line
                if i > start and text[i] != " " and (xs[i] < xs[i - 1] - 2 * sizes[i - 1]
                                                      or abs(ys[i] - ys[i - 1]) > 1.5 * max(sizes[i], sizes[i - 1], 1)):
                    pass
                else:
                    continue
            if i > start:
                first = start
                while first < i and text[first] == " ":
                    first += 1
                if first < i:
                    raw.FPDFText_GetFontInfo(tp, pdf_index[first], name, 128, ctypes.byref(flags))
                    fname = name.value.decode("latin-1", "replace").lower()
                    bold = "bold" in fname or "black" in fname or "heavy" in fname
                    line = _make_line(text, xs, ys, sizes, first, i, bold, pno)
                    if line is not None:
                        lines.append(line)
            start = i + 1 if i < n and text[i] in "\r\n" else i
        return lines, width, height
    finally:
        textpage.close()


def _rejoin(tp: Any, text: str, xs: list[float], ys: list[float], sizes: list[float]) -> list[int] | None:
    """pdfium ends a line where the baseline moves by a superscript's rise ("χ" | "²" | " = 15.6", "cm³" | ") was"):
    a line break followed, at about the same height, by text that starts where the last character ends (its
    box, well short of a column gutter) is no break. Returns the character indices to read, without those breaks
    (None: there are none); a break over a word space's gap reads as a space (its index kept, its text " ")."""
    import pypdfium2.raw as raw

    n = len(text)
    left, right, bottom, top = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    box = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
    drop: set[int] = set()
    spaces: list[int] = []
    i = 1
    while i < n:
        if text[i] not in "\r\n" or text[i - 1] in "\r\n ":
            i += 1
            continue
        p, j = i - 1, i
        while j < n and text[j] in "\r\n":
            j += 1
        size = max(sizes[p], sizes[j]) if j < n else 0.0
        if j < n and text[j] != " " and xs[p] <= xs[j] < xs[p] + 2 * size and abs(ys[j] - ys[p]) < 0.6 * size \
                and raw.FPDFText_GetCharBox(tp, p, *box):
            gap = xs[j] - right.value
            if -0.2 * size < gap < 0.6 * size:
                drop.update(range(i + (gap > 0.15 * size), j))
                if gap > 0.15 * size:
                    spaces.append(i)
        i = j
    if not drop:
        return None
    for k in spaces:
        xs[k], ys[k], sizes[k] = xs[k - 1], ys[k - 1], sizes[k - 1]
    return [k for k in range(n) if k not in drop]


def _make_line(text: str, xs: list[float], ys: list[float], sizes: list[float], a: int, b: int, bold: bool,
               pno: int) -> _Line | None:
    seg = sizes[a:b]
    lo, hi = min(seg), max(seg)
    if hi - lo < 0.3:
        main = hi
        baseline = ys[a]
        uniform = True
    else:
        main = Counter(round(v, 1) for v, c in zip(seg, text[a:b], strict=True) if c != " ").most_common(1)[0][0]
        base = Counter(round(ys[k], 1) for k in range(a, b) if text[k] != " " and abs(sizes[k] - main) < 0.3)
        baseline = base.most_common(1)[0][0] if base else ys[a]
        uniform = False
    cites = 0
    if uniform:
        out = text[a:b]
    else:
        parts: list[str] = []
        k = a
        small, raised = main * 0.85, baseline + main * 0.15
        while k < b:
            ch = text[k]
            # a superscript run: smaller and raised above the baseline
            if ch != " " and sizes[k] < small and ys[k] > raised:
                j = k
                while j < b and text[j] != " " and sizes[j] < small and ys[j] > raised:
                    j += 1
                run = text[k:j]
                prev = parts[-1] if parts else ""
                # citation markers start with a digit; "ml⁻¹", "10⁵" (after a digit) are units and powers, a
                # run before a letter that opens a word is a mass number ("¹⁸F-FDG", "¹¹C-raclopride"), and a
                # digit after a unit or a symbol is its exponent ("cm²", "sp³", "χ²", "R²")
                nxt = text[j] if j < b else ""
                isotope = nxt.isalpha() and not prev.isalnum()
                if _SUPER_CITE.match(run) and run[0].isdigit() and not prev.isdigit() and not isotope \
                        and not _exponent(run, parts):
                    cites += 1
                    k = j
                    continue
                parts.append(run)  # the whole run as it stands: "ml⁻¹" keeps its "1", not only the "-"
                k = j
                continue
            parts.append(ch)
            k += 1
        out = "".join(parts)
    out = out.strip()
    if not out:
        return None
    return _Line(out, xs[a], xs[b - 1] + sizes[b - 1] * 0.5, baseline, main, bold, pno, cites=cites)


# two-letter words a citation may follow; any other token of one or two letters before a superscript digit is a
# unit or a symbol ("m²", "cm³", "sp²", "R²")
_SHORT_WORDS = frozenset("an as at be by do et he if in is it me my no of on or so to up us we".split())


def _exponent(run: str, parts: list[str]) -> bool:
    """A superscript digit run that is a power, not a citation marker: one digit after a Greek letter ("χ²",
    "σ²") or after a token of one or two letters that is not a word ("cm²", "mm³", "sp²", "R²")."""
    if len(run) != 1:
        return False
    tail = "".join(parts[-4:])
    m = re.search(r"(?<![^\W\d_])([^\W\d_]{1,3})$", tail)  # the letters closing the text so far, as a token
    if not m:
        return False
    token = m.group(1)
    if len(token) == 1 and unicodedata.name(token, "").startswith("GREEK"):
        return True
    return len(token) <= 2 and token.lower() not in _SHORT_WORDS


# -- layout --------------------------------------------------------------------------------------------------------
def _reading_order(lines: list[_Line], width: float) -> list[_Line]:
    """Left column then right column between full-width blocks; single-column pages top to bottom."""
    if not lines:
        return lines
    mid = width / 2
    slack = width * 0.03
    for ln in lines:
        # full width, or a short line centred over the gutter (a title block's date or author line): no column
        # line crosses the middle of the page
        if (ln.x0 < mid - slack and ln.x1 > mid + slack) or \
                (ln.x0 < mid < ln.x1 and abs((ln.x0 + ln.x1) / 2 - mid) < slack):
            ln.col = -1
        else:
            ln.col = 1 if ln.x0 >= mid - slack else 0
    right = sum(1 for ln in lines if ln.col == 1)
    left = sum(1 for ln in lines if ln.col == 0)
    if right < 3 or left < 3:  # one column (or a column page with a stray right-hand line)
        for ln in lines:
            ln.col = 0 if ln.col != -1 else -1
        return sorted(lines, key=lambda ln: -ln.y)
    # a full-width line inside a column region (a wide equation) must not cut the columns: only runs of
    # full-width lines that no column line sits beside count as separators
    ordered = sorted(lines, key=lambda ln: -ln.y)
    out: list[_Line] = []
    block: list[_Line] = []

    def flush_block() -> None:
        out.extend(sorted((ln for ln in block if ln.col == 0), key=lambda ln: -ln.y))
        out.extend(sorted((ln for ln in block if ln.col == 1), key=lambda ln: -ln.y))
        block.clear()

    for ln in ordered:
        if ln.col == -1:
            flush_block()
            out.append(ln)
        else:
            block.append(ln)
    flush_block()
    return out


def _norm_margin(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def _drop_margins(pages: list[tuple[list[_Line], float, float]], stats: _Stats) -> list[list[_Line]]:
    """Running headers/footers and page numbers out: lines in the top or bottom 12% of a page whose text (digits
    ignored: "Bates et al. 39") recurs on other pages, and page numbers."""
    seen: Counter[str] = Counter()
    for lines, _w, h in pages:
        for key in {_norm_margin(ln.text) for ln in lines if ln.y > h * 0.88 or ln.y < h * 0.12}:
            seen[key] += 1
    many = max(2, len(pages) // 4)
    body = _body_size([lines for lines, _w, _h in pages])
    out: list[list[_Line]] = []
    for pno, (lines, _w, h) in enumerate(pages):
        keep: list[_Line] = []
        top = max((ln.y for ln in lines), default=0.0)
        bottom = min((ln.y for ln in lines), default=0.0)
        # A paper of two or three pages has too few pages to see its running head recur (page 1 carries the title
        # block instead): on a later page a top-margin line set apart from the text below by a header's gap is one.
        below = max((ln.y for ln in lines if ln.y < top - 0.5), default=0.0)
        lone_head = len(pages) <= 3 and pno > 0 and top > h * 0.85 and top - below > 2.2 * body
        for ln in lines:
            if lone_head and abs(ln.y - top) < 0.5 and not ln.bold and ln.size <= body + 0.3 \
                    and (not ln.text.rstrip().endswith((".", "!", "?")) or ln.text.rstrip().endswith("et al.")):
                stats.header_footer_lines += 1
                continue
            in_margin = ln.y > h * 0.88 or ln.y < h * 0.12
            # a page number: the first or last line of the page, as far in as wide margins put it (LaTeX's
            # article defaults: 17% of the page from the bottom)
            number = (ln.y == top or ln.y == bottom) and (ln.y > h * 0.8 or ln.y < h * 0.2) \
                and _PAGE_NO.match(ln.text.strip())
            if number or (in_margin and ((len(pages) > 2 and seen[_norm_margin(ln.text)] >= many)
                                         or (len(pages) == 2 and seen[_norm_margin(ln.text)] == 2))):
                stats.header_footer_lines += 1
                continue
            keep.append(ln)
        out.append(keep)
    return out


def _body_size(pages: list[list[_Line]]) -> float:
    sizes: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            sizes[round(ln.size)] += len(ln.text)
    return float(sizes.most_common(1)[0][0]) if sizes else 10.0


def _is_heading(ln: _Line, body: float) -> bool:
    t = ln.text.strip()
    words = t.split()
    if not words or len(words) > 14 or len(t) > 120 or CAPTION_LABEL.match(t):
        return False
    letters = sum(c.isalpha() for c in t)
    if not re.search(r"[A-Za-z]{3}", t) or letters < 0.6 * len(t.replace(" ", "")):
        return False  # a display formula set large or bold ("Z1 Z2 . . . Zk", "RX(β − βb)")
    if t.endswith((".", ",", ";")) and not re.fullmatch(r"(\d+(\.\d+)*\.?|[IVX]+\.)\s+\S.*", t):
        return False
    if ln.size >= body * 1.15:
        return True
    return ln.bold and ln.size >= body * 0.9


# -- the paper ---------------------------------------------------------------------------------------------------
def parse_pdf(path: Path) -> ParsedPaper:
    """The paper in one PDF. Raises IngestError with a one-line reason for a PDF it cannot read."""
    doc = _open_document(path)
    try:
        stats = _Stats(pages=len(doc))
        if stats.pages == 0:
            raise IngestError(str(path), "PDF has no pages (damaged or truncated)")
        if stats.pages > MAX_PAGES:
            raise IngestError(str(path), f"{stats.pages:,} pages: over the {MAX_PAGES}-page limit for one paper "
                                         "(a book or a volume: split it into papers)")
        raw_pages: list[tuple[list[_Line], float, float]] = []
        n_chars = 0
        for pno in range(stats.pages):
            page = doc[pno]
            try:
                lines, w, h = _page_lines(page, pno)
            finally:
                page.close()
            n_chars += sum(len(ln.text) for ln in lines)
            raw_pages.append((_reading_order(lines, w), w, h))
        stats.pages_read = stats.pages
        if n_chars < 50 * stats.pages and n_chars < 500:
            raise IngestError(str(path), "no text layer — OCR it first (a scanned PDF holds only images)")
        meta = _metadata(doc)
    finally:
        doc.close()
    first_page_all = raw_pages[0][0]
    pages = _drop_margins(raw_pages, stats)
    paper = _assemble(path, pages, first_page_all, meta, stats)
    # The same bytes under another name ("paper (1).pdf", a Zotero copy) are the same paper: its id comes from the
    # path, so the library matches copies by this (evtui.library.identity_keys).
    paper.info["file_sha256"] = content_sha256(path)  # a .pdf.gz: of the PDF inside, as its .pdf copy
    return paper


def _metadata(doc: Any) -> dict[str, str]:
    try:
        return {k: str(v) for k, v in doc.get_metadata_dict(skip_empty=True).items()}
    except Exception:  # noqa: BLE001 - a damaged info dictionary only costs the metadata
        return {}


_JUNK_TITLE = re.compile(r"^(untitled|microsoft word|document\d*$|.*\.(docx?|pdf|tex|dvi)$)", re.I)


def _title(meta: dict[str, str], first: list[_Line], body: float) -> tuple[str, int]:
    """(title, index of its last line on the first page, -1 if not found there)."""
    cands = [ln for ln in first if ln.size >= body * 1.25 and re.search(r"[A-Za-z]{3}", ln.text)
             and not _section_heading(ln.text)]
    best = ""
    last = -1
    if cands:
        top = max(c.size for c in cands)
        idx = [i for i, ln in enumerate(first) if abs(ln.size - top) < 0.5 and re.search(r"[A-Za-z]{3}", ln.text)
               and not _section_heading(ln.text)]
        # the first run of consecutive lines in the largest size
        run = [idx[0]]
        for i in idx[1:]:
            if i == run[-1] + 1:
                run.append(i)
            else:
                break
        best = " ".join(first[i].text for i in run)
        last = run[-1]
    mt = " ".join(meta.get("Title", "").split())
    if mt and not _JUNK_TITLE.match(mt) and len(mt) > 10:
        words = set(re.findall(r"[a-z]{3,}", mt.lower()))
        page1 = set(re.findall(r"[a-z]{3,}", " ".join(ln.text for ln in first[:40]).lower()))
        if not best or (words and len(words & page1) >= 0.8 * len(words)):
            return mt, last
    return best, last


def _section_heading(text: str) -> bool:
    """A section's heading ("1 Introduction", "Abstract", "Chapter 2"), never a paper's title: a paper without a
    title block (a preprint, a report) opens with one set in the largest size."""
    t = text.strip()
    return bool(_NUMBERED.match(t) or _CHAPTER.match(t)) or (len(t.split()) <= 3 and section_kind(t) != "other")


def _authors(meta: dict[str, str], first: list[_Line], after: int, body: float) -> list[str]:
    ma = meta.get("Author", "").strip()
    # a word processor's account name ("jsmith", "Owner", "user01") is no author list: a person's name has two parts
    if ma and not re.search(r"\d|@|user|admin|owner", ma, re.I) and re.search(r"\w[\s.,]+\w", ma):
        return [a.strip() for a in re.split(r";|,|\band\b", ma) if len(a.strip()) > 2][:50]
    if after < 0 or after + 1 >= len(first):
        return []
    ln = first[after + 1]
    t = re.sub(r"[\d*†‡§¶]+", "", ln.text)
    parts = [p.strip() for p in re.split(r",|\band\b|;", t) if p.strip()]
    if parts and all(1 <= len(p.split()) <= 4 and p[:1].isupper() for p in parts) and ln.size >= body * 0.9:
        return parts[:50]
    return []


def _assemble(path: Path, pages: list[list[_Line]], first_all: list[_Line], meta: dict[str, str],
              stats: _Stats) -> ParsedPaper:
    body = _body_size(pages)
    first = pages[0] if pages else []
    title, title_at = _title(meta, first, body)
    front_text = " ".join([*(meta.get(k, "") for k in ("Subject", "Keywords", "Title")),
                           *(ln.text for ln in first_all[:60])])
    m = _DOI.search(front_text)
    doi = m.group(1).rstrip(".,;)]") if m else None
    head_lines = first_all[:max(title_at, 0) + 8]
    ym = _YEAR.search(" ".join(ln.text for ln in head_lines)) or _YEAR.search(front_text)
    year = int(ym.group(1)) if ym else None
    authors = _authors(meta, first, title_at, body)

    lines: list[_Line] = [ln for p in pages for ln in p]
    # the front matter before the title (journal banner, DOI line) is metadata, not text
    if title_at >= 0:
        skip = {id(ln) for ln in first[:title_at + 1]}
        if authors and title_at + 1 < len(first):
            skip.add(id(first[title_at + 1]))
        lines = [ln for ln in lines if id(ln) not in skip]
    vocab = Counter(w.lower() for ln in lines for w in re.findall(r"[A-Za-z]{3,}", ln.text))
    compounds = {w.lower() for ln in lines for w in re.findall(r"[A-Za-z]+-[A-Za-z]+", ln.text)}

    sents: list[ParsedSentence] = [ParsedSentence(title, "Title", "title")] if title else []
    sec_title, kind = "", "other"
    in_refs = False
    levels = _Levels()
    refs_paused = False  # a caption interrupted the reference list: back to it when the caption ends
    para: list[_Line] = []
    caption: list[_Line] = []
    started = False  # the first heading (or Abstract) seen: text before it is front matter (affiliations)
    front: list[_Line] = []

    def emit(block: list[_Line], stitle: str, skind: str) -> None:
        if not block:
            return
        text = _join(block, vocab, compounds, stats)
        for s in split_sentences(text):
            sents.append(ParsedSentence(s, stitle, skind))

    def flush() -> None:
        emit(para, sec_title, kind)
        para.clear()
        flush_caption()

    def flush_caption() -> None:
        if caption:
            label = CAPTION_LABEL.match(caption[0].text)
            emit(caption, label.group(0).rstrip(".:|—–- ") if label else "Caption", CAPTION_KIND)
            stats.captions += 1
            caption.clear()

    def settle_front() -> None:
        """Text between the title and the first heading: an unlabelled abstract (long paragraphs of sentences)
        is kept as the abstract; the rest (affiliations, e-mails, keywords, dates) is dropped."""
        block: list[_Line] = []
        for ln in [*front, None]:
            if ln is not None and (not block or not _front_break(block[-1], ln)):
                block.append(ln)
                continue
            text = " ".join(b.text for b in block)
            if len(text) >= 200 and len(re.findall(r"[a-z]{2}[.!?](\s|$)", text)) >= 2:
                emit(block, "Abstract", "abstract")
            else:
                stats.front_matter_lines += len(block)
            block = [ln] if ln is not None else []
        front.clear()

    held: list[_Line] = []  # small lines met in the abstract, kept or dropped by what follows them

    def drop_held() -> None:
        if held and _prose(" ".join(h.text for h in held)):
            para.extend(held)
        else:
            stats.small_print_lines += len(held)
        held.clear()

    prev: _Line | None = None
    for ln in lines:
        t = ln.text.strip()
        if held and (in_refs or _is_heading(ln, body)):
            drop_held()
        if in_refs:
            if CAPTION_LABEL.match(t):  # a float placed inside or after the reference list (LaTeX puts them at the end)
                in_refs = False
                refs_paused = True
            elif _is_heading(ln, body) and section_kind(t) in ("introduction", "methods", "results", "discussion") \
                    and not _REFERENCES.match(t):
                in_refs = False
            else:
                stats.reference_lines += 1
                continue
        heading = _is_heading(ln, body)
        if heading and not started and section_kind(t) == "other" and not _NUMBERED.match(t) \
                and not _CHAPTER.match(t):
            heading = False  # a larger or bold line in the title block: authors, affiliations, not a section
        if heading and _REFERENCES.match(t):
            flush()
            in_refs = True
            stats.reference_lines += 1
            prev = ln
            continue
        mabs = _ABSTRACT_INLINE.match(t)
        if (heading and re.fullmatch(r"(abstract|summary)\s*[:.]?", t, re.I)) or (mabs and not started):
            flush()
            if not started:
                settle_front()
            started = True
            sec_title, kind = "Abstract", "abstract"
            if mabs and not heading:
                para.append(_Line(t[mabs.end():], ln.x0, ln.x1, ln.y, ln.size, False, ln.page))
            prev = ln
            continue
        if heading:
            t = _LIG_RE.sub(lambda m: _LIGATURES[m.group(0)], t)
            # a heading wrapped over two lines: one heading
            if prev is not None and sents and sents[-1].is_heading and not para and not caption and \
                    abs(prev.size - ln.size) < 0.3 and prev.bold == ln.bold and prev.page == ln.page and \
                    0 < prev.y - ln.y < ln.size * 2.2 and _is_heading(prev, body) and \
                    len(sents[-1].text.split()) + len(t.split()) <= 16:
                head = sents[-1].text
                merged = head[:-1] + t if head.endswith("-") and t[:1].islower() else f"{head} {t}"
                kind = levels.kind(merged, ln.size, again=True)
                sec_title = merged
                sents[-1] = ParsedSentence(merged, merged, kind, True)
                prev = ln
                continue
            if sents and sents[-1].is_heading and not para and not caption and _CHAPTER.fullmatch(sents[-1].text):
                # "Chapter 2" set above its title ("Methods"): one heading, of the title's kind
                merged = f"{sents[-1].text} {t}"
                kind = levels.kind(merged, ln.size)
                sec_title = merged
                sents[-1] = ParsedSentence(merged, merged, kind, True)
                prev = ln
                continue
            flush()
            if not started:
                settle_front()
            started = True
            kind = levels.kind(t, ln.size)
            sec_title = t
            sents.append(ParsedSentence(t, t, kind, True))
            prev = ln
            continue
        if CAPTION_LABEL.match(t) and ln.size >= body * 0.75:
            # a float set inside a paragraph: the caption is its own block, the paragraph runs on after it
            flush_caption()
            caption.append(ln)
            prev = ln
            continue
        if caption:
            # a caption runs on in its own size until a gap or a change of size
            if prev is not None and abs(ln.size - caption[0].size) < 0.3 and 0 < prev.y - ln.y < ln.size * 1.8 \
                    and ln.page == prev.page:
                caption.append(ln)
                prev = ln
                continue
            flush_caption()
            if refs_paused:
                in_refs, refs_paused = True, False
                stats.reference_lines += 1
                prev = ln
                continue
        if ln.size < body * 0.85:
            if started and kind == "abstract" and not in_refs and not _FOOTNOTE.match(t) and not held and para \
                    and _adjacent(para[-1], ln):
                para.append(ln)  # the abstract's last line, set smaller
            elif started and kind == "abstract" and not in_refs and not _FOOTNOTE.match(t) \
                    and (not held or _adjacent(held[-1], ln)):
                held.append(ln)  # the abstract's own line, or a footnote: the lines after it decide
            else:
                drop_held()
                stats.small_print_lines += 1
            prev = ln
            continue
        if held:
            # Small lines of the abstract run into its text ("Background: … were" set smaller than the lines
            # after it lost the abstract's opening in 2 of 3 typeset trial papers), or read as prose: they are the
            # abstract; a lone small line apart from it is small print.
            if _adjacent(held[-1], ln) or _prose(" ".join(h.text for h in held)):
                para.extend(held)
                held.clear()
            else:
                drop_held()
        if not started:
            front.append(ln)
            prev = ln
            continue
        if para and _new_paragraph(para[-1], ln):
            emit(para, sec_title, kind)
            para.clear()
        para.append(ln)
        prev = ln
    drop_held()
    flush()
    if not started and front:  # a PDF without headings: its text is the paper
        emit(front, "", "other")
    stats.citation_markers += sum(ln.cites for ln in lines)
    digest = hashlib.sha1(str(path).encode(), usedforsecurity=False).hexdigest()[:8]
    pid = f"doi:{doi}" if doi else f"pdf:{path.name.split('.')[0]}-{digest}"
    mark_metadata(sents)
    paper = ParsedPaper(id=pid, title=title or path.stem, sentences=sents, authors=authors, year=year, doi=doi,
                        source_path=str(path))
    paper.info = {
        "pages": stats.pages, "pages_read": stats.pages_read,
        "dropped": {"header_footer_lines": stats.header_footer_lines, "reference_lines": stats.reference_lines,
                    "small_print_lines": stats.small_print_lines, "citation_markers": stats.citation_markers,
                    "front_matter_lines": stats.front_matter_lines},
        "captions": stats.captions, "full_text": True, "reader": PDF_READER,
    }
    return paper


_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
# a thesis's or a book-like report's chapter heading: a section even before the first recognised one
_CHAPTER = re.compile(r"^(chapter|part|appendix)\s+(\d+|[IVXLC]+|[A-Z])\b\.?", re.I)


class _Levels:
    """Section kinds as the JATS loader gives them, from a flat run of headings: a top-level heading ("3", or
    the largest heading size) has its own kind ("other" when unrecognised), a subsection ("3.2", or a smaller
    heading) an unrecognised title inherits its top-level section's kind."""

    def __init__(self) -> None:
        self.top_size = 0.0
        self.top_kind = "other"

    def kind(self, title: str, size: float, *, again: bool = False) -> str:
        own = section_kind(_CHAPTER.sub("", title).strip() or title)
        m = _NUMBERED.match(title)
        if _CHAPTER.match(title):
            top = True
        elif m:
            top = "." not in m.group(1)
        else:
            top = size >= self.top_size - 0.5
        if top:
            if not again or own != "other":
                self.top_size = max(self.top_size, size) if not m else self.top_size or size
                self.top_kind = own
            return own
        return own if own != "other" else self.top_kind


# A page's footnote or a first page's small print: a marker, an address, a licence, a date line.
_FOOTNOTE = re.compile(r"^(?:[*†‡§¶#]|\d+\s*[A-Z][a-z]|©|\(c\)|e-?mail|correspond|received|accepted|published|"
                       r"copyright|https?:|www\.|doi\b|open access|this (?:is an open|article is))", re.I)


def _adjacent(prev: _Line, ln: _Line) -> bool:
    """The next line of the same block: same page and column, one line's spacing below."""
    return ln.page == prev.page and ln.col == prev.col and 0 < prev.y - ln.y < 1.8 * max(ln.size, prev.size)


def _prose(text: str) -> bool:
    """Sentences, not a label or a table's cells: at least 200 characters with two sentence ends."""
    return len(text) >= 200 and len(re.findall(r"[a-z]{2}[.!?](\s|$)", text)) >= 2


def _front_break(prev: _Line, ln: _Line) -> bool:
    """Blocks of the title area: apart by a gap, a change of size, column or page."""
    return ln.page != prev.page or ln.col != prev.col or abs(ln.size - prev.size) > 0.3 or \
        not 0 < prev.y - ln.y < ln.size * 1.6


def _new_paragraph(prev: _Line, ln: _Line) -> bool:
    """A gap after a line that ends a sentence. A paragraph runs on across columns, pages and floats: a gap
    after a line that does not end a sentence is a figure or table set in between."""
    if ln.page != prev.page or ln.col != prev.col or not prev.text.rstrip().endswith((".", "!", "?", ":")):
        return False
    gap = prev.y - ln.y
    return gap > ln.size * 1.9 or gap < 0


def _join(block: list[_Line], vocab: Counter[str], compounds: set[str], stats: _Stats) -> str:
    """The lines of one block as text. A line-end hyphen is TeX's (joined) unless the paper spells the
    compound with a hyphen elsewhere and never as one word ("human-mouse" stays, "identi-fied" is joined)."""
    out = ""
    for ln in block:
        t = _LIG_RE.sub(lambda m: _LIGATURES[m.group(0)], ln.text.strip())
        if not out:
            out = t
            continue
        m = re.search(r"([A-Za-z]+)-$", out[-64:]) if out.endswith("-") else None
        n = re.match(r"([a-z]+)", t) if m else None
        if m and n:
            whole = (m.group(1) + n.group(1)).lower()
            hyph = f"{m.group(1)}-{n.group(1)}".lower()
            if vocab[whole] > 0 or hyph not in compounds:
                out = out[:-1] + t
                stats.dehyphenated += 1
                continue
            out = out + t
            continue
        # A hyphen TeX did not add (it breaks words only before a lower-case letter) joins a compound that goes
        # on with a capital or a digit: "FDG-" + "PET/CT", "COVID-" + "19", "355-" + "mm", never "FDG- PET/CT".
        if len(out) > 1 and out.endswith("-") and out[-2].isalnum() and t[:1].isalnum():
            out = out + t
            continue
        # TeX breaks a line after an en or em dash and adds nothing: "fission–" + "fusion", "dynamics—" + "changes"
        if len(out) > 1 and out.endswith(("\u2013", "\u2014")) and out[-2].isalnum() and t[:1].isalnum():
            out = out + t
            continue
        out = out + " " + t
    text = _BRACKET_CITE.sub("", out)
    stats.citation_markers += len(_BRACKET_CITE.findall(out))
    text = re.sub(r"\s+([.,;:)])", r"\1", text).replace("\u25e6C", "\u00b0C")  # TeX's math-circle degree
    return " ".join(text.split())

