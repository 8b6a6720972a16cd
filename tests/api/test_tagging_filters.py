"""GetResources' filters against a plain oracle: every TagFilter AND-ed (its key, with one of its
values if it lists any), one ResourceTypeFilter, and every page walked."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from tests.conftest import START, create_request

KEYS = ("team", "env", "Team")
VALUES = ("", "ml", "dev")
#: Per resource: its tags (key -> value) and whether it is a bucket.
RESOURCES = st.lists(
    st.tuples(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), min_size=1), st.booleans()),
    max_size=6,
)
TAG_FILTERS = st.lists(
    st.fixed_dictionaries(
        {"Key": st.sampled_from(KEYS)}, optional={"Values": st.lists(st.sampled_from(VALUES), max_size=2)}
    ),
    max_size=3,
)
TYPE_FILTERS = st.lists(
    st.sampled_from(["s3", "s3:bucket", "sagemaker", "sagemaker:training-job", "ec2"]), max_size=2
)


def oracle(tags: dict, service: str, kind: str, tag_filters: list, type_filters: list) -> bool:
    if type_filters and service not in type_filters and f"{service}:{kind}" not in type_filters:
        return False
    return all(
        f["Key"] in tags and (not f.get("Values") or tags[f["Key"]] in f["Values"]) for f in tag_filters
    )


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(resources=RESOURCES, tag_filters=TAG_FILTERS, type_filters=TYPE_FILTERS, per_page=st.integers(1, 4))
def test_get_resources_finds_what_the_oracle_finds(resources, tag_filters, type_filters, per_page):
    with LocalBackend(start_time=START) as backend:
        sm, s3 = backend.client(), backend.client("s3")
        expected = {}
        for n, (tags, is_bucket) in enumerate(resources):
            tag_list = [{"Key": key, "Value": value} for key, value in tags.items()]
            if is_bucket:
                s3.create_bucket(Bucket=f"bucket-{n}")
                s3.put_bucket_tagging(Bucket=f"bucket-{n}", Tagging={"TagSet": tag_list})
                arn, service, kind = f"arn:aws:s3:::bucket-{n}", "s3", "bucket"
            else:
                request = create_request(f"job-{n}", keep_alive=None, Tags=tag_list)
                arn, service, kind = (
                    sm.create_training_job(**request)["TrainingJobArn"],
                    "sagemaker",
                    "training-job",
                )
            if oracle(tags, service, kind, tag_filters, type_filters):
                expected[arn] = tags
        pages = (
            backend.client("resourcegroupstaggingapi")
            .get_paginator("get_resources")
            .paginate(TagFilters=tag_filters, ResourceTypeFilters=type_filters, ResourcesPerPage=per_page)
        )
        found = [m for page in pages for m in page["ResourceTagMappingList"]]
        assert {m["ResourceARN"]: {t["Key"]: t["Value"] for t in m["Tags"]} for m in found} == expected
        assert len(found) == len(expected)  # each once
