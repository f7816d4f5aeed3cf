"""Hostile use: queries through the CLI and the search service, SQL built only from constants, exports that
write exactly where they are told, XML that never reaches outside the file, and API keys that are never kept."""

from __future__ import annotations

import ast
import http.server
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_fault_server import FaultServer

from evtui.cli import main
from evtui.config import load_config
from evtui.errors import EvtuiError, QueryError
from evtui.export import Basket, write_export
from evtui.ingest import iter_papers
from evtui.library import Library
from evtui.models import ParsedPaper
from evtui.search import Searcher

ROOT = Path(__file__).parents[2]
EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
HOSTILE_QUERIES = [
    "title:foo AND (bar OR", "(aspirin, reduce, colorectal cancer", '"unbalanced quote', "((((((", "))",
    "*", "aspirin~2", "colorectal^3 cancer", "sentence_id:* OR *:*", "[1 TO 2] {a TO b}", "NOT OR AND",
    "'; DROP TABLE papers; --", "1; DELETE FROM sentences WHERE 1=1", "%s %d {0} {query}", "\\", "\\\\\"",
    "cough\x00\x07\x1b[31m with ACE", "\u202easpirin\u200b", "aspirin \ud800 cancer", "😀 IL-6 | TNF-α | COVID-19",
    "a" * 10_000, "aspirin " * 2000, "(" * 3000 + "aspirin", "| | |", "( , , )", "\t\n\r", "?", "",
]


@pytest.fixture
def lib(papers_library: Library) -> Iterator[Library]:
    yield papers_library


# -- queries -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["bm25", "bm25-coverage", "random", "best"])
def test_hostile_queries_through_the_search_service(lib: Library, method: str) -> None:
    searcher = Searcher(lib)
    before = lib.store.stats()
    for q in HOSTILE_QUERIES:
        # refused exactly when the (2,000-character) query holds no word at all
        wordless = not re.search(r"[^\W_]", q[:2000])
        try:
            res = searcher.search(q, k=3, method=method)
        except QueryError as exc:
            assert wordless, (q[:40], str(exc))
            assert str(exc).strip() and "Traceback" not in str(exc)
            continue
        assert not wordless
        assert res.query.text.encode("utf-8") and len(res.query.text) <= 2000
        json.dumps(res.to_json())
    assert lib.store.stats() == before


def test_hostile_queries_in_dense_and_hybrid(lib: Library) -> None:
    searcher = Searcher(lib)
    for method in ("dense", "hybrid"):
        for q in ("aspirin \ud800 cancer", "cough\x00 with ACE", "a" * 10_000, "title:foo AND (bar OR", "😀"):
            try:
                assert isinstance(searcher.search(q, k=3, method=method).evidence, list)
            except QueryError as exc:
                assert str(exc)


def test_hostile_queries_through_the_cli_json(papers_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(papers_dir), "--json"]) == 0
    capsys.readouterr()
    for q in HOSTILE_QUERIES:
        code = main(["search", q, "--json", "--k", "3", "--method", "bm25-coverage"])
        out, err = capsys.readouterr()
        doc = json.loads(out)  # stdout is one JSON document either way
        assert "Traceback" not in err
        if code == 0:
            assert set(doc) >= {"query", "mode", "aspects", "results"}
        else:
            assert code == 2 and doc["error"].strip()


