"""Whether this user may open a root, and the root made private to its owner before it is opened.

Opening a root replays its journal — which may start its jobs' commands — and loads its
snapshots, which are pickles: whoever prepared a root runs code as the user who opens it. So a
root is opened only by the user who owns its directory, never when every user may write that
directory, and never when a link stands where the package keeps a file or a directory (a link
there would make this process write or remove the file it names). A root that passes is made
private: its directory, its journal and its runner's files, and the directories holding objects,
instances and caches, are its owner's alone (docs/durability.md, "The trust model of a root").
"""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path
from typing import Iterator

from sagemaker_plans_local.core.root_files import (
    DIRECTORY_MODE,
    FILE_MODE,
    UntrustedRoot,
    linked,
    private_directory,
)

#: The directories the package keeps under a root (made private at open).
DIRECTORIES = ("owners", "s3", "runtime", "warm-pool-cache")
#: The files the package keeps at the top of a root (made private at open, when there).
FILES = tuple(f"state.sqlite3{suffix}" for suffix in ("", "-wal", "-shm", "-journal")) + (
    "runner.lock",
    "runner.log",
)
#: Where no link may stand, as name patterns under the root: every entry the package writes,
#: removes or opens through across processes, down to a run's instances (not inside them: a
#: run's tree is made afresh, and a virtualenv holds links of its own).
STRUCTURE: tuple[tuple[str, ...], ...] = (
    *((name,) for name in (*FILES, *DIRECTORIES)),
    ("owners", "*"),
    ("s3", "*"),  # buckets, .tmp, .uploads
    ("s3", "*", "*"),  # a bucket's data, meta and bucket.json; an upload
    ("runtime", "*"),  # regions
    ("runtime", "*", "*"),
    ("runtime", "*", "instances", "*"),  # jobs, pools
    ("runtime", "*", "instances", "*", "*"),  # a job or a pool
    ("runtime", "*", "instances", "*", "*", "*"),  # algo-<i>, venv, hosts, mpi-agent
    ("runtime", "*", "instances", "*", "*", "algo-*", "*"),  # opt, scratch, system, venv
    ("runtime", "*", "instances", "*", "*", "algo-*", "opt", "*"),  # ml
    ("runtime", "*", "instances", "*", "*", "venv", ".*"),  # what a kept virtualenv records
    ("runtime", "*", "instances", "*", "*", "algo-*", "venv", ".*"),
    ("warm-pool-cache", "*"),
    ("warm-pool-cache", "*", "*"),
)


def check_root(root: Path) -> None:
    """Refuse ``root`` (:class:`UntrustedRoot`) unless this user may open it; then make it private."""
    user = os.geteuid() if hasattr(os, "geteuid") else None  # Windows: no owners nor modes to check
    if user is not None:
        _check_owner(root, user)
    for link in _links(root):
        raise linked(link)
    if user is not None:
        _make_private(root, os.stat(root).st_mode)


def _check_owner(root: Path, user: int) -> None:
    given = os.lstat(root)
    if stat.S_ISLNK(given.st_mode) and given.st_uid != user:
        raise _foreign(root, given.st_uid, user)
    status = os.stat(root)
    if status.st_uid != user:
        raise _foreign(root, status.st_uid, user)
    for name in (*FILES, *DIRECTORIES):  # what the package keeps at its top: the owner's too
        try:
            owner = os.lstat(root / name).st_uid
        except FileNotFoundError:
            continue
        if owner != user:
            raise _foreign(root / name, owner, user)
    if status.st_mode & stat.S_IWOTH:
        raise UntrustedRoot(
            f"The root {root} may be written by every user of this machine, so anyone could have put "
            "what it holds there, and opening it runs that as you. Open only roots you trust: if you "
            'trust it, `chmod o-w` it (docs/durability.md, "The trust model of a root").'
        )


def _foreign(path: Path, owner: int, user: int) -> UntrustedRoot:
    return UntrustedRoot(
        f"{path} belongs to another user (uid {owner}; you are uid {user}). Opening the root "
        "would run what it holds — its jobs' commands, its snapshots — as you. Open only roots you "
        "trust: let its owner open it, or, if you trust it, copy it or chown it to you "
        '(docs/durability.md, "The trust model of a root").'
    )


def _links(root: Path) -> Iterator[Path]:
    for pattern in STRUCTURE:
        yield from _walk(root, pattern)


def _walk(directory: Path, pattern: tuple[str, ...]) -> Iterator[Path]:
    """The links among the entries matching ``pattern`` under ``directory`` (never through a link)."""
    head, rest = pattern[0], pattern[1:]
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if not fnmatch.fnmatchcase(entry.name, head):
            continue
        if not rest:
            if entry.is_symlink():
                yield Path(entry.path)
        elif entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), rest)


def _make_private(root: Path, mode: int) -> None:
    """The root and what the package keeps at its top: this user's alone (made so if they were not)."""
    if mode & 0o077:
        os.chmod(root, DIRECTORY_MODE)
    for name in DIRECTORIES:
        directory = private_directory(root / name)
        if directory.stat().st_mode & 0o077:
            os.chmod(directory, DIRECTORY_MODE)
    for name in FILES:
        try:
            if (root / name).stat().st_mode & 0o077:
                os.chmod(root / name, FILE_MODE)
        except FileNotFoundError:
            continue
