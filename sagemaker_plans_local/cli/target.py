"""What the inspection commands read and move: a durable root (a ``LocalBackend`` on it) or a running server.

:func:`open_target` picks it from ``--root`` / ``--endpoint-url`` / the environment / the SDK
layer's default backend. Both kinds answer the same questions: a boto3 SageMaker client, the
time, whether the clock is manual, advancing it (in steps, for a progress bar), and a warm-pool
chain's cache size (knowable on a root only).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterator, Protocol

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.server.guard import control_request

CONTROL = "/_sagemaker_plans_local/"
#: The environment variables naming a server, in the order they are read when no target is given.
ENDPOINT_VARIABLES = ("SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL", "AWS_ENDPOINT_URL")
#: Steps of an advance on a server over which a progress bar moves (the server's next change is unknown).
SERVER_STEPS = 50
#: At most this many next-change steps in one advance of a root; the rest in one move.
MAX_STEPS = 10_000


class TargetError(Exception):
    """The target cannot be opened, reached, or refused what was asked (the message says which)."""


class Target(Protocol):
    """A backend to inspect, in process or over HTTP."""

    description: str
    cache_sizes_known: bool

    def sagemaker(self) -> Any: ...
    def now(self) -> datetime: ...
    def manual(self) -> bool: ...
    def advance(self, seconds: float) -> None: ...
    def advance_steps(self, seconds: float) -> Iterator[float]: ...
    def cache_bytes(self, job_name: str) -> int | None: ...
    def close(self) -> None: ...


class RootTarget:
    """A ``LocalBackend`` on a durable root (its own clock: manual if it was made so, else the wall clock)."""

    cache_sizes_known = True

    def __init__(self, root: Path, region: str) -> None:
        self.description = f"the root {root}"
        self._region = region
        try:
            self._backend = LocalBackend(root=root, region=region, runs_code=False)
        except (ValueError, OSError) as error:
            raise TargetError(f"cannot open the root {root}: {error}") from None

    def sagemaker(self) -> Any:
        return self._backend.client("sagemaker", region_name=self._region)

    def now(self) -> datetime:
        return self._backend.clock.now()

    def manual(self) -> bool:
        return self._backend.clock.manual

    def advance(self, seconds: float) -> None:
        """Advance by ``seconds`` in one move (every change due on the way applied in time order)."""
        self._backend.clock.advance(seconds)

    def advance_steps(self, seconds: float) -> Iterator[float]:
        """Advance by ``seconds``, stopping at each scheduled change on the way; yields the seconds done."""
        clock = self._backend.clock
        start = clock.now()
        deadline = start + timedelta(seconds=seconds)
        for _ in range(MAX_STEPS):
            due = clock.next_due()
            if due is None or due > deadline:
                break
            clock.advance(max(due - clock.now(), timedelta(0)))
            yield (clock.now() - start).total_seconds()
        clock.advance(max(deadline - clock.now(), timedelta(0)))
        yield seconds

    def cache_bytes(self, job_name: str) -> int | None:
        """The bytes in the job's warm-pool cache directory; None if it has none (any more)."""
        cache = self._backend.training_job(job_name, self._region).cache_dir
        if cache is None or not Path(cache).is_dir():
            return None
        return sum(path.stat().st_size for path in Path(cache).rglob("*") if path.is_file())

    def close(self) -> None:
        self._backend.close()


class ServerTarget:
    """A running server: boto3 with ``endpoint_url`` and fake keys, the clock over the control API."""

    cache_sizes_known = False

    def __init__(self, url: str, region: str) -> None:
        self.url = url.rstrip("/")
        self.description = f"the server at {self.url}"
        self._region = region

    def sagemaker(self) -> Any:
        import boto3

        session = boto3.session.Session(
            aws_access_key_id="123456789012",
            aws_secret_access_key="sagemaker-plans-local",
            region_name=self._region,
        )
        return session.client("sagemaker", endpoint_url=self.url)

    def now(self) -> datetime:
        return datetime.fromisoformat(self.control("clock")["now"])

    def manual(self) -> bool:
        return bool(self.control("clock")["manual"])

    def advance_steps(self, seconds: float) -> Iterator[float]:
        """Advance by ``seconds`` in :data:`SERVER_STEPS` equal steps; yields the seconds done."""
        done = 0.0
        for step in range(1, SERVER_STEPS + 1):
            target = seconds * step / SERVER_STEPS if step < SERVER_STEPS else seconds
            self.control("clock", {"advance_seconds": target - done})
            done = target
            yield done

    def advance(self, seconds: float) -> None:
        """Advance by ``seconds`` in one call."""
        self.control("clock", {"advance_seconds": seconds})

    def cache_bytes(self, job_name: str) -> int | None:
        return None  # the cache lives on the server's machine

    def control(self, path: str, document: dict[str, Any] | None = None) -> dict[str, Any]:
        """The control API's answer (a POST when ``document`` is given); TargetError on refusal."""
        body = None if document is None else json.dumps(document).encode()
        request = control_request(self.url + CONTROL + path, body)
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return dict(json.load(response))
        except urllib.error.HTTPError as error:
            try:
                message = json.load(error).get("message", str(error))
            except ValueError:
                message = str(error)
            raise TargetError(message) from None
        except (urllib.error.URLError, OSError) as error:
            raise TargetError(f"cannot reach {request.full_url}: {error}") from None

    def close(self) -> None:
        pass


def open_target(root: str | None, endpoint_url: str | None, region: str) -> RootTarget | ServerTarget:
    """``--root`` (must exist), else ``--endpoint-url``, else a server named by the environment
    (:data:`ENDPOINT_VARIABLES`), else the SDK layer's default durable backend."""
    if root:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise TargetError(f"no backend root at {path}")
        return RootTarget(path.absolute(), region)
    url = endpoint_url or next(
        (os.environ[v] for v in ENDPOINT_VARIABLES if os.environ.get(v, "").strip()), None
    )
    if url:
        return ServerTarget(url.strip(), region)
    from sagemaker_plans_local.sdk.default_backend import default_backend_root

    default = default_backend_root()
    default.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # per-user: private, as the SDK makes it
    return RootTarget(default, region)
