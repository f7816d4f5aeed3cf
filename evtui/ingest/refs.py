"""Reference-manager exports: BibTeX (JabRef, Zotero, Better BibTeX), RIS and CSL-JSON.

Each entry becomes a paper: its metadata from the entry and, where a `file` field (BibTeX `file`, RIS `L1`,
CSL-JSON `file`) points at a PDF that exists, its text from the PDF. An entry with no readable file is a
metadata-only paper (its title and abstract as sentences; info "full_text": False, "no full text" in the Library
screen), so the user sees what is in the library and what is not searchable in full.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PureWindowsPath
from typing import Any
from urllib.parse import unquote, urlparse

from evtui.errors import IngestError
from evtui.ingest.reader import decode as _decode
from evtui.ingest.reader import read_bytes as _read_bytes
from evtui.ingest.splitter import split_sentences
from evtui.models import ParsedPaper, ParsedSentence

Result = Iterator["ParsedPaper | IngestError"]
_BIB_ENTRY = re.compile(r"^\s*@\s*(article|inproceedings|incollection|book|inbook|misc|phdthesis|mastersthesis|"
                        r"techreport|unpublished|online|report|conference|preprint|thesis|manual|proceedings|"
                        r"dataset|software|electronic|webpage)\s*[{(]", re.I | re.M)
_DOI = re.compile(r"10\.\d{4,9}/\S+")
_BARE = re.compile(r"[^,#}\s)]+")
_SPECIAL = re.compile(r'\\.|[{}"]', re.S)
_FIELD = re.compile(r"\s*([A-Za-z][\w\-:.+]*)\s*=\s*")
_KEY = re.compile(r"\s*([^,\s{}()]{0,500})\s*,")


# -- authors' names: as stored, shown and cited ------------------------------------------------------------
# A paper's authors are stored as strings, most as "Given Family" ("Florian Uhl", "Anna van der Berg"): the form
# BibTeX reads back right, the last word being the family name with any lower-case particles before it. A family
# name that form would cut ("García Márquez", "De la Cruz", "de Souza Santos") is stored as BibTeX's own "Family,
# Given" instead, and with a suffix as "Family, Jr., Given". `display_name()` shows either as "Given Family Jr.", so an
# author list joined with ", " stays readable; the BibTeX export and the citation key read the family name from the
# part before the comma. Libraries ingested before keep their "Given Family" strings, shown as they are.

# A name that is an organisation, not a person: BibTeX would split it ("World Health Organization" -> given "World
# Health", family "Organization"; "... and Prevention" -> two authors), so it is braced whole.
_ORG = re.compile(r"\b(and|for|of|group|consortium|collaboration|collaborative|committee|organi[sz]ation|society|"
                  r"association|institute|council|network|investigators|agency|foundation|centre|center|"
                  r"department|ministry|university|team|working|panel|federation|alliance|board|program|programme)\b",
                  re.IGNORECASE)
# What follows a company's name after a comma ("Acme, Inc."): not a given name.
_COMPANY = frozenset({"inc", "ltd", "llc", "co", "corp", "gmbh", "plc", "ag", "sa", "bv"})


def is_organisation(name: str) -> bool:
    """"World Health Organization" (several words, one of them an organisation's); a "Family, Given" name never."""
    return len(name.split()) > 1 and "," not in name and bool(_ORG.search(name))


def _reads_back(given: str, family: str) -> bool:
    """Whether "Given Family" is read back with `family` as the family name: BibTeX's "First von Last" takes the
    last word, with the lower-case words just before it ("van der Berg"), and a given name has no lower-case word."""
    words = family.split()
    if any(w[:1].islower() for w in given.split()):
        return False
    lead = 0
    while lead < len(words) - 1 and words[lead][:1].islower():
        lead += 1
    return len(words) - lead <= 1


def person_name(given: str, family: str, suffix: str = "") -> str:
    """The stored form of a person's name from its parts: "Given Family" ("Gabriel Smith", "Anna van der Berg",
    "John Smith Jr."), or "Family, Given" / "Family, Suffix, Given" when "Given Family" would lose part of the family
    name ("García Márquez, Gabriel", "De la Cruz, Maria"). Without a given name, the family name as it is."""
    given, family, suffix = (" ".join(x.split()) for x in (given, family, suffix))
    if not family or not given:
        return " ".join(x for x in (given, family, suffix) if x)
    if _reads_back(given, family):
        return " ".join(x for x in (given, family, suffix) if x)
    return f"{family}, {suffix}, {given}" if suffix else f"{family}, {given}"


def display_name(name: str) -> str:
    """A stored name as it is shown in a list: "García Márquez, Gabriel" -> "Gabriel García Márquez", "Smith,
    Jr., John" -> "John Smith Jr."; "Given Family", an organisation ("Ben and Jerry, Inc.") and anything else as
    it is."""
    if "," not in name or _ORG.search(name):
        return name
    parts = [" ".join(p.split()) for p in name.split(",")]
    if not all(parts) or len(parts) > 3 or parts[-1].strip(".").lower() in _COMPANY:
        return name
    if len(parts) == 2:
        return f"{parts[1]} {parts[0]}"
    return f"{parts[2]} {parts[0]} {parts[1]}"


def display_names(names: list[str], limit: int) -> str:
    """The first `limit` names for display, joined with ", ", and " et al." when there are more."""
    shown = [display_name(a) for a in names[:limit]]
    return ", ".join(shown) + (" et al." if len(names) > limit else "")


def sniff_refs(name: str, text: str) -> str | None:
    """'bibtex', 'ris' or 'csl-json' when the file is one (by name or by content), else None."""
    if name.endswith((".bib", ".bibtex")):
        return "bibtex"
    # by content only when the file opens with an entry (after % comments): a paper quoting one stays a paper
    body = re.sub(r"\A(?:\s*%[^\n]*\n)*\s*", "", text[:20000])
    if _BIB_ENTRY.match(body):
        return "bibtex"
    if name.endswith(".ris") or re.match(r"TY  - [A-Z]+", text):
        return "ris"
    if name.endswith((".json", ".csljson", ".csl.json")) and text.startswith("[") and \
            re.search(r'"(issued|container-title|DOI|author)"\s*:', text[:20000]) and '"type"' in text[:20000]:
        return "csl-json"
    return None


def _ws(s: str) -> str:
    return " ".join(s.split())


# -- BibTeX --------------------------------------------------------------------------------------------------------
# The most characters one field value (or @string abbreviation) may expand to. @string macros that each concatenate
# the one before twice double at every level: 40 levels of a 1 KB file would need 24 GB. Real values (an abstract,
# a long author list) are far under this; past it the entry is refused in one line and the file's others are read.
MAX_VALUE_CHARS = 1_000_000
# ... and all of one entry's fields, and all of a file's @string abbreviations together: many abbreviations or
# fields of a MB each from a few bytes apiece would grow as surely.
MAX_ENTRY_CHARS = 2 * MAX_VALUE_CHARS
MAX_MACROS_CHARS = 8 * MAX_VALUE_CHARS


class _TooLarge(Exception):
    """A value that expands past MAX_VALUE_CHARS (args: the @string name it came through, if any)."""


def _bib_value(s: str, i: int, macros: Mapping[str, str] | None = None,
               oversize: frozenset[str] | set[str] = frozenset(), limit: int = MAX_VALUE_CHARS) -> tuple[str, int]:
    """A field value at s[i:]: {braced}, "quoted" or a bare word/number (an @string name or a month: its text),
    with # concatenation. Raises _TooLarge past `limit` characters, or for an abbreviation in `oversize`."""
    parts: list[str] = []
    size = 0
    n = len(s)
    while i < n:
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        if s[i] in "{\"":
            # the matching close: scanned from one special character to the next (regex), not char by char
            quoted = s[i] == '"'
            depth, j = (0 if quoted else 1), len(s)
            for m in _SPECIAL.finditer(s, i + 1):
                c = m.group(0)
                if c.startswith("\\"):
                    continue
                if c == '"' and quoted and depth == 0:
                    j = m.start()
                    break
                depth += 1 if c == "{" else -1 if c == "}" else 0
                if not quoted and depth == 0:
                    j = m.start()
                    break
            parts.append(s[i + 1:j])
            i = j + 1
        else:
            m = _BARE.match(s, i)  # at a position, never on a slice: a slice copies the rest of a huge file
            word = m.group(0) if m else ""
            if word.lower() in oversize:
                raise _TooLarge(word)
            parts.append((macros or _MONTHS).get(word.lower(), word))
            i = m.end() if m else i + 1
        size += len(parts[-1])
        if size > limit:
            raise _TooLarge("")
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i < n and s[i] == "#":
            i += 1
            continue
        break
    return "".join(parts), i


_MONTHS = {m: m.capitalize() for m in ("jan feb mar apr may jun jul aug sep oct nov dec".split())}
# Letters LaTeX writes as commands ({\O}stergaard, Gro{\ss}), and the Greek of titles ($\alpha$-helix).
_LATEX_LETTERS = {"O": "Ø", "o": "ø", "ss": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å", "AA": "Å",
                  "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "textmu": "µ", "textendash": "–", "textemdash": "—",
                  "textdegree": "°", "pm": "±", "times": "×", "leq": "≤", "geq": "≥", "le": "≤", "ge": "≥",
                  "sim": "~", "textbackslash": "\\"}
_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon "
          "phi chi psi omega").split()
