"""The object store shared by real processes on one root: no torn reads, no stray errors.

Each test starts its workers as separate Python processes running this file
(``python test_s3_cross_process.py ROLE ROOT INDEX``); a worker prints one
JSON line of what it saw. The workers start together (each waits until all are
ready) and the writers keep writing until every reader has finished.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.services.s3.objects import (
    BucketAlreadyOwnedByYou,
    NoSuchKey,
    NoSuchUpload,
    ObjectStore,
    ObjectStoreError,
    encode_key,
)

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
BUCKET, KEY = "shared", "model/weights.bin"
READS = 300  # per reader; the old layout tore about one read in twenty
MAX_WRITES = 20_000  # a bound, so a writer whose readers died still ends
UPLOADS = 40
RACED_BUCKETS = 40


def body(writer: int, version: int) -> bytes:
    """A body that names its writer and version, of a length that varies with both."""
    length = 40 + (writer * 7919 + version * 104729) % 50_000
    head = f"{writer}:{version}:{length}|".encode()
    return (head * (length // len(head) + 1))[:length]


def check(data: bytes, size: int, etag: str) -> str | None:
    """What is wrong with one read (its bytes against its own metadata), or None."""
    if len(data) != size or hashlib.md5(data).hexdigest() != etag:
        return (
            f"{len(data)} bytes with md5 {hashlib.md5(data).hexdigest()}; metadata: {size} bytes, etag {etag}"
        )
    writer, version, _ = data.split(b"|", 1)[0].decode().split(":")
    if data != body(int(writer), int(version)):
        return f"bytes mixing versions (begins as writer {writer} version {version})"
    return None


# -- the workers (run in their own processes) ------------------------------------------------
def _store(root: Path) -> ObjectStore:
    return ObjectStore(root, VirtualClock(START))


def _start_together(root: str, role: str, index: int, everyone: int) -> None:
    """Mark this worker ready and wait until ``everyone`` is."""
    (Path(root) / f"ready-{role}-{index}").touch()
    for _ in range(200_000):
        if len(list(Path(root).glob("ready-*"))) >= everyone:
            return
        time.sleep(0.001)


def _readers_done(root: str, readers: int) -> bool:
    return len(list(Path(root).glob("done-*"))) >= readers


def writer(root: str, index: int, everyone: int, readers: int) -> dict:
    store = _store(Path(root) / "store")
    _start_together(root, "writer", index, everyone)
    writes = 0
    while writes < MAX_WRITES and not _readers_done(root, readers):
        store.put_object(BUCKET, KEY, body(index, writes))
        writes += 1
    return {"writes": writes}


def reader(root: str, index: int, everyone: int, readers: int) -> dict:
    store = _store(Path(root) / "store")
    _start_together(root, "reader", index, everyone)
    torn, replaced = [], 0
    try:
        for _ in range(READS):
            stored, handle = store.open_object(BUCKET, KEY)  # GetObject
            with handle:
                torn.append(check(handle.read(), stored.size, stored.etag))
            head = store.head_object(BUCKET, KEY)  # HeadObject, then reading what it describes
            try:
                with head.open() as handle:
                    torn.append(check(handle.read(), head.size, head.etag))
            except NoSuchKey:  # a newer version replaced it meanwhile: refused, never mixed
                replaced += 1
    finally:
        (Path(root) / f"done-{index}").touch()
    problems = [problem for problem in torn if problem]
    return {"reads": len(torn), "torn": len(problems), "examples": problems[:3], "replaced": replaced}


def churner(root: str, index: int, everyone: int, readers: int) -> dict:
    """Create, fill, list, empty and delete one bucket over and over; S3's errors are expected."""
    store = _store(Path(root) / "store")
    _start_together(root, "churner", index, everyone)
    unexpected, expected = [], 0
    for round_ in range(150):
        for step, *args in (
            (store.create_bucket, "churn"),
            (store.put_object, "churn", f"k{index}", body(index, round_)),
            (store.list_objects, "churn"),
            (store.list_buckets,),
            (store.delete_object, "churn", f"k{index}"),
            (store.delete_bucket, "churn"),
        ):
            try:
                step(*args)
            except ObjectStoreError:  # NoSuchBucket, BucketNotEmpty: the other process got there first
                expected += 1
            except Exception as error:  # noqa: BLE001 - what this test looks for
                unexpected.append(repr(error))
    return {"expected": expected, "unexpected": unexpected[:5]}


