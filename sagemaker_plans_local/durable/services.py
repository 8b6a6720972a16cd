"""The emulated services of a durable backend: each successful mutating call journaled in its transaction.

A call whose operation reads (``Describe``, ``List``, ``Get``, ``Head``,
``Filter``, ``Simulate``) is answered as is: the clock's syncer replays what is new first.
Every other one runs inside a :class:`~.state.Durable` transaction and, if
it succeeded, is journaled with its serialized body, which replay hands to
the same service again, unless it changed nothing (:data:`OBSERVED`). S3 writes its objects to disk itself and is never
journaled; nor are the parts of other calls that change S3's files (:data:`PARTS`: a tagging API
call's buckets, whose tags are in their ``bucket.json``), so that no replay writes them again.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any, Callable, cast

from sagemaker_plans_local.core.journal import JournalWriteError
from sagemaker_plans_local.durable.state import Durable
from sagemaker_plans_local.protocol.errors import ApiError

if TYPE_CHECKING:
    from botocore.model import OperationModel

    from sagemaker_plans_local.protocol.answers import Answer
    from sagemaker_plans_local.protocol.service import AwsService

#: Operation name prefixes of calls that change nothing.
READS = ("Describe", "List", "Get", "Head", "Filter", "Simulate")
#: Services whose state lives elsewhere (S3 objects are files under the root).
UNJOURNALED = ("s3",)


def _tags_of(params: dict[str, Any]) -> dict[str, Any]:
    return {"ResourceArn": params["ResourceArn"], "MaxResults": 100}  # a resource holds at most 50


def _resources_of(params: dict[str, Any]) -> dict[str, Any]:
    return {"ResourceARNList": params["ResourceARNList"]}  # at most 20 of GetResources' 100


_TAGGING = "resourcegroupstaggingapi"
#: The call after whose commit a job's code may need a process to run it (``durable/detached.py``).
CREATES_RUN = ("sagemaker", "CreateTrainingJob")
#: Calls that may change nothing, by (service, operation): the read that shows all they change, as the
#: read's params from the call's. A call whose read answers the same before and after is not journaled.
OBSERVED: dict[tuple[str, str], tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    ("sagemaker", "AddTags"): ("ListTags", _tags_of),
    ("sagemaker", "DeleteTags"): ("ListTags", _tags_of),
    (_TAGGING, "TagResources"): ("GetResources", _resources_of),
    (_TAGGING, "UntagResources"): ("GetResources", _resources_of),
}


def _without_buckets(params: dict[str, Any]) -> dict[str, Any] | None:
    """A tagging call's params without its S3 ARNs (None if it names nothing else)."""
    kept = [arn for arn in params["ResourceARNList"] if str(arn).split(":")[2:3] != ["s3"]]
    return {**params, "ResourceARNList": kept} if kept else None


#: What the journal keeps of a call that also changes S3's files, by (service, operation): its params
#: without what names those files (None: nothing left to journal).
PARTS: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    (_TAGGING, "TagResources"): _without_buckets,
    (_TAGGING, "UntagResources"): _without_buckets,
}


