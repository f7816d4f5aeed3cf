"""A Ctrl-C says what was kept and how to finish, for the verbs whose work is stored as it goes."""

from __future__ import annotations

from evtui.cli import build_parser
from evtui.cli.run import resume_hint


def test_interrupted_verbs_say_how_to_finish() -> None:
    parse = build_parser().parse_args
    assert "`evtui embed` again" in resume_hint(parse(["embed"]))
    assert "same `evtui ingest` again" in resume_hint(parse(["ingest", "papers/"]))
    bench = parse(["bench", "scifact", "--corpus", "c.jsonl", "--claims", "x.jsonl"])
    assert "--resume" in resume_hint(bench)
    assert resume_hint(parse(["search", "aspirin"])) == ""  # nothing stored, nothing to finish