def completer(root: str, index: int, everyone: int, readers: int) -> dict:
    """Complete every upload listed in ``uploads.json``; which ones this process won."""
    store = _store(Path(root) / "store")
    uploads = json.loads((Path(root) / "uploads.json").read_text())
    _start_together(root, "completer", index, everyone)
    won = []
    for upload_id, etag in uploads:
        try:
            store.complete_multipart_upload(upload_id, [(1, etag)])
            won.append(upload_id)
        except NoSuchUpload:
            continue
    return {"won": won}


def creator(root: str, index: int, everyone: int, readers: int) -> dict:
    """Create buckets ``race-0``... with ``exist_ok=False``; which ones this process won."""
    store = _store(Path(root) / "store")
    _start_together(root, "creator", index, everyone)
    won = []
    for number in range(RACED_BUCKETS):
        try:
            store.create_bucket(f"race-{number}", exist_ok=False)
            won.append(number)
        except BucketAlreadyOwnedByYou:
            continue
    return {"won": won}


WORKERS = {"writer": writer, "reader": reader, "churner": churner, "completer": completer, "creator": creator}


# -- the tests -------------------------------------------------------------------------------
def run_workers(root: Path, roles: list[str], readers: int = 0) -> list[dict]:
    """Run one process per role on ``root``; what each printed."""
    processes = [
        subprocess.Popen(
            [sys.executable, __file__, role, str(root), str(index), str(len(roles)), str(readers)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index, role in enumerate(roles)
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=300)  # a hang guard only
        assert process.returncode == 0, err
        results.append(json.loads(out))
    return results


def test_reads_in_other_processes_always_match_their_metadata(tmp_path):
    store = _store(tmp_path / "store")
    store.create_bucket(BUCKET)
    store.put_object(BUCKET, KEY, body(99, 0))
    results = run_workers(tmp_path, ["writer", "reader", "writer", "reader"], readers=2)
    writes = [result for result in results if "writes" in result]
    reads = [result for result in results if "reads" in result]
    assert all(result["writes"] > 0 for result in writes)
    assert [(result["torn"], result["examples"]) for result in reads] == [(0, [])] * 2
    assert all(result["reads"] >= READS for result in reads)
    stored, handle = store.open_object(BUCKET, KEY)
    with handle:
        assert check(handle.read(), stored.size, stored.etag) is None
    assert len(list((tmp_path / "store" / BUCKET / "data").iterdir())) == 1  # old versions removed


def test_buckets_created_and_deleted_by_two_processes_fail_only_as_s3_does(tmp_path):
    _store(tmp_path / "store")
    results = run_workers(tmp_path, ["churner", "churner"])
    assert [result["unexpected"] for result in results] == [[], []]
    store = _store(tmp_path / "store")
    if store.bucket_exists("churn"):
        for key in store.keys("churn"):
            stored, handle = store.open_object("churn", key)
            with handle:
                assert check(handle.read(), stored.size, stored.etag) is None
    assert sorted(path.name for path in (tmp_path / "store" / ".tmp").iterdir()) == []


def test_each_upload_completed_by_two_processes_has_one_winner(tmp_path):
    store = _store(tmp_path / "store")
    store.create_bucket(BUCKET)
    uploads = []
    for number in range(UPLOADS):
        upload_id = store.create_multipart_upload(BUCKET, f"part/{number}")
        uploads.append((upload_id, store.upload_part(upload_id, 1, body(number, 1))))
    (tmp_path / "uploads.json").write_text(json.dumps(uploads))
    results = run_workers(tmp_path, ["completer", "completer"])
    won = sorted(results[0]["won"] + results[1]["won"])
    assert won == sorted(upload_id for upload_id, _ in uploads)
    for number in range(UPLOADS):
        stored, handle = store.open_object(BUCKET, f"part/{number}")
        with handle:
            assert handle.read() == body(number, 1)
    assert list((tmp_path / "store" / ".uploads").iterdir()) == []


def test_each_bucket_created_by_two_processes_has_one_creator(tmp_path):
    _store(tmp_path / "store")
    results = run_workers(tmp_path, ["creator", "creator"])
    assert sorted(results[0]["won"] + results[1]["won"]) == list(range(RACED_BUCKETS))


def test_a_store_written_before_versions_still_reads_and_is_upgraded_by_a_write(tmp_path):
    """Records without a data name (the earlier layout) name ``data/<name>``; a write replaces both."""
    store = _store(tmp_path / "store")
    store.create_bucket(BUCKET)
    store.put_object(BUCKET, KEY, b"placeholder")
    bucket = tmp_path / "store" / BUCKET
    meta = bucket / "meta" / encode_key(KEY)
    record = json.loads(meta.read_text())
    (bucket / "data" / record.pop("data")).unlink()
    old = body(1, 1)
    (bucket / "data" / encode_key(KEY)).write_bytes(old)
    meta.write_text(json.dumps(record | {"size": len(old), "etag": hashlib.md5(old).hexdigest()}))
    stored, handle = store.open_object(BUCKET, KEY)
    with handle:
        assert check(handle.read(), stored.size, stored.etag) is None
    store.put_object(BUCKET, KEY, body(2, 2))
    with store.get_object(BUCKET, KEY).open() as handle:
        assert handle.read() == body(2, 2)
    assert [path.name.split(".")[0] for path in (bucket / "data").iterdir()] == [encode_key(KEY)]
    assert not (bucket / "data" / encode_key(KEY)).exists()


def test_a_version_replaced_after_its_head_is_refused_not_mixed(tmp_path):
    store = _store(tmp_path / "store")
    store.create_bucket(BUCKET)
    store.put_object(BUCKET, KEY, body(1, 1))
    head = store.head_object(BUCKET, KEY)
    current, handle = store.open_object(BUCKET, KEY)
    store.put_object(BUCKET, KEY, body(2, 2))
    with handle:  # opened before the overwrite: still the version it describes
        assert handle.read() == body(1, 1) and current.etag == head.etag
    with pytest.raises(NoSuchKey):
        head.open()
    store.delete_object(BUCKET, KEY)
    assert list((tmp_path / "store" / BUCKET / "data").iterdir()) == []


def test_a_read_whose_version_goes_before_it_opens_reads_the_new_one(tmp_path, monkeypatch):
    """The window a reader in another process can fall into, made to happen here."""
    store = _store(tmp_path / "store")
    store.create_bucket(BUCKET)
    store.put_object(BUCKET, KEY, body(1, 1))
    found, stored = [], store._stored

    def then_overwritten(*args):
        version = stored(*args)
        if not found:
            found.append(version)
            store.put_object(BUCKET, KEY, body(2, 2))  # removes the file ``version`` names
        return version

    monkeypatch.setattr(store, "_stored", then_overwritten)
    current, handle = store.open_object(BUCKET, KEY)
    with handle:
        assert handle.read() == body(2, 2)
    assert current.etag == hashlib.md5(body(2, 2)).hexdigest() != found[0].etag


if __name__ == "__main__":
    role, root, index, everyone, readers = sys.argv[1:6]
    print(json.dumps(WORKERS[role](root, int(index), int(everyone), int(readers))))
