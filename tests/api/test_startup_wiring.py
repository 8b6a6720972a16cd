"""Start-up wiring: one botocore loader for our models and a backend's sessions, services built lazily."""

from __future__ import annotations

import boto3
import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.backend import EMULATED_SERVICES, SERVICE_IDS
from sagemaker_plans_local.protocol.service_model import service_model, shared_loader


@pytest.mark.parametrize("service_name", EMULATED_SERVICES)
def test_the_service_ids_are_the_models_own(service_name):
    assert SERVICE_IDS[service_name] == service_model(service_name).service_id.hyphenize()


def test_a_backends_sessions_and_clients_read_the_shared_loader(tmp_path):
    with LocalBackend(root=tmp_path) as backend:
        sessions = [backend.boto_session(), backend.boto_session()]
        assert all(session._session.get_component("data_loader") is shared_loader() for session in sessions)
        client = backend.client()
        assert client.meta.service_model.service_name == "sagemaker"


def test_sessions_do_not_grow_the_loaders_search_path(tmp_path):
    with LocalBackend(root=tmp_path) as backend:
        backend.boto_session()
        before = list(shared_loader().search_paths)
        for _ in range(3):
            backend.boto_session()
        assert shared_loader().search_paths == before
        assert len(set(before)) == len(before)


def test_an_s3_clients_model_rewrite_does_not_reach_our_s3_model(tmp_path):
    """botocore's S3 clients strip ``/{Bucket}`` from their operations' requestUri in place."""
    with LocalBackend(root=tmp_path) as backend:
        s3 = backend.boto_session().client("s3")
        s3.create_bucket(Bucket="shared-parse")
        s3.put_object(Bucket="shared-parse", Key="k", Body=b"v")
        assert service_model("s3").operation_model("PutObject").http["requestUri"].startswith("/{Bucket}")
        with pytest.raises(s3.exceptions.ClientError) as missing:
            s3.head_bucket(Bucket="no-such-bucket")
        assert missing.value.response["Error"]["Code"] == "404"
        assert backend.client("s3").get_object(Bucket="shared-parse", Key="k")["Body"].read() == b"v"


def test_companion_services_are_built_on_their_first_request(tmp_path):
    with LocalBackend(root=tmp_path) as backend:
        assert backend._services._built == {}
        backend.client()  # a SageMaker client needs none of them
        assert backend._services._built == {}
        assert backend.client("sts").get_caller_identity()["Account"] == backend.account_id
        assert set(backend._services._built) == {"sts"}


def test_a_plain_session_is_untouched_by_the_shared_loader(tmp_path):
    with LocalBackend(root=tmp_path):
        plain = boto3.session.Session(region_name="us-east-1")
        assert plain._session.get_component("data_loader") is not shared_loader()