_LATEX_LETTERS.update({name: chr(0x3B1 + i + (1 if i >= 17 else 0)) for i, name in enumerate(_GREEK)})
_LATEX_LETTERS.update({name.capitalize(): chr(0x391 + i + (1 if i >= 17 else 0)) for i, name in enumerate(_GREEK)})
_LATEX_LETTERS.update({"varepsilon": "ε", "vartheta": "ϑ", "varphi": "φ", "varsigma": "ς"})
_LATEX_COMMAND = re.compile(r"\\([a-zA-Z]+)(?:\{\}|\s*)")
_LATEX_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "c": "\u0327",
                  "v": "\u030c", "=": "\u0304", ".": "\u0307", "u": "\u0306", "H": "\u030b"}


def _delatex(s: str) -> str:
    import unicodedata

    s = re.sub(r"\\[ij]\b\s*", lambda m: m.group(0)[1], s) if re.search(r"\\[`'^\"~=.cvuH]\s*\{?\s*\\[ij]", s) else s
    s = re.sub(r"\\([`'^\"~=.])\s*\{?([A-Za-z])\}?", lambda m: m.group(2) + _LATEX_ACCENTS[m.group(1)], s)
    s = re.sub(r"\\([cvuH])(?:\{([A-Za-z])\}|\s+([A-Za-z]))",
               lambda m: (m.group(2) or m.group(3)) + _LATEX_ACCENTS[m.group(1)], s)
    s = s.replace("\\$", "\x00").replace("\\&", "&").replace("\\%", "%").replace("\\_", "_").replace("\\#", "#")
    s = s.replace("---", "—").replace("--", "–").replace("~", " ")
    # commands before the math shifts go: "$\beta$ and" keeps its space
    s = _LATEX_COMMAND.sub(lambda m: _LATEX_LETTERS.get(m.group(1), ""), s)
    s = s.replace("$", "").replace("\x00", "$")  # an escaped \$ stays a dollar
    return _ws(unicodedata.normalize("NFC", s.replace("{", "").replace("}", "")))


