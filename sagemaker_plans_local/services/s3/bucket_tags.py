"""S3 bucket tags, kept in the bucket's ``bucket.json`` beside its region and creation date.

S3's rules (docs/tags.md, "S3 bucket tags"): at most 50 tags; keys of 1 to 128 and values of
0 to 256 UTF-16 code units, of letters, numbers, separators and ``+ - = . _ : / @``; no key
twice; no key starting with ``aws:`` in any case. A bucket once tagged keeps an empty tag set
after its tags are removed (the Resource Groups Tagging API lists it as previously tagged).
"""

from __future__ import annotations

import os
import unicodedata
from typing import Callable, Iterable, Mapping, Sequence

from sagemaker_plans_local.services.s3.object_errors import InvalidTag, NoSuchBucket, NoSuchTagSet
from sagemaker_plans_local.services.s3.object_files import ObjectFiles

#: Tags a bucket can have.
MAX_BUCKET_TAGS = 50
_SYMBOLS = frozenset("+-=._:/@")


def _length(text: str) -> int:
    """``text``'s length as S3 counts it: UTF-16 code units."""
    return sum(2 if ord(character) > 0xFFFF else 1 for character in text)


def _allowed(text: str) -> bool:
    return all(unicodedata.category(c)[0] in "LNZ" or c in _SYMBOLS for c in text)


def check_bucket_tags(pairs: Sequence[tuple[str, str]]) -> None:
    """S3's rules on a bucket's whole tag set (``InvalidTag`` naming the first tag refused)."""
    seen: set[str] = set()
    for key, value in pairs:
        if not 1 <= _length(key) <= 128 or not _allowed(key):
            raise InvalidTag("The TagKey you have provided is invalid", TagKey=key)
        if _length(value) > 256 or not _allowed(value):
            raise InvalidTag("The TagValue you have provided is invalid", TagKey=key, TagValue=value)
        if key.lower().startswith("aws:"):
            raise InvalidTag("System tags cannot be added/updated by requester", TagKey=key)
        if key in seen:
            raise InvalidTag("Cannot provide multiple Tags with the same key", TagKey=key)
        seen.add(key)
    if len(pairs) > MAX_BUCKET_TAGS:
        raise InvalidTag(f"Bucket tag count cannot be greater than {MAX_BUCKET_TAGS}")


class BucketTags(ObjectFiles):
    """The tags of the store's buckets (``ObjectStore`` adds the rest of S3)."""

    def bucket_tags(self, name: str) -> dict[str, str]:
        """The bucket's tags, in the order they were set (``NoSuchTagSet`` if it has none)."""
        tags = self._bucket_record(name).get("tags")
        if not tags:
            raise NoSuchTagSet(name)
        return dict(tags)

    def put_bucket_tags(self, name: str, pairs: Sequence[tuple[str, str]]) -> None:
        """PutBucketTagging: the bucket's tags become ``pairs`` (checked first; none removes them)."""
        check_bucket_tags(pairs)
        self._write_tags(name, lambda _: dict(pairs))

    def delete_bucket_tags(self, name: str) -> None:
        """DeleteBucketTagging: no tags left (a bucket without any is left as it is)."""
        self._write_tags(name, lambda tags: {} if tags is not None else None)

    def change_bucket_tags(
        self, name: str, added: Mapping[str, str] | None = None, removed: Iterable[str] = ()
    ) -> None:
        """Add or overwrite ``added`` and remove ``removed`` in one step, all or nothing."""
        gone = set(removed)

        def change(tags: dict[str, str] | None) -> dict[str, str] | None:
            kept = {key: value for key, value in (tags or {}).items() if key not in gone}
            if tags is None and not added:
                return None  # never tagged, and still not
            kept.update(added or {})
            check_bucket_tags(list(kept.items()))
            return kept

        self._write_tags(name, change)

    def tagged_buckets(self) -> list[tuple[str, str, dict[str, str]]]:
        """(name, region, tags) of every bucket tagged now or before, by name."""
        found = []
        for name in sorted(os.listdir(self.root)):
            if name.startswith(".") or not self.bucket_exists(name):
                continue
            try:
                record = self._bucket_record(name)
            except NoSuchBucket:  # deleted since the listing
                continue
            if "tags" in record:
                found.append((name, record["region"], dict(record["tags"])))
        return found

    def _write_tags(self, name: str, change: Callable[[dict | None], dict | None]) -> None:
        """Write ``change(tags)`` as the bucket's tags (None: leave the record as it is)."""
        with self._locked():
            path = self._bucket_dir(name) / "bucket.json"
            record = self._bucket_record(name)
            tags = change(record.get("tags"))
            if tags is not None:
                self._write_json(path, {**record, "tags": tags})