class JournaledService:
    """``service`` whose successful changes are journaled by ``durable``; otherwise the same service."""

    def __init__(self, service: AwsService, durable: Durable) -> None:
        self.service = service
        self._durable = durable

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    def handle(self, region: str, operation_model: OperationModel | str, request: dict | None) -> Answer:
        name = operation_model if isinstance(operation_model, str) else operation_model.name
        journal = self._durable.journal
        if journal.failed is not None:
            return self.service.error_answer(unavailable(journal.failed, True), name)
        try:
            answer = self._handle(name, region, operation_model, request)
        except JournalWriteError as error:  # lasting unless the write lock was never had
            return self.service.error_answer(unavailable(error, journal.failed is not None), name)
        if journal.failed is not None:  # a write of this call (or of a run meanwhile) failed
            return self.service.error_answer(unavailable(journal.failed, True), name)
        return answer

    def _handle(
        self, name: str, region: str, operation_model: OperationModel | str, request: dict | None
    ) -> Answer:
        if name.startswith(READS) or self._durable.closed:
            return self.service.handle(region, operation_model, request)
        request = dict(request or {})
        request["body"], body = _journaled_body(request.get("body"))
        kept = _kept(self.service.service_name, name, request["body"], body)
        with self._durable.transaction() as txn:
            seen = None if kept is None else self._observe(region, name, kept[0])
            answer = self.service.handle(region, operation_model, request)
            if (
                answer.status < 300
                and kept is not None
                and (seen is None or self._observe(region, name, kept[0]) != seen)
            ):
                txn.append(
                    "call",
                    {"service": self.service.service_name, "region": region, "operation": name, **kept[1]},
                )
        if (self.service.service_name, name) == CREATES_RUN and answer.status < 300:
            self._durable.runner.job_created(region, json.loads(request["body"])["TrainingJobName"])
        return answer  # after the commit: a runner started now sees the job

    def _observe(self, region: str, operation: str, body: Any) -> bytes | None:
        """What the read observing ``operation`` answers now (None: the call is journaled whatever it did)."""
        observed = OBSERVED.get((self.service.service_name, operation))
        if observed is None:
            return None
        read, params_of = observed
        try:
            params = params_of(json.loads(body))
        except (ValueError, TypeError, KeyError, RecursionError):
            return None  # not a request the read can be made for: the call answers for itself
        answer = self.service.handle(region, read, {"body": json.dumps(params).encode()})
        return bytes(answer.body) if answer.status < 300 else None


def unavailable(failure: JournalWriteError, lasting: bool) -> ApiError:
    """What a call answers when a journal write failed: the machine's fault, not the request's
    (``lasting``: the backend answers nothing more until reopened)."""
    then = (
        "it answers no request until it is reopened; make room (or fix the disk), then reopen it"
        if lasting
        else "retry later"
    )
    return ApiError(
        "ServiceUnavailable",
        f"The backend could not write its journal ({failure.reason}). Nothing of a request it could "
        f'not journal is stored; {then} (docs/durability.md, "When the journal cannot be written").',
        status=503,
        sender=False,
    )


def _kept(service: str, operation: str, data: Any, body: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
    """(request body, journal body) of what the journal keeps of a call (None: nothing)."""
    part = PARTS.get((service, operation))
    if part is None:
        return data, body
    try:
        params = part(json.loads(data))
    except (ValueError, TypeError, KeyError, RecursionError):
        return data, body  # not a request the service accepts: it answers for itself
    if params is None:
        return None
    text = json.dumps(params)
    return text.encode(), {"text": text}


def journaled(service: AwsService, durable: Durable) -> AwsService:
    """What a durable backend's callers get for ``service`` (a JournaledService answers as the service)."""
    if service.service_name in UNJOURNALED:
        return service
    return cast("AwsService", JournaledService(service, durable))


def replay_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request a journaled call's body stands for."""
    if "form" in body:
        return {"body": body["form"]}
    return {"body": base64.b64decode(body["base64"]) if "base64" in body else body["text"].encode()}


def _journaled_body(raw: Any) -> tuple[Any, dict[str, Any]]:
    """The body to hand the service (a stream read once) and how the journal keeps it."""
    if isinstance(raw, dict):  # botocore's query protocol: the form fields
        return raw, {"form": raw}
    if raw is None:
        data = b""
    elif isinstance(raw, str):
        data = raw.encode()
    elif isinstance(raw, (bytes, bytearray)):
        data = bytes(raw)
    else:
        data = raw.read()
        data = data.encode() if isinstance(data, str) else data
    try:
        return data, {"text": data.decode()}
    except UnicodeDecodeError:
        return data, {"base64": base64.b64encode(data).decode()}
