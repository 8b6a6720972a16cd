"""The trust model of a root (issue 29, item 4): no file of a root is opened through a symbolic link,
no file of a root is readable by other users, and a root another user could have prepared is refused.

A "victim" is a file outside the root that a link planted in the root names: it must come out of
every test as it went in.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core import root_files
from sagemaker_plans_local.core.root_files import UntrustedRoot
from sagemaker_plans_local.durable import detached, leftovers
from sagemaker_plans_local.durable.runner import LOG_LIMIT
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import create_request

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
VICTIM = b"the victim's own bytes\n" * (3 * (1 << 20) // 23)  # about 3 MiB, over the log's limit
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim"
    path.write_bytes(VICTIM)
    return path


def made_root(tmp_path: Path) -> Path:
    """A root a backend made and closed: a job, a bucket with an object."""
    root = tmp_path / "root"
    with LocalBackend(root=root, start_time=START) as backend:
        backend.client().create_training_job(**create_request("made"))
        backend.client("s3").create_bucket(Bucket="kept")
        backend.client("s3").put_object(Bucket="kept", Key="k", Body=b"v")
    return root


@pytest.mark.parametrize("name", ["runner.lock", "runner.log", "state.sqlite3-wal", "state.sqlite3-shm"])
def test_a_root_holding_a_link_at_a_file_of_its_own_is_refused(tmp_path, victim, name):
    root = made_root(tmp_path)
    (root / name).unlink(missing_ok=True)
    (root / name).symlink_to(victim)
    with pytest.raises(UntrustedRoot, match="is a symbolic link"):
        LocalBackend(root=root, runner="detached")
    assert victim.read_bytes() == VICTIM


@pytest.mark.parametrize("where", ["owners", "s3/.tmp", "s3/kept/data", "runtime", "warm-pool-cache"])
def test_a_root_holding_a_link_at_a_directory_of_its_own_is_refused(tmp_path, where):
    root = made_root(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stale = elsewhere / "1-0123abcd"  # named as a dead writer's temporary file: leftovers would go
    stale.write_text("kept")
    os.utime(stale, (0, 0))
    if (root / where).exists():
        os.rename(root / where, tmp_path / "moved")
    (root / where).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UntrustedRoot, match="is a symbolic link"):
        LocalBackend(root=root)
    assert stale.read_text() == "kept"


@pytest.mark.parametrize("name", [detached.LOCK, detached.LOG])
def test_the_runner_never_opens_its_lock_or_log_through_a_link(tmp_path, victim, name):
    """A link planted after the root was opened: the runner's files are opened with O_NOFOLLOW."""
    root = made_root(tmp_path)
    (root / name).unlink(missing_ok=True)
    (root / name).symlink_to(victim)
    if name == detached.LOCK:
        with pytest.raises(UntrustedRoot):
            detached.running(root)
        detached.start(root, "123456789012", "us-east-1")  # its boot refuses the link and exits
    else:
        with pytest.raises(UntrustedRoot):
            detached.start(root, "123456789012", "us-east-1")
    assert victim.read_bytes() == VICTIM
    assert len(VICTIM) > LOG_LIMIT  # what a starting runner would have emptied as its own log


def test_a_record_naming_a_file_outside_its_bucket_removes_nothing_there(tmp_path, victim):
    root = made_root(tmp_path)
    record = next((root / "s3" / "kept" / "meta").iterdir())
    document = json.loads(record.read_text())
    document["data"] = "../../../../victim"  # from the bucket's data/: the victim, beside the root
    record.write_text(json.dumps(document))
    assert (root / "s3" / "kept" / "data" / document["data"]).resolve() == victim
    with LocalBackend(root=root) as backend:
        backend.client("s3").delete_object(Bucket="kept", Key="k")
        backend.client("s3").put_object(Bucket="kept", Key="k", Body=b"new")
    assert victim.read_bytes() == VICTIM


def test_a_journal_linking_elsewhere_is_refused(tmp_path):
    elsewhere = made_root(tmp_path)
    root = tmp_path / "other"
    root.mkdir()
    (root / "state.sqlite3").symlink_to(elsewhere / "state.sqlite3")
    with pytest.raises(UntrustedRoot, match="is a symbolic link"):
        LocalBackend(root=root)


def test_a_root_every_user_may_write_is_refused(tmp_path):
    root = made_root(tmp_path)
    os.chmod(root, 0o777)
    with pytest.raises(UntrustedRoot, match="may be written by every user"):
        LocalBackend(root=root)


