"""``RemoteBackend``: what the SDK layer needs of a backend, answered by a server over HTTP.

A session or an activation on a ``RemoteBackend`` sends every call of an
emulated service (SageMaker, S3, STS, IAM, CloudWatch Logs) to the server at
``endpoint_url`` with fake keys naming ``account_id`` (the server's account
for the calls); any other service answers ``NotImplemented`` as in process.
The SDK's waits follow the server's clock: a manual-clock server is moved to
each next scheduled change (``POST /_sagemaker_plans_local/clock``
``{"next_change": true}``), a wall-clock server is polled with short sleeps.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
from typing import Any, Callable, Collection, Iterator

import attrs
import boto3
from botocore.credentials import Credentials

from sagemaker_plans_local.backend import EMULATED_SERVICES, SERVICE_IDS, LocalBackend
from sagemaker_plans_local.protocol.service_model import botocore_session, shared_loader
from sagemaker_plans_local.server.guard import control_request
from sagemaker_plans_local.services.sagemaker.statuses import FINISHED_JOB_STATUSES as _ENDED
from sagemaker_plans_local.transport import layers
from sagemaker_plans_local.transport.activation import Activation, activated
from sagemaker_plans_local.transport.refusal import refuse

#: Real seconds between polls of a wall-clock server (and of a manual one with nothing scheduled).
POLL_SECONDS = 0.05
#: The longest real sleep of one wall-clock step.
MAX_POLL_SECONDS = 0.25
CONTROL_CLOCK = "/_sagemaker_plans_local/clock"
SECRET_KEY = "sagemaker-plans-local"
_SESSION_LOCK = threading.Lock()


class ServerError(Exception):
    """The server's control API refused a request (or could not be reached)."""


@attrs.frozen
class RemoteJob:
    """A training job as the server describes it (``status`` as ``TrainingJob.status``)."""

    name: str
    description: dict

    @property
    def status(self) -> str:
        return self.description["TrainingJobStatus"]


class RemoteClock:
    """The server's clock, read over the control API."""

    def __init__(self, backend: "RemoteBackend") -> None:
        self._backend = backend

    @property
    def manual(self) -> bool:
        return self._backend.manual

    def now(self) -> datetime:
        return datetime.fromisoformat(self._backend.control("GET", CONTROL_CLOCK)["now"])


