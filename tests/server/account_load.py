"""Many accounts against one server's app, in a process of its own under a descriptor limit.

``python -m tests.server.account_load create ROOT|- COUNT LIMIT`` makes COUNT accounts (a bucket
each, through signed in-process WSGI requests); ``reopen ROOT COUNT LIMIT`` takes the root up
again and looks at a sample of them. ``LIMIT`` 0 leaves the descriptor limit as it is. Prints
one JSON document: the statuses seen, the most descriptors open, how long it took.
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from werkzeug.test import Client

from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import START

FIRST = 100_000_000_000  # the first account id


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def account(index: int) -> str:
    return str(FIRST + index)


def s3(app: Client, key: str, method: str, path: str):
    """A SigV4-signed S3 request of account ``key`` to the app (status, body)."""
    request = AWSRequest(method, f"http://localhost{path}", headers={"Host": "localhost"}, data=b"")
    S3SigV4Auth(Credentials(key, "secret"), "s3", "us-east-1").add_auth(request)
    response = app.open(path, method=method, headers=dict(request.headers.items()))
    return response.status_code, response.get_data()


def create(root: Path | None, count: int) -> dict:
    server = LocalServer(root=root, start_time=START)
    try:
        app, statuses, most = Client(server.app), Counter[int](), descriptors()
        began = time.perf_counter()
        for index in range(count):
            statuses[s3(app, account(index), "PUT", f"/bucket-{index}")[0]] += 1
            most = max(most, descriptors())
        seconds = time.perf_counter() - began
    finally:
        server.stop()
    return {"statuses": statuses, "most": most, "seconds": seconds, "after": descriptors()}


def reopen(root: Path, count: int) -> dict:
    began = time.perf_counter()
    server = LocalServer(root=root)
    try:
        opened = time.perf_counter() - began
        app, most = Client(server.app), descriptors()
        sample = sorted(random.Random(17).sample(range(count), 40))
        found = {}
        for index in sample:
            status, body = s3(app, account(index), "GET", "/")
            found[index] = [status, f"<Name>bucket-{index}</Name>" in body.decode()]
            most = max(most, descriptors())
        began = time.perf_counter()
        server.accounts.advance(60)  # the closed accounts' next changes are known: none is opened
        advanced = time.perf_counter() - began
        most = max(most, descriptors())
        now = server.accounts.now().isoformat()
        clocks = Counter(server.backend(account(index)).clock.now().isoformat() for index in sample)
    finally:
        server.stop()
    return {
        "opened": opened,
        "advanced": advanced,
        "most": most,
        "found": found,
        "now": now,
        "clocks": clocks,
    }


def main(mode: str, root: str, count: str, limit: str) -> None:
    if int(limit):
        resource.setrlimit(resource.RLIMIT_NOFILE, (int(limit), int(limit)))
    where = None if root == "-" else Path(root)
    began = descriptors()
    if mode == "create":
        result = create(where, int(count))
    else:
        assert where is not None
        result = reopen(where, int(count))
    print(json.dumps({"began": began, **result}))


if __name__ == "__main__":
    main(*sys.argv[1:])
