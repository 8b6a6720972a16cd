"""LocalBackend: the public entry point that ties clock, domain, API and transport."""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Iterator, cast

import boto3

from sagemaker_plans_local.backend_root import BackendRoot
from sagemaker_plans_local.backend_state import local_executor, open_state, shut_down
from sagemaker_plans_local.core.arns import account_id as checked_account_id
from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.core.waiting import Waits
from sagemaker_plans_local.protocol.service_model import botocore_session, shared_loader
from sagemaker_plans_local.transport import layers
from sagemaker_plans_local.transport.activation import Activation, activated
from sagemaker_plans_local.transport.direct_call import DirectCalls
from sagemaker_plans_local.transport.refusal import Refusal, refuse
from sagemaker_plans_local.transport.service_hook import ServiceHook

if TYPE_CHECKING:  # the SageMaker domain loads with the first request, not with the backend
    from matplotlib.figure import Figure

    from sagemaker_plans_local.durable.state import Durable
    from sagemaker_plans_local.inspection.cost import CostReport
    from sagemaker_plans_local.inspection.prices import TrainingPrices
    from sagemaker_plans_local.inspection.snapshot import Snapshot
    from sagemaker_plans_local.protocol.service import AwsService
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
    from sagemaker_plans_local.services.sagemaker.plans.regional_capacity import RegionalCapacity

#: The services a LocalBackend answers: botocore name -> hyphenized service id (the models' own;
#: a test checks them), so a session's hooks are registered without reading the models.
SERVICE_IDS = {
    "sagemaker": "sagemaker",
    "s3": "s3",
    "sts": "sts",
    "iam": "iam",
    "logs": "cloudwatch-logs",
    "resourcegroupstaggingapi": "resource-groups-tagging-api",
}
#: The services a LocalBackend answers (botocore names).
EMULATED_SERVICES = tuple(SERVICE_IDS)

_FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


