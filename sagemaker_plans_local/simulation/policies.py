"""What-if policies: how the workload's jobs ask for capacity (docs/what-if.md, "Policies").

- ``as-is``: every job as the workload gives it (its own keep-alive), on demand;
- ``on-demand``: on demand, no warm pool for any job;
- ``keep-alive=SECONDS``: on demand, every job asking for a warm pool kept that long;
- ``plan=TYPE:COUNT:HOURS``: a training plan bought before the workload starts, the jobs of that type on
  it (repeatable, one plan per type);
- ``overflow``: with a plan, a job the plan cannot run (refused, pending past its MaxPendingTime, or left
  without a block) runs on demand instead.

Terms combine with ``+``: ``plan=ml.p5.48xlarge:2:48+keep-alive=600+overflow``. A sweep
(:func:`sweep`) repeats a policy over one parameter.
"""

from __future__ import annotations

from typing import Iterable

import attrs

from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.protocol.service_model import operation_model
from sagemaker_plans_local.services.sagemaker.plans.offerings import INSTANCE_COUNTS, MAX_DAYS

#: The instance counts a training plan offering is sold in (SearchTrainingPlanOfferings).
PLAN_COUNTS = INSTANCE_COUNTS
#: A plan's longest duration.
MAX_PLAN_HOURS = MAX_DAYS * 24
SWEEP_PARAMETERS = ("keep-alive", "plan-count", "plan-hours")
#: A keep-alive sweep's step when it names none.
KEEP_ALIVE_STEP = 300


class PolicyError(ValueError):
    """A policy or sweep that cannot be read (the message says which term and why)."""


@attrs.frozen
class PlanSpec:
    """A training plan to buy: ``count`` instances of ``instance_type`` for ``hours``."""

    instance_type: str
    count: int
    hours: int

    def __str__(self) -> str:
        return f"plan={self.instance_type}:{self.count}:{self.hours}"


@attrs.frozen
class Policy:
    """``keep_alive`` None: each job's own; ``plans``: bought before the start; ``overflow``: on demand instead."""

    keep_alive: int | None = None
    plans: tuple[PlanSpec, ...] = ()
    overflow: bool = False
    on_demand: bool = False  #: the ``on-demand`` policy (no pools, no plan)

    @property
    def label(self) -> str:
        """The policy as it is written (``as-is``, ``on-demand``, or its terms joined by ``+``)."""
        if self.on_demand:
            return "on-demand"
        terms = [str(plan) for plan in self.plans]
        if self.keep_alive is not None:
            terms.append(f"keep-alive={self.keep_alive}")
        if self.overflow:
            terms.append("overflow")
        return "+".join(terms) or "as-is"

    def __str__(self) -> str:
        return self.label

    def plan_for(self, instance_type: str) -> PlanSpec | None:
        """The plan the jobs of ``instance_type`` go to, if any."""
        return next((plan for plan in self.plans if plan.instance_type == instance_type), None)

    def keep_alive_for(self, own: int | None) -> int | None:
        """The keep-alive a job whose workload row asks for ``own`` gets (None or 0: no pool)."""
        if self.on_demand:
            return None
        return own if self.keep_alive is None else self.keep_alive


def parse_policy(text: str) -> Policy:
    """The policy written ``text`` (see the module's docstring); PolicyError names a bad term."""
    terms = [term.strip() for term in text.split("+")]
    if not text.strip() or "" in terms:
        raise PolicyError(f"policy {text!r}: an empty term")
    if terms in (["on-demand"], ["as-is"]):
        return Policy(on_demand=terms == ["on-demand"])
    keep_alive, plans, overflow = None, [], False
    for term in terms:
        key, _, value = term.partition("=")
        if key == "keep-alive" and value:
            if keep_alive is not None:
                raise PolicyError(f"policy {text!r}: keep-alive given twice")
            keep_alive = keep_alive_seconds(value, text)
        elif key == "plan" and value:
            plans.append(plan_spec(value, text))
        elif term == "overflow":
            overflow = True
        else:
            raise PolicyError(
                f"policy {text!r}: unknown term {term!r} (on-demand, as-is, keep-alive=SECONDS, "
                "plan=TYPE:COUNT:HOURS, overflow; joined with +)"
            )
    return _checked(Policy(keep_alive, tuple(plans), overflow), text)


def _checked(policy: Policy, text: str) -> Policy:
    types = [plan.instance_type for plan in policy.plans]
    if len(set(types)) < len(types):
        raise PolicyError(f"policy {text!r}: one plan per instance type")
    if policy.overflow and not policy.plans:
        raise PolicyError(f"policy {text!r}: overflow needs a plan to overflow from")
    return policy


