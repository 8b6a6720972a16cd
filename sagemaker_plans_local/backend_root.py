"""A backend's root directory: held exclusively while the backend lives; a temporary one is removed.

The hold is an exclusive, non-blocking ``flock`` on ``<root>/.sagemaker-plans-local.lock``
(which records the holder's pid), kept until :meth:`BackendRoot.release`.
The kernel drops it when the holding process dies, so a lock file left
behind by a dead process never blocks. Systems without ``fcntl`` (Windows)
get no lock.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no locking without it

LOCK_FILE = ".sagemaker-plans-local.lock"


class RootInUseError(RuntimeError):
    """Another live LocalBackend holds the root directory."""


class BackendRoot:
    """The root directory of one backend: ``path``, and whether the backend made it (``owned``)."""

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.owned = path is None
        if path is None:
            self.path = Path(tempfile.mkdtemp(prefix="sagemaker-plans-local-"))
        else:
            self.path = Path(path)
            self.path.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = _hold(self.path) if fcntl is not None else None

    def release(self) -> None:
        """Let the root go, removing it if the backend made it (called once, by the backend's close)."""
        fd, self._fd = self._fd, None
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)
        if fd is not None:
            os.close(fd)  # drops the lock


def _hold(path: Path) -> int:
    """Lock ``path``'s lock file for this process; its descriptor."""
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        who = "this process" if holder == str(os.getpid()) else f"process {holder}"
        raise RootInUseError(
            f"The root {path} is in use by another LocalBackend ({who}). Live backends cannot "
            "share a root yet: give this one its own root, or close the other first."
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
