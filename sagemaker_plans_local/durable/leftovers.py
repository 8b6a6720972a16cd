"""What a killed process leaves on a root, removed when a backend opens it.

A process killed mid-write leaves temporary files (and directories it was
removing) in ``s3/.tmp``, named ``<pid>-<token>`` by their writer. On open,
each one whose writer is not among the live owners of the root
(``owners.live_pids``) is removed; a live process's are kept. A name without
a pid (written before names carried one) is removed once it has not been
modified for :data:`UNNAMED_SECONDS`. Dead owners' lock files go on the way.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from sagemaker_plans_local.durable import owners

#: Real seconds after which a temporary file whose name carries no pid is taken as left behind.
UNNAMED_SECONDS = 3600.0
#: The temporary directories of a root, relative to it.
TEMPORARY = ("s3/.tmp",)


def remove_leftovers(root: Path) -> int:
    """Remove the temporary files of dead writers under ``root``; how many entries went."""
    live = owners.live_pids(root)
    removed = 0
    for directory in TEMPORARY:
        try:
            entries = list(os.scandir(root / directory))
        except FileNotFoundError:
            continue
        for entry in entries:
            if _left_behind(entry, live):
                _remove(Path(entry.path))
                removed += 1
    return removed


def _left_behind(entry: os.DirEntry, live: set[int] | None) -> bool:
    pid, _, token = entry.name.partition("-")
    if pid.isdigit() and token:
        return live is not None and int(pid) not in live and int(pid) != os.getpid()
    try:
        return time.time() - entry.stat(follow_symlinks=False).st_mtime > UNNAMED_SECONDS
    except FileNotFoundError:
        return False  # gone meanwhile


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        path.unlink(missing_ok=True)
    except OSError:  # not ours to remove: it stays, the open goes on
        pass
