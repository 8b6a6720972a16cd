"""One policy over one workload, on a fresh backend, through its public API (docs/what-if.md, "How it runs").

A manual-clock :class:`~sagemaker_plans_local.LocalBackend` that runs no code starts an hour before the
workload, buys the policy's plans (SearchTrainingPlanOfferings, then CreateTrainingPlan of the first
offering), and then each job is created at its submit time, simulated for its run time (``script_job``).
Every call is a ``LocalBackend.call``: a boto3 client's answers without its per-call work. The clock
moves from submission to submission in one advance, stopping at each change only while a job whose end
matters (a dependency, a plan job that may overflow) could end. Everything the answers report is read
back afterwards (:mod:`.readback`).
"""

from __future__ import annotations

import functools
import heapq
import itertools
from datetime import datetime, timedelta
from typing import Any, Callable

import attrs
from botocore.exceptions import ClientError

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.services.sagemaker.plans.plan_jobs import DEFAULT_MAX_PENDING
from sagemaker_plans_local.simulation.capacity import CapacityBlock
from sagemaker_plans_local.simulation.policies import PlanSpec, Policy
from sagemaker_plans_local.simulation.workload import Workload

#: How long before the workload the backend starts: time to buy the plans and have them paid.
LEAD = timedelta(hours=1)
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-gpu-py311"
ENDED = frozenset({"Completed", "Failed", "Stopped"})
#: A plan job can lose its block no earlier than this long before the plan's end (30 min for jobs).
CUTOFF_BOUND = timedelta(hours=1)
#: Longest a run goes on after the last submission (pools, plans) before it is read back.
IDLE_LIMIT = timedelta(days=3650)
#: Every this many submissions, the jobs that have ended for good are read and deleted (a ``Retire``).
RETIRE_EVERY = 1000
#: A job is looked at for retiring this long after the earliest it could end (its pool has usually ended).
RETIRE_LAG = timedelta(hours=2)
Progress = Callable[[int, int], None]
#: ``call(operation, params)``: the backend's SageMaker answer (LocalBackend.call).
Call = Callable[[str, dict[str, Any]], dict[str, Any]]
#: ``retire(pairs, now)`` takes the describe answers of jobs that will not change any more.
Retire = Callable[[list[tuple["Attempt", dict[str, Any]]], datetime], None]


class SimulationError(RuntimeError):
    """A policy that cannot be simulated (a plan not offered or not paid); the message says why."""


@attrs.define
class Attempt:
    """One training job created for a workload job (the first, or its on-demand overflow)."""

    name: str
    job: int
    on_plan: bool
    created: datetime
    earliest_end: datetime  #: no end of this job can come before (when to start watching it)


@attrs.define
class Submitted:
    """What was submitted: the attempts of each job, the refusals, and the jobs never submitted."""

    attempts: list[Attempt] = attrs.Factory(list)
    refused: dict[int, tuple[str, str]] = attrs.Factory(dict)  #: job -> (error code, message)
    not_run: dict[int, str] = attrs.Factory(dict)  #: job -> why (its dependency did not complete)
    overflowed: set[int] = attrs.Factory(set)
    plans: dict[str, str] = attrs.Factory(dict)  #: instance type -> plan ARN
    retired: set[str] = attrs.Factory(set)  #: the attempts already read (and deleted from the backend)