def keep_alive_seconds(value: str, text: str) -> int:
    """A keep-alive term's seconds: a whole number within the backend's ``max_keep_alive_seconds``."""
    limit = Settings().max_keep_alive_seconds
    if not value.isdigit() or int(value) > limit:
        raise PolicyError(f"policy {text!r}: keep-alive takes whole seconds from 0 to {limit}, not {value!r}")
    return int(value)


def plan_spec(value: str, text: str) -> PlanSpec:
    """``TYPE:COUNT:HOURS``: a type plans are sold for (the model's enum), a sold count, whole hours."""
    parts = value.split(":")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        raise PolicyError(f"policy {text!r}: a plan is plan=TYPE:COUNT:HOURS, not plan={value}")
    instance_type, count, hours = parts[0], int(parts[1]), int(parts[2])
    sold = plan_instance_types()
    if instance_type not in sold:
        raise PolicyError(f"policy {text!r}: training plans are not sold for {instance_type!r}")
    if count not in PLAN_COUNTS:
        raise PolicyError(
            f"policy {text!r}: a plan has {', '.join(map(str, PLAN_COUNTS))} instances, not {count}"
        )
    if not 1 <= hours <= MAX_PLAN_HOURS:
        raise PolicyError(f"policy {text!r}: a plan lasts 1 to {MAX_PLAN_HOURS} hours, not {hours}")
    return PlanSpec(instance_type, count, hours)


def plan_instance_types() -> frozenset[str]:
    """The instance types plans are sold for that training jobs run on (both of the model's enums)."""
    search = operation_model("SearchTrainingPlanOfferings").input_shape.members["InstanceType"]
    job = operation_model("CreateTrainingJob").input_shape.members["ResourceConfig"].members["InstanceType"]  # type: ignore[attr-defined]
    return frozenset(search.enum) & frozenset(job.enum)  # type: ignore[attr-defined]


def sweep(text: str, bases: Iterable[Policy]) -> list[Policy]:
    """Each base policy once per value of ``PARAMETER=FROM..TO[/STEP]`` (keep-alive, plan-count, plan-hours).

    ``keep-alive`` steps by 300 s unless told; ``plan-count`` takes the counts plans are sold in
    within the range (1..8: 1, 2, 4, 8); ``plan-hours`` steps by 24 unless told.
    """
    parameter, _, span = text.partition("=")
    if parameter not in SWEEP_PARAMETERS or ".." not in span:
        raise PolicyError(
            f"sweep {text!r}: PARAMETER=FROM..TO[/STEP] with PARAMETER one of {', '.join(SWEEP_PARAMETERS)}"
        )
    values = _values(parameter, span, text)
    policies = []
    for base in bases:
        if parameter != "keep-alive" and len(base.plans) != 1:
            raise PolicyError(f"sweep {text!r}: sweeps a plan, so each policy needs exactly one (not {base})")
        for value in values:
            policies.append(_with(base, parameter, value, text))
    return policies


def _values(parameter: str, span: str, text: str) -> list[int]:
    bounds, _, step_text = span.partition("/")
    low_text, _, high_text = bounds.partition("..")
    numbers = (low_text, high_text, step_text or "1")
    if not all(part.isdigit() for part in numbers):
        raise PolicyError(f"sweep {text!r}: FROM, TO and STEP are whole numbers")
    low, high, step = (int(part) for part in numbers)
    if high < low or step < 1:
        raise PolicyError(f"sweep {text!r}: FROM..TO must not run backwards, and STEP must be at least 1")
    if parameter == "plan-count":
        if step_text:
            raise PolicyError(f"sweep {text!r}: plan-count takes the sold counts in its range, no STEP")
        values = [count for count in PLAN_COUNTS if low <= count <= high]
        if not values:
            raise PolicyError(
                f"sweep {text!r}: no sold plan count ({', '.join(map(str, PLAN_COUNTS))}) in range"
            )
        return values
    default_step = KEEP_ALIVE_STEP if parameter == "keep-alive" else 24
    return list(range(low, high + 1, int(step_text) if step_text else default_step))


def _with(base: Policy, parameter: str, value: int, text: str) -> Policy:
    if parameter == "keep-alive":
        keep_alive_seconds(str(value), text)
        return attrs.evolve(base, keep_alive=value, on_demand=False)
    plan = base.plans[0]
    if parameter == "plan-count":
        plan = attrs.evolve(plan, count=value)
    else:
        plan = plan_spec(f"{plan.instance_type}:{plan.count}:{value}", text)
    return attrs.evolve(base, plans=(plan,))
