"""A Ctrl-C says what was kept and how to finish, for the verbs whose work is stored as it goes."""

from __future__ import annotations

from evtui.cli import _resume_hint, build_parser


def test_interrupted_verbs_say_how_to_finish() -> None:
    parse = build_parser().parse_args
    assert "`evtui embed` again" in _resume_hint(parse(["embed"]))
    assert "same `evtui ingest` again" in _resume_hint(parse(["ingest", "papers/"]))
    bench = parse(["bench", "scifact", "--corpus", "c.jsonl", "--claims", "x.jsonl"])
    assert "--resume" in _resume_hint(bench)
    assert _resume_hint(parse(["search", "aspirin"])) == ""  # nothing stored, nothing to finish
