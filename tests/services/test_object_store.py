"""The object store: buckets, objects, listings, multipart uploads, downloads, and key safety."""

from __future__ import annotations

import hashlib
import io
import os
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.runtime.downloads import UnsafeDownload, download_prefix
from sagemaker_plans_local.services.s3.objects import (
    MIN_PART_SIZE,
    BadDigest,
    BucketAlreadyOwnedByYou,
    BucketNotEmpty,
    EntityTooSmall,
    InvalidArgument,
    InvalidBucketName,
    InvalidPart,
    InvalidPartOrder,
    KeyTooLong,
    MalformedPartList,
    NoSuchBucket,
    NoSuchKey,
    NoSuchUpload,
    ObjectStore,
    decode_name,
    encode_key,
    parse_s3_uri,
    s3_uri,
)

from . import START


@pytest.fixture
def clock():
    return VirtualClock(START)


@pytest.fixture
def store(tmp_path, clock):
    objects = ObjectStore(tmp_path / "store", clock)
    objects.create_bucket("bucket", "us-east-1")
    return objects


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def files_under(root: Path) -> list[Path]:
    return [Path(dirpath) / name for dirpath, _, names in os.walk(root) for name in names]


# -- buckets ---------------------------------------------------------------------------


def test_buckets_are_created_idempotently_listed_and_deleted(store, clock):
    store.create_bucket("bucket", "us-east-1")  # the owner re-creating: no error
    with pytest.raises(BucketAlreadyOwnedByYou):
        store.create_bucket("bucket", "us-east-1", exist_ok=False)
    clock.advance(60)
    store.create_bucket("another.bucket-2", "eu-west-1")
    assert store.list_buckets() == [("another.bucket-2", START + timedelta(seconds=60)), ("bucket", START)]
    assert store.bucket_region("another.bucket-2") == "eu-west-1"
    store.delete_bucket("another.bucket-2")
    assert not store.bucket_exists("another.bucket-2")
    with pytest.raises(NoSuchBucket):
        store.delete_bucket("another.bucket-2")


@pytest.mark.parametrize(
    "name",
    [
        "..",
        ".",
        "a",
        "ab",
        "A-bucket",
        "../escape",
        ".uploads",
        ".tmp",
        "a..b",
        "bucket_",
        "192.168.1.1",
        "-bucket",
        "bucket-",
        "x" * 64,
        "a/b",
        "xn--abc",
        "name\x00null",
    ],
)
def test_invalid_bucket_names_are_refused_and_never_found(store, name):
    with pytest.raises(InvalidBucketName):
        store.create_bucket(name, "us-east-1")
    assert not store.bucket_exists(name)
    with pytest.raises(NoSuchBucket):
        store.put_object(name, "k", b"x")
    with pytest.raises(NoSuchBucket):
        store.head_object(name, "k")


def test_a_bucket_must_be_empty_to_be_deleted(store):
    store.put_object("bucket", "k", b"x")
    with pytest.raises(BucketNotEmpty):
        store.delete_bucket("bucket")
    store.delete_object("bucket", "k")
    store.delete_bucket("bucket")
    assert store.list_buckets() == []


# -- objects -----------------------------------------------------------------------------


def test_put_get_head_delete(store, clock):
    clock.advance(timedelta(seconds=1, microseconds=500))
    etag = store.put_object(
        "bucket", "dir/file.txt", b"hello", content_type="text/plain", metadata={"owner": "me"}
    )
    assert etag == md5(b"hello")
    stored = store.head_object("bucket", "dir/file.txt")
    assert (stored.key, stored.size, stored.etag, stored.content_type, stored.metadata) == (
        "dir/file.txt",
        5,
        etag,
        "text/plain",
        {"owner": "me"},
    )
    assert stored.last_modified == START + timedelta(seconds=1)  # S3 keeps whole seconds
    with store.get_object("bucket", "dir/file.txt").open() as handle:
        assert handle.read() == b"hello"
    store.delete_object("bucket", "dir/file.txt")
    store.delete_object("bucket", "dir/file.txt")  # deleting a missing key succeeds, as in S3
    with pytest.raises(NoSuchKey):
        store.head_object("bucket", "dir/file.txt")
    with pytest.raises(NoSuchBucket):
        store.delete_object("missing-bucket", "k")


