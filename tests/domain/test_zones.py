import re

import pytest

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.plans.zones import availability_zones, region_code, zone_id

PATTERN = re.compile(service_model().shape_for("AvailabilityZoneId").metadata["pattern"])


@pytest.mark.parametrize(
    "region, code",
    [
        ("us-east-1", "use1"),
        ("us-west-2", "usw2"),
        ("eu-central-1", "euc1"),
        ("ap-northeast-1", "apne1"),
        ("sa-east-1", "sae1"),
        ("ap-southeast-2", "apse2"),
    ],
)
def test_region_codes_follow_aws_convention(region, code):
    assert region_code(region) == code


def test_zone_ids_are_fixed_by_the_zone_letter():
    assert [zone_id(az) for az in availability_zones("us-east-1")] == [f"use1-az{n}" for n in range(1, 7)]
    assert zone_id("us-west-2d") == "usw2-az4"
    assert all(PATTERN.fullmatch(zone_id(az)) for az in availability_zones("us-east-1"))
    assert zone_id("az-a") is None and zone_id("us-east-1") is None
