"""The answer for a service the backend does not emulate: NotImplemented, never AWS."""

from __future__ import annotations

from botocore.awsrequest import AWSResponse


def refuse_other_services(model, params, context, **_):
    """A ``before-call`` handler answering HTTP 501 ``NotImplemented`` naming the operation."""
    message = (
        f"sagemaker-plans-local does not emulate {model.service_model.service_name} "
        f"({model.name}); see docs/backend.md for the services it answers."
    )
    headers = {"x-amzn-requestid": "sagemaker-plans-local"}
    http = AWSResponse(params.get("url", ""), 501, headers, None)
    return http, {
        "Error": {"Code": "NotImplemented", "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": 501, "HTTPHeaders": headers},
    }
