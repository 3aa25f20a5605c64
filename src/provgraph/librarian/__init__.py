"""The librarian: documents, pages, sections, chunks and answers with their text.

``base`` holds the protocol and record types; ``sqlite`` the embedded backend.
"""

from provgraph.librarian.base import KINDS, Librarian, NewRecord, Record, RecordKind
from provgraph.librarian.sqlite import SqliteLibrarian

__all__ = ["KINDS", "Librarian", "NewRecord", "Record", "RecordKind", "SqliteLibrarian"]