def test_streams_and_default_content_type(store, tmp_path):
    store.put_object("bucket", "stream", io.BytesIO(b"x" * 3_000_000))
    stored = store.head_object("bucket", "stream")
    assert (stored.size, stored.etag, stored.content_type) == (
        3_000_000,
        md5(b"x" * 3_000_000),
        "binary/octet-stream",
    )
    source = tmp_path / "file.bin"
    source.write_bytes(b"file content")
    assert store.upload_file("bucket", "from/file", source) == md5(b"file content")


def test_an_open_reader_keeps_its_version_while_the_key_is_overwritten(store):
    store.put_object("bucket", "k", b"old")
    stored, handle = store.open_object("bucket", "k")
    store.put_object("bucket", "k", b"new content")
    with handle:
        assert handle.read() == b"old"
    assert stored.etag == md5(b"old")
    assert store.head_object("bucket", "k").etag == md5(b"new content")


def test_bad_digest_stores_nothing(store):
    with pytest.raises(BadDigest):
        store.put_object("bucket", "k", b"data", content_md5=hashlib.md5(b"other").digest())
    with pytest.raises(NoSuchKey):
        store.head_object("bucket", "k")
    assert store.put_object("bucket", "k", b"data", content_md5=hashlib.md5(b"data").digest())


def test_key_limits(store):
    with pytest.raises(InvalidArgument):
        store.put_object("bucket", "", b"x")
    with pytest.raises(KeyTooLong):
        store.put_object("bucket", "k" * 1025, b"x")
    longest = "é" * 512  # 1024 UTF-8 bytes: a hashed file name
    store.put_object("bucket", longest, b"long")
    assert [o.key for o in store.list_objects("bucket").objects] == [longest]
    with pytest.raises(NoSuchKey):
        store.head_object("bucket", "k" * 2000)


def test_a_key_and_a_key_under_it_are_both_objects(store):
    store.put_object("bucket", "a", b"file")
    store.put_object("bucket", "a/b", b"nested")
    store.put_object("bucket", "a/", b"marker")
    assert {o.key: o.size for o in store.list_objects("bucket").objects} == {"a": 4, "a/": 6, "a/b": 6}


@pytest.mark.parametrize(
    "key",
    [
        "../../etc/passwd",
        "/abs",
        "a/../../b",
        ".",
        "..",
        "nul\x00byte",
        "x" * 300 + "/" + "y" * 300,
        "back\\slash",
        "~tilde",
        "%2F",
        "A",
        "a",
        ".uploads",
        "../.tmp/x",
    ],
)
def test_hostile_keys_stay_inside_the_store(store, tmp_path, key):
    root = tmp_path / "store"
    store.put_object("bucket", key, key.encode())
    with store.get_object("bucket", key).open() as handle:
        assert handle.read() == key.encode()
    for path in files_under(tmp_path):
        assert path.resolve().is_relative_to(root.resolve())
    assert [o.key for o in store.list_objects("bucket").objects] == [key]


def test_file_names_are_unique_ignoring_case():
    assert encode_key("A") != encode_key("a")
    assert encode_key("A").lower() != encode_key("a").lower()
    assert decode_name(encode_key("a/B.txt")) == "a/B.txt"


KEYS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda k: len(k.encode()) <= 1024
) | st.sampled_from(["..", ".", "/", "a/..", "../x", "a//b", "\x00"])


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    keys=st.lists(
        KEYS
        | st.text("./a\x00", min_size=1, max_size=12)
        | st.text(st.characters(), min_size=250, max_size=400).filter(
            lambda k: (
                len(k.encode("utf-8", "surrogatepass")) <= 1024
                and not any(0xD800 <= ord(c) <= 0xDFFF for c in k)
            )
        ),
        min_size=1,
        max_size=8,
        unique=True,
    )
)
def test_any_keys_round_trip_and_never_escape(tmp_path_factory, keys):
    root = tmp_path_factory.mktemp("escape")
    store = ObjectStore(root / "store", VirtualClock(START))
    store.create_bucket("bucket")
    for index, key in enumerate(keys):
        store.put_object("bucket", key, f"{index}:{key}".encode())
    for index, key in enumerate(keys):
        with store.get_object("bucket", key).open() as handle:
            assert handle.read() == f"{index}:{key}".encode()
    assert [o.key for o in store.list_objects("bucket").objects] == sorted(keys)
    store_root = (root / "store").resolve()
    for path in files_under(root):
        resolved = path.resolve()
        assert resolved.is_relative_to(store_root)
        assert resolved.parent.name in ("data", "meta", ".tmp") or resolved.name == "bucket.json"
    for key in keys:
        store.delete_object("bucket", key)
    store.delete_bucket("bucket")