# A field whose value runs into the next field's name: the value's closing brace or quote is missing.
_RUN_ON = re.compile(r"[,\n]\s*(?:author|title|year|journal|booktitle|doi|file|volume|pages|number|abstract|"
                     r"publisher|url|editor|month|keywords|note|issn|isbn)\s*=\s*[{\"\d]", re.I)


def parse_bibtex(text: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(entry type, citation key, fields lower-cased) for each entry; @comment/@preamble skipped, @string
    abbreviations expanded where later entries use them. An entry whose braces do not balance gets a field
    "__error__" saying where (its value swallowed the fields after it)."""
    macros = dict(_MONTHS)
    oversize: set[str] = set()  # @string abbreviations past the limits: an entry that uses one is refused
    macros_size = 0
    for m in re.finditer(r"@\s*([A-Za-z]+)\s*([{(])", text):
        typ = m.group(1).lower()
        if typ == "string":
            sm = _FIELD.match(text, m.end())
            if sm:
                name = sm.group(1).lower()
                try:
                    value = _bib_value(text, sm.end(), macros, oversize,
                                       min(MAX_VALUE_CHARS, MAX_MACROS_CHARS - macros_size))[0]
                    macros_size += len(value)
                    macros[name] = value
                    oversize.discard(name)
                except _TooLarge:
                    oversize.add(name)
                    macros.pop(name, None)
            continue
        if typ in ("comment", "preamble"):
            continue
        i = m.end()
        km = _KEY.match(text, i)
        if not km:
            continue
        key = km.group(1)
        i = km.end()
        fields: dict[str, str] = {}
        n = len(text)
        entry_size = 0
        while i < n:
            fm = _FIELD.match(text, i)
            if not fm:
                break
            i = fm.end()
            start = i
            name = fm.group(1).lower()
            try:
                value, i = _bib_value(text, i, macros, oversize, min(MAX_VALUE_CHARS, MAX_ENTRY_CHARS - entry_size))
            except _TooLarge as exc:
                line = text.count("\n", 0, start) + 1
                via = f"the @string abbreviation {exc.args[0]} it uses" if exc.args and exc.args[0] else name
                fields = {"__error__": f"line {line}: {via} expands past {MAX_VALUE_CHARS:,} characters (or the "
                                       f"entry past {MAX_ENTRY_CHARS:,}): entry not read"}
                break
            entry_size += len(value)
            fields[name] = value
            if text[start:start + 1] in "{\"" and _RUN_ON.search(value) and "__error__" not in fields:
                line = text.count("\n", 0, start) + 1
                fields["__error__"] = (f"line {line}: the value of {name} has no closing "
                                       f"{'brace' if text[start] == '{' else 'quote'} (it runs into the next field)")
            while i < n and text[i] in " \t\r\n":
                i += 1
            if i < n and text[i] == ",":
                i += 1
                continue
            break
        yield typ, key, fields


# How reference managers escape a path in a BibTeX `file` field: Mendeley writes "C$\\backslash$:/Users/..." and
# "my\\_paper.pdf", JabRef and Zotero "C\\:\\\\Users\\\\..." (a backslash before ":", ";" and "\\").
_PATH_LATEX = (("$\\backslash$", "\\"), ("{\\textbackslash}", "\\"), ("\\textbackslash{}", "\\"),
               ("\\textbackslash ", "\\"), ("\\_", "_"), ("\\&", "&"), ("\\%", "%"), ("\\#", "#"),
               ("\\$", "$"), ("{\\~}", "~"), ("\\~{}", "~"), ("\\{", "{"), ("\\}", "}"))
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
# A file the entry names that is not the paper itself: the supplement, read only where the paper's PDF is not.
SUPPLEMENT = re.compile(r"supp(?:l|lement|lementary|orting)?(?![a-z])|appendix|(?<![a-z])esm(?![a-z])|[\s_-]si\d*$",
                         re.I)
_JABREF_DIR = re.compile(r"@comment\s*\{\s*jabref-meta:\s*fileDirectory(?:-[^:]*)?:(.*?);?\s*\}", re.I)


def _path_text(cand: str) -> str:
    """A path as the file field writes it, unescaped: LaTeX escapes, then JabRef's backslash escapes."""
    for latex, char in _PATH_LATEX:
        cand = cand.replace(latex, char)
    return re.sub(r"\\([:;\\])", r"\1", cand.strip())


def _places(cand: str, bases: list[Path]) -> list[Path]:
    """Where a path from a file field may be, most likely first: relative to each folder the .bib names (its own,
    JabRef's file directories); an absolute path whose leading "/" Mendeley dropped ("home/ann/x.pdf"); a Windows
    path from another computer, and any path that is not there, by its name beside the .bib (the PDFs copied with
    it)."""
    if _WINDOWS_PATH.match(cand):
        name = PureWindowsPath(cand).name
        return [Path(cand), *(b / name for b in bases)]
    p = Path(cand).expanduser()
    if p.is_absolute():
        return [p, *(b / p.name for b in bases)]
    out = [b / p for b in bases]
    out.append(Path("/", p))
    out.extend(b / p.name for b in bases)
    return out


def _bib_files(value: str, base: Path, dirs: tuple[Path, ...] = ()) -> list[Path]:
    """The PDFs a `file` field names, ";"-separated, ":" and ";" escaped with a backslash in JabRef's form. Each is
    "Description:path:Type" (JabRef, Zotero's export, Mendeley), "path:mime" (some Zotero exports) or a plain path
    (Better BibTeX); the path itself may hold colons ("C:\\...", "Smith 2020 - Aspirin: a review.pdf"), so every
    reading is tried, at every place it may be (_places), and the first that names an existing PDF wins (else the
    first that names a PDF at all, as written). Relative paths are read from `base` (the .bib's folder) and `dirs`
    (JabRef's file directories). A supplement ("Supplementary Material", "supp_1.pdf") comes after the others: the
    paper's text is read from the paper's PDF whatever order the manager listed the attachments in."""
    bases = [base, *dirs]
    found: list[tuple[bool, Path]] = []
    for part in re.split(r"(?<!\\);", value):
        part = part.strip()
        if not part:
            continue
        fields = re.split(r"(?<!\\):", part)
        readings = [":".join(fields[1:-1]), ":".join(fields[:-1]), ":".join(fields[1:]), part]
        written: list[Path] = []
        where: Path | None = None
        for cand in dict.fromkeys(_path_text(r) for r in readings):
            if not cand.lower().endswith((".pdf", ".pdf.gz")):
                continue
            places = _places(cand, bases)
            written.append(places[0])
            where = next((p for p in places if p.is_file()), None)
            if where is not None:
                break
        if where is None and not written:
            continue
        path = where or written[0]
        description = fields[0] if len(fields) >= 3 else ""
        found.append((bool(SUPPLEMENT.search(description) or SUPPLEMENT.search(path.stem)), path))
    return [p for _supp, p in sorted(found, key=lambda sp: sp[0])]


def _jabref_dirs(text: str, base: Path) -> tuple[Path, ...]:
    """The file directories a JabRef library names in its `@Comment{jabref-meta: fileDirectory...:dir;}` lines,
    where relative file paths are found (a relative directory is relative to the .bib's folder)."""
    out: list[Path] = []
    for m in _JABREF_DIR.finditer(text):
        d = Path(_path_text(m.group(1))).expanduser()
        if m.group(1).strip():
            out.append(d if d.is_absolute() else base / d)
    return tuple(dict.fromkeys(out))


def load_bibtex(path: Path) -> Result:
    text = _decode(path, _read_bytes(path), lenient=True)
    n = 0
    seen: set[str] = set()
    base = path.absolute().parent  # the paths stored are found again whatever folder the next command runs in
    dirs = _jabref_dirs(text, base)
    for typ, key, f in parse_bibtex(text):
        n += 1
        if "__error__" in f:
            yield IngestError(str(path), f"entry {key}: {f['__error__']}; fix the .bib and ingest it again")
            continue
        if key and key in seen:
            yield IngestError(str(path), f"entry {key}: a second entry with this key; only the first is read")
            continue
        seen.add(key)
        authors = [_bib_name(a) for a in _split_top(f.get("author", ""), r"\s+and\s+") if a.strip()]
        year_m = re.search(r"\d{4}", f.get("year", "") or f.get("date", ""))
        meta = {
            "title": _delatex(f.get("title", "")), "authors": authors, "year": int(year_m.group(0)) if year_m else None,
            "doi": _clean_doi(f.get("doi", "")), "journal": _delatex(f.get("journal", "") or f.get("booktitle", "")),
            "pmid": f.get("pmid", "").strip() or None, "abstract": _delatex(f.get("abstract", "")),
            "key": key, "type": typ,
        }
        files = _bib_files(f.get("file", ""), base, dirs) if f.get("file") else []
        yield _paper(path, meta, files, "bib")
    if n == 0:
        raise IngestError(str(path), "no BibTeX entries found")


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside braces: "{Centers for Disease Control and Prevention} and Ann Lee" is two
    authors, an organisation kept whole as BibTeX reads it."""
    parts, depth, start = [], 0, 0
    pattern = re.compile(sep)
    i = 0
    while i < len(text):
        c = text[i]
        depth += (c == "{") - (c == "}" and depth > 0)
        m = pattern.match(text, i) if depth == 0 else None
        if m and m.end() > i:
            parts.append(text[start:i])
            start = i = m.end()
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _name_first(name: str, ris: bool = False) -> str:
    """"Last, First" -> "First Last" ("García Márquez, Gabriel" stays so: see `person_name`); three parts are
    BibTeX's "Last, Jr., First", or with `ris` the RIS order "Last, First, Suffix"; commas inside braces belong to
    the name."""
    parts = [p.strip() for p in _split_top(_ws(name), ",")]
    if len(parts) == 2:
        return person_name(parts[1], parts[0])
    if len(parts) >= 3:
        return person_name(parts[1], parts[0], parts[2]) if ris else person_name(parts[2], parts[0], parts[1])
    return parts[0]


def _bib_name(name: str) -> str:
    """A BibTeX author as stored: "García Márquez, Gabriel" and "Gabriel {García Márquez}" (a braced family name)
    keep the whole family name; TeX accents and braces resolved."""
    parts = [p.strip() for p in _split_top(_ws(name), ",")]
    if len(parts) == 2:
        return person_name(_delatex(parts[1]), _delatex(parts[0]))
    if len(parts) >= 3:
        return person_name(_delatex(parts[2]), _delatex(parts[0]), _delatex(parts[1]))
    text = parts[0]
    depth, start = 0, -1
    for i, c in enumerate(text):
        if c == "{":
            start, depth = (i if depth == 0 else start), depth + 1
        elif c == "}" and depth > 0:
            depth -= 1
    if text.endswith("}") and depth == 0 and start > 0 and text[start - 1].isspace():
        family = _delatex(text[start:])
        if len(family.split()) > 1:  # "{García Márquez}": one family name of two words, as BibTeX reads it
            return person_name(_delatex(text[:start]), family)
    name = _delatex(text)
    words = name.split()
    # "Ana de Souza Santos": BibTeX's "First von Last", the family name from the first lower-case word on
    von = next((i for i in range(1, len(words) - 1) if words[i][:1].islower()), None)
    if von is None or _ORG.search(name) or (start == 0 and text.endswith("}")):  # braced whole: one name
        return name
    return person_name(" ".join(words[:von]), " ".join(words[von:]))


def _clean_doi(s: str) -> str | None:
    m = _DOI.search(unquote(s or ""))
    return m.group(0).rstrip(".,;}") if m else None


# -- RIS -------------------------------------------------------------------------------------------------------
_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -\s?(.*)$")


def load_ris(path: Path) -> Result:
    text = _decode(path, _read_bytes(path), lenient=True)
    rec: dict[str, list[str]] = {}
    n = 0
    last = ""
    wrapped: list[str] = []  # the lines a long value was wrapped onto, joined once (not per line: quadratic)

    def unwrap() -> None:
        if wrapped and last in rec:
            rec[last][-1] = " ".join([rec[last][-1], *wrapped]).strip()
        wrapped.clear()

    for line in text.splitlines():
        m = _RIS_TAG.match(line)
        if not m:
            if last in rec and line.strip():  # a long title or abstract wrapped onto the next lines (EndNote)
                wrapped.append(line.strip())
            continue
        unwrap()
        tag, value = m.group(1), m.group(2).strip()
        last = tag
        if tag == "ER":
            if rec:
                n += 1
                yield _ris_paper(path, rec, n)
            rec = {}
            continue
        rec.setdefault(tag, []).append(value)
    unwrap()
    if rec:
        n += 1
        yield _ris_paper(path, rec, n)
    if n == 0:
        raise IngestError(str(path), "no RIS records found (expected TY  - ... ER  - )")


def _endnote_pdf(rel: str, base: Path) -> Path:
    """The PDF an EndNote record names as internal-pdf://<folder>/<name>.pdf: in the PDF folder of an EndNote
    library (<Library>.Data/PDF) beside the export or one folder up; else the link as written, for the note."""
    rel = unquote(rel).lstrip("/")
    for folder in (base, base.parent):
        try:
            libraries = sorted(d for d in folder.iterdir() if d.name.lower().endswith(".data") and d.is_dir())
        except OSError:
            continue
        for lib in libraries:
            if (lib / "PDF" / rel).is_file():
                return lib / "PDF" / rel
    return Path(f"internal-pdf://{rel}")


def _ris_paper(path: Path, rec: dict[str, list[str]], n: int) -> ParsedPaper | IngestError:
    def one(*tags: str) -> str:
        return next((rec[t][0] for t in tags if rec.get(t)), "")

    year_m = re.search(r"\d{4}", one("PY", "Y1", "DA"))
    files: list[Path] = []
    for v in rec.get("L1", []) + rec.get("L4", []):
        if v.startswith("internal-pdf://"):  # EndNote: <Library>.Data/PDF/<folder>/<name>.pdf beside the library
            files.append(_endnote_pdf(v.removeprefix("internal-pdf://"), path.absolute().parent))
            continue
        p = Path(unquote(urlparse(v).path)) if v.startswith("file:") else Path(v).expanduser()
        files.append(p if p.is_absolute() else path.absolute().parent / p)
    meta = {
        "title": _ws(one("TI", "T1", "CT")),
        "authors": [_name_first(a, ris=True) for a in rec.get("AU", []) + rec.get("A1", [])],
        "year": int(year_m.group(0)) if year_m else None, "doi": _clean_doi(one("DO")),
        "journal": _ws(one("JO", "JF", "T2", "JA")), "pmid": None, "abstract": _ws(one("AB", "N2")),
        "key": one("ID") or f"{path.stem}-{n}", "type": one("TY").lower(),
    }
    return _paper(path, meta, [f for f in files if f.name.lower().endswith((".pdf", ".pdf.gz"))], "ris")


# -- CSL-JSON ----------------------------------------------------------------------------------------------------
def load_csl_json(path: Path) -> Result:
    try:
        data = json.loads(_decode(path, _read_bytes(path)))
    except json.JSONDecodeError as exc:
        raise IngestError(str(path), f"invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, list):
        raise IngestError(str(path), "expected a CSL-JSON array of items")
    for n, item in enumerate(data, 1):
        if not isinstance(item, dict):
            yield IngestError(str(path), f"item {n}: not an object")
            continue
        try:
            meta, files = _csl_item(path, n, item)
            got = _paper(path, meta, files, "csl")
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # one item with a field of the wrong type ("author": 5, a NUL in "file"): that item, in one line
            yield IngestError(str(path), f"item {n} ({str(item.get('id') or 'no id')[:60]}): a field of the wrong "
                                         f"type or shape ({type(exc).__name__}: {str(exc)[:120]}): item not read")
            continue
        yield got


def _csl_item(path: Path, n: int, item: dict[str, Any]) -> tuple[dict[str, Any], list[Path]]:
    """The entry's metadata and the PDFs it names; raises TypeError & co. for a field of the wrong type."""
    authors = []
    for a in item.get("author") or []:
        if isinstance(a, dict):
            # "non-dropping-particle" ("van"), "dropping-particle" ("de") and "suffix" belong to the name too
            family = " ".join(str(a.get(k) or "") for k in ("dropping-particle", "non-dropping-particle", "family"))
            name = person_name(str(a.get("given") or ""), family, str(a.get("suffix") or ""))
            authors.append(name or _ws(str(a.get("literal") or "")))
    parts = (item.get("issued") or {}).get("date-parts") if isinstance(item.get("issued"), dict) else None
    year = parts[0][0] if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0] else None
    if year is None and isinstance(item.get("issued"), dict):  # {"raw": "2020-03"} / {"literal": "Spring 2020"}
        raw = re.search(r"\b\d{4}\b", str(item["issued"].get("raw") or item["issued"].get("literal") or ""))
        year = raw.group(0) if raw else None
    files = [Path(str(f)).expanduser() for f in (item.get("file") if isinstance(item.get("file"), list)
                                                 else [item["file"]] if isinstance(item.get("file"), str) else [])]
    meta = {
        "title": _ws(str(item.get("title") or "")), "authors": [a for a in authors if a],
        "year": int(year) if isinstance(year, (int, str)) and str(year).isdigit() else None,
        "doi": _clean_doi(str(item.get("DOI") or "")), "journal": _ws(str(item.get("container-title") or "")),
        "pmid": str(item.get("PMID") or "") or None, "abstract": _ws(str(item.get("abstract") or "")),
        "key": str(item.get("id") or f"{path.stem}-{n}"), "type": str(item.get("type") or ""),
    }
    return meta, [f if f.is_absolute() else path.absolute().parent / f for f in files]


