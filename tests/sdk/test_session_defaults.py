"""A local SDK session (either major) knows its account and default bucket without STS or S3 calls."""

from __future__ import annotations

from sagemaker_plans_local import LocalBackend, Session
from sagemaker_plans_local.sdk.flag import FLAG
from sagemaker_plans_local.sdk.major import sdk_major
from tests.conftest import START


def calls_of(session) -> list[str]:
    """The operations the session's boto3 session and S3 resource call from now on."""
    calls: list[str] = []
    for events in (session.boto_session.events, session.s3_resource.meta.client.meta.events):
        events.register("before-parameter-build", lambda model, **_: calls.append(model.name))
    return calls


def test_default_bucket_and_account_come_from_the_backend(tmp_path):
    with LocalBackend(region="eu-west-1", start_time=START, root=tmp_path) as backend:
        session = Session(backend=backend, local=True)
        calls = calls_of(session)
        assert session.default_bucket() == "sagemaker-eu-west-1-123456789012"
        assert session.account_id() == backend.account_id
        assert calls == []
        s3 = backend.client("s3")
        assert s3.head_bucket(Bucket="sagemaker-eu-west-1-123456789012")["BucketRegion"] == "eu-west-1"
        uri = session.upload_string_as_file_body("x", session.default_bucket(), "a/b.txt")
        assert uri == "s3://sagemaker-eu-west-1-123456789012/a/b.txt"
        again = Session(backend=backend, local=True)
        assert again.default_bucket() == session.default_bucket()


def test_a_named_default_bucket_goes_the_sdks_way(tmp_path):
    with LocalBackend(start_time=START, root=tmp_path) as backend:
        session = Session(backend=backend, local=True, default_bucket="my-named-bucket")
        calls = calls_of(session)
        assert session.default_bucket() == "my-named-bucket"
        assert "HeadBucket" in calls or "CreateBucket" in calls
        assert backend.client("s3").head_bucket(Bucket="my-named-bucket")["BucketRegion"] == "us-east-1"


def test_a_session_on_a_given_boto_session_asks_over_the_wire(tmp_path):
    with LocalBackend(start_time=START, root=tmp_path) as backend:
        session = Session(backend=backend, local=True, boto_session=backend.boto_session())
        calls = calls_of(session)
        assert session.account_id() == backend.account_id
        assert calls == ["GetCallerIdentity"]


if sdk_major() == 2:  # the Estimator, whose default session this is, is v2's

    def test_an_estimator_given_no_session_shares_one_on_the_default_backend(monkeypatch):
        from sagemaker_plans_local.sdk.default_backend import default_backend
        from sagemaker_plans_local.sdk.v2.session import default_session

        first = default_session()
        assert default_session() is first
        assert first.backend is default_backend() and first.local
        monkeypatch.setenv(FLAG, "0")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        aws = default_session()
        assert not aws.local and aws.backend is None
        assert default_session() is not aws