class RemoteBackend:
    """The part of :class:`LocalBackend` the SDK layer uses, answered by the server at ``endpoint_url``."""

    def __init__(
        self, endpoint_url: str, account_id: str = "123456789012", region: str = "us-east-1"
    ) -> None:
        self.endpoint_url = endpoint_url.rstrip("/")
        self.account_id = account_id
        self.region = region
        self.clock = RemoteClock(self)
        self._manual: bool | None = None
        self._buckets: set[str] = set()
        self._clients: dict[tuple[str, str], Any] = {}  # the waits' own clients, by service and region
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RemoteBackend({self.endpoint_url!r}, account_id={self.account_id!r}, region={self.region!r})"

    @property
    def manual(self) -> bool:
        """Whether the server runs on a manual clock (asked once)."""
        if self._manual is None:
            self._manual = bool(self.control("GET", CONTROL_CLOCK)["manual"])
        return self._manual

    def credentials(self) -> Credentials:
        """Fake keys naming the account: the access key id is the account id."""
        return Credentials(self.account_id, SECRET_KEY)

    def boto_session(self, passthrough: Collection[str] = ()) -> boto3.session.Session:
        """A boto3 session whose every emulated service's client goes to the server.

        Its clients get ``endpoint_url`` even when the caller names another
        endpoint (SDK v2's regional STS endpoint); other services refuse, but
        those named in ``passthrough``.
        """
        with _SESSION_LOCK:
            session = boto3.session.Session(
                botocore_session=botocore_session(),
                aws_access_key_id=self.account_id,
                aws_secret_access_key=SECRET_KEY,
                region_name=self.region,
            )
            paths = shared_loader().search_paths
            paths[:] = dict.fromkeys(paths)  # boto3 appends its data directory once per session
        core = session._session
        original = core.create_client
        signature = inspect.signature(original)

        def create_client(*args: Any, **kwargs: Any):
            bound = signature.bind(*args, **kwargs)
            if bound.arguments["service_name"] in EMULATED_SERVICES:
                bound.arguments["endpoint_url"] = self.endpoint_url
            client = original(*bound.args, **bound.kwargs)
            if bound.arguments["service_name"] not in passthrough:
                self._refuse_unless_emulated(client)
            return client

        core.create_client = create_client  # type: ignore[method-assign]  # this session's own
        return session

    def client(self, service_name: str, region_name: str | None = None, **kwargs: Any):
        """A boto3 client of the server (``service_name`` one of the emulated services)."""
        return self.boto_session().client(service_name, region_name=region_name or self.region, **kwargs)

    def sdk_default_bucket(self, region: str | None = None) -> str:
        """The SDK's default bucket ``sagemaker-<region>-<account>``, created on the server if missing."""
        region = region or self.region
        name = f"sagemaker-{region}-{self.account_id}"
        with self._lock:
            if name in self._buckets:
                return name
        s3 = self._client("s3", region)
        extra = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        try:
            s3.create_bucket(Bucket=name, **extra)
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        with self._lock:
            self._buckets.add(name)
        return name

    def wait_for_training_job(
        self, job_name: str, region: str | None = None, fast_forward: bool | None = None
    ) -> RemoteJob:
        """Block until the job has ended, or (a manual clock with nothing scheduled) nothing more can
        happen to it: stepping the server's clock, or polling a wall clock."""
        while True:
            job, moved = self._step(job_name, region, None)
            if job.status in _ENDED or not moved:
                return job

    def step_training_job(
        self,
        job_name: str,
        region: str | None = None,
        max_wait: float | None = None,
        fast_forward: bool | None = None,
    ) -> RemoteJob:
        """One step of :meth:`wait_for_training_job` (``fast_forward`` cannot move a wall clock)."""
        return self._step(job_name, region, max_wait)[0]

    def _step(self, job_name: str, region: str | None, max_wait: float | None) -> tuple[RemoteJob, bool]:
        sagemaker = self._client("sagemaker", region)
        job = RemoteJob(job_name, sagemaker.describe_training_job(TrainingJobName=job_name))
        if job.status in _ENDED:
            return job, False
        moved = self.wait_for_next_change(max_wait=max_wait)
        return RemoteJob(job_name, sagemaker.describe_training_job(TrainingJobName=job_name)), moved

    def wait_for_next_change(self, fast_forward: bool | None = None, max_wait: float | None = None) -> bool:
        """Move a manual-clock server to its next scheduled change (False: none is scheduled).

        A wall-clock server is given a short real sleep instead (True: something may have changed).
        """
        if self.manual:
            changed = bool(self.control("POST", CONTROL_CLOCK, {"next_change": True})["changed"])
            if not changed:
                time.sleep(POLL_SECONDS)
            return changed
        time.sleep(min(max_wait or MAX_POLL_SECONDS, MAX_POLL_SECONDS))
        return True

    @contextlib.contextmanager
    def activate(self, passthrough: Collection[str] = ()) -> Iterator["RemoteBackend"]:
        """Every boto3 client created while the block runs goes to the server (and keeps going there).

        Services the server does not emulate answer NotImplemented unless named in ``passthrough``
        (as for ``LocalBackend.activate``). The SDK layer (waits, telemetry) follows the activation.
        """
        with activated(Activation(self._attach, self.region, passthrough)), layers.entered(self):
            yield self

    def control(self, method: str, path: str, document: dict | None = None) -> dict:
        """The server's JSON answer to one control API request; raises :class:`ServerError` on refusal."""
        body = None if document is None else json.dumps(document).encode()
        request = control_request(self.endpoint_url + path, body, method, self.credentials())
        try:
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise ServerError(
                f"{method} {path}: HTTP {error.code}: {error.read().decode(errors='replace')}"
            ) from None
        except urllib.error.URLError as error:
            raise ServerError(
                f"{method} {path}: the server at {self.endpoint_url} is not reachable: {error.reason}"
            ) from None

    def _client(self, service_name: str, region: str | None):
        key = (service_name, region or self.region)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = self.client(service_name, region_name=key[1])
            return client

    def _attach(self, client: Any, enabled: Callable[[], bool] = lambda: True) -> None:
        """Point a client made in an activation at the server, with the account's keys."""
        if client.meta.service_model.service_name not in EMULATED_SERVICES:
            self._refuse_unless_emulated(client, enabled)
            return
        client.meta._endpoint_url = self.endpoint_url
        client._endpoint.host = self.endpoint_url
        resolver = getattr(client, "_ruleset_resolver", None)
        if resolver is not None:
            resolver._builtins["SDK::Endpoint"] = self.endpoint_url
        client._request_signer._credentials = self.credentials()

    @staticmethod
    def _refuse_unless_emulated(client: Any, enabled: Callable[[], bool] = lambda: True) -> None:
        if client.meta.service_model.service_name not in SERVICE_IDS:
            refuse(client, enabled)


#: A backend the SDK layer works with: in process, or a server's.
Backend = LocalBackend | RemoteBackend
