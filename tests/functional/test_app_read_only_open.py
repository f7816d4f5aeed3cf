"""The app's open (evtui.access.open_for_app): a data home that cannot be written (a colleague's shared library, a
read-only mount, a full disk) opens read-only with one short line saying so, where it used to fail outright with
"cannot write the library"; searching works, every write is refused in one line; a library another evtui is
writing is still refused ("in use by"), since a reader that stays open would keep that writer out."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

import evtui.access as access
from evtui.access import ReadOnlyLibrary, ReadOnlyLibraryError, open_for_app
from evtui.config import load_config
from evtui.errors import LibraryLockedError
from evtui.export import Basket
from evtui.search import Searcher


def test_a_read_only_home_opens_read_only_for_searching(unwritable_home: Path) -> None:
    lib, note = open_for_app(load_config())
    try:
        assert isinstance(lib, ReadOnlyLibrary) and lib.read_only
        assert note == "read-only: folder not writable"
        hits = Searcher(lib).search("ACE inhibitors cause cough", k=3, method="bm25").evidence
        assert hits and "cough" in hits[0].sentence.text.lower()
        with pytest.raises(ReadOnlyLibraryError) as refused:  # what the app's selection, ingest, cache go through
            with lib.rw():
                Basket(lib).add(hits[0], "ACE inhibitors cause cough", "bm25")
        assert "open read-only (folder not writable)" in str(refused.value) and "\n" not in str(refused.value)
    finally:
        lib.close()


def test_a_full_disk_opens_read_only(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = access.Library

    class FullDisk(base):  # type: ignore[misc, valid-type]
        """The fault: the writable open fails as on a full disk (its first write)."""

        def __init__(self, config: object, *, shared: bool = False, **kw: object) -> None:
            if shared:
                raise OSError(errno.ENOSPC, "No space left on device")
            super().__init__(config, shared=shared, **kw)

    monkeypatch.setattr(access, "Library", FullDisk)
    lib, note = open_for_app(load_config())
    try:
        assert lib.read_only and note == "read-only: disk full"
        with pytest.raises(ReadOnlyLibraryError, match="disk full"):
            lib.rw()
    finally:
        lib.close()


def test_a_writable_home_opens_shared(papers_ingested: Path) -> None:
    lib, note = open_for_app(load_config())
    try:
        assert note is None and lib.shared and not lib.read_only
        with lib.rw():
            lib.store.set_meta("written", "1")
    finally:
        lib.close()


HOLD = """
import sys
from evtui.config import load_config
from evtui.library import Library
lib = Library(load_config())
print("ready", flush=True)
sys.stdin.readline()
lib.close()
"""


def test_a_library_another_evtui_writes_is_still_refused(papers_ingested: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with pytest.raises(LibraryLockedError, match=f"in use by process {proc.pid}"):
            open_for_app(load_config())
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(timeout=60)
