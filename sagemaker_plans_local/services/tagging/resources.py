"""The taggable resources of one account's region, across services: what the Resource Groups
Tagging API lists, tags and untags (rules and sources in docs/tags.md, "The Resource Groups
Tagging API").

SageMaker's training jobs, training plans, reserved capacities and HyperPod clusters keep
their tags in the region's :class:`ResourceTags`; S3 buckets in their ``bucket.json``
(a bucket belongs to the region it was created in). A resource is listed once it has had a
tag, with the tags it has now (maybe none).
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, NamedTuple, Sequence

from sagemaker_plans_local.core.errors import DomainError
from sagemaker_plans_local.services.s3.object_errors import NoSuchBucket
from sagemaker_plans_local.services.s3.objects import ObjectStore
from sagemaker_plans_local.services.sagemaker.tags import ResourceTags

#: The resource types held, by service (the ``service:type`` of ResourceTypeFilters).
RESOURCE_TYPES = {
    "sagemaker": ("cluster", "reserved-capacity", "training-job", "training-plan"),
    "s3": ("bucket",),
}


class Unsupported(DomainError):
    """An ARN of a resource type the backend does not emulate (the tagging API's InternalServiceException)."""


class Arn(NamedTuple):
    """An ARN's parts: ``arn:<partition>:<service>:<region>:<account>:<resource>``."""

    partition: str
    service: str
    region: str
    account: str
    resource: str

    @property
    def resource_type(self) -> str:
        """``training-job`` of ``training-job/name``; a bucket's ARN names ``bucket`` (no type)."""
        if self.service == "s3":
            return "bucket" if "/" not in self.resource and not self.region and not self.account else "object"
        return self.resource.partition("/")[0]


def parse_arn(text: str) -> Arn | None:
    """``text``'s parts, or None if it is not an ARN (six parts, ``arn``, a service and a resource)."""
    parts = text.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn" or not parts[1] or not parts[2] or not parts[5]:
        return None
    return Arn(*parts[1:])


class Tagged(NamedTuple):
    """One resource as GetResources reports it."""

    arn: str
    service: str
    resource_type: str
    tags: list[tuple[str, str]]


def type_matches(service: str, resource_type: str, filters: Sequence[str]) -> bool:
    """Whether ``service:resource_type`` is one of ``filters`` (``service`` or ``service:type``)."""
    return any(item in (service, f"{service}:{resource_type}") for item in filters)


class TaggableResources:
    """The taggable resources of ``region`` in ``account_id``: SageMaker's (``sagemaker``) and the
    buckets of the object store (``objects()``, made on first use)."""

    def __init__(
        self,
        region: str,
        account_id: str,
        partition: str,
        sagemaker: ResourceTags,
        objects: Callable[[], ObjectStore],
    ) -> None:
        self.region = region
        self.account_id = account_id
        self.partition = partition
        self._sagemaker = sagemaker
        self._objects = objects

    def mappings(self) -> list[Tagged]:
        """Every resource that has or had tags, by ARN."""
        found = [
            Tagged(arn, "sagemaker", arn.split(":", 5)[5].partition("/")[0], [(t.key, t.value) for t in tags])
            for arn, tags in self._sagemaker.tagged()
        ]
        found += [
            Tagged(f"arn:{self.partition}:s3:::{name}", "s3", "bucket", list(tags.items()))
            for name, located, tags in self._objects().tagged_buckets()
            if located == self.region
        ]
        return sorted(found)

    def kind(self, arn: str) -> str:
        """The service holding the resource ``arn`` names (``Unsupported`` if none emulated does)."""
        parsed = parse_arn(arn)
        if parsed is None or parsed.resource_type not in RESOURCE_TYPES.get(parsed.service, ()):
            raise Unsupported(
                f"sagemaker-plans-local does not emulate the resource {arn}: the Resource Groups Tagging "
                "API tags its SageMaker training jobs, training plans, reserved capacities and clusters, "
                "and its S3 buckets."
            )
        return parsed.service

    def tag(self, arn: str, tags: Mapping[str, str]) -> None:
        """Add or overwrite ``tags`` on one resource, all or nothing (a domain error if refused)."""
        if self.kind(arn) == "s3":
            self._objects().change_bucket_tags(self._bucket(arn), added=tags)
        else:
            self._sagemaker.add(arn, list(tags.items()))

    def untag(self, arn: str, keys: Iterable[str]) -> None:
        """Remove ``keys`` from one resource (keys it does not have are ignored)."""
        if self.kind(arn) == "s3":
            self._objects().change_bucket_tags(self._bucket(arn), removed=keys)
        else:
            self._sagemaker.delete(arn, list(keys))

    def _bucket(self, arn: str) -> str:
        """The bucket ``arn`` names, which must be in this region (``NoSuchBucket`` otherwise)."""
        parsed = parse_arn(arn)
        name = parsed.resource if parsed is not None else ""
        objects = self._objects()
        if (
            parsed is None
            or parsed.partition != self.partition
            or not objects.bucket_exists(name)
            or objects.bucket_region(name) != self.region
        ):
            raise NoSuchBucket(name)
        return name