class Run:
    """Submits ``workload`` under ``policy`` on ``backend`` (use :func:`submit_all`)."""

    def __init__(
        self,
        backend: LocalBackend,
        workload: Workload,
        policy: Policy,
        progress: Progress | None,
        retire: Retire | None = None,
    ) -> None:
        self.backend, self.workload, self.policy = backend, workload, policy
        self.retire = retire
        self.live: list[Attempt] = []  # created, not retired
        self.sm: Call = functools.partial(backend.call, "sagemaker")
        self.clock = backend.clock
        self.progress = progress
        self.out = Submitted()
        self.plan_ends: dict[str, datetime] = {}
        self.queue: list[tuple[datetime, int, int]] = []  # (submit at, tie-break, job)
        self.dependents: dict[int, list[int]] = {}
        self.watch: dict[str, Attempt] = {}
        self.names = {job.name.casefold() for job in workload.jobs}
        self.submitted = 0
        self._order = itertools.count()

    def run(self, capacity: tuple[CapacityBlock, ...] | None) -> Submitted:
        """Buy the plans, submit every job at its time, run until nothing is scheduled; what was submitted."""
        if capacity is not None:
            self.backend.capacity.clear()
            for block in capacity:
                start, end = block.span(self.workload.start)
                self.backend.capacity.add(
                    block.instance_type, block.instance_count, block.availability_zone, start, end
                )
        for plan in self.policy.plans:
            self._buy(plan)
        self._advance_to(self.workload.start)
        self._check_plans()
        for index, job in enumerate(self.workload.jobs):
            if job.after is None:
                heapq.heappush(self.queue, (self.workload.submit_time(job), next(self._order), index))
            else:
                self.dependents.setdefault(job.after, []).append(index)
        while self.queue or self.watch:
            target = self.queue[0][0] if self.queue else None
            self._advance_to(target)
            while self.queue and self.queue[0][0] <= self.clock.now():
                self._submit(heapq.heappop(self.queue)[2])
        self._tell(len(self.workload.jobs) - self.submitted)  # the jobs never submitted are done too
        self.backend.run_until_idle(limit=IDLE_LIMIT)
        return self.out

    def _retire(self) -> None:
        """Hand the jobs that will not change any more (ended, no pool kept or in use) to ``retire``, then
        delete them from the backend: its memory follows the jobs alive, not the workload."""
        now = self.clock.now()
        kept, done = [], []
        for attempt in self.live:
            if attempt.earliest_end + RETIRE_LAG > now or attempt.name in self.watch:
                kept.append(attempt)
                continue
            answer = self.sm("DescribeTrainingJob", {"TrainingJobName": attempt.name})
            pool = (answer.get("WarmPoolStatus") or {}).get("Status")
            if answer["TrainingJobStatus"] in ENDED and pool not in ("Available", "InUse"):
                done.append((attempt, answer))
            else:
                kept.append(attempt)
        self.live = kept
        if done and self.retire is not None:
            self.retire(done, now)
            for attempt, _ in done:
                self.sm("DeleteTrainingJob", {"TrainingJobName": attempt.name})
                self.out.retired.add(attempt.name)

    def _tell(self, more: int) -> None:
        """Count ``more`` jobs done; report every 1% (and the last one) to ``progress``."""
        total = len(self.workload.jobs)
        self.submitted += more
        if (
            self.progress is not None
            and more
            and (self.submitted % max(1, total // 100) == 0 or self.submitted == total)
        ):
            self.progress(self.submitted, total)

    # -- plans -------------------------------------------------------------------------------------
    def _buy(self, plan: PlanSpec) -> None:
        """Buy the first offering for ``plan`` from the workload's start (the engine's best)."""
        try:
            offerings = self.sm(
                "SearchTrainingPlanOfferings",
                {
                    "InstanceType": plan.instance_type,
                    "InstanceCount": plan.count,
                    "DurationHours": plan.hours,
                    "TargetResources": ["training-job"],
                    "StartTimeAfter": self.workload.start,
                },
            )["TrainingPlanOfferings"]
            if not offerings:
                raise SimulationError(
                    f"{self.policy}: no training plan offering for {plan.count} x {plan.instance_type} for "
                    f"{plan.hours} h from {self.workload.start.isoformat()} (see --capacity)"
                )
            name = "what-if-" + plan.instance_type.replace(".", "-")
            arn = self.sm(
                "CreateTrainingPlan",
                {"TrainingPlanName": name, "TrainingPlanOfferingId": offerings[0]["TrainingPlanOfferingId"]},
            )["TrainingPlanArn"]
        except ClientError as error:
            raise SimulationError(f"{self.policy}: {plan}: {error.response['Error']['Message']}") from None
        self.out.plans[plan.instance_type] = arn

    def _check_plans(self) -> None:
        for instance_type, arn in self.out.plans.items():
            plan = self.sm("DescribeTrainingPlan", {"TrainingPlanName": arn.rpartition("/")[2]})
            if plan["Status"] not in ("Scheduled", "Active"):
                raise SimulationError(f"{self.policy}: the plan for {instance_type} is {plan['Status']}")
            self.plan_ends[arn] = plan["EndTime"]

    # -- submitting ------------------------------------------------------------------------------
    def _submit(self, index: int, run_seconds: int | None = None, on_demand: bool = False) -> None:
        """Create job ``index`` now: on its type's plan unless ``on_demand`` (then as an overflow)."""
        job = self.workload.jobs[index]
        if not on_demand:
            self._tell(1)
            if self.retire is not None and self.submitted % RETIRE_EVERY == 0:
                self._retire()
        run = job.run_seconds if run_seconds is None else run_seconds
        plan = None if on_demand else self.policy.plan_for(job.instance_type)
        plan_arn = None if plan is None else self.out.plans[plan.instance_type]
        name = job.name if not on_demand else self._overflow_name(job.name)
        self.backend.script_job(name, runtime_seconds=run)
        try:
            self.sm("CreateTrainingJob", self._request(index, name, run, plan_arn))
        except ClientError as error:
            code, message = error.response["Error"]["Code"], error.response["Error"]["Message"]
            if plan_arn is not None and self.policy.overflow and code == "ValidationException":
                self.out.overflowed.add(index)
                self._submit(index, run, on_demand=True)
            else:
                self.out.refused[index] = (code, message)
                self._not_run_after(index)
            return
        now = self.clock.now()
        attempt = Attempt(
            name, index, plan_arn is not None, now, self._earliest_end(index, now, run, plan_arn)
        )
        self.out.attempts.append(attempt)
        self.live.append(attempt)
        if index in self.dependents or (plan_arn is not None and self.policy.overflow):
            self.watch[name] = attempt

    def _request(self, index: int, name: str, run: int, plan_arn: str | None) -> dict[str, Any]:
        job = self.workload.jobs[index]
        resources: dict[str, Any] = {
            "InstanceType": job.instance_type,
            "InstanceCount": job.instance_count,
            "VolumeSizeInGB": 50,
        }
        keep_alive = self.policy.keep_alive_for(job.keep_alive_seconds)
        if keep_alive:
            resources["KeepAlivePeriodInSeconds"] = keep_alive
        stopping: dict[str, Any] = {"MaxRuntimeInSeconds": max(86400, run)}
        if plan_arn is not None:
            resources["TrainingPlanArn"] = plan_arn
            if job.max_pending_seconds is not None:
                stopping["MaxPendingTimeInSeconds"] = job.max_pending_seconds
        return {
            "TrainingJobName": name,
            "RoleArn": ROLE,
            "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            "OutputDataConfig": {"S3OutputPath": "s3://what-if/output"},
            "ResourceConfig": resources,
            "StoppingCondition": stopping,
        }

    def _overflow_name(self, name: str) -> str:
        """A fresh job name for ``name``'s on-demand run: ``<name>-od`` (numbered if taken), at most 63 characters."""
        for number in itertools.count(1):
            suffix = "-od" if number == 1 else f"-od{number}"
            candidate = name[: 63 - len(suffix)] + suffix
            if candidate.casefold() not in self.names:
                self.names.add(candidate.casefold())
                return candidate
        raise AssertionError("unreachable")

    def _earliest_end(self, index: int, now: datetime, run: int, plan_arn: str | None) -> datetime:
        """A bound no end of the job can precede: its run time after creation; on a plan also its pending
        limit (MaxPendingTimeInSeconds or the 2-day default) and its plan's last cutoff."""
        bound = now + timedelta(seconds=run)
        if plan_arn is None:
            return bound
        limit = self.workload.jobs[index].max_pending_seconds
        pending = timedelta(seconds=limit) if limit else DEFAULT_MAX_PENDING
        return min(bound, now + pending, self.plan_ends[plan_arn] - CUTOFF_BOUND)

    # -- the clock -------------------------------------------------------------------------------
    def _advance_to(self, target: datetime | None) -> None:
        """Move to ``target`` (None: until nothing is watched), stopping at each change a watched job may
        end at; back early when a watched job's end puts a submission before ``target``."""
        while True:
            now = self.clock.now()
            ripe = min((attempt.earliest_end for attempt in self.watch.values()), default=None)
            due = self.clock.next_due()
            if ripe is None or due is None:
                if self.watch:  # nothing will change any more: what is watched has ended or never will
                    self._check(every=True)
                    if self.clock.next_due() is None:
                        self._give_up()
                    return
                if target is not None and target > now:
                    self.clock.advance(target - now)
                return
            step = max(due, ripe)
            if target is not None and step > target:
                if target > now:
                    self.clock.advance(target - now)
                return
            self.clock.advance(max(step - now, timedelta(0)))
            head = self.queue[0] if self.queue else None
            self._check()
            if self.queue and self.queue[0] != head:
                return

    def _check(self, every: bool = False) -> None:
        """Describe each watched job that may have ended (``every``: all of them); act on those that have."""
        now = self.clock.now()
        for name, attempt in list(self.watch.items()):
            if attempt.earliest_end > now and not every:
                continue
            answer = self.sm("DescribeTrainingJob", {"TrainingJobName": name})
            if answer["TrainingJobStatus"] in ENDED:
                del self.watch[name]
                self._ended(attempt, answer)

    def _give_up(self) -> None:
        """The watched jobs that will never end: the jobs waiting for them are never submitted."""
        for name, attempt in list(self.watch.items()):
            del self.watch[name]
            self.out.not_run.update(
                {i: f"{attempt.name} never ended" for i in self._all_dependents(attempt.job)}
            )

    def _ended(self, attempt: Attempt, answer: dict[str, Any]) -> None:
        """``attempt`` has ended: overflow it, or release (or give up on) the jobs that wait for it."""
        status, reason = answer["TrainingJobStatus"], answer.get("FailureReason", "")
        capacity_lost = status == "Stopped" or reason.startswith(
            ("InsufficientCapacityError", "CapacityError")
        )
        if attempt.on_plan and self.policy.overflow and status != "Completed" and capacity_lost:
            self.out.overflowed.add(attempt.job)
            trained = answer.get("TrainingTimeInSeconds") or 0
            self._submit(
                attempt.job, max(self.workload.jobs[attempt.job].run_seconds - trained, 1), on_demand=True
            )
            return
        if status != "Completed":
            self._not_run_after(attempt.job)
            return
        now = self.clock.now()
        for index in self.dependents.get(attempt.job, ()):
            at = max(self.workload.submit_time(self.workload.jobs[index]), now)
            heapq.heappush(self.queue, (at, next(self._order), index))

    def _not_run_after(self, index: int) -> None:
        name = self.workload.jobs[index].name
        for dependent in self._all_dependents(index):
            self.out.not_run[dependent] = f"{name} did not complete"

    def _all_dependents(self, index: int) -> list[int]:
        found, stack = [], list(self.dependents.get(index, ()))
        while stack:
            dependent = stack.pop()
            found.append(dependent)
            stack.extend(self.dependents.get(dependent, ()))
        return found


def submit_all(
    workload: Workload,
    policy: Policy,
    capacity: tuple[CapacityBlock, ...] | None = None,
    progress: Progress | None = None,
    retire: Retire | None = None,
) -> tuple[LocalBackend, Submitted]:
    """A fresh backend that ran ``workload`` under ``policy`` (the caller closes it), and what was submitted;
    with ``retire``, the jobs that ended for good on the way are handed to it and deleted from the backend."""
    backend = LocalBackend(start_time=workload.start - LEAD, run_job_code=False)
    try:
        return backend, Run(backend, workload, policy, progress, retire).run(capacity)
    except BaseException:
        backend.close()
        raise
