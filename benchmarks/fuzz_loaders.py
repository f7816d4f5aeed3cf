"""Fuzz every loader with a corpus of mutated real files; fail on any crash, hang, leak or lost paper.

    python benchmarks/fuzz_loaders.py [--out DIR] [--n 1200] [--seed 0] [--timeout 20] [--workers 2] [--big 4]

1. Seeds: tests/fixtures/core/* plus, when ../shared/datasets is there, small samples of pmc-jats, bc5cdr (BioC and
   PubTator), scifact, check-covid and evidencebench; a BibTeX and a RIS export.
2. Corpus (>= --n files): truncated, bit-flipped, spliced, re-encoded (UTF-16 with and without BOM, UTF-8 BOM,
   Latin-1, cp1252, invalid UTF-8), wrong-schema JSON, wrong extensions, gzip-wrapped mutants, and fixed hostile
   files: 100k-level XML and JSON nesting, billion laughs, external entities (file:// to a secret marker,
   http:// to a loopback server that counts requests, external DTD, parameter entities, XInclude), --big 50 MB
   single-line files, zero-byte files, binary (random, gzip of garbage, corrupt gzip, PNG) disguised as every
   extension, regex-pathological text, undecodable file names, bad PDFs (no text layer, encrypted, a 200 MB
   stream bomb, 100k-level nesting, a 100,000-page tree, truncated and bit-flipped copies of the PDF fixtures).
3. Loaders: every file through `iter_papers` with auto detection and with every explicit format, each run in a
   worker process under a time bound (`--timeout`, a run past it is a hang and the worker is killed) and a memory
   limit. A run passes when it yields papers and/or IngestErrors that carry the file's path and a reason; any
   other exception, an "internal error" reason, a dead worker or the secret marker in parsed text is a crash.
4. Library: a library that already holds papers ingests the whole corpus through `Library.ingest` (in chunks,
   in a child process, each chunk time-bounded); afterwards every earlier paper is unchanged, DuckDB and the
   index agree (`check_consistency`), the marker is nowhere in DuckDB and the loopback server saw no request.

Prints a JSON summary; exits 1 on any crash, hang, leak or loss.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import io
import json
import multiprocessing as mp
import os
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "tests" / "fixtures" / "core"
PDF_FIXTURES = ROOT / "tests" / "fixtures" / "pdf"
_RIS_SEED = (b"TY  - JOUR\nTI  - Statins and LDL cholesterol\nAU  - Doe, Jane\nPY  - 2020\nDO  - 10.1000/statins.1\n"
             b"AB  - Statins lowered LDL cholesterol by 38%. The effect held in older adults.\nER  - \n")
SHARED = ROOT.parent / "shared" / "datasets"
MARKER = "EVTUI-FUZZ-SECRET-5f2c9a"  # the content of the file external entities point at
MEMORY_LIMIT = 4 * 2**30  # per worker: a runaway allocation is a crash (MemoryError), not a swapped-out machine
BIG_BYTES = 50 * 2**20
_OWN = ".evtui-fuzz"  # marks an --out folder as this script's, so a re-run may clear it
FORMATS = ("jats", "bioc", "pubtator", "cord", "corpus-jsonl", "evidencebench", "text")
EXTENSIONS = (".xml", ".json", ".jsonl", ".txt", ".md", ".gz", ".xml.gz", ".nxml")


@dataclass
class Seed:
    name: str
    data: bytes
    fmt: str


@dataclass
class FuzzFile:
    path: Path
    kind: str
    fmt: str  # the format of the seed it came from ("auto" when none), used for the library ingest


# -- seeds -----------------------------------------------------------------------------------------------------
_MD_SEED = b"""# Statins and LDL cholesterol in older adults

## Abstract

Statin therapy lowered LDL cholesterol by 38% (95% CI 33-42) in adults over 75. Fig. 1 shows the trend.

## Results

