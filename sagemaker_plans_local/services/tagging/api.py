"""The Resource Groups Tagging API: GetResources, TagResources, UntagResources, GetTagKeys and
GetTagValues over the resources the backend holds (``resources``; rules and sources in
docs/tags.md, "The Resource Groups Tagging API").

Requests are checked against the model and the API reference's rules beyond it; a violation is
``InvalidParameterException``, as the tagging API answers. TagResources and UntagResources
answer each resource's refusal in ``FailedResourcesMap``, the service holding it having judged
the tags by its own rules (SageMaker's model and limits, S3's tag rules).
"""

from __future__ import annotations

import bisect
from typing import Any, Callable

from sagemaker_plans_local.core.arns import partition
from sagemaker_plans_local.core.errors import DomainError, InvalidRequest
from sagemaker_plans_local.emulation import Emulation
from sagemaker_plans_local.protocol import pagination
from sagemaker_plans_local.protocol.errors import ApiError, constraint_violations
from sagemaker_plans_local.protocol.service import JsonService, operation
from sagemaker_plans_local.protocol.service_model import operation_model
from sagemaker_plans_local.protocol.validation import violations
from sagemaker_plans_local.services.tagging.resources import (
    TaggableResources,
    Tagged,
    Unsupported,
    parse_arn,
    type_matches,
)

INVALID = "InvalidParameterException"
#: GetResources' page when the request sets no ResourcesPerPage (chosen).
DEFAULT_RESOURCES_PER_PAGE = 50
#: The API reference's bounds of ResourcesPerPage and TagsPerPage, and its most ResourceTypeFilters.
RESOURCES_PER_PAGE = (1, 100)
TAGS_PER_PAGE = (100, 500)
MAX_TYPE_FILTERS = 100
#: GetTagKeys' and GetTagValues' page (chosen: they take no page size).
TAG_PAGE = 100
#: What GetResources reports of the effective tag policy: none is emulated, so all comply.
COMPLIANT = {
    "NoncompliantKeys": [],
    "KeysWithNoncompliantValues": [],
    "MissingTagKeys": [],
    "ComplianceStatus": True,
}
_PAGING = ("PaginationToken", "ResourcesPerPage", "TagsPerPage")


def invalid(message: str) -> ApiError:
    return ApiError(INVALID, message)


class TaggingApi(JsonService):
    """The Resource Groups Tagging API over ``emulation``: each request under its lock, after the
    clock has applied the state changes that are due."""

    service_name = "resourcegroupstaggingapi"
    VALIDATION_CODE = INVALID
    ERRORS = ((InvalidRequest, INVALID, 400),)

    def __init__(self, emulation: Emulation) -> None:
        self._emulation = emulation
        super().__init__()

    def _call(self, handler: Callable[[str, dict], Any], region: str, params: dict) -> Any:
        emulation = self._emulation
        with emulation.lock:
            emulation.clock.catch_up()
            return super()._call(handler, region, params)

    def resources(self, region: str) -> TaggableResources:
        """The taggable resources of ``region``."""
        emulation = self._emulation
        sagemaker = emulation.region(region).tags
        return TaggableResources(
            region, emulation.account_id, partition(region), sagemaker, lambda: emulation.objects
        )

    @operation("GetResources")
    def get_resources(self, region: str, params: dict) -> dict:
        _check_get_resources(params)
        found = self.resources(region).mappings()
        if "ResourceARNList" in params:
            wanted = set(params["ResourceARNList"])
            return {"ResourceTagMappingList": [_wire(item, params) for item in found if item.arn in wanted]}
        chosen = [item for item in found if _matches(item, params)]
        if params.get("ExcludeCompliantResources"):
            chosen = []  # every resource complies with the (absent) tag policy
        chunk, token = _resource_page(chosen, params)
        return {"ResourceTagMappingList": [_wire(item, params) for item in chunk], "PaginationToken": token}

    @operation("TagResources")
    def tag_resources(self, region: str, params: dict) -> dict:
        tags = params["Tags"]
        _check_request(params["ResourceARNList"], tags)
        resources = self.resources(region)

        def tag(arn: str) -> None:
            if resources.kind(arn) == "sagemaker":
                _check_sagemaker("AddTags", {"ResourceArn": arn, "Tags": _tag_list(tags)})
            resources.tag(arn, tags)

        return {"FailedResourcesMap": _each(params["ResourceARNList"], tag)}

    @operation("UntagResources")
    def untag_resources(self, region: str, params: dict) -> dict:
        keys = params["TagKeys"]
        _check_request(params["ResourceARNList"], keys)
        resources = self.resources(region)

        def untag(arn: str) -> None:
            if resources.kind(arn) == "sagemaker":
                _check_sagemaker("DeleteTags", {"ResourceArn": arn, "TagKeys": keys})
            resources.untag(arn, keys)

        return {"FailedResourcesMap": _each(params["ResourceARNList"], untag)}

    @operation("GetTagKeys")
    def get_tag_keys(self, region: str, params: dict) -> dict:
        keys = {key for item in self.resources(region).mappings() for key, _ in item.tags}
        chunk, token = _sorted_page(sorted(keys), params, {"GetTagKeys": region})
        return {"TagKeys": chunk, "PaginationToken": token}

    @operation("GetTagValues")
    def get_tag_values(self, region: str, params: dict) -> dict:
        key = params["Key"]
        values = {value for item in self.resources(region).mappings() for k, value in item.tags if k == key}
        chunk, token = _sorted_page(sorted(values), params, {"GetTagValues": region, "Key": key})
        return {"TagValues": chunk, "PaginationToken": token}


