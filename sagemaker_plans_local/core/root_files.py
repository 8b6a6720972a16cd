"""The files of a root: its owner's alone, never opened through a symbolic link.

A root's journal holds request bodies (a job's ``Environment`` included) and its runner runs the
jobs' commands, so what the package makes under a root is private to the user who made it
(directories 0700, files 0600), and a file at a fixed name (``runner.lock``, ``runner.log``, the
journal, an owner's lock, a server's records) is opened with ``O_NOFOLLOW``: a link planted there
would make the owner's process truncate or write whatever file it names (docs/durability.md,
"The trust model of a root").
"""

from __future__ import annotations

import os
from pathlib import Path

#: The mode of a file the package makes under a root.
FILE_MODE = 0o600
#: The mode of a directory the package makes under a root (and of a root it makes).
DIRECTORY_MODE = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UntrustedRoot(PermissionError):
    """A root, or a file of one, this user should not open (a link, another user's, open to all)."""


def linked(path: Path) -> UntrustedRoot:
    """The refusal of a symbolic link where a root's file or directory belongs."""
    return UntrustedRoot(
        f"{path} is a symbolic link: a root's files are never opened through one, so a link planted "
        "there cannot make this process write the file it names. Remove it if you trust the rest of "
        'the root (docs/durability.md, "The trust model of a root").'
    )


def open_file(path: Path, flags: int, mode: int = FILE_MODE) -> int:
    """``os.open`` of a root's file, never through a symbolic link (:class:`UntrustedRoot` if one)."""
    try:
        return os.open(path, flags | _NOFOLLOW | _CLOEXEC, mode)
    except OSError:
        if os.path.islink(path):
            raise linked(path) from None
        raise


def read_text(path: Path) -> str:
    """The text of a root's file (``FileNotFoundError`` if missing), not read through a link."""
    fd = open_file(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode()


def write_text(path: Path, text: str) -> None:
    """Replace a root's file with ``text``, atomically: written to ``<name>.partial`` (made afresh,
    private, never through a link), then renamed over ``path`` (a link there is replaced, not
    followed)."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)  # a link (or a file) left there goes; it is never written through
    fd = open_file(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode())
    os.replace(partial, path)


def private_directory(path: Path) -> Path:
    """``path`` as a directory of its own (made 0700 if missing; a link there refused)."""
    if path.is_symlink():
        raise linked(path)
    path.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    return path