Atorvastatin (ATV) at 20 mg daily reduced LDL by 1.2 mmol/L compared with placebo (p < 0.001).
Myalgia was reported by 5.1% vs. 4.8% of patients.
"""


def _shared_samples() -> list[Seed]:
    """Small slices of the shared corpora, cut at record boundaries so the seed itself is valid."""
    out: list[Seed] = []
    if not SHARED.is_dir():
        return out
    for f in sorted((SHARED / "pmc-jats").glob("*.xml"))[:3]:
        out.append(Seed(f.name, f.read_bytes(), "jats"))
    pubtator = SHARED / "bc5cdr" / "CDR_TestSet.PubTator.txt"
    if pubtator.exists():
        docs = pubtator.read_bytes().split(b"\n\n")[:4]
        out.append(Seed("cdr.pubtator.txt", b"\n\n".join(docs) + b"\n", "pubtator"))
    bioc = SHARED / "bc5cdr" / "CDR_DevelopmentSet.BioC.xml"
    if bioc.exists():
        from lxml import etree

        root = etree.Element("collection")
        etree.SubElement(root, "source").text = "BC5CDR"
        for n, (_ev, doc) in enumerate(etree.iterparse(str(bioc), tag="document")):
            root.append(doc)
            if n >= 2:
                break
        out.append(Seed("cdr.bioc.xml", etree.tostring(root, xml_declaration=True, encoding="UTF-8"), "bioc"))
    for rel, name in (("scifact/corpus.jsonl", "scifact.jsonl"), ("check-covid/corpus.json", "checkcovid.json")):
        f = SHARED / rel
        if f.exists():
            with f.open("rb") as fh:
                out.append(Seed(name, b"".join(fh.readline() for _ in range(8)), "corpus-jsonl"))
    eb = SHARED / "evidencebench" / "evidencebench_dev_set.json"
    if eb.exists():
        items = list(json.loads(eb.read_bytes()).items())[:2]
        out.append(Seed("evidencebench.json", json.dumps(dict(items)).encode(), "evidencebench"))
    return out


def seeds(*, shared: bool = True) -> list[Seed]:
    from evtui.ingest import detect_format

    out = [Seed(f.name, f.read_bytes(), detect_format(f)) for f in sorted(CORE.iterdir()) if f.is_file()]
    out.append(Seed("statins.md", _MD_SEED, "text"))
    out.append(Seed("refs.bib", (PDF_FIXTURES / "refs.bib").read_bytes(), "bibtex"))
    out.append(Seed("refs.ris", _RIS_SEED, "ris"))
    if shared:
        out.extend(_shared_samples())
    return out


# -- mutations -------------------------------------------------------------------------------------------------
def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(1, max(2, len(data)))]


def _bitflip(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 2, 8, 32))):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _splice(rng: random.Random, data: bytes) -> bytes:
    """Delete, duplicate or insert a chunk (moved tags, doubled records, stray bytes)."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(buf))
        j = min(len(buf), i + rng.randint(1, 200))
        op = rng.random()
        if op < 0.4:
            del buf[i:j]
        elif op < 0.8:
            buf[i:i] = buf[i:j]
        else:
            buf[i:i] = rng.choice([b"\x00", b"\xff\xfe", b"<", b"&", b"]]>", b'"', b"{", b"\n\n", b"\\u", b"\xc3"])
        if not buf:
            buf = bytearray(b"x")
    return bytes(buf)