def test_undecodable_argv_in_a_real_process(papers_dir: Path) -> None:
    """Bytes that are not UTF-8 on the command line arrive as lone surrogates; they must not crash the CLI."""
    assert main(["ingest", str(papers_dir)]) == 0
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for q in (b"aspirin \xff\xfe cancer", b"title:foo AND (bar OR \xc3"):
        proc = subprocess.run([sys.executable, "-m", "evtui.cli", "search", q, "--json", "--method", "bm25"],
                              capture_output=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        assert b"Traceback" not in proc.stderr
        assert "aspirin" in json.loads(proc.stdout)["query"].lower() or json.loads(proc.stdout)["results"] == []


# -- a broken config file ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    b'home = ""', b"home = 5", b"judge_model = 5", b'judge_api_base = ["http://x"]', b'keymap = "Q"',
    b"[keymap]\n\"app.quit\" = 1", b'k = "many"', b"theme = [1]", b"= =", b"\xff\xfe\x00binary",
])
def test_broken_config_is_a_clear_error(tmp_path: Path, text: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.toml").write_bytes(text)  # EVTUI_CONFIG points here (tests/conftest.py)
    with pytest.raises(EvtuiError, match="config"):
        load_config()
    assert main(["papers", "--json"]) == 2
    out, err = capsys.readouterr()
    assert "config" in json.loads(out)["error"] and "Traceback" not in err
    assert not (Path.cwd() / "library.duckdb").exists()


# -- SQL -------------------------------------------------------------------------------------------------------------
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|ATTACH|COPY|SET|WHERE|VALUES|FROM)\b")
# (file, expression) -> why a formatted value in SQL is safe. A new one must be added here with its reason.
_AUDITED = {
    ("evtui/store.py", "', '.join(_PAPER_COLUMNS)"): "a module constant: literal column names",
    ("evtui/store.py", "_SELECTION_COLUMNS"): "a module constant: literal column names",
    ("evtui/store.py", "memory_limit.strip()"): "checked against _MEMORY (digits + unit) before the statement",
    ("evtui/store.py", "_checked(limit)"): "_checked raises unless it is digits + unit (_MEMORY)",
    ("evtui/store.py", "_checked(current)"): "_checked raises unless it is digits + unit (_MEMORY)",
    ("evtui/judge/cache.py", "', '.join(_COLUMNS)"): "a module constant: literal column names",
    ("evtui/judge/cache.py", "', '.join(cols)"): "a local tuple of literal column names",
    ("evtui/judge/cache.py", "', '.join(('?' for _ in cols))"): "placeholders only",
    ("evtui/judge/cache.py", "updates"): "built from literal column names",
    ("evtui/judge/cache.py", "cols"): "_COLUMNS (literal names), or them with a literal '' AS lean",
    ("evtui/embed.py", "DIM"): "a module constant: the embedding width",
    ("evtui/paper_vectors.py", "DIM"): "a module constant: the embedding width",
    ("evtui/paper_vectors.py", "_CURRENT"): "a module constant: a literal join with a ? parameter",
    ("evtui/paper_vectors.py", "sql"): "embed.missing_query(): a literal query whose values are ? parameters",
    ("evtui/embed.py", "cond"): "a literal fragment with a ? parameter",
    ("evtui/embed.py", "where"): "literal filter fragments with ? parameters (load_matrix)",
    ("evtui/store.py", "self.memory_limit"): "checked against _MEMORY (digits + unit) in Store.__init__",
    ("evtui/ingest/zotero.py", "', '.join('?' * len(_SKIP_TYPES))"): "placeholders only",
    ("evtui/ingest/zotero.py", "', '.join('?' * len(ids))"): "placeholders only",
    ("evtui/ingest/zotero.py", "table"): "one of two literal table names (fieldsCombined / fields)",
}


