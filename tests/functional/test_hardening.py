"""Issue 16: one bad record must never break the library. Each test is one reproduction of the audit."""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from llm_fault_server import VALID, FaultServer
from rich.text import Text

from evtui.cli import main
from evtui.config import load_config
from evtui.ingest import MAX_SENTENCE_CHARS, iter_papers
from evtui.library import Library
from evtui.models import ParsedPaper
from evtui.query import compile_matcher, parse_query
from evtui.render import cell, highlight, printable, safe

ESC_TITLE = "\u001b]0;PWNED\u0007"
MARKUP_TITLE = "Aspirin [/] colorectal cancer [published erratum appears in Gut 2001] [letter]"


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _doc(i: int, title: str = "", abstract: list[str] | None = None) -> dict[str, object]:
    return {"doc_id": i, "title": title or f"Paper {i}", "abstract": abstract or ["Aspirin reduces colorectal cancer."]}


def _ok(items: list[object]) -> list[str]:
    return [x.id for x in items if isinstance(x, ParsedPaper)]


def _errors(items: list[object]) -> list[str]:
    return [getattr(x, "reason", "") for x in items if not isinstance(x, ParsedPaper)]


# -- 1. highlighting is linear; an absurd sentence is split at ingest ------------------------------------------------
def _steps(fn: Callable[[], object]) -> int:
    """How many Python and C calls (and generator resumptions) `fn` makes: a cost measure that no machine load
    can blur, unlike a wall-clock bound."""
    n = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal n
        n += 1

    sys.setprofile(count)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n


def test_highlighting_a_long_sentence_full_of_matches_is_linear() -> None:
    m = compile_matcher(parse_query("aspirin reduces colorectal cancer").aspects)
    # the quadratic version compared each match with every earlier one: 1 MB took 135 s
    small, large = (_steps(lambda n=n: m.spans("aspirin colorectal cancer reduce " * n)) for n in (1000, 2000))
    assert large < 2.5 * small, (small, large)
    text = "aspirin colorectal cancer reduce " * 16_000  # 512 KB, 64k words
    spans = m.spans(text)
    assert len(spans) == 48_000  # "colorectal cancer" is one span; every occurrence is found
    assert all(0 <= s.start < s.end <= len(text) for s in spans)


def test_highlighting_keeps_the_longest_match_and_no_overlap_per_aspect() -> None:
    m = compile_matcher(parse_query("(tumor necrosis factor, increases, IL-6)").aspects)
    spans = [(s.aspect, s.start, s.end) for s in m.spans("TNF tumor necrosis factor increased IL-6 and IL 6")]
    text = "TNF tumor necrosis factor increased IL-6 and IL 6"
    assert ("head", text.index("TNF"), 3) in spans and ("tail", text.index("IL-6"), text.index("IL-6") + 4) in spans
    by_aspect: dict[str, list[tuple[int, int]]] = {}
    for aid, a, b in spans:
        assert all(b <= s or e <= a for s, e in by_aspect.get(aid, []))
        by_aspect.setdefault(aid, []).append((a, b))


