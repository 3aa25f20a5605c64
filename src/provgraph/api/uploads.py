"""Where uploaded files go on the server: inside their request's folder, under names a file system takes.

A name longer than a file system allows (255 bytes in UTF-8) is refused with one clear line
instead of failing half-way, and a request's folder goes whenever its files cannot all be saved.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from provgraph.errors import InputError

__all__ = ["NAME_MAX", "checked_part", "upload_name", "removed_on_failure"]

NAME_MAX = 255  # bytes in one path component (ext4, XFS, Btrfs, APFS, NTFS in UTF-16 units)


def checked_part(part: str) -> str:
    """``part`` (one component of an uploaded file's path) if a file system can hold it; else InputError."""
    size = len(part.encode("utf-8", errors="surrogatepass"))
    if size > NAME_MAX:
        raise InputError(f"uploaded file name {part[:40]!r}… is {size} bytes long: a file name has at most "
                         f"{NAME_MAX} bytes; rename the file")
    return part


def upload_name(name: str | None, index: int) -> str:
    """The server-side name of the ``index``-th uploaded file: its base name, or ``upload-N`` without one."""
    base = Path(name or "").name.strip()
    return checked_part(base) if base and base not in (".", "..") else f"upload-{index}"


@contextmanager
def removed_on_failure(folder: Path) -> Iterator[Path]:
    """``folder``, created; deleted with everything in it if the block fails."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
