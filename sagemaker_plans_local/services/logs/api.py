"""CloudWatch Logs: what ``sagemaker.logs`` reads and what user code ordinarily writes.

DescribeLogStreams, GetLogEvents, CreateLogGroup, CreateLogStream and
PutLogEvents, over :class:`~sagemaker_plans_local.services.logs.streams.LogStore`.
Requests are checked against the model (lengths, patterns, ranges) and a
violation answers ``InvalidParameterException`` with AWS's wording.
PutLogEvents accepts events of any age (CloudWatch rejects those older than
14 days or more than 2 hours ahead; the backend's clock may be virtual).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Callable

from sagemaker_plans_local.core.arns import arn
from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.service import JsonService, operation
from sagemaker_plans_local.services.logs.streams import (
    InvalidLogRequest,
    LogGroupAlreadyExists,
    LogGroupNotFound,
    LogStore,
    LogStreamAlreadyExists,
    LogStreamNotFound,
)

DEFAULT_STREAMS_LIMIT = 50


class LogsApi(JsonService):
    """CloudWatch Logs over one :class:`LogStore`, or one per region (``logs`` a callable region -> store)."""

    service_name = "logs"
    VALIDATION_CODE = "InvalidParameterException"
    ERRORS = (
        (LogGroupNotFound, "ResourceNotFoundException", 400),
        (LogStreamNotFound, "ResourceNotFoundException", 400),
        (LogGroupAlreadyExists, "ResourceAlreadyExistsException", 400),
        (LogStreamAlreadyExists, "ResourceAlreadyExistsException", 400),
        (InvalidLogRequest, "InvalidParameterException", 400),
    )

    def __init__(
        self,
        logs: LogStore | Callable[[str], LogStore],
        account_id: str,
        on_request: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(on_request)
        self._store_for = (lambda region: logs) if isinstance(logs, LogStore) else logs
        self.account_id = account_id

    def group_arn(self, region: str, group: str) -> str:
        return arn(region, "logs", self.account_id, f"log-group:{group}")

    @operation("CreateLogGroup")
    def create_log_group(self, region: str, params: dict) -> dict:
        self._store_for(region).create_log_group(params["logGroupName"])
        return {}

    @operation("CreateLogStream")
    def create_log_stream(self, region: str, params: dict) -> dict:
        self._store_for(region).create_log_stream(params["logGroupName"], params["logStreamName"])
        return {}

    @operation("PutLogEvents")
    def put_log_events(self, region: str, params: dict) -> dict:
        events = [(event["timestamp"], event["message"]) for event in params["logEvents"]]
        self._store_for(region).put_log_events(params["logGroupName"], params["logStreamName"], events)
        return {}

    @operation("DescribeLogStreams")
    def describe_log_streams(self, region: str, params: dict) -> dict:
        group = _group_name(params)
        order_by = params.get("orderBy", "LogStreamName")
        prefix = params.get("logStreamNamePrefix")
        if order_by == "LastEventTime" and prefix is not None:
            raise ApiError(
                "InvalidParameterException", "Cannot order by LastEventTime with a logStreamNamePrefix."
            )
        streams = self._store_for(region).streams(
            group, prefix or "", order_by, params.get("descending", False)
        )
        start = _offset(params.get("nextToken"))
        limit = params.get("limit", DEFAULT_STREAMS_LIMIT)
        page = streams[start : start + limit]
        arn = self.group_arn(region, group)
        result: dict = {
            "logStreams": [
                {
                    "logStreamName": info.name,
                    "creationTime": info.creation_time,
                    "firstEventTimestamp": info.first_event_timestamp,
                    "lastEventTimestamp": info.last_event_timestamp,
                    "lastIngestionTime": info.last_ingestion_time,
                    "arn": f"{arn}:log-stream:{info.name}",
                    "storedBytes": 0,  # deprecated by CloudWatch in 2019: always 0
                }
                for info in page
            ]
        }
        if start + limit < len(streams):
            result["nextToken"] = _token(start + limit)
        return result

    @operation("GetLogEvents")
    def get_log_events(self, region: str, params: dict) -> dict:
        group = _group_name(params)
        events, forward, backward = self._store_for(region).events(
            group,
            params["logStreamName"],
            start_time=params.get("startTime"),
            end_time=params.get("endTime"),
            start_from_head=params.get("startFromHead", False),
            limit=params.get("limit"),
            next_token=params.get("nextToken"),
        )
        return {
            "events": [
                {"timestamp": e.timestamp, "message": e.message, "ingestionTime": e.ingestion_time}
                for e in events
            ],
            "nextForwardToken": forward,
            "nextBackwardToken": backward,
        }


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _offset(token: str | None) -> int:
    if not token:
        return 0
    try:
        offset = json.loads(base64.urlsafe_b64decode(token.encode()))["offset"]
    except (ValueError, KeyError, TypeError, binascii.Error):
        offset = None
    if not isinstance(offset, int) or offset < 0:
        raise ApiError("InvalidParameterException", "The specified nextToken is invalid.")
    return offset


def _group_name(params: dict) -> str:
    """The log group a request names, by ``logGroupName`` or ``logGroupIdentifier``."""
    group = params.get("logGroupName")
    if group is not None:
        return group
    identifier = params.get("logGroupIdentifier")
    if identifier is None:
        raise ApiError(
            "InvalidParameterException", "Either logGroupName or logGroupIdentifier must be specified."
        )
    return identifier.split(":log-group:", 1)[-1].removesuffix(":*")