class LocalBackend:
    """An in-process SageMaker for training jobs, managed warm pools and training plans.

    ``start_time`` (an aware datetime) gives a manual clock that moves only
    when advanced; ``None`` follows the wall clock (an existing root keeps its
    own). ``root`` makes the state durable there and shared by every backend
    on it, in any process (docs/durability.md); by default it is ephemeral, in a temporary
    directory that :meth:`close` removes (``BackendRoot(None)``: one a server keeps, docs/server.md).
    A backend never closed is closed when it is garbage or the interpreter exits. ``job_endpoint_url``
    (set by the HTTP server that answers this backend) is where the jobs'
    own SageMaker calls go. ``runs_code=False`` (an observer, such as the
    inspection CLI) never runs a job's code on a durable root: a process that
    does runs it. ``run_job_code=False`` runs no job's code at all: every job is simulated
    on the clock (a shared server's ``serve --no-run-code``). ``runner="detached"`` (the SDK's
    default backend) leaves a durable root's runs to the root's detached runner, a process of
    its own that outlives this one (docs/durability.md, "A detached runner"); this backend then
    runs no job's code itself.
    """

    def __init__(
        self,
        region: str = "us-east-1",
        account_id: str = "123456789012",
        start_time: datetime | None = None,
        root: str | Path | BackendRoot | None = None,
        job_endpoint_url: str | None = None,
        runs_code: bool = True,
        run_job_code: bool = True,
        runner: str | None = None,
    ) -> None:
        if runner not in (None, "detached") or (runner and root is None):
            raise ValueError(f"runner takes None or 'detached' (with a root), not {runner!r}")
        detach = runner is not None and run_job_code and _detached_runs()
        self.region = region
        self.account_id = checked_account_id(account_id)
        held = root if isinstance(root, BackendRoot) else BackendRoot(root)
        self.root = held.path
        self._durable: Durable | None = None
        factory = functools.partial(local_executor, endpoint_url=job_endpoint_url) if run_job_code else None
        try:
            self._emulation, self._services, self._durable = open_state(
                held, account_id, region, start_time, factory, runs_code and not detach
            )
        except BaseException:
            held.release()
            raise
        emulation = self._emulation
        self._closer = weakref.finalize(self, shut_down, emulation, held, self._durable)
        if detach and self._durable is not None:
            from sagemaker_plans_local.durable.detached import attach

            attach(self._durable, account_id, region)
        self._waits = Waits(emulation.clock, emulation.settings, emulation.lock)
        self._direct: dict[str, DirectCalls] = {}
        self.at_work = emulation.at_work  #: whether a close would cut work short (Emulation.at_work)

    # -- public surface ------------------------------------------------------
    @property
    def clock(self) -> VirtualClock:
        """The backend's clock (on a shared root, after what other processes did is replayed)."""
        self._sync()
        return self._emulation.clock

    @property
    def settings(self) -> Settings:
        """The emulation's settings (on a durable root, each change is journaled)."""
        self._sync()
        return self._emulation.settings

    def _sync(self) -> None:
        if self._durable is not None:
            self._durable.sync()

    @property
    def capacity(self) -> RegionalCapacity:
        """Capacity free for training plans: ``add(type, count, az, start, end)``, ``clear()``."""
        if self._durable is not None:
            from sagemaker_plans_local.durable.writes import JournaledCapacity

            return cast("RegionalCapacity", JournaledCapacity(self._durable))
        return self._emulation.capacity

    def service(self, service_name: str) -> AwsService:
        """The emulated service ``service_name`` (built on first use).

        ``handle(region, operation, request)`` answers a request as botocore
        serializes it, with ``Answer(status, headers, body)``: what the HTTP
        server sits on.
        """
        self._check_emulated(service_name)
        return self._services.get(service_name)

    def client(self, service_name: str = "sagemaker", **kwargs):
        """A real boto3 client answered by this backend (no credentials needed)."""
        self._check_emulated(service_name)
        kwargs.setdefault("region_name", self.region)
        with _SESSION_LOCK:  # a boto3 session is not safe for concurrent client creation
            client = _client_session().client(service_name, **kwargs)
        self._attach(client)
        return client

    def call(self, service_name: str, operation_name: str, params: dict | None = None) -> dict:
        """What ``client(service_name)``'s call of ``operation_name`` answers, without its per-call work
        (events, endpoint resolution, signing): the same validation, answer and ``ClientError``s.

        For the JSON services (``sagemaker``, ``logs``); docs/backend.md, "Direct calls".
        """
        calls = self._direct.get(service_name)
        if calls is None:
            self._check_emulated(service_name)
            calls = self._direct[service_name] = DirectCalls(
                service_name,
                self._services.deferred(service_name),
                self.region,
                _client_session(),
                decoded=self._durable is None,  # a journal keeps each call's serialized body
            )
        return calls(operation_name, params or {})

    def sdk_default_bucket(self, region: str | None = None) -> str:
        """The SageMaker SDK's default bucket, ``sagemaker-<region>-<account>``, created if missing.

        What ``Session.default_bucket()`` finds over STS and S3, without the calls.
        """
        region = region or self.region
        name = f"sagemaker-{region}-{self.account_id}"
        self._emulation.clock.catch_up()  # replays what other processes did first
        self._emulation.objects.create_bucket(name, region, exist_ok=True)
        return name

    def boto_session(self, passthrough: Collection[str] = ()) -> boto3.session.Session:
        """A boto3 session (fake credentials, the backend's region) whose every client is local.

        Emulated services are answered by this backend; any other service
        answers ``NotImplemented`` instead of reaching AWS, unless named in
        ``passthrough`` (botocore names, e.g. ``{"ec2"}``; such a client still has fake credentials).
        """
        session = _boto3_session(region_name=self.region)
        events = session._session
        for service_name, hook in self.hooks().items():
            hook.attach_to_session(events, SERVICE_IDS[service_name])
        events.register(
            "before-call", Refusal(passthrough=passthrough), unique_id="sagemaker-plans-local-refuse"
        )
        return session

    @contextlib.contextmanager
    def activate(self, passthrough: Collection[str] = ()) -> Iterator["LocalBackend"]:
        """Answer every boto3 client created in the process while the block runs.

        A service this backend does not emulate answers ``NotImplemented``, never
        AWS, unless named in ``passthrough`` (botocore names, e.g. ``{"ec2"}``):
        those clients are left to AWS, with the credentials boto3 finds. With a
        SageMaker Python SDK installed, its waits, telemetry and (v3)
        sagemaker-core's cached clients follow the activation too, whenever
        those clients were created (``docs/sdk.md``).
        """
        with activated(Activation(self._attach, self.region, passthrough)), layers.entered(self):
            yield self

    def script_job(
        self,
        job_name: str,
        *,
        outcome: str = "Completed",
        runtime_seconds: int | None = None,
        failure_reason: str | None = None,
    ) -> None:
        """Decide how the named job (existing or future) ends.

        ``outcome``: ``Completed``, or ``AlgorithmError`` / ``ClientError`` /
        ``InternalServerError`` for a ``Failed`` job with that FailureReason.
        """
        from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript

        script = JobScript(outcome, runtime_seconds, failure_reason)
        if self._durable is not None:
            from sagemaker_plans_local.durable.writes import script_job

            script_job(self._durable, job_name, script)
        else:
            self._emulation.script_job(job_name, script)

    def script_plan(self, training_plan_name: str, *, payment_succeeds: bool = False) -> None:
        """Decide whether the named plan's payment succeeds (by default calling this makes it fail)."""
        from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript

        script = PlanScript(payment_succeeds)
        if self._durable is not None:
            from sagemaker_plans_local.durable.writes import script_plan

            script_plan(self._durable, training_plan_name, script)
        else:
            self._emulation.script_plan(training_plan_name, script)

    def training_job(self, job_name: str, region: str | None = None) -> TrainingJob:
        """The domain object of a job (its ``cache_dir`` is the warm-pool cache)."""
        with self._emulation.lock:
            self._emulation.clock.catch_up()
            return self._emulation.region(region or self.region).training_jobs.get(job_name)

    def wait_for_training_job(
        self, job_name: str, region: str | None = None, fast_forward: bool | None = None
    ) -> TrainingJob:
        """Block until the job has ended, without polling sleeps.

        On a manual clock simulated waits (provisioning, queued capacity) are
        passed by advancing it. On a wall clock they are waited for in real
        time (service phases are short: ``settings.wall_clock_phase_scale``),
        unless ``fast_forward`` (default ``settings.fast_forward_waits``) moves
        the clock ahead instead. A job's real process runs in real time.
        """
        return self._waits.job(self._jobs(region), job_name, fast_forward)

    def step_training_job(
        self,
        job_name: str,
        region: str | None = None,
        max_wait: float | None = None,
        fast_forward: bool | None = None,
    ) -> TrainingJob:
        """One step of :meth:`wait_for_training_job`, waiting at most ``max_wait`` real seconds."""
        return self._waits.step_job(self._jobs(region), job_name, max_wait, fast_forward)[0]

    def wait_for_next_change(self, fast_forward: bool | None = None) -> bool:
        """Wait for the next scheduled state change and apply it; False if none is scheduled.

        A manual clock (or ``fast_forward``) moves to it at once; a wall clock sleeps until it.
        """
        return self._waits.next_change(fast_forward)

    def advance_to_next_change(self) -> None:
        """Move the clock to the next scheduled state change (if any) and apply it (a fast-forward)."""
        self._waits.next_change(fast_forward=True)

    def run_until_idle(self, limit: timedelta = timedelta(days=60)) -> None:
        """Advance the clock until nothing more is scheduled (at most ``limit``; a fast-forward)."""
        clock = self.clock  # brought up to date once: each advance replays what is new itself
        deadline = clock.now() + limit
        while (due := clock.next_due()) is not None and due <= deadline:
            clock.advance(max(due - clock.now(), timedelta(0)))

    def cost_report(self, prices: TrainingPrices | None = None) -> CostReport:
        """What AWS would bill for everything this backend holds (``docs/cost-report.md``)."""
        from sagemaker_plans_local.inspection.cost import cost_report

        return cost_report(self._snapshot(), prices)

    def timeline(
        self, title: str | None = None, start: datetime | None = None, end: datetime | None = None
    ) -> Figure:
        """The timeline picture of everything this backend holds (``docs/cli.md``, "timeline").

        A matplotlib Figure (the ``timeline`` extra), shown inline in Jupyter; save it with
        ``sagemaker_plans_local.inspection.timeline.save(figure, "out.png")`` (.png, .svg, .html).
        ``start`` / ``end`` zoom the time axis.
        """
        from sagemaker_plans_local.inspection.timeline import timeline

        return timeline(self._snapshot(), title, start=start, end=end)

    def _snapshot(self) -> Snapshot:
        from sagemaker_plans_local.inspection.snapshot import Snapshot

        return Snapshot.collect(self.client(), self.clock.now())

    def close(self) -> None:
        """Stop local runs, let the root go and remove it if the backend made it; idempotent."""
        self._closer()

    def __enter__(self) -> "LocalBackend":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- wiring ----------------------------------------------------------------
    def _jobs(self, region: str | None):
        return self._emulation.region(region or self.region).training_jobs

    @staticmethod
    def _check_emulated(service_name: str) -> None:
        if service_name not in EMULATED_SERVICES:
            raise ValueError(
                f"sagemaker-plans-local emulates {', '.join(EMULATED_SERVICES)}, not {service_name!r}"
            )

    def hooks(self, enabled: Callable[[], bool] = lambda: True) -> dict:
        """One in-process hook per emulated service (each keeps the backend alive)."""
        return {name: self._hook(name, enabled) for name in EMULATED_SERVICES}

    def _hook(self, service_name: str, enabled: Callable[[], bool]) -> ServiceHook:
        """The hook answering ``service_name`` (its service is built on its first request).

        SageMaker's successful answers are decoded by the compiled decoder (``fast``).
        """
        service = self._services.deferred(service_name)
        return ServiceHook(service_name, service, _Holding(self, enabled), fast=service_name == "sagemaker")

    def _attach(self, client, enabled: Callable[[], bool] = lambda: True) -> None:
        service_name = client.meta.service_model.service_name
        if service_name in SERVICE_IDS:
            self._hook(service_name, enabled).attach(client)
        else:
            refuse(client, enabled)


class _Holding:
    """A hook's ``enabled`` predicate that holds the backend: a live client keeps its backend open."""

    __slots__ = ("backend", "enabled")

    def __init__(self, backend: LocalBackend, enabled: Callable[[], bool]) -> None:
        self.backend = backend
        self.enabled = enabled

    def __call__(self) -> bool:
        return self.enabled()


def _detached_runs() -> bool:
    from sagemaker_plans_local.durable.detached import available

    return available()


_SESSION_LOCK = threading.RLock()  # held while the shared client session is first made


def _boto3_session(**kwargs) -> boto3.session.Session:
    """A fake-credential boto3 session on the shared botocore loader (models parsed once)."""
    with _SESSION_LOCK:
        session = boto3.session.Session(botocore_session=botocore_session(), **_FAKE_CREDENTIALS, **kwargs)
        paths = shared_loader().search_paths
        paths[:] = dict.fromkeys(paths)  # boto3 appends its data directory once per session
    return session


@functools.lru_cache(maxsize=None)
def _client_session() -> boto3.session.Session:
    """One fake-credential session for every backend's clients (hooks go on each client).

    Sharing it keeps botocore's client machinery: a client then costs milliseconds.
    """
    return _boto3_session()
