"""Tags changed through the tagging API on a durable root: reopened, fully replayed, with bucket tags
that the journal never writes again."""

from __future__ import annotations

import shutil
import sqlite3

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import Journal
from tests.conftest import START
from tests.durable.worker import job_request

BUCKET_ARN = "arn:aws:s3:::durable-bucket"


def _entries(root) -> list[str]:
    journal = Journal(root)
    journal.close()
    with sqlite3.connect(root / "state.sqlite3") as connection:
        return [body for (body,) in connection.execute("SELECT body FROM entries WHERE kind = 'call'")]


def _without_snapshots(root, tmp_path_factory):
    copy = tmp_path_factory.mktemp("copy") / "root"
    shutil.copytree(root, copy)
    with sqlite3.connect(copy / "state.sqlite3") as connection:
        connection.execute("DELETE FROM snapshots")
    return copy


def _tags(backend) -> dict:
    listed = backend.client("resourcegroupstaggingapi").get_resources()["ResourceTagMappingList"]
    return {m["ResourceARN"]: m["Tags"] for m in listed}


def test_tagging_api_changes_survive_a_reopen_and_a_full_replay(tmp_path, tmp_path_factory):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        sm, s3 = backend.client(), backend.client("s3")
        rt = backend.client("resourcegroupstaggingapi")
        arn = sm.create_training_job(**job_request("durable", keep_alive=0))["TrainingJobArn"]
        s3.create_bucket(Bucket="durable-bucket")
        assert (
            rt.tag_resources(ResourceARNList=[arn, BUCKET_ARN], Tags={"a": "1", "b": "2"})[
                "FailedResourcesMap"
            ]
            == {}
        )
        written = len(_entries(tmp_path))
        rt.tag_resources(ResourceARNList=[arn], Tags={"a": "1"})  # already so: not journaled
        rt.untag_resources(ResourceARNList=[BUCKET_ARN], TagKeys=["a"])  # the bucket's file only
        assert len(_entries(tmp_path)) == written
        rt.untag_resources(ResourceARNList=[arn], TagKeys=["b"])
        # S3 changes the bucket's tags after the journaled TagResources: no replay may undo that
        s3.put_bucket_tagging(Bucket="durable-bucket", Tagging={"TagSet": [{"Key": "later", "Value": "x"}]})
        before = _tags(backend)
    assert before == {
        BUCKET_ARN: [{"Key": "later", "Value": "x"}],
        arn: [{"Key": "a", "Value": "1"}],
    }
    assert not any("s3:::" in body for body in _entries(tmp_path))
    for root in (tmp_path, _without_snapshots(tmp_path, tmp_path_factory)):
        with LocalBackend(root=root) as reopened:
            assert _tags(reopened) == before
            assert reopened.client().list_tags(ResourceArn=arn)["Tags"] == [{"Key": "a", "Value": "1"}]


def test_a_second_backend_on_the_root_sees_the_tags_at_once(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as first, LocalBackend(root=tmp_path) as second:
        arn = first.client().create_training_job(**job_request("shared", keep_alive=0))["TrainingJobArn"]
        first.client("s3").create_bucket(Bucket="durable-bucket")
        first.client("resourcegroupstaggingapi").tag_resources(
            ResourceARNList=[arn, BUCKET_ARN], Tags={"k": "v"}
        )
        assert _tags(second) == {BUCKET_ARN: [{"Key": "k", "Value": "v"}], arn: [{"Key": "k", "Value": "v"}]}