# -- listings ------------------------------------------------------------------------------


def reference_listing(keys, prefix, delimiter, marker):
    entries = []
    for key in sorted(keys):
        if not key.startswith(prefix):
            continue
        entry = key
        if delimiter and delimiter in key[len(prefix) :]:
            entry = key[: key.index(delimiter, len(prefix)) + len(delimiter)]
        if (marker is None or entry > marker) and (not entries or entries[-1] != entry):
            entries.append(entry)
    return entries


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    keys=st.lists(st.text("ab/é", min_size=1, max_size=6), max_size=15, unique=True),
    prefix=st.text("ab/", max_size=2),
    delimiter=st.sampled_from([None, "/", "b"]),
    start_after=st.none() | st.text("ab/", max_size=3),
    page=st.integers(1, 4),
)
def test_listing_pages_match_s3_semantics(tmp_path_factory, keys, prefix, delimiter, start_after, page):
    store = ObjectStore(tmp_path_factory.mktemp("list") / "store", VirtualClock(START))
    store.create_bucket("bucket")
    for key in keys:
        store.put_object("bucket", key, b"")
    seen, continuation = [], None
    while True:
        listing = store.list_objects("bucket", prefix, delimiter, start_after, page, continuation)
        entries = sorted([o.key for o in listing.objects] + listing.common_prefixes)
        assert len(entries) <= page
        seen.extend(entries)
        if not listing.is_truncated:
            assert listing.next_marker is None
            break
        continuation = listing.next_marker
    assert seen == reference_listing(keys, prefix, delimiter, start_after)


def test_listing_with_delimiter(store):
    for key in ["photos/2024/a.jpg", "photos/2024/b.jpg", "photos/2025/c.jpg", "photos/top.jpg", "readme"]:
        store.put_object("bucket", key, b"x")
    listing = store.list_objects("bucket", prefix="photos/", delimiter="/")
    assert [o.key for o in listing.objects] == ["photos/top.jpg"]
    assert listing.common_prefixes == ["photos/2024/", "photos/2025/"]
    first = store.list_objects("bucket", prefix="photos/", delimiter="/", max_keys=1)
    assert (first.common_prefixes, first.is_truncated, first.next_marker) == (
        ["photos/2024/"],
        True,
        "photos/2024/",
    )
    second = store.list_objects(
        "bucket", prefix="photos/", delimiter="/", max_keys=1, continuation=first.next_marker
    )
    assert second.common_prefixes == ["photos/2025/"]
    assert store.list_objects("bucket", max_keys=0).objects == []


# -- multipart --------------------------------------------------------------------------------


def test_multipart_upload_assembles_parts_with_s3s_etag(store):
    upload_id = store.create_multipart_upload(
        "bucket", "big", content_type="application/x-tar", metadata={"a": "b"}
    )
    first, second = b"1" * MIN_PART_SIZE, b"2" * 10
    etags = [store.upload_part(upload_id, 1, first), store.upload_part(upload_id, 2, io.BytesIO(second))]
    assert store.list_parts(upload_id) == [(1, md5(first), MIN_PART_SIZE), (2, md5(second), 10)]
    etag = store.complete_multipart_upload(upload_id, [(1, f'"{etags[0]}"'), (2, etags[1])])
    expected = hashlib.md5(hashlib.md5(first).digest() + hashlib.md5(second).digest()).hexdigest() + "-2"
    assert etag == expected
    stored = store.head_object("bucket", "big")
    assert (stored.size, stored.etag, stored.content_type, stored.metadata) == (
        MIN_PART_SIZE + 10,
        expected,
        "application/x-tar",
        {"a": "b"},
    )
    with stored.open() as handle:
        assert handle.read() == first + second
    with pytest.raises(NoSuchUpload):
        store.upload_part(upload_id, 3, b"late")