@pytest.mark.skipif(not ROOT_USER, reason="giving a directory to another user needs root")
def test_a_root_of_another_user_is_refused_even_to_root(tmp_path):
    root = made_root(tmp_path)
    os.chown(root, 65534, 65534)
    with pytest.raises(UntrustedRoot, match="belongs to another user"):
        LocalBackend(root=root)
    with pytest.raises(UntrustedRoot, match="belongs to another user"):
        LocalBackend(root=root, runs_code=False)  # an observer too: opening loads its snapshots
    os.chown(root, os.getuid(), os.getgid())
    os.chown(root / "state.sqlite3", 65534, 65534)  # a journal put there by another user
    with pytest.raises(UntrustedRoot, match="state.sqlite3 belongs to another user"):
        LocalBackend(root=root)


def test_a_root_and_what_it_keeps_are_private(tmp_path):
    root = tmp_path / "made" / "root"
    with LocalBackend(root=root, start_time=START) as backend:
        backend.client().create_training_job(**create_request("private"))
        backend.client("s3").create_bucket(Bucket="kept")
        backend.client("s3").put_object(Bucket="kept", Key="k", Body=b"secret")
        detached.start(root, "123456789012", "us-east-1")  # its lock and log (it exits: a backend is open)
        assert_private(root)
    assert_private(root)
    kept = {"state.sqlite3", "runner.lock", "runner.log", "owners", "s3", "runtime", "warm-pool-cache"}
    assert kept <= {entry.name for entry in root.iterdir()}


def assert_private(root: Path) -> None:
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for entry in root.iterdir():
        wanted = 0o700 if entry.is_dir() else 0o600
        assert (entry.name, stat.S_IMODE(entry.lstat().st_mode)) == (entry.name, wanted)


def test_an_older_root_is_made_private_when_opened(tmp_path):
    root = made_root(tmp_path)
    os.chmod(root, 0o755)
    for entry in root.iterdir():
        os.chmod(entry, 0o755 if entry.is_dir() else 0o644)
    with LocalBackend(root=root):
        pass
    assert_private(root)


@pytest.mark.skipif(not ROOT_USER, reason="reading as another user needs root to become one")
def test_another_user_cannot_read_a_roots_journal_or_objects():
    base = Path(tempfile.mkdtemp())  # under /tmp: every directory above it may be walked by anyone
    os.chmod(base, 0o755)
    try:
        assert_unreadable_by_others(made_root(base))
    finally:
        shutil.rmtree(base)


def assert_unreadable_by_others(root: Path) -> None:
    for path in (root / "state.sqlite3", next((root / "s3" / "kept" / "data").iterdir())):
        reader = subprocess.run(
            [sys.executable, "-c", "import os, sys; os.setuid(65534); open(sys.argv[1], 'rb').read()", path],
            capture_output=True,
            text=True,
        )
        assert "PermissionError" in reader.stderr, (path, reader.returncode, reader.stderr)


def test_a_servers_records_are_never_written_through_a_link(tmp_path, victim):
    root = tmp_path / "served"
    with LocalServer(start_time=START, root=root):
        pass
    for name in ("clock.json.partial", "dues.json.partial", "server.json.partial"):
        (root / name).symlink_to(victim)
    with LocalServer(start_time=START, root=root) as server:
        server.accounts.backend("123456789012")
        server.accounts.advance(60)
    assert victim.read_bytes() == VICTIM
    (root / "clock.json").unlink()
    (root / "clock.json").symlink_to(victim)
    with pytest.raises(UntrustedRoot):
        LocalServer(start_time=START, root=root)
    assert victim.read_bytes() == VICTIM


def test_a_leftover_link_in_a_temporary_directory_is_removed_not_followed(tmp_path, victim):
    root = made_root(tmp_path)
    (root / "s3" / ".tmp" / "1-0123abcd").symlink_to(victim)
    assert leftovers.remove_leftovers(root) == 1
    assert victim.read_bytes() == VICTIM


def test_a_file_is_replaced_never_written_through_a_link(tmp_path, victim):
    record = tmp_path / "record.json"
    (tmp_path / "record.json.partial").symlink_to(victim)
    root_files.write_text(record, "{}")
    assert record.read_text() == "{}" and not record.is_symlink()
    assert victim.read_bytes() == VICTIM
    record.unlink()
    record.symlink_to(victim)
    with pytest.raises(UntrustedRoot):
        root_files.read_text(record)