# -- GetResources -----------------------------------------------------------------------------
def _check_get_resources(params: dict) -> None:
    """The API reference's rules the model does not hold (InvalidParameterException)."""
    if "ResourceARNList" in params:
        others = [name for name in ("TagFilters", "ResourceTypeFilters", *_PAGING) if name in params]
        if others:
            raise invalid(f"ResourceARNList cannot be specified together with {', '.join(others)}.")
    for name, (low, high) in (("ResourcesPerPage", RESOURCES_PER_PAGE), ("TagsPerPage", TAGS_PER_PAGE)):
        if name in params and not low <= params[name] <= high:
            raise invalid(f"{name} must be between {low} and {high}, not {params[name]}.")
    if len(params.get("ResourceTypeFilters") or ()) > MAX_TYPE_FILTERS:
        raise invalid(f"ResourceTypeFilters can hold at most {MAX_TYPE_FILTERS} resource types.")
    if any("Key" not in tag_filter for tag_filter in params.get("TagFilters") or ()):
        raise invalid("Each TagFilter must contain a Key.")
    if params.get("ExcludeCompliantResources") and not params.get("IncludeComplianceDetails"):
        raise invalid("ExcludeCompliantResources can be used only with IncludeComplianceDetails set to true.")


def _matches(item: Tagged, params: dict) -> bool:
    """Every TagFilter (its key, with one of its values if it has any) and one ResourceTypeFilter."""
    type_filters = params.get("ResourceTypeFilters")
    if type_filters and not type_matches(item.service, item.resource_type, type_filters):
        return False
    tags = dict(item.tags)
    for tag_filter in params.get("TagFilters") or ():
        key, values = tag_filter["Key"], tag_filter.get("Values")
        if key not in tags or (values and tags[key] not in values):
            return False
    return True


def _wire(item: Tagged, params: dict) -> dict:
    mapping: dict[str, Any] = {
        "ResourceARN": item.arn,
        "Tags": [{"Key": key, "Value": value} for key, value in item.tags],
    }
    if params.get("IncludeComplianceDetails"):
        mapping["ComplianceDetails"] = COMPLIANT
    return mapping


def _resume(params: dict, bound_to: Any) -> tuple[str | None, str]:
    """(the position the PaginationToken resumes after, or None; the query's fingerprint)."""
    query = pagination.fingerprint(bound_to)
    token = params.get("PaginationToken")
    if not token:
        return None, query
    try:
        after = pagination.decode(token, query)
    except ApiError as error:
        raise invalid(error.message) from None
    if not isinstance(after, str):
        raise invalid(pagination.INVALID_TOKEN)
    return after, query


def _resource_page(items: list[Tagged], params: dict) -> tuple[list[Tagged], str | None]:
    """One page by ARN: at most ResourcesPerPage resources and TagsPerPage tags (an untagged resource
    counts one), never a resource split across pages."""
    after, query = _resume(params, {name: value for name, value in params.items() if name not in _PAGING})
    start = 0 if after is None else bisect.bisect_right(items, after, key=lambda item: item.arn)
    limit = params.get("ResourcesPerPage", DEFAULT_RESOURCES_PER_PAGE)
    budget = params.get("TagsPerPage")
    chunk: list[Tagged] = []
    used = 0
    for item in items[start:]:
        cost = max(len(item.tags), 1)
        if len(chunk) == limit or (budget is not None and used + cost > budget):
            break
        chunk.append(item)
        used += cost
    more = start + len(chunk) < len(items)
    return chunk, pagination.encode(chunk[-1].arn, query) if more and chunk else None


def _sorted_page(items: list[str], params: dict, bound_to: dict) -> tuple[list[str], str | None]:
    after, query = _resume(params, bound_to)
    start = 0 if after is None else bisect.bisect_right(items, after)
    chunk = items[start : start + TAG_PAGE]
    more = start + len(chunk) < len(items)
    return chunk, pagination.encode(chunk[-1], query) if more and chunk else None


# -- TagResources, UntagResources -------------------------------------------------------------
def _check_request(arns: list[str], keys: Any) -> None:
    """Refusals of the whole request: an ARN that is not one, a key AWS reserves."""
    for arn in arns:
        if parse_arn(arn) is None:
            raise invalid(f"{arn} is not a valid AmazonResourceName (ARN).")
    for key in keys:
        if key.lower().startswith("aws:"):
            raise invalid(f"System prefix 'aws:' reserved for AWS usage in tag key: {key}")


def _tag_list(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": key, "Value": value} for key, value in tags.items()]


def _check_sagemaker(operation_name: str, request: dict) -> None:
    """SageMaker's model's checks of the request it would get (its TagKey/TagValue patterns ...)."""
    problems = violations(operation_model(operation_name).input_shape, request)
    if problems:
        raise invalid(constraint_violations(problems).message)


def _each(arns: list[str], change: Callable[[str], None]) -> dict[str, dict]:
    """``change`` on each ARN (once each); the FailureInfo of each it could not change."""
    failed: dict[str, dict] = {}
    for arn in dict.fromkeys(arns):
        try:
            change(arn)
        except Unsupported as error:
            failed[arn] = _failure("InternalServiceException", 500, error.message)
        except (DomainError, ApiError) as error:  # the holding service's refusal
            failed[arn] = _failure(INVALID, 400, error.message)
    return failed


def _failure(code: str, status: int, message: str) -> dict:
    return {"StatusCode": status, "ErrorCode": code, "ErrorMessage": message}
