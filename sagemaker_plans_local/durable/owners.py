"""Which processes are alive on a root: each holds an ``flock`` on its own file under ``owners/``.

The kernel drops a lock when its process dies (even by ``kill -9``), so a
claimed run whose owner's file can be locked by someone else was left by a
dead process. Systems without ``fcntl`` (Windows) count an owner alive while
its file exists.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from sagemaker_plans_local.core.root_files import UntrustedRoot, open_file, private_directory, read_text

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no locking without it

OWNERS = "owners"
#: An owner's token (``uuid4().hex``), as the journal's ``runs`` table names it.
_TOKEN = re.compile(r"[0-9a-f]{32}")


class Owner:
    """This process's (one backend's) hold on a root: ``token`` names it in the journal."""

    def __init__(self, root: Path) -> None:
        self.token = uuid.uuid4().hex
        directory = private_directory(root / OWNERS)
        self._path = directory / f"{self.token}.lock"
        self._fd: int | None = open_file(self._path, os.O_RDWR | os.O_CREAT)
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(self._fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Let go (idempotent): this owner's runs now count as those of a dead process."""
        fd, self._fd = self._fd, None
        if fd is not None:
            self._path.unlink(missing_ok=True)
            os.close(fd)


def alive(root: Path, token: str) -> bool:
    """Whether the owner ``token`` of ``root`` still holds its lock."""
    if not _TOKEN.fullmatch(token):  # not one this package wrote: no file is named after it
        return False
    path = root / OWNERS / f"{token}.lock"
    try:
        fd = open_file(path, os.O_RDWR)
    except (FileNotFoundError, UntrustedRoot):
        return False
    try:
        if fcntl is None:  # pragma: no cover - Windows
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        path.unlink(missing_ok=True)  # left by a dead process
        return False
    finally:
        os.close(fd)


def live_pids(root: Path) -> set[int] | None:
    """The process ids of the owners alive on ``root`` (a dead one's file is removed on the way).

    None if a live owner's pid cannot be read yet (it has just taken its lock).
    """
    pids: set[int] = set()
    for path in (root / OWNERS).glob("*.lock"):
        if not alive(root, path.name[: -len(".lock")]):
            continue
        try:
            pids.add(int(read_text(path).strip()))
        except (OSError, ValueError):
            return None
    return pids
