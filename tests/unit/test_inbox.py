"""The hand-over between a CLI and the open app (evtui/inbox.py): a request is taken once, answered, and one
nobody takes is withdrawn, so a later app never applies it."""

from __future__ import annotations

import threading
from pathlib import Path

from evtui import inbox


def test_a_request_is_taken_once_and_answered(tmp_path: Path) -> None:
    rid = inbox.post(tmp_path, {"kind": "select", "rows": [{"sentence_id": "p:1"}]})
    assert inbox.pending(tmp_path)
    taken = inbox.take(tmp_path)
    assert [(r, d["rows"] if d else None) for r, d in taken] == [(rid, [{"sentence_id": "p:1"}])]
    assert inbox.take(tmp_path) == [] and not inbox.pending(tmp_path)  # never twice
    assert not inbox.withdraw(tmp_path, rid)  # taken: too late to take it back
    inbox.answer(tmp_path, rid, {"added": ["p:1"]})
    assert inbox.await_answer(tmp_path, rid, 1.0) == {"added": ["p:1"]}
    assert list((tmp_path / inbox.INBOX).iterdir()) == []  # nothing left behind


def test_requests_come_in_posting_order(tmp_path: Path) -> None:
    ids = [inbox.post(tmp_path, {"kind": "select", "n": i}) for i in range(5)]
    assert [r for r, _d in inbox.take(tmp_path)] == ids


def test_a_request_nobody_takes_is_withdrawn(tmp_path: Path) -> None:
    rid = inbox.post(tmp_path, {"kind": "select"})
    assert inbox.await_answer(tmp_path, rid, 0.3, poll=0.05) is None
    assert inbox.take(tmp_path) == []  # an app opened later does not apply it


def test_the_poster_waits_for_an_answer_that_comes_while_it_waits(tmp_path: Path) -> None:
    rid = inbox.post(tmp_path, {"kind": "select"})

    def app() -> None:
        for r, _doc in inbox.take(tmp_path):
            inbox.answer(tmp_path, r, {"selection": ["a"]})

    timer = threading.Timer(0.3, app)
    timer.start()
    assert inbox.await_answer(tmp_path, rid, 5.0, poll=0.05) == {"selection": ["a"]}
    timer.join()


def test_a_taken_request_never_answered_ends_with_an_error(tmp_path: Path) -> None:
    rid = inbox.post(tmp_path, {"kind": "select"})
    inbox.take(tmp_path)  # an app that took it, then died
    reply = inbox.await_answer(tmp_path, rid, 0.1, poll=0.05, taken_wait=0.3)
    assert reply is not None and "no answer" in reply["error"]


def test_an_unreadable_request_is_taken_as_none(tmp_path: Path) -> None:
    (tmp_path / inbox.INBOX).mkdir()
    (tmp_path / inbox.INBOX / "0001-bad.request.json").write_text("{not json", encoding="utf-8")
    assert inbox.take(tmp_path) == [("0001-bad", None)]