def test_an_absurd_sentence_is_split_at_ingest_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = _jsonl(tmp_path / "big.jsonl", [_doc(1, abstract=["aspirin colorectal cancer reduce " * 32_000]), _doc(2)])
    assert main(["ingest", str(big), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["papers_added"] == 2
    assert any("split into pieces" in n and "scifact:1" in n for n in report["notes"])
    assert main(["search", "aspirin reduces colorectal cancer", "--method", "bm25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"] and all(len(e["text"]) <= MAX_SENTENCE_CHARS for e in out["results"])
    with Library(load_config()) as lib:
        texts = [s.text for s in lib.store.sentences("scifact:1")]
    assert max(map(len, texts)) <= MAX_SENTENCE_CHARS
    assert " ".join(texts[1:]).split() == ("aspirin colorectal cancer reduce " * 32_000).split()  # nothing lost


# -- 2 and 3. paper text is never markup and never reaches the terminal raw ------------------------------------------
@pytest.fixture
def hostile_library(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "400")  # wide enough that no table cuts the titles
    f = _jsonl(tmp_path / "hostile.jsonl", [
        _doc(1, MARKUP_TITLE, ["Aspirin [/] reduces [bold]colorectal cancer[/bold] risk [letter]."]),
        _doc(2, f"Aspirin {ESC_TITLE} cancer", [f"Aspirin {ESC_TITLE} reduces colorectal \u009b31m cancer."]),
        {"doc_id": "[/]", "title": "", "abstract": []},  # "paper scifact:[/]: no text found"
    ])
    assert main(["ingest", str(f)]) == 0  # the human report: the error line carries [/]
    err = capsys.readouterr().err
    assert "scifact:[/]" in err and "Traceback" not in err
    return f


def _no_raw_controls(s: str) -> None:
    assert "\x1b" not in s and "\x07" not in s and "\x9b" not in s, repr(s[:200])


def test_papers_and_search_print_markup_literally(hostile_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["papers"]) == 0
    out = capsys.readouterr().out
    assert "Aspirin [/] colorectal cancer [published erratum appears in Gut 2001] [letter]" in out
    _no_raw_controls(out)
    assert main(["search", "aspirin reduces colorectal cancer", "--method", "bm25"]) == 0
    out = capsys.readouterr().out
    assert "[letter]" in out and "[bold]colorectal" in out and "PWNED" in out
    _no_raw_controls(out)


def test_json_output_keeps_the_stored_text(hostile_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "aspirin reduces colorectal cancer", "--method", "bm25", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\\u001b]0;PWNED\\u0007" in out  # escaped by JSON, stored as it came
    titles = {e["title"] for e in json.loads(out)["results"]}
    assert f"Aspirin {ESC_TITLE} cancer" in titles and MARKUP_TITLE in titles


def test_an_llm_rationale_is_shown_as_text(hostile_library: Path, server: FaultServer,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    server.verdict = lambda body: {**VALID, "rationale": f"Because {ESC_TITLE} [/] [red]it says so[/red]."}
    code = main(["judge", "aspirin reduces colorectal cancer", "--judge", "llm", "--model", "openai/fault",
                 "--api-base", server.api_base, "--k", "2", "--method", "bm25"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "[/] [red]it says so[/red]" in out.replace("\n", " ")
    _no_raw_controls(out)


def test_display_helpers() -> None:
    assert printable("a\x1b]0;x\x07b\tc\nd\x9be") == "a ]0;x b\tc\nd e"
    assert printable("a\nb\tc\u2028d", oneline=True) == "a b c d"
    assert safe("[/] [letter]") == "\\[/] \\[letter]"
    t = highlight("ab\x1bcd aspirin", compile_matcher(parse_query("aspirin").aspects).spans("ab\x1bcd aspirin"),
                  parse_query("aspirin").aspects)
    assert t.plain == "ab cd aspirin" and [(s.start, s.end) for s in t.spans] == [(6, 13)]  # offsets kept
    c = cell("[/] x\x1b")
    assert isinstance(c, Text) and c.plain == "[/] x "


def test_the_app_shows_hostile_titles_as_text(hostile_library: Path) -> None:
    from textual.widgets import DataTable
    from tui_pilot import run, started, until

    from evtui.tui.screens.library import LibraryScreen
    from evtui.tui.widgets import TextPane

    async def flow() -> None:
        async with started((160, 40)) as (app, pilot):
            screen = app.screen
            screen.query_one("#query").value = "aspirin reduces colorectal cancer"  # type: ignore[attr-defined]
            screen.query_one("#query").focus()
            await pilot.press("enter")
            await until(pilot, lambda: app.result is not None, "results")
            await pilot.pause(0.5)
            table = screen.query_one("#results", DataTable)
            col = table.get_column_index("sentence")
            cells = [table.get_cell_at((r, col)) for r in range(table.row_count)]
            assert cells
            assert all(isinstance(c, Text) for c in cells)
            shown = "\n".join(c.plain for c in cells)
            assert "[bold]colorectal" in shown and "[/]" in shown
            _no_raw_controls(shown)
            for r in range(table.row_count):
                table.move_cursor(row=r)
                await pilot.pause(0.3)
                _no_raw_controls(screen.query_one(TextPane).text.plain)
            app.notify(f"a {ESC_TITLE} [/] toast")  # a toast with a file name or an error from an LLM
            await until(pilot, lambda: any("toast" in str(n.message) for n in app._notifications), "the toast")
            assert [str(n.message) for n in app._notifications][-1] == "a  ]0;PWNED  [/] toast"
            await pilot.press("escape")
            await pilot.press("l")
            await until(pilot, lambda: isinstance(app.screen, LibraryScreen), "the library screen", timeout=5)
            papers = app.screen.query_one("#papers", DataTable)
            titles = [papers.get_cell_at((r, 2)) for r in range(papers.row_count)]
            assert any(isinstance(t, Text) and "[/] colorectal" in t.plain for t in titles)
            _no_raw_controls("\n".join(str(t) for t in titles))

    run(flow)


# -- 4. a total cap on decompressed bytes, for every format -----------------------------------------------------------
@pytest.mark.parametrize("name,body", [
    ("bomb.jsonl.gz", lambda: (json.dumps(_doc(1)) + "\n").encode() + b"\n" * 300_000 + b"x" * 10),
    ("bomb.pubtator.txt.gz", lambda: b"1|t|Title one\n1|a|Abstract one.\n" + b"\n" * 300_000),
    ("bomb.md.gz", lambda: b"# Title\n\nSome text here.\n" + b"\n" * 300_000),
    ("bomb.xml.gz", lambda: b"<collection><document><id>1</id></document>" + b" " * 300_000 + b"</collection>"),
])
def test_decompressed_size_is_capped_for_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                                      body: object) -> None:
    import evtui.ingest.reader as reader

    monkeypatch.setattr(reader, "MAX_DECOMPRESSED_BYTES", 200_000)
    f = tmp_path / name
    f.write_bytes(gzip.compress(body(), 9))  # type: ignore[operator]
    out = list(iter_papers(f))
    errors = _errors(out)
    assert len(errors) == 1 and f"{name}: more than 200,000 bytes of text once decompressed" in errors[0]
    if name.startswith("bomb.jsonl"):
        assert _ok(out) == ["scifact:1"]  # what came before the bomb is kept


def test_a_newline_bomb_is_skipped_fast(tmp_path: Path) -> None:
    f = tmp_path / "nl.jsonl.gz"
    with gzip.open(f, "wb", compresslevel=9) as fh:
        fh.write((json.dumps(_doc(1)) + "\n").encode())
        for _ in range(8):
            fh.write(b"\n" * (1 << 24))  # 128 MiB of newlines: 134M readline calls before
        fh.write((json.dumps(_doc(2)) + "\n").encode())
    out = list(iter_papers(f))
    assert _ok(out) == ["scifact:1", "scifact:2"] and not _errors(out)


def test_pubtator_line_numbers_survive_blank_runs(tmp_path: Path) -> None:
    f = tmp_path / "p.txt"
    f.write_bytes(b"1|t|One\n1|a|Abs.\n" + b"\n" * 5000 + b"2|t|Two\n2|a|Abs \xff.\n\n3|t|Three\n")
    out = list(iter_papers(f, "pubtator"))
    assert _ok(out) == ["PMID:1", "PMID:3"]
    assert _errors(out) == ["line 5004: not valid UTF-8; document 2 skipped"]


# -- 12. one bad record never loses the rest of the file --------------------------------------------------------------
def test_a_deeply_nested_json_line_loses_only_itself(tmp_path: Path) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_text(json.dumps(_doc(1)) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n" + json.dumps(_doc(2)) + "\n",
                 encoding="utf-8")
    out = list(iter_papers(f, "corpus-jsonl"))
    assert _ok(out) == ["scifact:1", "scifact:2"]
    assert _errors(out) == ["line 2: JSON nested too deeply"]


def test_invalid_utf8_in_pubtator_loses_only_its_document(tmp_path: Path) -> None:
    f = tmp_path / "cdr.pubtator.txt"
    f.write_bytes(b"1|t|Title one\n1|a|Abstract one.\n\n2|t|Bad \xff title\n2|a|Abs.\n2\t0\t3\tBad\tChemical\tD1\n\n"
                  b"3|t|Three\n3|a|Abstract three.\n")
    out = list(iter_papers(f))
    assert _ok(out) == ["PMID:1", "PMID:3"]
    assert _errors(out) == ["line 4: not valid UTF-8; document 2 skipped"]


def test_trailing_garbage_after_a_gzip_member_keeps_the_member(tmp_path: Path) -> None:
    data = (json.dumps(_doc(1)) + "\n" + json.dumps(_doc(2)) + "\n").encode()
    for name, tail in (("garbage.jsonl.gz", b"GARBAGE" * 20), ("zeros.jsonl.gz", b"\0" * 512)):
        f = tmp_path / name
        f.write_bytes(gzip.compress(data) + tail)
        out = list(iter_papers(f))
        assert _ok(out) == ["scifact:1", "scifact:2"] and not _errors(out), (name, out)
    two = tmp_path / "two.jsonl.gz"  # several members are one stream, as gzip -d reads them
    two.write_bytes(gzip.compress(data[: data.index(b"\n") + 1]) + gzip.compress(data[data.index(b"\n") + 1:]))
    assert _ok(list(iter_papers(two))) == ["scifact:1", "scifact:2"]
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(data * 2000)[:-40])
    assert any("ended before the end-of-stream" in e for e in _errors(list(iter_papers(cut))))


# -- 13. exports escape paper text for their format; 5. export targets ---------------------------------------------
@pytest.fixture
def hostile_selection(tmp_path: Path) -> Library:
    from evtui.export import Basket
    from evtui.search import Searcher

    f = _jsonl(tmp_path / "inject.jsonl", [_doc(
        7, "Aspirin </details><script>alert(1)</script> \\input{/etc/passwd} \\write18{rm -rf ~}",
        ["Aspirin reduces colorectal cancer <img src=x onerror=alert(1)> [click](javascript:alert(1)) "
         "![pixel](https://tracker.example/p.png) <https://evil.example> *x* `y` \\immediate\\write18{id}."])])
    lib = Library(load_config())
    lib.ingest([f])
    res = Searcher(lib).search("aspirin reduces colorectal cancer", k=3, method="bm25")
    for e in res.evidence:
        Basket(lib).add(e, res.query, res.method)
    return lib


def test_markdown_export_has_no_live_html_links_or_images(hostile_selection: Library, tmp_path: Path) -> None:
    from evtui.export import write_export

    out = tmp_path / "ev.md"
    with hostile_selection:
        write_export(hostile_selection, out, "md")
    text = out.read_text(encoding="utf-8")
    for live in ("</details>", "<script>", "<img", "](javascript:", "![pixel](", "<https://evil"):
        assert not re.search(r"(?<!\\)" + re.escape(live), text), live  # only escaped (\<img) forms remain
    assert "\\<script\\>" in text and "\\[click\\](javascript:alert(1))" in text  # still readable, as text


def test_bibtex_export_has_no_tex_commands(hostile_selection: Library, tmp_path: Path) -> None:
    from evtui.export import write_export

    out = tmp_path / "ev.bib"
    with hostile_selection:
        write_export(hostile_selection, out, "bibtex")
    text = out.read_text(encoding="utf-8")
    assert "\\input" not in text and "\\write18" not in text
    assert "\\textbackslash{}input(/etc/passwd)" in text
    assert text.count("{") == text.count("}")  # every field closes where it opened


def test_export_refuses_fifos_and_devices_and_keeps_a_files_mode(selection_lib: Library, tmp_path: Path) -> None:
    import os
    import stat

    from evtui.errors import EvtuiError
    from evtui.export import write_export

    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(EvtuiError, match="not a regular file"):
        write_export(selection_lib, fifo)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    if os.access("/dev/null", os.W_OK):
        dev = tmp_path / "null"
        os.symlink("/dev/null", dev)  # a link is replaced, never followed: the device itself stays
        write_export(selection_lib, dev)
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and dev.is_file() and not dev.is_symlink()
    with pytest.raises(EvtuiError, match="not a regular file"):
        write_export(selection_lib, Path("/dev/null"))  # refused before the rename, root or not
    kept = tmp_path / "shared.md"
    kept.write_text("old", encoding="utf-8")
    kept.chmod(0o644)
    write_export(selection_lib, kept)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o644 and kept.read_text(encoding="utf-8").startswith("# Evidence")
    new = tmp_path / "new.md"
    write_export(selection_lib, new)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.fixture
def selection_lib(papers_library: Library) -> Library:
    from evtui.export import Basket
    from evtui.search import Searcher

    res = Searcher(papers_library).search("aspirin colorectal cancer", k=2, method="bm25")
    for e in res.evidence:
        Basket(papers_library).add(e, res.query, res.method)
    return papers_library


# -- 9. the loopback rule --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("url,local", [
    ("http://127.0.0.1:8011/v1", True), ("http://127.1:8011/v1", True), ("http://localhost:1/v1", True),
    ("http://LOCALHOST./v1", True), ("http://[::1]:8011/v1", True), ("http://0.0.0.0:8011/v1", True),
    ("http://[::]:8011/v1", True), ("http://[::ffff:127.0.0.1]:8011/v1", True), ("http://[::ffff:7f00:1]/v1", True),
    ("http://2130706433/v1", True), ("http://[fe80::1%25eth0]/v1", False), ("http://10.0.0.1/v1", False),
    ("http://[::ffff:10.0.0.1]/v1", False), ("https://api.openai.com/v1", False), ("http://127.0.0.1.nip.io/", False),
    ("http://[bad/v1", False), (None, False),
])
def test_loopback_rule(url: str | None, local: bool) -> None:
    from evtui.judge.llm import is_loopback

    assert is_loopback(url) is local


def test_the_real_key_never_goes_to_an_unspecified_address(server: FaultServer,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from evtui.judge.llm import LOCAL_PLACEHOLDER_KEY, LLMClient

    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret-key-0123456789")
    for host in ("0.0.0.0", "[::ffff:127.0.0.1]"):
        client = LLMClient("openai/fault", f"http://{host}:{server.port}/v1", timeout=30, max_retries=0)
        assert client._api_key == LOCAL_PLACEHOLDER_KEY
    LLMClient("openai/fault", f"http://0.0.0.0:{server.port}/v1", timeout=30, max_retries=0).complete(
        [{"role": "user", "content": "hi"}])
    sent = [r["headers"].get("authorization", "") for r in server.chat_requests()]
    assert sent and all("sk-real-secret" not in h for h in sent)


# -- 10. Retry-After, and a server that stopped answering ------------------------------------------------------------
def test_retry_after_is_read_where_litellm_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import http.server
    import threading

    from evtui.judge import llm

    class Handler(http.server.BaseHTTPRequestHandler):
        calls = 0

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            Handler.calls += 1
            ok = Handler.calls > 1
            body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "hi"}}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                              if ok else {"error": {"message": "slow down", "type": "rate"}}).encode()
            self.send_response(200 if ok else 429)
            if not ok:
                self.send_header("retry-after", "7")
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    asked: list[float] = []
    real = llm.LLMClient._delay

    def spy(self: llm.LLMClient, attempt: int, exc: BaseException) -> float:
        asked.append(real(self, attempt, exc))
        return 0.01  # the test does not wait the 7 s

    monkeypatch.setattr(llm.LLMClient, "_delay", spy)
    try:
        client = llm.LLMClient("openai/m", f"http://127.0.0.1:{srv.server_address[1]}/v1", timeout=5, backoff=0.01)
        assert client.complete([{"role": "user", "content": "x"}]).text == "hi"
    finally:
        srv.shutdown()
        srv.server_close()
    assert len(asked) == 1 and 7.0 <= asked[0] <= llm.MAX_BACKOFF