def _reencodings(data: bytes) -> dict[str, bytes]:
    text = data.decode("utf-8", errors="replace")
    invalid = bytearray(data)
    for i in range(0, len(invalid), max(1, len(invalid) // 7)):
        invalid[i:i + 1] = b"\xff\xc3\x28"
    return {
        "utf16-bom": text.encode("utf-16"),
        "utf16-nobom": text.encode("utf-16-le"),
        "utf8-bom": b"\xef\xbb\xbf" + data,
        "latin1": text.encode("latin-1", errors="replace"),
        "cp1252": text.encode("cp1252", errors="replace"),
        "invalid-utf8": bytes(invalid),
    }


_ODD_VALUES: list[Any] = [None, 0, -1, 1e308, 99999999999999999999, True, "", [], {}, [None], {"": None},
                          "\ud800", "x" * 5000, [[["deep"]]], {"text": 5}, "99999", -0.0]


def _wrong_schema(rng: random.Random, data: bytes, fmt: str) -> bytes:
    """Valid JSON of the wrong shape: values swapped for other JSON types, keys dropped, the top level changed."""
    docs = [json.loads(line) for line in data.splitlines() if line.strip()] if fmt == "corpus-jsonl" \
        else [json.loads(data)]
    if rng.random() < 0.15:
        docs = [rng.choice([docs, None, 42, "paper", [], [docs[0]], {"items": docs}])]
    else:
        docs = [_mutate_json(rng, d, 0) for d in docs]
    return "\n".join(json.dumps(d) for d in docs).encode("utf-8", "surrogatepass")


def _mutate_json(rng: random.Random, obj: Any, depth: int) -> Any:
    if isinstance(obj, dict):
        new: dict[str, Any] = {}
        for k, v in obj.items():
            r = rng.random()
            if r < 0.08:
                continue  # a missing key
            new[k] = rng.choice(_ODD_VALUES) if r < 0.25 else _mutate_json(rng, v, depth + 1)
        return new
    if isinstance(obj, list):
        items = [_mutate_json(rng, v, depth + 1) for v in obj[:50]]
        if items and rng.random() < 0.3:
            items[rng.randrange(len(items))] = rng.choice(_ODD_VALUES)
        return items
    return rng.choice(_ODD_VALUES) if rng.random() < 0.1 else obj


def _jats(body: str, doctype: str = "") -> bytes:
    return (f'<?xml version="1.0"?>{doctype}<article><front><article-meta><article-id pub-id-type="pmc">999'
            f"</article-id><title-group><article-title>Fuzz</article-title></title-group></article-meta></front>"
            f"<body><sec><title>Results</title><p>{body}</p></sec></body></article>").encode()


def _bioc(body: str, doctype: str = "") -> bytes:
    return (f'<?xml version="1.0"?>{doctype}<collection><source>fuzz</source><document><id>4242</id><passage>'
            f'<infon key="type">abstract</infon><offset>0</offset><text>{body}</text></passage></document>'
            f"</collection>").encode()


def _hostile_xml(secret: Path, http_base: str) -> dict[str, bytes]:
    laughs = "".join(f'<!ENTITY l{i} "&l{i - 1};&l{i - 1};&l{i - 1};&l{i - 1};&l{i - 1};&l{i - 1};'
                     f'&l{i - 1};&l{i - 1};&l{i - 1};&l{i - 1};">' for i in range(1, 10))
    bomb = f'<!DOCTYPE article [<!ENTITY l0 "lol">{laughs}]>'
    quadratic = f'<!DOCTYPE article [<!ENTITY q "{"Q" * 50_000}">]>'
    file_ent = f'<!DOCTYPE article [<!ENTITY x SYSTEM "file://{secret}">]>'
    http_ent = f'<!DOCTYPE article [<!ENTITY x SYSTEM "{http_base}/entity">]>'
    param = f'<!DOCTYPE article [<!ENTITY % p SYSTEM "{http_base}/param.dtd"> %p;]>'
    ext_dtd = f'<!DOCTYPE article SYSTEM "{http_base}/external.dtd">'
    file_dtd = f'<!DOCTYPE article SYSTEM "file://{secret}">'
    xinclude = (f'<x:include xmlns:x="http://www.w3.org/2001/XInclude" href="file://{secret}" parse="text"/>'
                f'<x:include xmlns:x="http://www.w3.org/2001/XInclude" href="{http_base}/xi" parse="text"/>')
    deep = "<sec>" * 100_000 + "x" + "</sec>" * 100_000
    out: dict[str, bytes] = {}
    for frame, make in (("jats", _jats), ("bioc", _bioc)):
        out[f"billion-laughs/{frame}"] = make("&l9;", bomb)
        out[f"billion-laughs/{frame}-quadratic"] = make("&q;" * 2000, quadratic)
        out[f"xxe/{frame}-file"] = make("Leak &x; here.", file_ent)
        out[f"xxe/{frame}-http"] = make("Leak &x; here.", http_ent)
        out[f"xxe/{frame}-param"] = make("Param entity.", param)
        out[f"xxe/{frame}-external-dtd"] = make("External DTD.", ext_dtd)
        out[f"xxe/{frame}-file-dtd"] = make("File DTD.", file_dtd)
        out[f"xxe/{frame}-xinclude"] = make(f"Include {xinclude} here.")
        out[f"deep-xml/{frame}"] = make(deep)
    out["deep-xml/bare"] = ("<a>" * 100_000 + "</a>" * 100_000).encode()
    out["deep-xml/unclosed"] = ("<article>" + "<sec>" * 100_000).encode()
    return out


def _pathological() -> dict[str, tuple[str, bytes]]:
    """Inputs aimed at the regexes and loops that once were quadratic (name -> (extension, content))."""
    return {
        "abbreviations": (".txt", b"Fig. A " * 150_000),
        "parentheses": (".md", b"# Title\n\n" + b"the tumor necrosis factor (TNF) " * 30_000),
        "licence": (".xml", _jats("Body text.").replace(
            b"<body>", b"<permissions><license>" + b"Creative Commons Attribution " * 40_000
            + b"</license></permissions><body>")),
        "headings": (".md", b"# " + b" #" * 500_000 + b"\n\nText.\n"),
        "underlines": (".md", (b"Title\n" + b"=" * 1000 + b"\n") * 5000),
        "pubtator-pipes": (".txt", b"1|t|" + b"|" * 1_000_000 + b"\n"),
        "deep-json": (".json", b"[" * 100_000 + b"]" * 100_000),
        "deep-json-obj": (".json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
        "many-records": (".jsonl", b"".join(
            json.dumps({"doc_id": i, "title": f"t{i}", "abstract": [f"Sentence {i}."]}).encode() + b"\n"
            for i in range(20_000))),
    }


def _display_hostile(big: int) -> dict[str, tuple[str, bytes]]:
    """Issue 16: text that attacks the terminal or the machine rather than the parser (kind/name -> (extension,
    content)): Rich markup and terminal escapes in titles and sentences, newline bombs, oversize sentences."""
    esc = "\u001b]0;PWNED\u0007\u001b[2J\u009b31m\r"
    markup = "Aspirin [/] colorectal [bold]cancer[/bold] [published erratum appears in Gut] [letter] [link=x]"

    def jsonl(title: str, sentences: list[str]) -> bytes:
        return (json.dumps({"doc_id": 1, "title": title, "abstract": sentences}) + "\n").encode()

    bomb = 600 * 2**20 if big else 24 * 2**20  # past the 512 MiB cap only in the full run (it takes seconds)
    return {
        "markup/jsonl": (".jsonl", jsonl(markup, [markup + ".", "[/] closes nothing."])),
        "markup/pubtator": (".txt", f"1|t|{markup}\n1|a|{markup}. [/]\n\n".encode()),
        "markup/md": (".md", f"# {markup}\n\n{markup}. More [/red] text.\n".encode()),
        "markup/jats": (".xml", _jats(f"{markup}.").replace(b"<article-title>Fuzz</article-title>",
                                                             f"<article-title>{markup}</article-title>".encode())),
        "control-chars/jsonl": (".jsonl", jsonl(f"Title {esc}", [f"Aspirin {esc} reduces cancer.", "\x00\x07\x1b"])),
        "control-chars/pubtator": (".txt", f"1|t|Title {esc}\n1|a|Aspirin {esc} reduced it.\n\n".encode()),
        "control-chars/md": (".md", f"# Title {esc}\n\nAspirin {esc} reduced it.\n".encode()),
        "newline-bomb/jsonl": (".jsonl.gz", jsonl("t", ["Aspirin reduces cancer."]) + b"\n" * bomb
                               + jsonl("u", ["After the bomb."]).replace(b'"doc_id": 1', b'"doc_id": 2')),
        "newline-bomb/pubtator": (".txt.gz", b"1|t|One\n1|a|Abstract.\n" + b"\n" * bomb + b"2|t|Two\n2|a|B.\n"),
        "newline-bomb/md": (".md.gz", b"# Title\n\nText.\n" + b"\r\n" * (bomb // 2) + b"More text.\n"),
        "oversize-sentence/jsonl": (".jsonl", jsonl("t", ["aspirin colorectal cancer reduce " * 32_000])),
        "oversize-sentence/md": (".md", b"# T\n\n" + b"aspirin colorectal cancer reduce " * 64_000 + b"\n"),
        "oversize-sentence/pubtator": (".txt", b"1|t|T\n1|a|" + b"aspirin cancer " * 100_000 + b"\n"),
    }


def _binaries(rng: random.Random) -> dict[str, bytes]:
    garbage = rng.randbytes(20_000)
    return {
        "random": garbage,
        "gzip-of-garbage": gzip.compress(garbage),
        "corrupt-gzip": gzip.compress(b"<article>" + b"x" * 50_000)[:30] + garbage[:5000],
        "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + garbage[:4000],
        "elf": b"\x7fELF\x02\x01\x01" + garbage[:4000],
        "utf16-garbage": b"\xff\xfe" + garbage[:4000],
    }


def _pdf(objs: list[bytes], trailer: bytes = b"") -> bytes:
    out = b"%PDF-1.4\n"
    offs = []
    for i, o in enumerate(objs, 1):
        offs.append(len(out))
        out += f"{i} 0 obj\n".encode() + o + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offs)
    return out + (f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R ".encode() + trailer
                  + f">>\nstartxref\n{xref}\n%%EOF\n".encode())


def _hostile_pdfs(rng: random.Random) -> dict[str, bytes]:
    """Bad PDFs: no text layer, encrypted, truncated, mutated, deeply nested, a stream bomb, page-count bomb."""
    base = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"]
    text = b"BT /F1 12 Tf 72 700 Td (Hello) Tj ET"

    def stream(data: bytes, extra: bytes = b"") -> bytes:
        return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"

    comp = zlib.compressobj(1)
    bomb = b"".join(comp.compress(b" " * 2**20) for _ in range(200)) + comp.flush()
    enc = b"<< /Filter /Standard /V 1 /R 2 /O <" + b"00" * 32 + b"> /U <" + b"11" * 32 + b"> /P -4 >>"
    kids = b" ".join(b"3 0 R" for _ in range(100_000))
    out = {
        "no-text": _pdf([*base, stream(text)]),
        "encrypted": _pdf([*base, stream(text), enc], b"/Encrypt 5 0 R /ID [<0102> <0102>] "),
        "stream-bomb": _pdf([*base, stream(bomb, b"/Filter /FlateDecode ")]),
        "nested": _pdf([*base[:2], base[2][:-2] + b"/Junk " + b"[" * 100_000 + b"]" * 100_000 + b" >>",
                        stream(text)]),
        "page-bomb": _pdf([base[0], b"<< /Type /Pages /Kids [" + kids + b"] /Count 100000 >>", base[2],
                           stream(text)]),
        "header-only": b"%PDF-1.7\n" + rng.randbytes(5000),
    }
    for f in sorted(PDF_FIXTURES.glob("*.pdf")):
        data = f.read_bytes()
        out[f"truncated-{f.stem}"] = data[:rng.randrange(1000, len(data))]
        flipped = bytearray(data)
        for _ in range(200):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        out[f"bitflip-{f.stem}"] = bytes(flipped)
    return out


def _big(kind: str) -> bytes:
    """~50 MB on one line."""
    if kind == "words":
        return b"word " * (BIG_BYTES // 5)
    if kind == "sentences":
        unit = b"Statins lowered LDL cholesterol by 38% in the treated arm. "
        return unit * (BIG_BYTES // len(unit))
    if kind == "jsonl":
        return json.dumps({"doc_id": 1, "title": "Big", "abstract": ["x " * (BIG_BYTES // 2)]}).encode()
    return _jats("Big block " * (BIG_BYTES // 10))


def build_corpus(out: Path, *, n: int = 1200, seed: int = 0, big: int = 4, shared: bool = True,
                 mutants: int | None = None, secret: Path | None = None,
                 http_base: str = "http://127.0.0.1:9") -> list[FuzzFile]:
    """Write the corpus into `out`: the fixed hostile files, re-encodings of every seed, then random mutants
    until there are `n` files (or exactly `mutants` of them). Returns the files with their mutation kind."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    secret = secret or out / "secret.txt"
    secret.write_text(MARKER, encoding="utf-8")
    files: list[FuzzFile] = []
    counter = Counter[str]()

    def put(kind: str, data: bytes, ext: str, fmt: str = "auto") -> None:
        counter[kind] += 1
        name = f"{kind.replace('/', '_')}-{counter[kind]:04d}{ext}"
        path = out / "corpus" / kind.split("/")[0] / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if ext.endswith(".gz") and not kind.startswith("binary"):
            data = gzip.compress(data, mtime=0)
        path.write_bytes(data)
        files.append(FuzzFile(path, kind.split("/")[0], fmt))

    def ext_of(s: Seed) -> str:
        return "".join(Path(s.name).suffixes[-1:]) or ".txt"

    # fixed hostile files
    for name, data in _hostile_xml(secret, http_base).items():
        fmt = "bioc" if "/bioc" in name else "jats"
        put(name, data, ".xml", fmt)
        if name.startswith("deep-xml") or name.endswith("http"):
            put(name, data, ".xml.gz", fmt)
    for name, (ext, data) in _pathological().items():
        put(f"pathological/{name}", data, ext)
    for name, (ext, data) in _display_hostile(big).items():
        put(name, data, ext)
    for ext in EXTENSIONS:
        put("zero-byte", b"", ext)
        put("whitespace-only", b" \n\t\r\n" * 100, ext)
        for name, data in _binaries(rng).items():
            put(f"binary/{name}", data, ext)
    for name, data in _hostile_pdfs(rng).items():
        put(f"pdf/{name}", data, ".pdf")
    big_kinds = ["words", "sentences", "jsonl", "xml"]
    for i in range(big):
        kind = big_kinds[i % len(big_kinds)]
        put("big-line", _big(kind), {"words": ".txt", "sentences": ".md", "jsonl": ".jsonl", "xml": ".xml"}[kind])
    # undecodable file names (bytes that are not UTF-8), with valid content
    for i, s in enumerate(seeds(shared=False)[:3]):
        path = Path(os.fsdecode(bytes(out / "corpus" / "odd-name") + b"/p\xff\xfe" + str(i).encode()
                                + ext_of(s).encode()))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s.data)
        counter["odd-name"] += 1
        files.append(FuzzFile(path, "odd-name", s.fmt))

    # mutants of real files, until the corpus has n files
    pool = seeds(shared=shared)
    json_seeds = [s for s in pool if s.fmt in ("cord", "corpus-jsonl", "evidencebench")]
    for s in pool:
        for enc, data in _reencodings(s.data).items():
            put(f"reencode/{enc}", data, ext_of(s), s.fmt)
    mutators: list[tuple[str, Callable[[random.Random, bytes], bytes]]] = [
        ("truncated", _truncate), ("bitflip", _bitflip), ("splice", _splice)]
    i = 0
    target = len(files) + mutants if mutants is not None else n
    while len(files) < target:
        s = pool[i % len(pool)]
        i += 1
        r = rng.random()
        if r < 0.2 and s in json_seeds:
            put("wrong-schema", _wrong_schema(rng, s.data, s.fmt), ext_of(s), s.fmt)
        elif r < 0.27:
            other = rng.choice([e for e in (".xml", ".json", ".jsonl", ".txt", ".md") if e != ext_of(s)])
            put("wrong-extension", s.data, other, s.fmt)
        elif r < 0.35:
            kind, fn = rng.choice(mutators)
            put("gzip-wrapped", fn(rng, s.data), ext_of(s) + ".gz", s.fmt)
        else:
            kind, fn = rng.choice(mutators)
            put(kind, fn(rng, s.data), ext_of(s), s.fmt)
    return files


# -- the loopback server external entities point at --------------------------------------------------------------
class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        _Recorder.hits.append(self.path)
        body = MARKER.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def start_recorder() -> tuple[http.server.ThreadingHTTPServer, str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


# -- phase 1: every loader on every file ---------------------------------------------------------------------------
def check_file(path: Path, fmt: str) -> dict[str, Any]:
    """One loader run: how it went. Never raises (that is what it checks)."""
    from evtui.errors import IngestError
    from evtui.ingest import INTERNAL_ERROR, iter_papers
    from evtui.models import ParsedPaper

    papers = errors = 0
    problems: list[str] = []
    try:
        for item in iter_papers(path, fmt):
            if isinstance(item, IngestError):
                errors += 1
                if item.path != str(path) or not item.reason.strip() or INTERNAL_ERROR in item.reason:
                    problems.append(f"unclear error: {item.path[-60:]!r}: {item.reason[:300]}")
            elif isinstance(item, ParsedPaper):
                papers += 1
                texts = [item.title, *(s.text for s in item.sentences)]
                if any(MARKER in t for t in texts):
                    problems.append("an external entity was resolved: the secret marker is in the parsed text")
                if papers <= 50:  # the first papers of a file: a 20,000-record file must stay quick
                    problems.extend(_display_problems(item))
            else:
                problems.append(f"unexpected item {type(item).__name__}")
    except BaseException as exc:  # noqa: BLE001 - any escape is the crash this harness looks for
        problems.append("".join(traceback.format_exception(exc))[-1500:])
    outcome = "crash" if problems else "ok" if papers and not errors else "partial" if papers else "clear-error"
    return {"outcome": outcome, "papers": papers, "errors": errors, "problems": problems}


_CONSOLE: Any = None


def _display_problems(paper: Any) -> list[str]:
    """What issue 16 forbids of a stored paper: a sentence over the ingest cap, or a title or sentence that the
    CLI and TUI helpers would not show as inert text (Rich markup read from it, a control character let through)."""
    from rich.console import Console
    from rich.errors import MarkupError
    from rich.text import Text

    from evtui.ingest import MAX_SENTENCE_CHARS
    from evtui.render import printable, safe

    out: list[str] = []
    if any(len(s.text) > MAX_SENTENCE_CHARS for s in paper.sentences):
        out.append(f"a sentence over {MAX_SENTENCE_CHARS} characters was stored")
    global _CONSOLE
    if _CONSOLE is None:
        _CONSOLE = Console(file=io.StringIO(), width=200, color_system=None)
    console = _CONSOLE
    for text in [paper.title, *(s.text for s in paper.sentences[:50])]:
        if any(ord(c) < 32 and c not in "\t\n" or 0x7f <= ord(c) <= 0x9f for c in printable(text)):
            out.append("a control character survives printable()")
        try:
            shown = Text.from_markup(safe(text), emoji=False).plain
        except MarkupError as exc:
            out.append(f"escaped text still read as markup: {exc}")
            continue
        if shown != printable(text):
            out.append(f"escaped text does not print as itself: {text[:80]!r}")
        console.print(Text(printable(text)))
    console.file = io.StringIO()  # keep nothing between papers
    return out[:3]


def _loader_worker(conn: Connection) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    while True:
        task = conn.recv()
        if task is None:
            return
        path, fmt = task
        t0 = time.perf_counter()
        res = check_file(Path(path), fmt)
        res["seconds"] = time.perf_counter() - t0
        res["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        conn.send(res)


class WorkerPool:
    """Long-lived worker processes, each running one task at a time under a deadline; a worker past its deadline
    is killed (the task is a hang) and replaced, one that dies is a crash."""

    def __init__(self, target: Callable[[Connection], None], size: int, hello: Any = None) -> None:
        self.ctx = mp.get_context("spawn")
        self.target = target
        self.size = size
        self.hello = hello  # sent to every (re)started worker first
        self.workers: list[tuple[Any, Connection]] = [self._spawn() for _ in range(size)]

    def _spawn(self) -> tuple[Any, Connection]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=self.target, args=(child,), daemon=True)
        proc.start()
        child.close()
        if self.hello is not None:
            parent.send(self.hello)
        return proc, parent

    def run(self, tasks: list[Any], timeout: Callable[[Any], float]) -> Iterator[tuple[Any, dict[str, Any]]]:
        pending = list(reversed(tasks))
        busy: dict[int, tuple[Any, float, float]] = {}  # worker slot -> (task, started, deadline)
        while pending or busy:
            for slot in range(self.size):
                if slot not in busy and pending:
                    task = pending.pop()
                    self.workers[slot][1].send(task)
                    now = time.monotonic()
                    busy[slot] = (task, now, now + timeout(task))
            conns = {self.workers[s][1]: s for s in busy}
            nearest = min(d for _t, _s, d in busy.values())
            ready = wait(list(conns), timeout=max(0.0, nearest - time.monotonic()))
            for slot in [conns[c] for c in conns if c in ready]:
                task, started, _d = busy.pop(slot)
                try:
                    yield task, self.workers[slot][1].recv()
                except (EOFError, OSError):
                    code = self.workers[slot][0].exitcode
                    yield task, {"outcome": "crash", "problems": [f"worker died (exit code {code})"],
                                 "seconds": time.monotonic() - started}
                    self._replace(slot)
            now = time.monotonic()
            for slot, (task, started, deadline) in list(busy.items()):
                if now >= deadline:
                    busy.pop(slot)
                    yield task, {"outcome": "hang", "problems": [f"no answer after {now - started:.0f} s"],
                                 "seconds": now - started}
                    self._replace(slot)

    def _replace(self, slot: int) -> None:
        proc, conn = self.workers[slot]
        proc.kill()
        proc.join()
        conn.close()
        self.workers[slot] = self._spawn()

    def close(self) -> None:
        for proc, conn in self.workers:
            try:
                conn.send(None)
            except OSError:
                pass
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()


# -- phase 2: the library keeps what it had -------------------------------------------------------------------------
def _library_worker(conn: Connection) -> None:
    """Opens the Library in the data home it is sent first; then answers ("ingest", paths, fmt) and
    ("verify", baseline) messages."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    from evtui.config import Config
    from evtui.ingest import INTERNAL_ERROR
    from evtui.library import Library

    lib = Library(Config(home=Path(conn.recv()), demo=False))
    while True:
        msg = conn.recv()
        if msg is None:
            lib.close()
            return
        t0 = time.perf_counter()
        if msg[0] == "ingest":
            try:
                rep = lib.ingest(msg[1], fmt=msg[2])
                bad = [f"{e.path[-60:]}: {e.reason[:200]}" for e in rep.errors
                       if INTERNAL_ERROR in e.reason or not e.reason.strip()]
                res: dict[str, Any] = {"outcome": "crash" if bad else "ok", "problems": bad, "added": rep.added,
                                       "replaced": rep.replaced, "errors": len(rep.errors)}
            except BaseException as exc:  # noqa: BLE001 - an ingest that raises loses the rest of the run
                res = {"outcome": "crash", "problems": ["".join(traceback.format_exception(exc))[-1500:]]}
        else:
            res = _verify(lib, msg[1])
        res["seconds"] = time.perf_counter() - t0
        res["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        conn.send(res)


def _snapshot(lib: Any) -> dict[str, Any]:
    rows = lib.store.con.execute("SELECT id, content_hash, n_sentences FROM papers ORDER BY id").fetchall()
    return {"papers": {r[0]: [r[1], r[2]] for r in rows}, "sentences": sorted(lib.store.all_sentence_ids())}


def _verify(lib: Any, baseline: dict[str, Any] | None) -> dict[str, Any]:
    snap = _snapshot(lib)
    check = lib.check_consistency()
    leaks = lib.store.con.execute(
        "SELECT count(*) FROM sentences WHERE contains(text, ?) OR contains(section_title, ?)",
        [MARKER, MARKER]).fetchone()[0]
    leaks += lib.store.con.execute("SELECT count(*) FROM papers WHERE contains(title, ?)", [MARKER]).fetchone()[0]
    res: dict[str, Any] = {"consistent": check["consistent"], "papers": len(snap["papers"]),
                           "sentences": len(snap["sentences"]), "marker_rows": leaks, "problems": []}
    if baseline is None:
        res["snapshot"] = snap
        return res
    lost = [pid for pid, v in baseline["papers"].items() if snap["papers"].get(pid) != v]
    have = set(snap["sentences"])
    missing = [sid for sid in baseline["sentences"] if sid not in have]
    if lost:
        res["problems"].append(f"papers changed or lost: {lost[:10]}")
    if missing:
        res["problems"].append(f"{len(missing)} sentences lost, e.g. {missing[:5]}")
    if not check["consistent"]:
        res["problems"].append(f"DuckDB and index disagree: {json.dumps(check, default=str)[:500]}")
    if leaks:
        res["problems"].append(f"the secret marker is stored in {leaks} rows")
    return res


def _baseline_files(dirpath: Path) -> list[Path]:
    """Papers the mutated corpus cannot collide with (ids of their own), ingested before the hostile files."""
    dirpath.mkdir(parents=True, exist_ok=True)
    lines = (CORE / "scifact5.jsonl").read_text(encoding="utf-8").splitlines()
    docs = [json.loads(line) for line in lines if line.strip()]
    for d in docs:
        d["doc_id"] = f"baseline-{d['doc_id']}"
    (dirpath / "baseline.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    jats = (CORE / "PMC2852030.xml").read_bytes().replace(b"2852030", b"990000001")
    (dirpath / "baseline-jats.xml").write_bytes(jats)
    (dirpath / "baseline-paper.md").write_bytes(_MD_SEED.replace(b"Statins", b"Baseline statins"))
    return sorted(dirpath.iterdir())


# -- main ------------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="corpus and library folder (default: a temp dir, removed after)")
    ap.add_argument("--n", type=int, default=1200, help="corpus size (at least)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a loader run may take on one file")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--big", type=int, default=4, help="how many 50 MB single-line files")
    ap.add_argument("--big-timeout", type=float, default=60.0,
                    help="seconds a loader run may take on a 50 MB file (it parses ~900k sentences)")
    ap.add_argument("--no-shared", action="store_true", help="seeds from tests/fixtures only")
    ap.add_argument("--chunk", type=int, default=40, help="files per Library.ingest call")
    ap.add_argument("--mutants", type=int, help="exactly this many random mutants (instead of filling up to --n)")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    out = args.out or Path(tempfile.mkdtemp(prefix="evtui-fuzz-"))
    if out.exists() and any(out.iterdir()):
        if not (out / _OWN).exists():  # only ever clear a folder this script made
            ap.error(f"{out} is not empty and was not made by this script; give an empty or new folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / _OWN).write_text("made by benchmarks/fuzz_loaders.py\n", encoding="utf-8")
    srv, http_base = start_recorder()
    _Recorder.hits.clear()
    corpus = build_corpus(out, n=args.n, seed=args.seed, big=args.big, shared=not args.no_shared,
                          mutants=args.mutants, http_base=http_base)
    t_built = time.perf_counter()
    failures: list[dict[str, Any]] = []
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    runs = Counter[str]()
    max_s = max_big = 0.0
    slowest = ""
    peak_rss = 0.0

    # phase 1
    tasks = [(str(f.path), fmt, f.kind) for f in corpus for fmt in ("auto", *FORMATS)]
    outcomes: dict[str, dict[str, str]] = defaultdict(dict)
    pool = WorkerPool(_loader_worker, args.workers)
    try:
        for (path, fmt, kind), res in _tagged(pool, tasks, args.timeout, args.big_timeout):
            runs[res["outcome"]] += 1
            outcomes[path][fmt] = res["outcome"]
            if kind == "big-line":
                max_big = max(max_big, res["seconds"])
            elif res["seconds"] > max_s:
                max_s, slowest = res["seconds"], f"{Path(path).name} ({fmt})"
            peak_rss = max(peak_rss, res.get("rss_mb", 0.0))
            if res["outcome"] in ("crash", "hang"):
                failures.append({"phase": "loader", "file": path[-120:], "kind": kind, "format": fmt,
                                 "outcome": res["outcome"], "problems": res["problems"][:3]})
    finally:
        pool.close()
    kind_of = {str(f.path): f.kind for f in corpus}
    # a file's outcome is its auto-detected run's, unless a run with an explicit format crashed or hung
    file_outcome = {path: next((o for o in ("crash", "hang") if o in by_fmt.values()), by_fmt["auto"])
                    for path, by_fmt in outcomes.items()}
    for path, outcome in file_outcome.items():
        per_kind[kind_of[path]][outcome] += 1
    t_loaders = time.perf_counter()

    # phase 2
    lib_pool = WorkerPool(_library_worker, 1, hello=str(out / "library-home"))
    library: dict[str, Any] = {}
    try:
        ((_t, res),) = list(lib_pool.run([("ingest", [str(p) for p in _baseline_files(out / "baseline")], "auto")],
                                         lambda _t: 120.0))
        ((_t, before),) = list(lib_pool.run([("verify", None)], lambda _t: 120.0))
        baseline = before.pop("snapshot")
        library["baseline_papers"] = before["papers"]
        library["baseline_sentences"] = before["sentences"]
        # each file first with its seed's format (the loader then parses what detection would refuse), then
        # all of them with format detection, as `evtui ingest` does; a 50 MB file goes alone
        chunks: list[tuple[str, list[str], str]] = [("ingest", [str(f.path)], "auto") for f in corpus
                                                    if f.kind == "big-line"]
        by_fmt: dict[str, list[str]] = defaultdict(list)
        for f in corpus:
            if f.kind != "big-line":
                by_fmt[f.fmt].append(str(f.path))
        by_fmt["auto"] += [str(f.path) for f in corpus if f.kind != "big-line" and f.fmt != "auto"]
        for fmt, paths in by_fmt.items():
            chunks += [("ingest", paths[i:i + args.chunk], fmt) for i in range(0, len(paths), args.chunk)]
        added = replaced = errors = 0
        for task, res in lib_pool.run(chunks, lambda t: 60.0 + args.timeout * 3 + 2.0 * len(t[1])):
            peak_rss = max(peak_rss, res.get("rss_mb", 0.0))
            added += res.get("added", 0)
            replaced += res.get("replaced", 0)
            errors += res.get("errors", 0)
            if res["outcome"] != "ok":
                failures.append({"phase": "library", "files": [p[-80:] for p in task[1][:5]], "format": task[2],
                                 "outcome": res["outcome"], "problems": res["problems"][:3]})
        ((_t, after),) = list(lib_pool.run([("verify", baseline)], lambda _t: 300.0))
        peak_rss = max(peak_rss, after.get("rss_mb", 0.0))
        library.update({"ingest_calls": len(chunks), "papers_added": added, "papers_replaced": replaced,
                        "file_errors_reported": errors, "papers_after": after["papers"],
                        "sentences_after": after["sentences"], "consistent": after["consistent"],
                        "baseline_intact": not after["problems"], "marker_rows": after["marker_rows"]})
        if after["problems"]:
            failures.append({"phase": "library", "outcome": "loss", "problems": after["problems"]})
    finally:
        lib_pool.close()
    srv.shutdown()
    if _Recorder.hits:
        failures.append({"phase": "network", "outcome": "leak",
                         "problems": [f"the loopback server was contacted: {_Recorder.hits[:5]}"]})
    t_end = time.perf_counter()

    summary = {
        "files": len(corpus),
        "files_by_kind": {k: sum(v.values()) for k, v in sorted(per_kind.items())},
        "outcome_by_kind": {k: dict(v) for k, v in sorted(per_kind.items())},
        "outcomes": dict(Counter(file_outcome.values())),
        "loader_runs": sum(runs.values()),
        "loader_run_outcomes": dict(runs),
        "crashes": sum(1 for f in failures if f["outcome"] == "crash"),
        "hangs": sum(1 for f in failures if f["outcome"] == "hang"),
        "max_seconds_per_run": round(max_s, 2),
        "slowest_run": slowest,
        "max_seconds_per_run_50mb": round(max_big, 2),
        "timeout_s": args.timeout,
        "timeout_50mb_s": args.big_timeout,
        "peak_rss_mb": round(peak_rss, 1),
        "network_requests": len(_Recorder.hits),
        "library": library,
        "seconds": {"build": round(t_built - t_start, 1), "loaders": round(t_loaders - t_built, 1),
                    "library": round(t_end - t_loaders, 1), "total": round(t_end - t_start, 1)},
        "shared_seeds": SHARED.is_dir() and not args.no_shared,
        "failures": failures[:50],
    }
    print(json.dumps(summary, indent=2, ensure_ascii=True))
    if args.out is None:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failures else 0


def _tagged(pool: WorkerPool, tasks: list[tuple[str, str, str]], timeout: float,
            big_timeout: float) -> Iterator[tuple[tuple[str, str, str], dict[str, Any]]]:
    """pool.run over (path, fmt) with each result paired with its full (path, fmt, kind) task."""
    kinds = {(p, f): k for p, f, k in tasks}
    for (path, fmt), res in pool.run([(p, f) for p, f, _k in tasks],
                                     lambda t: big_timeout if kinds[t] == "big-line" else timeout):
        yield (path, fmt, kinds[(path, fmt)]), res


if __name__ == "__main__":
    sys.exit(main())
