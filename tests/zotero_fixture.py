"""A small Zotero data folder built at test time with Zotero's real schema.

The tables below are those evtui reads, as Zotero's resource/schema/userdata.sql (schema version 107,
github.com/zotero/zotero) creates them, plus the system tables (itemTypes, fields, fieldsCombined, creatorTypes)
from resource/schema/system.sql that the item rows refer to. Ids of types and fields are Zotero's own.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

USERDATA_DDL = """
CREATE TABLE version (schema TEXT PRIMARY KEY, version INT NOT NULL);
CREATE TABLE libraries (
    libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL, editable INT NOT NULL, filesEditable INT NOT NULL,
    version INT NOT NULL DEFAULT 0, storageVersion INT NOT NULL DEFAULT 0, lastSync INT NOT NULL DEFAULT 0,
    archived INT NOT NULL DEFAULT 0
);
CREATE TABLE items (
    itemID INTEGER PRIMARY KEY,
    itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL,
    key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key),
    FOREIGN KEY (libraryID) REFERENCES libraries(libraryID) ON DELETE CASCADE
);
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (
    itemID INT, fieldID INT, valueID,
    PRIMARY KEY (itemID, fieldID),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (fieldID) REFERENCES fieldsCombined(fieldID),
    FOREIGN KEY (valueID) REFERENCES itemDataValues(valueID)
);
CREATE TABLE itemAttachments (
    itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT, charsetID INT, path TEXT,
    syncState INT DEFAULT 0, storageModTime INT, storageHash TEXT,
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (parentItemID) REFERENCES items(itemID) ON DELETE CASCADE
);
CREATE TABLE creators (
    creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT,
    UNIQUE (lastName, firstName, fieldMode)
);
CREATE TABLE itemCreators (
    itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex),
    UNIQUE (itemID, orderIndex),
    FOREIGN KEY (itemID) REFERENCES items(itemID) ON DELETE CASCADE,
    FOREIGN KEY (creatorID) REFERENCES creators(creatorID) ON DELETE CASCADE
);
CREATE TABLE collections (
    collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL, parentCollectionID INT DEFAULT NULL,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key)
);
CREATE TABLE collectionItems (
    collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID)
);
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE fieldsCombined (
    fieldID INT NOT NULL, fieldName TEXT NOT NULL, label TEXT, fieldFormatID INT, custom INT NOT NULL,
    PRIMARY KEY (fieldID, custom)
);
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
"""

# Zotero's ids (system.sql)
ITEM_TYPES = {2: "book", 3: "attachment", 22: "journalArticle", 28: "note", 38: "annotation"}
FIELDS = {1: "title", 2: "abstractNote", 6: "date", 16: "extra", 26: "DOI", 38: "publicationTitle"}


class ZoteroFixture:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.db = folder / "zotero.sqlite"
        con = sqlite3.connect(self.db)
        con.executescript(USERDATA_DDL)
        con.execute("INSERT INTO version VALUES ('userdata', 107)")
        con.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (1, 'user', 1, 1)")
        con.executemany("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)", ITEM_TYPES.items())
        con.executemany("INSERT INTO fields VALUES (?, ?, NULL)", FIELDS.items())
        con.executemany("INSERT INTO fieldsCombined VALUES (?, ?, NULL, NULL, 0)", FIELDS.items())
        con.execute("INSERT INTO creatorTypes VALUES (8, 'author')")
        con.commit()
        con.close()
        self._next = 1

    def _con(self) -> sqlite3.Connection:
        return sqlite3.connect(self.db)

    def add_item(self, key: str, fields: dict[str, str], creators: list[tuple[str, str]] = (),  # type: ignore[assignment]
                 collections: list[str] = (), pdf: Path | None = None,  # type: ignore[assignment]
                 modified: str = "2024-01-01 10:00:00") -> int:
        con = self._con()
        item_id = self._next
        self._next += 2
        con.execute("INSERT INTO items (itemID, itemTypeID, dateModified, libraryID, key) VALUES (?, 22, ?, 1, ?)",
                    [item_id, modified, key])
        name_to_field = {v: k for k, v in FIELDS.items()}
        for name, value in fields.items():
            con.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", [value])
            vid = con.execute("SELECT valueID FROM itemDataValues WHERE value = ?", [value]).fetchone()[0]
            con.execute("INSERT INTO itemData VALUES (?, ?, ?)", [item_id, name_to_field[name], vid])
        for i, (first, last) in enumerate(creators):
            con.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, 0)", [first, last])
            cid = con.execute("SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ?",
                              [first, last]).fetchone()[0]
            con.execute("INSERT INTO itemCreators VALUES (?, ?, 8, ?)", [item_id, cid, i])
        for name in collections:
            row = con.execute("SELECT collectionID FROM collections WHERE collectionName = ?", [name]).fetchone()
            if row is None:
                con.execute("INSERT INTO collections (collectionName, libraryID, key) VALUES (?, 1, ?)",
                            [name, f"C{name[:6].upper()}"])
                row = con.execute("SELECT collectionID FROM collections WHERE collectionName = ?", [name]).fetchone()
            con.execute("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)", [row[0], item_id])
        if pdf is not None:
            att_key = f"A{key[1:]}"
            con.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, 3, 1, ?)",
                        [item_id + 1, att_key])
            con.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path)"
                        " VALUES (?, ?, 0, 'application/pdf', ?)", [item_id + 1, item_id, f"storage:{pdf.name}"])
            dest = self.folder / "storage" / att_key
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy(pdf, dest / pdf.name)
        con.commit()
        con.close()
        return item_id

    def touch(self, item_id: int, modified: str) -> None:
        con = self._con()
        con.execute("UPDATE items SET dateModified = ? WHERE itemID = ?", [modified, item_id])
        con.commit()
        con.close()