def test_retry_after_forms() -> None:
    from email.utils import format_datetime
    from types import SimpleNamespace

    from evtui.judge.llm import retry_after

    def exc(headers: dict[str, str]) -> BaseException:
        e = Exception()
        e.litellm_response_headers = headers  # type: ignore[attr-defined]
        e.response = SimpleNamespace(headers={})  # type: ignore[attr-defined]
        return e

    assert retry_after(exc({"retry-after": "12"})) == 12.0
    import datetime

    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=20)
    assert 15 < (retry_after(exc({"retry-after": format_datetime(later, usegmt=True)})) or 0) <= 20
    assert retry_after(exc({"retry-after": "soon"})) is None and retry_after(exc({})) is None


def test_a_silent_server_is_given_up_on(server: FaultServer) -> None:
    from evtui.judge.llm import TIMEOUTS_IN_A_ROW, LLMJudge
    from evtui.models import Evidence, Sentence

    query = parse_query("(aspirin, reduce, colorectal cancer)")
    evidence = [Evidence(rank=i + 1, sentence=Sentence(f"p:{i}", "p", i, "Results", "results", False,
                                                       f"Aspirin reduced colorectal cancer by {i}%."),
                         title="t", score=1.0, highlights=[]) for i in range(8)]
    server.default, server.hang_seconds = "hang", 3.0
    judge = LLMJudge("openai/fault", api_base=server.api_base, timeout=0.3, max_retries=3, backoff=0.01,
                     concurrency=1)
    out = judge.judge(query, evidence)
    calls = len(server.chat_requests())
    # given up after TIMEOUTS_IN_A_ROW timed-out calls, not 8 items x 4 attempts; on a loaded machine a call can time
    # out before the server has logged its request, so the server may count fewer
    assert 1 <= calls <= TIMEOUTS_IN_A_ROW
    assert all(j.status == "skipped" and "server not answering" in (j.error or "") for j in out[1:])


