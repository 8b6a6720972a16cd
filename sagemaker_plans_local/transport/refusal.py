"""The answer for a service the backend does not emulate: NotImplemented, never AWS.

A local session names the services that may reach AWS (its pass-through, empty by default);
every other service it does not emulate is refused before anything is signed or sent.
"""

from __future__ import annotations

from typing import Any, Callable, Collection

from botocore.awsrequest import AWSResponse


def refuse_other_services(model, params, context, **_):
    """A ``before-call`` handler answering HTTP 501 ``NotImplemented`` naming the operation."""
    message = (
        f"sagemaker-plans-local does not emulate {model.service_model.service_name} "
        f"({model.name}); see docs/backend.md for the services it answers, and docs/sdk.md for "
        "letting a service through to AWS (passthrough)."
    )
    headers = {"x-amzn-requestid": "sagemaker-plans-local"}
    http = AWSResponse(params.get("url", ""), 501, headers, None)
    return http, {
        "Error": {"Code": "NotImplemented", "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": 501, "HTTPHeaders": headers},
    }


class Refusal:
    """``refuse_other_services`` while ``enabled()``, for every service but the ``passthrough`` ones."""

    def __init__(self, enabled: Callable[[], bool] = lambda: True, passthrough: Collection[str] = ()) -> None:
        self._enabled = enabled
        self._passthrough = frozenset(passthrough)

    def __call__(self, model: Any, params: dict, context: dict, **kwargs: Any) -> Any:
        if model.service_model.service_name in self._passthrough or not self._enabled():
            return None
        return refuse_other_services(model, params, context, **kwargs)


def refuse(client: Any, enabled: Callable[[], bool] = lambda: True) -> None:
    """Make every call of ``client`` (a service not emulated) answer NotImplemented while ``enabled()``."""
    service_id = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register_first(
        f"before-call.{service_id}", Refusal(enabled), unique_id="sagemaker-plans-local-refuse"
    )