def test_multipart_rules(store):
    upload_id = store.create_multipart_upload("bucket", "k")
    small = store.upload_part(upload_id, 1, b"small")
    last = store.upload_part(upload_id, 2, b"last")
    with pytest.raises(MalformedPartList):
        store.complete_multipart_upload(upload_id, [])
    with pytest.raises(InvalidPartOrder):
        store.complete_multipart_upload(upload_id, [(2, last), (1, small)])
    with pytest.raises(InvalidPart):
        store.complete_multipart_upload(upload_id, [(1, small), (3, last)])
    with pytest.raises(InvalidPart):
        store.complete_multipart_upload(upload_id, [(1, "0" * 32)])
    with pytest.raises(EntityTooSmall):
        store.complete_multipart_upload(upload_id, [(1, small), (2, last)])
    assert store.complete_multipart_upload(upload_id, [(1, small)]).endswith("-1")
    with pytest.raises(InvalidArgument):
        store.upload_part(store.create_multipart_upload("bucket", "k2"), 10001, b"x")
    aborted = store.create_multipart_upload("bucket", "k3")
    store.abort_multipart_upload(aborted)
    with pytest.raises(NoSuchUpload):
        store.abort_multipart_upload(aborted)
    for bogus in ["../../etc", "", "ABC", "0" * 64]:
        with pytest.raises(NoSuchUpload):
            store.multipart_upload(bogus)


# -- runtime helpers ------------------------------------------------------------------------


def test_download_prefix_writes_keys_relative_to_the_prefix(store, tmp_path):
    for key in ["data/train/a.csv", "data/train/sub/b.csv", "data/train/", "data/other.csv"]:
        store.put_object("bucket", key, key.encode())
    dest = tmp_path / "channel"
    assert download_prefix(store, "bucket", "data/train/", dest) == 2
    assert (dest / "a.csv").read_bytes() == b"data/train/a.csv"
    assert (dest / "sub" / "b.csv").read_bytes() == b"data/train/sub/b.csv"
    single = tmp_path / "single"
    assert download_prefix(store, "bucket", "data/other.csv", single) == 1
    assert (single / "other.csv").read_bytes() == b"data/other.csv"


@pytest.mark.parametrize(
    "hostile", ["p/../../outside", "p/./x", "p/a/../../x", "p/nul\x00", "p/" + "x" * 256]
)
def test_download_prefix_refuses_escaping_keys_and_writes_nothing(store, tmp_path, hostile):
    store.put_object("bucket", "p/fine", b"fine")
    store.put_object("bucket", hostile, b"evil")
    dest = tmp_path / "dest"
    with pytest.raises(UnsafeDownload):
        download_prefix(store, "bucket", "p/", dest)
    assert files_under(tmp_path / "dest") == []
    assert not (tmp_path / "outside").exists()


def test_download_prefix_refuses_a_file_that_is_also_a_directory(store, tmp_path):
    store.put_object("bucket", "p/a", b"file")
    store.put_object("bucket", "p/a/b", b"nested")
    with pytest.raises(UnsafeDownload):
        download_prefix(store, "bucket", "p/", tmp_path / "dest")


def test_s3_uris():
    assert s3_uri("bucket", "a/b") == "s3://bucket/a/b"
    assert parse_s3_uri("s3://bucket/a/b/") == ("bucket", "a/b/")
    assert parse_s3_uri("s3://bucket") == ("bucket", "")
    assert ObjectStore.parse_s3_uri(ObjectStore.s3_uri("b", "k")) == ("b", "k")
    for bad in ["https://bucket/k", "s3:///k", "bucket/k"]:
        with pytest.raises(ValueError):
            parse_s3_uri(bad)


def test_concurrent_writers(store):
    errors = []

    def writer(index):
        try:
            for round_ in range(20):
                store.put_object("bucket", f"own/{index}", f"{index}-{round_}".encode())
                store.put_object("bucket", "shared", f"{index}-{round_}".encode() * 100)
                store.list_objects("bucket")
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = store.head_object("bucket", "shared")
    with stored.open() as handle:
        assert md5(handle.read()) == stored.etag
    assert len(store.list_objects("bucket").objects) == 9
    assert os.listdir(store.root / ".tmp") == []