# -- 6. a damaged index is rebuilt from DuckDB -----------------------------------------------------------------------
def _core_library(capsys: pytest.CaptureFixture[str]) -> Path:
    core = Path(__file__).parents[1] / "fixtures" / "core"
    assert main(["ingest", str(core), "--json"]) == 0
    capsys.readouterr()
    return load_config().home


@pytest.mark.parametrize("damage", ["garbage-meta", "deleted-store", "truncated-idx"])
def test_a_damaged_index_is_rebuilt_not_called_busy(damage: str, capsys: pytest.CaptureFixture[str]) -> None:
    home = _core_library(capsys)
    index = home / "index"
    if damage == "garbage-meta":
        (index / "meta.json").write_text("garbage", encoding="utf-8")
    elif damage == "deleted-store":
        next(index.glob("*.store")).unlink()
    else:
        with next(index.glob("*.idx")).open("r+b") as fh:
            fh.truncate(10)
    assert main(["stats", "--check", "--json"]) == 0
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert "in use by another process" not in err and "index was damaged" in err
    stats = json.loads(captured.out)
    assert stats["consistency"]["consistent"] and stats["index_docs"] == stats["sentences"]


# -- 7. a full disk: a clear message, a readable library, and the next open repairs ---------------------------------
def test_a_full_disk_keeps_the_library_readable(papers_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import shutil as _shutil
    from types import SimpleNamespace

    from evtui.index import SentenceIndex

    home = _core_library(capsys)
    with Library(load_config()) as lib:
        before = lib.store.stats()["papers"]
    real_commit, real_usage = SentenceIndex.commit, _shutil.disk_usage

    def killed(self: SentenceIndex) -> None:  # what Tantivy says when the disk fills under its writer
        raise ValueError("An error occurred in a thread: 'An index writer was killed.. A worker thread "
                         "encountered an error (io::Error most likely) or panicked.'")

    monkeypatch.setattr(SentenceIndex, "commit", killed)
    monkeypatch.setattr(_shutil, "disk_usage", lambda p: SimpleNamespace(total=1, used=1, free=0))
    main(["ingest", str(papers_dir), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert len(report["errors"]) == 1 and "disk is full" in report["errors"][0]["reason"]
    for verb in (["stats"], ["papers", "--json"], ["search", "aspirin colorectal cancer", "--method", "bm25"]):
        assert main(verb) == 0, verb  # still readable while the disk is full
        err = " ".join(capsys.readouterr().err.split())
        assert "disk is full" in err and "Traceback" not in err
    monkeypatch.setattr(SentenceIndex, "commit", real_commit)
    monkeypatch.setattr(_shutil, "disk_usage", real_usage)
    assert main(["stats", "--check", "--json"]) == 0  # space again: the next open finishes the indexing
    stats = json.loads(capsys.readouterr().out)
    assert stats["consistency"]["consistent"] and stats["papers"] == before + 3
    assert home.exists()


# -- 8. stats --check reads every table ------------------------------------------------------------------------------
def test_check_finds_database_corruption(capsys: pytest.CaptureFixture[str]) -> None:
    home = _core_library(capsys)
    import duckdb

    db = home / "library.duckdb"
    con = duckdb.connect(str(db), read_only=True)
    info = con.execute("SELECT block_id, block_offset FROM pragma_storage_info('papers') WHERE block_id >= 0"
                       ).fetchall()
    block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]
    con.close()
    assert info
    with db.open("r+b") as fh:  # garbage over the blocks that hold the papers table (after the 12 KB headers)
        for block_id, offset in info:
            fh.seek(3 * 4096 + block_id * block_size + offset)
            fh.write(bytes(range(256)) * 4)
    import subprocess

    for verb in (["stats", "--check"], ["papers"]):
        # a fresh process: this one's DuckDB may still cache the blocks it wrote
        proc = subprocess.run([sys.executable, "-m", "evtui.cli", *verb], capture_output=True, text=True,
                              timeout=120)
        err = " ".join(proc.stderr.split())
        assert proc.returncode == 2 and "damaged" in err and "Traceback" not in err, (verb, err)
    assert "Restore library.duckdb from a backup" in " ".join(err.split())


# -- 11. messages, not tracebacks -------------------------------------------------------------------------------------
@pytest.mark.parametrize("setup,expect", [
    ("garbage-db", "damaged"), ("zeroed-db", "damaged"), ("index-is-a-file", "cannot use"),
    ("db-is-a-folder", "database"),
])
def test_broken_data_homes_are_messages(setup: str, expect: str, capsys: pytest.CaptureFixture[str]) -> None:
    home = load_config().home
    home.mkdir(parents=True)
    if setup == "garbage-db":
        (home / "library.duckdb").write_bytes(b"garbage" * 1000)
    elif setup == "zeroed-db":
        (home / "library.duckdb").write_bytes(bytes(1 << 20))
    elif setup == "index-is-a-file":
        (home / "index").write_text("x", encoding="utf-8")
    else:
        (home / "library.duckdb").mkdir()
    for verb in (["stats"], ["search", "aspirin", "--method", "bm25"]):
        code = main(verb)
        err = " ".join(capsys.readouterr().err.split())
        assert code == 2 and expect in err and "Traceback" not in err, (setup, err)


def test_absurd_years_and_special_files_are_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    _core_library(capsys)
    assert main(["search", "aspirin", "--year-from", "99999999999999999999", "--method", "bm25"]) == 2
    assert "is not a year" in " ".join(capsys.readouterr().err.split())
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # reading it would hang forever
    for argv in (["bench", "evidencebench", "--data", str(fifo), "--task", "er-10", "--method", "bm25"],
                 ["bench", "evidencebench", "--data", "/dev/zero", "--task", "er-10", "--method", "bm25"],
                 ["bench", "scifact", "--corpus", str(fifo), "--claims", str(fifo), "--method", "bm25"],
                 ["bench", "checkcovid", "--corpus", str(fifo), "--claims", str(fifo), "--method", "bm25"]):
        assert main(argv) == 2, argv
        assert "not a regular file" in " ".join(capsys.readouterr().err.split())


# -- 14. one giant paper cannot exhaust the machine -----------------------------------------------------------------
def test_a_giant_paper_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evtui.ingest as ingest
    import evtui.rank.pipeline as pipeline
    from evtui.search import Searcher

    monkeypatch.setattr(ingest, "MAX_PAPER_SENTENCES", 300)
    monkeypatch.setattr(pipeline, "PAPER_CANDIDATES", 40)
    f = tmp_path / "book.md"
    f.write_text("# A very long paper\n\n" + "".join(
        f"Aspirin lowered the risk of colorectal cancer in cohort {i}. Patients in group {i} were followed. "
        for i in range(400)), encoding="utf-8")
    with Library(load_config()) as lib:
        report = lib.ingest([f])
        assert report.added == 1 and any("only its first 300 of" in n for n in report.notes)
        pid = lib.store.papers()[0].id
        assert len(lib.store.sentences(pid)) == 300
        res = Searcher(lib).search("aspirin reduces colorectal cancer", k=5, paper=pid, method="best")
        assert len(res.evidence) == 5 and any("ranked its 40 best word matches" in n for n in res.notes)


# -- 11. a read-only data home still serves searches ---------------------------------------------------------------
def test_a_read_only_home_searches_a_copy_of_its_index(papers_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Tantivy writes a lock file even to read; on a read-only mount (simulated: the open fails as it does there)
    the library searches a private copy of its index, removed on close, and says so."""
    import evtui.library.core as library_core

    with Library(load_config()) as lib:
        lib.ingest([papers_dir])
    real = library_core.open_backend

    def read_only_fs(config: object, *, writable: bool = True) -> object:
        raise ValueError("Failed to open index: IoError(Os { code: 30, kind: ReadOnlyFilesystem, message: "
                         "\"Read-only file system\" })")

    monkeypatch.setattr(library_core, "open_backend", read_only_fs)
    lib = Library(load_config(), read_only=True)
    try:
        snapshot = lib._snapshot_dir
        assert snapshot is not None and snapshot.is_dir()
        assert any("read-only" in n and "copy of its index" in n for n in lib.notes)
        from evtui.search import Searcher

        hits = Searcher(lib).search("aspirin colorectal cancer", k=3, method="bm25").evidence
        assert hits and "aspirin" in hits[0].sentence.text.lower()
    finally:
        lib.close()
    assert not snapshot.exists()
    monkeypatch.setattr(library_core, "open_backend", real)


# -- 6. a rebuild killed half way is started again -------------------------------------------------------------------
def test_a_rebuild_killed_before_its_commit_is_redone_by_the_next_open(papers_dir: Path) -> None:
    import os
    import shutil
    import subprocess

    with Library(load_config()) as lib:
        lib.ingest([papers_dir])
        n = lib.check_consistency()["db_sentences"]
    shutil.rmtree(load_config().index_path)  # damaged and removed: the next open rebuilds from DuckDB...
    code = ("import os\nfrom evtui.index import SentenceIndex\nfrom evtui.library import Library\n"
            "from evtui.config import load_config\n"
            "SentenceIndex.commit = lambda self: os._exit(9)\n"  # ...and is killed before the rebuild's commit
            "Library(load_config())\n")
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True, timeout=300)
    assert proc.returncode == 9, proc.stderr[-2000:]
    with Library(load_config()) as lib:  # the next open sees the unfinished rebuild and does it again
        check = lib.check_consistency()
        assert check["consistent"] and check["db_sentences"] == n, check


# -- 2. paper text is shown as written: no :emoji: codes either -----------------------------------------------------
def test_emoji_codes_in_paper_text_print_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "emo"
    d.mkdir()
    (d / "e.md").write_text("# Aspirin :smile: and colorectal cancer\n\n"
                            "Aspirin :warning: reduced colorectal cancer incidence.\n", encoding="utf-8")
    assert main(["ingest", str(d)]) == 0
    capsys.readouterr()
    assert main(["search", "aspirin colorectal cancer", "--k", "2", "--method", "bm25"]) == 0
    out = capsys.readouterr().out
    assert ":warning:" in out and "⚠" not in out and "😄" not in out
