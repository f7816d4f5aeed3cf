"""The app's one line for a failure a user can meet: the CLI's repair words, not an exception's type."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from evtui.repair import user_message
from evtui.tui.base import failure_text


def test_a_read_only_home_in_the_app_says_so() -> None:
    """The app on a read-only mount showed "IOException: IO Error: Cannot open file …": DuckDB's real error type,
    worded the way the CLI words it."""
    exc = duckdb.IOException('IO Error: Cannot open file "/mnt/ro/library.duckdb": Read-only file system')
    text = failure_text(exc)
    assert text.startswith("cannot write the library: the data home is read-only"), text
    assert "IOException" not in text and "/mnt/ro/library.duckdb" in text
    assert "at ." not in text  # no home to name: DuckDB's message names the file


def test_a_database_cut_short_in_the_app_is_damage() -> None:
    exc = duckdb.IOException('IO Error: Could not read enough bytes from file "/h/library.duckdb": attempted to '
                             "read 262144 bytes from location 11546624")
    assert "is damaged" in failure_text(exc) and "Restore library.duckdb from a backup" in failure_text(exc)
    assert "is damaged" in (user_message(exc, Path("/h")) or "")


def test_a_write_on_a_read_only_connection_is_not_called_a_read_only_home(tmp_path: Path) -> None:
    """A write outside Library.rw() is a bug: its type stays in the line, and no "data home is read-only" sends the
    user to check a mount that is fine."""
    db = tmp_path / "x.duckdb"
    duckdb.connect(str(db)).close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        with pytest.raises(duckdb.Error) as info:
            con.execute("CREATE TABLE t (a INTEGER)")
    finally:
        con.close()
    assert "read-only mode" in str(info.value)
    assert user_message(info.value, tmp_path) is not None  # still a message for the CLI (not a traceback)
    assert "data home is read-only" not in failure_text(info.value)
    assert "data home is read-only" not in (user_message(info.value, tmp_path) or "")


def test_a_database_invalidated_by_a_full_disk_is_not_called_damaged() -> None:
    """The app on a full disk failed its first write, and DuckDB's "database has been invalidated … Original error:
    Could not write file …: No space left on device" was read as damage ("invalid" + "file"): the user was told to
    restore library.duckdb from a backup or move it aside, for a library that is intact."""
    exc = duckdb.FatalException(
        "FATAL Error: Failed: database has been invalidated because of a previous fatal error. The database must be "
        'restarted prior to being used again. Original error: "Could not write file "/h/library.duckdb.wal": No '
        'space left on device"')
    for text in (failure_text(exc), user_message(exc, Path("/h")) or ""):
        assert "the disk is full" in text and "damaged" not in text and "Restore" not in text, text
        assert "No space left on device" in text  # the cause, not the 160 characters of preamble before it
