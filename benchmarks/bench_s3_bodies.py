"""Section 11: S3 request bodies over HTTP (peak RSS of the server) and the raw HTTP fuzz.

Each body goes to a fresh ``sagemaker-plans-local serve`` in a process of its own, so its
peak resident memory (``VmHWM`` in ``/proc/<pid>/status``, Linux) is that body's alone: the
table gives the peak before the body (after a warm-up of the same operation with a small
body), the peak after it, and the difference. The bodies: the largest CompleteMultipartUpload
S3 accepts (10,000 parts, each with an ETag and a SHA-256 checksum; to an upload that does not
exist, so the answer is ``NoSuchUpload``, after the whole body is read), the largest
DeleteObjects (1,000 keys of 1,024 bytes), and a 200 MB DeleteObjects refused with and without
a ``Content-Length`` (chunked: refused once the 8 MiB cap is read). Target: every peak
under 100 MB above the warm server (on main a 200 MB CompleteMultipartUpload peaked at 2.35 GB).

Then the fuzzer of ``tests/server/http_fuzz.py`` (same generators, another size): ``requests``
through the WSGI app in process, and malformed HTTP over a socket; 5xx answers but 501/505
are failures (target: 0), listed by kind.
"""

from __future__ import annotations

import collections
import http.client
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from bench_measure import table, verdict

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tests.server.http_fuzz, from the checkout
    sys.path.insert(0, str(ROOT))

from tests.server import http_fuzz  # noqa: E402

MB = 1_000_000
TARGET_MB = 100
AUTH = {"Authorization": http_fuzz.SCOPE.format(key="testing", region="us-east-1", service="s3")}


class _Server:
    """``sagemaker-plans-local serve`` in a child process, on a free loopback port."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        command = [sys.executable, "-m", "sagemaker_plans_local", "serve", "--port", "0"]
        command += ["--start-time", "2026-01-01T00:00:00Z"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if "serving on" not in line:
            self.process.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        host_port = line.rsplit("//", 1)[1].strip()
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)

    def peak_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / MB
        return float("nan")

    def send(self, method: str, path: str, body, headers: dict | None = None) -> tuple[int | str, float]:
        """(status or what broke the connection, seconds) of one request; ``body`` bytes or chunks."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        headers = {**AUTH, **(headers or {})}
        started = time.perf_counter()
        try:
            chunked = not isinstance(body, bytes) and "Content-Length" not in headers
            connection.request(method, path, body=body, headers=headers, encode_chunked=chunked)
            response = connection.getresponse()
            response.read()
            status: int | str = response.status
        except OSError as error:  # refused mid-body: the server answered and closed
            status = type(error).__name__
        finally:
            connection.close()
        return status, time.perf_counter() - started

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def _parts(count: int) -> bytes:
    part = (
        '<Part><ETag>"{0:032x}"</ETag><ChecksumSHA256>{1}</ChecksumSHA256><PartNumber>{2}</PartNumber></Part>'
    )
    items = "".join(part.format(i, "A" * 43 + "=", i + 1) for i in range(count))
    return f'<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">{items}</CompleteMultipartUpload>'.encode()


def _keys(count: int, length: int = 1024) -> bytes:
    objects = "".join(f"<Object><Key>{i:06d}{'k' * (length - 6)}</Key></Object>" for i in range(count))
    return f"<Delete><Quiet>true</Quiet>{objects}</Delete>".encode()


