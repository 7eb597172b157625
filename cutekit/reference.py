"""The CuTeDSL names the course uses: what each is, and which chapter says so (notebook 90's table).

    from cutekit import reference
    reference.lookup("sync_threads")    # cute.arch.sync_threads  Every thread of the block waits ... (chapter 05: Run it)

`lookup` takes part of a name (`"partition"`, `".load"`, `"cpasync"`); when no name contains it, it looks for
the word in the descriptions. The rows come from cutekit/reference_table.py, which scripts/vocabulary.py
writes from the chapters.
"""
from __future__ import annotations

from dataclasses import dataclass

from .reference_table import NAMES


@dataclass(frozen=True)
class Entry:
    name: str           # as the course writes it: `cute.arch.sync_threads`, `.partition_S` (a method)
    description: str
    chapter: str        # "05"
    section: str        # the heading of the prose that first says it


ENTRIES = tuple(Entry(*row) for row in NAMES)


class Found(tuple):
    """The entries a lookup found; shown as one line each."""

    word: str = ""

    def __repr__(self) -> str:
        if not self:
            return f"no CuTeDSL name of the course contains {self.word!r}, and no description says it"
        width = max(len(e.name) for e in self)
        return "\n".join(f"{e.name:{width}}  {e.description}  (chapter {e.chapter}: {e.section})" for e in self)


def lookup(word: str) -> Found:
    """Every entry whose name contains `word` (case ignored); if none does, every entry whose description
    says it."""
    if not isinstance(word, str) or not word.strip():
        raise ValueError(f"lookup takes part of a name, as text: lookup('partition_S'), not {word!r}")
    wanted = word.strip().lower()
    hits = [e for e in ENTRIES if wanted in e.name.lower()] or \
        [e for e in ENTRIES if wanted in e.description.lower()]
    found = Found(hits)
    found.word = word
    return found


__all__ = ["Entry", "lookup", "ENTRIES"]
