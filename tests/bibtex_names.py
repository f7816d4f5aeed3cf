"""A test oracle: each author's family name as BibTeX itself reads an author field."""

from __future__ import annotations


def bib_families(field: str) -> list[str]:
    """"von Last, Jr, First" takes the part before the first comma; "First von Last" the last word (and any
    lower-case particles before it)."""
    out = []
    for name in field.split(" and "):
        if "," in name:
            out.append(name.split(",", 1)[0].strip())
        else:
            words = name.split()
            start = next((i for i in range(len(words) - 1) if words[i][:1].islower()), len(words) - 1)
            out.append(" ".join(words[start:]))
    return out