_UNIT = b"<Object><Key>" + b"k" * 1000 + b"</Key></Object>"
_CHUNK = _UNIT * (MB // len(_UNIT))
FLOOD_CHUNKS = 200
FLOOD_BYTES = 8 + FLOOD_CHUNKS * len(_CHUNK)  # about 200 MB


def _flood() -> Iterator[bytes]:
    """A DeleteObjects body of ``FLOOD_BYTES``, in 1 MB chunks (never held whole)."""
    yield b"<Delete>"
    for _ in range(FLOOD_CHUNKS):
        yield _CHUNK


def _case(name: str, method: str, path: str, warm: bytes, body, headers: dict | None = None) -> list[str]:
    server = _Server()
    try:
        server.send("PUT", "/bench-bucket", b"")
        server.send(method, path, warm)
        before = server.peak_mb()
        status, seconds = server.send(method, path, body, headers)
        after = server.peak_mb()
    finally:
        server.stop()
    size = (len(body) if isinstance(body, bytes) else FLOOD_BYTES) / MB
    grown = after - before
    return [name, f"{size:.1f}", str(status), f"{seconds:.2f}", f"{before:.0f}", f"{after:.0f}",
            f"{grown:.1f}", verdict(grown <= TARGET_MB)]  # fmt: skip


def run_bodies() -> None:
    complete = "/bench-bucket/big?uploadId=nope"  # no such upload: NoSuchUpload after the read
    rows = [
        _case("CompleteMultipartUpload 10,000 parts", "POST", complete, _parts(10), _parts(10_000)),
        _case("DeleteObjects 1,000 keys of 1 KiB", "POST", "/bench-bucket?delete", _keys(10), _keys(1_000)),
        _case(
            "DeleteObjects 200 MB, Content-Length",
            "POST",
            "/bench-bucket?delete",
            _keys(10),
            _flood(),
            {"Content-Length": str(FLOOD_BYTES)},
        ),  # fmt: skip
        _case("DeleteObjects 200 MB, chunked", "POST", "/bench-bucket?delete", _keys(10), _flood()),
    ]
    print(table(["body", "MB", "answer", "s", "peak before MB", "peak after MB", "grew MB",
                 f"<= {TARGET_MB} MB"], rows))  # fmt: skip


def run_fuzz(requests: int, raw: int, seed: int = 2026) -> None:
    from datetime import datetime, timezone
    from urllib.parse import urlsplit

    from sagemaker_plans_local.server.accounts import Accounts
    from sagemaker_plans_local.server.app import ServerApp
    from sagemaker_plans_local.server.runner import LocalServer

    logging.disable(logging.CRITICAL)  # each 500 would log its traceback
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    accounts = Accounts(start, None)
    app = ServerApp(accounts)
    failures: collections.Counter = collections.Counter()
    started = time.perf_counter()
    for bucket in ("fuzz-bucket", "fuzz-other"):
        http_fuzz.send_wsgi(app, http_fuzz.FuzzRequest("s3", "PUT", f"/{bucket}", headers=AUTH))
    for request in [*http_fuzz.requests(seed, requests), *http_fuzz.fixed_requests()]:
        if http_fuzz.failed(http_fuzz.send_wsgi(app, request)):
            failures[request.kind] += 1
    wsgi_seconds = time.perf_counter() - started
    accounts.close()
    with LocalServer(start_time=start) as server:
        address = urlsplit(server.url)
        started = time.perf_counter()
        for kind, data in http_fuzz.raw_requests(seed, raw):
            if http_fuzz.failed(
                http_fuzz.send_raw(address.hostname or "127.0.0.1", address.port or 80, data)
            ):
                failures[kind] += 1
        raw_seconds = time.perf_counter() - started
    logging.disable(logging.NOTSET)
    total = sum(failures.values())
    rows = [
        [
            "WSGI app, in process",
            f"{requests + 3:,}",
            f"{wsgi_seconds:.1f}",
            f"{(requests + 3) / wsgi_seconds:,.0f}",
        ],
        ["malformed HTTP, socket", f"{raw:,}", f"{raw_seconds:.1f}", f"{raw / raw_seconds:,.0f}"],
    ]
    print(table(["fuzz (seed %d)" % seed, "requests", "s", "requests/s"], rows))
    by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted(failures.items())) or "none"
    print(f"5xx answers (but 501/505): {total} ({by_kind}) {verdict(total == 0)}")


def run_s3_bodies(requests: int, raw: int) -> None:
    """Section 11 (module docstring)."""
    print("\n== 11. S3 request bodies over HTTP (server peak RSS) and the raw HTTP fuzz ==")
    if Path("/proc/self/status").exists():
        run_bodies()
    else:
        print("(no /proc: peak RSS needs Linux; the bodies are skipped)")
    run_fuzz(requests, raw)