# -- shared --------------------------------------------------------------------------------------------------------
def _paper(path: Path, meta: dict[str, Any], files: list[Path], prefix: str) -> ParsedPaper | IngestError:
    """The entry as a paper: the first readable PDF it names for the text, the entry's metadata over the PDF's."""
    from evtui.ingest.pdf_worker import parse

    title = meta["title"]
    doi = meta["doi"]
    pid = f"doi:{doi}" if doi else f"{prefix}:{meta['key']}"
    problems: list[str] = []
    for f in files:
        if not f.is_file():
            hint = ""
            if _WINDOWS_PATH.match(str(f)):
                hint = f" (a path on a Windows computer: copy the PDF beside the {path.suffix or 'export'} and ingest " \
                       "it again)"
            elif str(f).startswith("internal-pdf:"):
                hint = " (in an EndNote library: put the export beside its .Data folder and ingest it again)"
            problems.append(f"file not found: {str(f).replace('internal-pdf:/', 'internal-pdf://', 1)}{hint}")
            continue
        got = parse(f)
        if isinstance(got, IngestError):
            problems.append(f"{f.name}: {got.reason}")
            continue
        got.id = pid
        got.title = title or got.title
        if title and got.sentences and got.sentences[0].section_kind == "title":
            got.sentences[0] = ParsedSentence(title, "Title", "title")
        got.authors = meta["authors"] or got.authors
        got.year = meta["year"] or got.year
        got.doi = doi or got.doi
        got.journal = meta["journal"] or None
        got.pmid = meta["pmid"]
        got.source_path = str(f)
        got.info["entry"] = str(path)
        if meta.get("type"):  # the export writes a chapter as @incollection, a thesis as @phdthesis, ...
            got.info["item_type"] = meta["type"]
        got.notes.extend(f"entry {meta['key']}: {problem}" for problem in problems)
        return got
    if not title:
        return IngestError(str(path), f"entry {meta['key']}: no title and no readable PDF")
    sents = [ParsedSentence(title, "Title", "title")]
    sents.extend(ParsedSentence(s, "Abstract", "abstract") for s in split_sentences(meta.get("abstract") or ""))
    p = ParsedPaper(id=pid, title=title, sentences=sents, authors=meta["authors"], year=meta["year"],
                    journal=meta["journal"] or None, doi=doi, pmid=meta["pmid"], source_path=str(path.absolute()))
    p.info = {"full_text": False, **({"item_type": meta["type"]} if meta.get("type") else {})}
    if problems:
        p.info["missing"] = problems[:5]
        p.notes.append(f"entry {meta['key']}: metadata only ({problems[0]})")
    return p
