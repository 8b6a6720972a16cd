"""AddTags, ListTags, DeleteTags, and the ``Tags`` of create operations (rules in
``services/sagemaker/tags.py`` and docs/tags.md).

Every create operation the backend answers whose request has a ``Tags`` list
(found from the model: CreateTrainingJob, CreateTrainingPlan, CreateCluster) has
its tags checked before anything is created, and given to the new resource (the
ARN its response names) after.
"""

from __future__ import annotations

from typing import Callable, Mapping

from sagemaker_plans_local.protocol.pagination import page
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.region import Region
from sagemaker_plans_local.services.sagemaker.tags import Tag, check_tags

Handler = Callable[[Region, dict], dict]

_model = service_model()
#: ListTags' smallest MaxResults (the model's), also its default (chosen).
DEFAULT_MAX_RESULTS = _model.shape_for("ListTagsMaxResults").metadata["min"]


def _pairs(tags: list[dict]) -> list[tuple[str, str]]:
    return [(tag["Key"], tag.get("Value", "")) for tag in tags]


def _wire(tags: list[Tag]) -> list[dict]:
    return [{"Key": tag.key, "Value": tag.value} for tag in tags]


def add_tags(region: Region, params: dict) -> dict:
    return {"Tags": _wire(region.tags.add(params["ResourceArn"], _pairs(params["Tags"])))}


def list_tags(region: Region, params: dict) -> dict:
    arn = params["ResourceArn"]
    chunk, token = page(
        region.tags.list(arn),
        params,
        {"ListTags": arn},
        lambda tag: tag.sequence,
        default_max=DEFAULT_MAX_RESULTS,
    )
    return {"Tags": _wire(chunk), "NextToken": token}


def delete_tags(region: Region, params: dict) -> dict:
    region.tags.delete(params["ResourceArn"], params["TagKeys"])
    return {}


HANDLERS: dict[str, Handler] = {
    "AddTags": add_tags,
    "ListTags": list_tags,
    "DeleteTags": delete_tags,
}


def _created_arn_member(operation_name: str) -> str | None:
    """The response member naming the new resource, if the operation creates a tagged one."""
    operation = _model.operation_model(operation_name)
    tags = operation.input_shape.members.get("Tags") if operation.input_shape else None
    if tags is None or tags.name != "TagList" or operation.output_shape is None:
        return None
    arns = [name for name in operation.output_shape.members if name.endswith("Arn")]
    return arns[0] if len(arns) == 1 else None


def _tagging_create(handler: Handler, arn_member: str) -> Handler:
    def create(region: Region, params: dict) -> dict:
        pairs = _pairs(params.get("Tags") or [])
        check_tags(pairs)
        result = handler(region, params)
        if pairs:
            region.tags.tag_created(result[arn_member], pairs)
        return result

    return create


def tagging(handlers: Mapping[str, Handler]) -> dict[str, Handler]:
    """``handlers`` with the tag operations added and every tagged create wrapped."""
    wrapped = dict(handlers)
    for name, handler in handlers.items():
        arn_member = _created_arn_member(name)
        if arn_member is not None:
            wrapped[name] = _tagging_create(handler, arn_member)
    wrapped.update(HANDLERS)
    return wrapped
