"""S3 key and bucket names: a key's file name, bucket naming rules and ``s3://`` URIs.

An object key is any string of 1..1024 UTF-8 bytes. It is stored as *one*
file name: every byte other than ``a-z 0-9 _ -`` is percent-encoded with
upper-case hex (``A`` is ``%41``, ``.`` is ``%2E``, ``/`` is ``%2F``), so a
name never contains a path separator, is never ``.``/``..``, is unique even on
case-insensitive file systems, and keys such as ``a`` and ``a/b`` are two
sibling files. A name longer than 200 characters is replaced by ``~`` and the
SHA-256 of the key (``~`` never appears in an encoded name); the key itself is
always recorded in the metadata file.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re

MAX_KEY_BYTES = 1024
_MAX_NAME = 200
_SAFE_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_-")
_ENCODE = [chr(b) if b in _SAFE_BYTES else f"%{b:02X}" for b in range(256)]
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def encode_key(key: str) -> str:
    """The file name of ``key`` (see the module docstring); never a path."""
    raw = key.encode("utf-8")
    name = "".join([_ENCODE[b] for b in raw])
    if len(name) > _MAX_NAME:
        return "~" + hashlib.sha256(raw).hexdigest()
    return name


def decode_name(name: str) -> str | None:
    """The key of an encoded file name, or None for a hashed name (read the metadata)."""
    if name.startswith("~"):
        return None
    out = bytearray()
    index, length = 0, len(name)
    while index < length:
        char = name[index]
        if char == "%":
            out.append(int(name[index + 1 : index + 3], 16))
            index += 3
        else:
            out.append(ord(char))
            index += 1
    return out.decode("utf-8")


def valid_bucket_name(name: str) -> bool:
    """S3's bucket naming rules (general purpose buckets)."""
    if not isinstance(name, str) or not _BUCKET_NAME.fullmatch(name):
        return False
    if ".." in name or ".-" in name or "-." in name:
        return False
    if name.startswith(_RESERVED_PREFIXES) or name.endswith(_RESERVED_SUFFIXES):
        return False
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        return True
    return False


def s3_uri(bucket: str, key: str = "") -> str:
    return f"s3://{bucket}/{key}"


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/key`` -> ``("bucket", "some/key")`` (key may be empty)."""
    if not isinstance(uri, str) or not uri.startswith("s3://"):
        raise ValueError(f"not an S3 URI: {uri!r}")
    bucket, _, key = uri[len("s3://") :].partition("/")
    if not bucket:
        raise ValueError(f"S3 URI without a bucket: {uri!r}")
    return bucket, key