def _sql_formatting(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, expression) for every value formatted into a string that reads like SQL: f-strings, .format(),
    % and + concatenation."""
    def sqlish(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return bool(_SQL.search(node.value))
        if isinstance(node, ast.JoinedStr):
            return any(sqlish(v) for v in node.values)
        if isinstance(node, ast.BinOp):
            return sqlish(node.left) or sqlish(node.right)
        return False

    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and sqlish(node):
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    yield node.lineno, ast.unparse(v.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
                and sqlish(node.func.value):
            yield node.lineno, ".format(...)"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add) and sqlish(node):
            for side in (node.left, node.right):
                if not isinstance(side, ast.Constant | ast.JoinedStr | ast.BinOp):
                    yield node.lineno, ast.unparse(side)


def test_every_sql_statement_is_parameterised() -> None:
    found: dict[tuple[str, str], int] = {}
    for f in sorted((ROOT / "evtui").rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        for line, expr in _sql_formatting(ast.parse(f.read_text(encoding="utf-8"))):
            found[(rel, expr)] = line
    unaudited = {f"{k[0]}:{line}: {k[1]}" for k, line in found.items() if k not in _AUDITED}
    assert not unaudited, f"values formatted into SQL (use ? parameters, or audit them in _AUDITED): {unaudited}"


def test_the_sql_check_can_fail() -> None:
    bad = ast.parse('con.execute(f"SELECT * FROM papers WHERE id = \'{pid}\'")\n'
                    'con.execute("DELETE FROM papers WHERE id = " + pid)\n'
                    'con.execute("SELECT * FROM t WHERE a = %s" % a)\n'
                    'con.execute("UPDATE t SET a = {}".format(a))\n'
                    'log(f"selected {n} papers")\n')
    assert sorted(_sql_formatting(bad)) == [(1, "pid"), (2, "pid"), (3, "a"), (4, ".format(...)")]


# -- export paths ------------------------------------------------------------------------------------------------
@pytest.fixture
def selected(lib: Library) -> Library:
    res = Searcher(lib).search("aspirin colorectal cancer", k=2, method="bm25")
    basket = Basket(lib)
    for e in res.evidence:
        basket.add(e, res.query, res.method)
    return lib


def _files(d: Path) -> set[str]:
    return {p.relative_to(d).as_posix() for p in d.rglob("*")}


def test_export_with_dotdot_writes_the_resolved_path_only(selected: Library, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    (out_dir / "sub").mkdir(parents=True)
    assert write_export(selected, out_dir / "sub" / ".." / "ev.md") == 2
    assert _files(out_dir) == {"sub", "ev.md"}  # no temp file left, nothing in sub/


def test_export_replaces_a_symlink_never_follows_it(selected: Library, tmp_path: Path) -> None:
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("keep me", encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "ev.md").symlink_to(victim)
    (out_dir / "dangling.md").symlink_to(tmp_path / "nowhere" / "x.md")
    write_export(selected, out_dir / "ev.md")
    write_export(selected, out_dir / "dangling.md", "jsonl")
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "nowhere").exists()
    assert not (out_dir / "ev.md").is_symlink() and (out_dir / "ev.md").read_text(encoding="utf-8").startswith("#")
    assert _files(out_dir) == {"ev.md", "dangling.md"}


@pytest.mark.parametrize("target,reason", [
    ("folder", "is a folder"), ("missing/ev.md", "does not exist"), ("afile/ev.md", "is a file"),
    ("link-to-folder", "is a folder"), ("x" * 300 + ".md", "cannot write"),
])
def test_export_bad_targets_are_clear_errors(selected: Library, tmp_path: Path, target: str, reason: str) -> None:
    d = tmp_path / "out"
    d.mkdir()
    (d / "folder").mkdir()
    (d / "afile").write_text("x", encoding="utf-8")
    (d / "link-to-folder").symlink_to(d / "folder")
    before = _files(d)
    with pytest.raises(EvtuiError, match=reason):
        write_export(selected, d / target)
    assert _files(d) == before


def test_failed_export_keeps_the_old_file_and_leaves_no_temp(selected: Library, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ev.md"
    out.write_text("old export", encoding="utf-8")

    def disk_full(src: str, dst: str) -> None:  # the fault: the final rename fails
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(EvtuiError, match="No space left"):
        write_export(selected, out)
    monkeypatch.undo()
    assert out.read_text(encoding="utf-8") == "old export" and _files(tmp_path) >= {"ev.md"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# -- XML never reaches outside the file ----------------------------------------------------------------------------
def test_xml_entities_files_and_network_are_never_touched(tmp_path: Path) -> None:
    hits: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"NETWORK-MARKER")

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    secret = tmp_path / "secret.txt"
    secret.write_text("FILE-MARKER", encoding="utf-8")
    doctypes = {
        "file": f'<!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>',
        "http": f'<!DOCTYPE r [<!ENTITY x SYSTEM "{base}/e">]>',
        "param": f'<!DOCTYPE r [<!ENTITY % p SYSTEM "{base}/p.dtd"> %p;]>',
        "dtd": f'<!DOCTYPE r SYSTEM "{base}/d.dtd">',
    }
    xinclude = f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{base}/xi" parse="text"/>'
    files: list[Path] = []
    for name, dt in doctypes.items():
        jats = tmp_path / f"{name}.jats.xml"
        jats.write_text(f'<?xml version="1.0"?>{dt.replace(" r ", " article ")}<article><front><article-meta>'
                        f'<article-id pub-id-type="pmc">77{len(files)}</article-id><title-group><article-title>'
                        f"T &x; {xinclude}</article-title></title-group></article-meta></front><body><p>Leak &x; "
                        "here. Another sentence.</p></body></article>", encoding="utf-8")
        bioc = tmp_path / f"{name}.bioc.xml"
        bioc.write_text(f'<?xml version="1.0"?>{dt.replace(" r ", " collection ")}<collection><document>'
                        f"<id>88{len(files)}</id><passage><text>Leak &x; here. {xinclude}</text></passage>"
                        "</document></collection>", encoding="utf-8")
        files += [jats, bioc]
    try:
        parsed = [p for f in files for p in iter_papers(f) if isinstance(p, ParsedPaper)]
        with Library(load_config()) as library:
            report = library.ingest(files)
            rows = library.store.con.execute("SELECT coalesce(string_agg(text, ' '), '') FROM sentences").fetchall()[0][0]
    finally:
        srv.shutdown()
    text = " ".join(s.text for p in parsed for s in p.sentences) + rows
    assert len(parsed) >= 4 and report.added >= 4  # the files still load, without the entities
    assert "FILE-MARKER" not in text and "NETWORK-MARKER" not in text
    assert hits == []


# -- API keys --------------------------------------------------------------------------------------------------------
KEYS = {
    "OPENAI_API_KEY": "sk-test-HOSTILE-openai-0b6e2f19c4",
    "ANTHROPIC_API_KEY": "sk-ant-HOSTILE-anthropic-7c1d93",
    "EVTUI_JUDGE_API_KEY": "sk-test-HOSTILE-judge-5a8f0e2d",
}
PASSWORD = "HOSTILE-pass-3e9b"


def test_api_keys_and_url_credentials_are_never_kept(papers_dir: Path, server: FaultServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    llm = ["--model", "openai/fault-model", "--api-base", server.api_base]
    # credentials in the URL, as some proxies want them: refused up front with a clear message (the HTTP client
    # would refuse them next to the key anyway, and a URL is echoed in logs)
    with_password = server.api_base.replace("http://", f"http://evtui:{PASSWORD}@")
    out_dir = tmp_path / "exports"
    out_dir.mkdir()
    assert main(["ingest", str(papers_dir)]) == 0
    assert main(["judge", "(aspirin, reduce, colorectal cancer)", "--judge", "llm", *llm, "--k", "3",
                 "--method", "bm25-coverage", "--json"]) == 0
    assert main(["judge", "Vitamin D may reduce fracture risk", "--judge", "llm", "--model", "openai/fault-model",
                 "--api-base", with_password, "--k", "2", "--method", "bm25-coverage", "--json"]) == 2
    assert "must not carry credentials" in capsys.readouterr().err
    server.default = "echo-auth"  # a careless server repeats the Authorization header in its error
    assert main(["judge", "ACE inhibitors cause cough", "--judge", "llm", *llm, "--k", "2",
                 "--method", "bm25-coverage", "--json"]) == 1  # no row got a verdict
    server.default = "ok"
    eb1 = tmp_path / "eb1.json"  # one item of the bench fixture: ~30 judge calls instead of ~90
    eb1.write_text(json.dumps(dict(list(json.loads(EB3.read_text(encoding="utf-8")).items())[:1])), encoding="utf-8")
    assert main(["bench", "evidencebench", "--data", str(eb1), "--task", "er-10", "--method", "llm-rerank",
                 *llm, "--json"]) == 0
    assert main(["bench", "runs", "--json"]) == 0
    assert main(["select", "(aspirin, reduce, colorectal cancer)", "--k", "2", "--method", "bm25"]) == 0
    for fmt in ("md", "jsonl", "bibtex"):
        assert main(["export", "--out", str(out_dir / f"ev.{fmt}"), "--format", fmt]) == 0
    out, err = capsys.readouterr()
    assert server.chat_requests(), "the judge must have reached the server"
    secrets = [*KEYS.values(), PASSWORD]
    # Output, evtui's own log records and every library's INFO and above carry neither keys nor the password.
    # (The openai client's DEBUG records show the request URL, password included: debug logging is opt-in.)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO or r.name.startswith("evtui"))
    assert not [s for s in secrets if s in out + err + logged], "a secret reached the output or the logs"
    assert not [s for s in KEYS.values() if s in caplog.text], "a key reached a debug log record"
    home = load_config().home
    files = [p for p in [*home.rglob("*"), *out_dir.iterdir()] if p.is_file()]
    assert any(p.name.endswith(".duckdb") for p in files) and any(p.suffix == ".jsonl" for p in files)
    for p in files:
        data = p.read_bytes()
        assert b"HOSTILE" not in data, p
