"""Tags of the SageMaker resources one region holds: training jobs, training plans,
their reserved capacities and HyperPod clusters (rules and sources in docs/tags.md).

A resource's tags are kept by its ARN together with the resource they were given
to: once the resource is gone its tags are gone, and a new resource that gets
the same ARN (a training job created again under a deleted one's name) starts
with its own creation tags only.
"""

from __future__ import annotations

import builtins
import functools
import itertools
from typing import Callable, Iterable, Iterator, Protocol, Sequence

import attrs

from sagemaker_plans_local.core.errors import DomainError, InvalidRequest
from sagemaker_plans_local.services.sagemaker.clusters.clusters import Clusters
from sagemaker_plans_local.services.sagemaker.jobs.training_jobs import TrainingJobs
from sagemaker_plans_local.services.sagemaker.plans.training_plans import TrainingPlan, TrainingPlans

#: Tags a resource can have (AWS's per-resource limit).
MAX_TAGS_PER_RESOURCE = 50
#: Keys starting with this prefix, in any case, are AWS's own.
RESERVED_PREFIX = "aws:"


class _Resource(Protocol):
    arn: str


@attrs.frozen
class Tag:
    """One tag; ``sequence`` orders a resource's tags by when their keys were first added."""

    key: str
    value: str
    sequence: int


@attrs.define(eq=False)
class _TagSet:
    owner: object
    tags: dict[str, Tag] = attrs.Factory(dict)
    counter: Iterator[int] = attrs.Factory(itertools.count)
    ever: bool = False  # whether the resource has had a tag (the tagging API lists it then)


def check_tags(pairs: Sequence[tuple[str, str]]) -> None:
    """Rules on a request's tags that hold whatever the resource: no reserved key, no key twice."""
    _check_keys([key for key, _ in pairs])
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise InvalidRequest(
                f"Tag keys must be unique per resource; the key {key} appears more than once in the request."
            )
        seen.add(key)


def _check_keys(keys: Iterable[str]) -> None:
    for key in keys:
        if key.lower().startswith(RESERVED_PREFIX):
            raise InvalidRequest(
                f"System prefix '{RESERVED_PREFIX}' reserved for AWS usage in tag key: {key}"
            )


def _canonical(arn: str) -> str:
    """The ARN with its resource id lowercased, as SageMaker writes resource ARNs."""
    head, sep, resource_id = arn.rpartition("/")
    return f"{head}{sep}{resource_id.lower()}" if sep else arn


def _reserved_capacity(training_plans: TrainingPlans, arn: str) -> _Resource:
    return training_plans.reserved_capacity(arn)[1]


class ResourceTags:
    """The tags of one region's resources, found by ARN."""

    def __init__(
        self, training_jobs: TrainingJobs, training_plans: TrainingPlans, clusters: Clusters
    ) -> None:
        self._kinds: dict[str, Callable[[str], _Resource]] = {
            "training-job": training_jobs.get,
            "training-plan": training_plans.get,
            "reserved-capacity": functools.partial(_reserved_capacity, training_plans),
            "cluster": clusters.get,
        }
        self._sets: dict[str, _TagSet] = {}

    # -- queries ---------------------------------------------------------------
    def list(self, arn: str) -> list[Tag]:
        """The resource's tags, in the order their keys were first added."""
        return list(self._set(arn).tags.values())

    def tagged(self) -> builtins.list[tuple[str, builtins.list[Tag]]]:
        """(ARN, tags) of every resource that has or had tags, by ARN (its tags may be none now)."""
        found = []
        for arn, tag_set in sorted(self._sets.items()):
            if not tag_set.ever:
                continue
            try:
                resource = self._resource(arn)
            except InvalidRequest:  # gone: its tags went with it
                continue
            if resource is tag_set.owner:
                found.append((arn, list(tag_set.tags.values())))
        return found

    # -- commands --------------------------------------------------------------
    def add(self, arn: str, pairs: Sequence[tuple[str, str]]) -> builtins.list[Tag]:
        """AddTags: add or overwrite; all or nothing. Returns the resource's tags."""
        check_tags(pairs)
        tag_set = self._set(arn)
        count = len(set(tag_set.tags) | {key for key, _ in pairs})
        if count > MAX_TAGS_PER_RESOURCE:
            raise InvalidRequest(
                f"Tag limit exceeded: resource {arn} would have {count} tags; a "
                f"resource can have at most {MAX_TAGS_PER_RESOURCE} tags."
            )
        self._put(tag_set, pairs)
        return list(tag_set.tags.values())

    def delete(self, arn: str, keys: Sequence[str]) -> None:
        """DeleteTags: keys the resource does not have are ignored."""
        _check_keys(keys)
        tag_set = self._set(arn)
        for key in keys:
            tag_set.tags.pop(key, None)

    def tag_created(self, arn: str, pairs: Sequence[tuple[str, str]]) -> None:
        """Give a resource just created (with tags already checked) its creation tags;
        a training plan's reserved capacities get them too."""
        resource = self._resource(arn)
        owners = [resource, *(resource.capacities if isinstance(resource, TrainingPlan) else ())]
        for owner in owners:
            tag_set = self._sets[owner.arn] = _TagSet(owner)
            self._put(tag_set, pairs)

    # -- helpers ---------------------------------------------------------------
    def _set(self, arn: str) -> _TagSet:
        resource = self._resource(arn)
        tag_set = self._sets.get(resource.arn)
        if tag_set is None or tag_set.owner is not resource:
            tag_set = self._sets[resource.arn] = _TagSet(resource)
        return tag_set

    def _resource(self, arn: str) -> _Resource:
        """The resource ``arn`` names: one lookup by its id (or ARN), never a scan of all."""
        canonical = _canonical(arn)
        parts = canonical.split(":", 5)
        kind, _, resource_id = parts[5].partition("/") if len(parts) == 6 else ("", "", "")
        lookup = self._kinds.get(kind)
        found: _Resource | None = None
        if lookup is not None and resource_id:
            try:
                found = lookup(canonical if kind in ("reserved-capacity", "cluster") else resource_id)
            except DomainError:
                found = None
        if found is None or found.arn != canonical:
            self._sets.pop(canonical, None)
            raise InvalidRequest(f"Could not find resource {arn}.")
        return found

    @staticmethod
    def _put(tag_set: _TagSet, pairs: Sequence[tuple[str, str]]) -> None:
        tag_set.ever = tag_set.ever or bool(pairs)
        for key, value in pairs:
            old = tag_set.tags.get(key)
            sequence = old.sequence if old is not None else next(tag_set.counter)
            tag_set.tags[key] = Tag(key, value, sequence)
