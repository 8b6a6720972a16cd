import re
from datetime import datetime, time, timedelta, timezone

import pytest

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityInventory
from sagemaker_plans_local.services.sagemaker.plans.default_inventory import (
    PROFILES,
    availability_zones,
    default_inventory,
)
from sagemaker_plans_local.services.sagemaker.plans.offerings import Capacity, origin_of, search_offerings
from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
from sagemaker_plans_local.services.sagemaker.plans.ultraservers import ultra_server_types

ENUM = service_model().shape_for("ReservedCapacityInstanceType").enum
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1"]
NOWS = [
    datetime(2026, 1, 1, tzinfo=timezone.utc),
    datetime(2026, 3, 2, 9, 47, 13, tzinfo=timezone.utc),
    datetime(2026, 7, 15, 11, 30, tzinfo=timezone.utc),
    datetime(2026, 11, 30, 23, 59, tzinfo=timezone.utc),
]
PRICES = PriceList.default()


def loaded(region, now, types=ENUM):
    inventory = CapacityInventory()
    for block in default_inventory(types, region, now):
        inventory.add(block.instance_type, block.count, block.availability_zone, block.start, block.end)
    return inventory


def search(inventory, now, instance_type, count, days, target="training-job"):
    return search_offerings(
        inventory,
        PRICES,
        now=now,
        capacity=Capacity(instance_type, count),
        duration_hours=days * 24,
        target=target,
    )


def test_availability_zones():
    assert availability_zones("us-east-1") == [f"us-east-1{c}" for c in "abcdef"]
    assert availability_zones("us-west-2") == [f"us-west-2{c}" for c in "abcd"]
    assert availability_zones("eu-central-1") == ["eu-central-1a", "eu-central-1b", "eu-central-1c"]


def test_every_enum_type_has_a_profile_and_a_price():
    assert set(PROFILES) == set(ENUM)
    for instance_type in ENUM:
        assert PRICES.per_instance_hour(instance_type) > 0


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("now", NOWS)
def test_deterministic_aligned_and_within_56_days(region, now):
    blocks = default_inventory(ENUM, region, now)
    assert blocks == default_inventory(ENUM, region, now)
    assert blocks  # something to find
    zones = set(availability_zones(region))
    by_key = {}
    for block in blocks:
        assert block.availability_zone in zones
        assert block.end.time() == time(11, 30) and block.end.tzinfo is not None
        assert block.start.time() == time(11, 30) or block.start == now
        assert now <= block.start < block.end <= now + timedelta(days=56)
        assert block.count in (1, 2, 4, 8, 16, 32, 64)
        by_key.setdefault((block.instance_type, block.availability_zone), []).append(block)
    for pieces in by_key.values():
        pieces.sort(key=lambda b: b.start)
        assert all(a.end <= b.start for a, b in zip(pieces, pieces[1:]))  # never stacked


def test_the_layout_depends_on_region_and_type_not_on_other_types():
    now = NOWS[1]
    alone = default_inventory(["ml.trn2.48xlarge"], "us-east-1", now)
    together = [b for b in default_inventory(ENUM, "us-east-1", now) if b.instance_type == "ml.trn2.48xlarge"]
    assert alone == together
    assert alone != default_inventory(["ml.trn2.48xlarge"], "us-west-2", now)


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("now", NOWS[:2])
def test_variety_claims_of_the_docs(region, now):
    inventory = loaded(region, now)
    for target in ("training-job", "hyperpod-cluster"):
        for count, days in [(1, 1), (8, 7), (16, 14), (32, 30)]:
            plenty = search(inventory, now, "ml.p5.48xlarge", count, days, target)
            assert len(plenty) == 3 and len(plenty[0].blocks) == 1
            assert plenty[0].start == origin_of(now, None)  # one block from the earliest start
        for count in (1, 8):
            for days in (4, 5, 6):
                split = search(inventory, now, "ml.trn2.48xlarge", count, days, target)
                assert split and all(len(o.blocks) == 2 for o in split)
            assert search(inventory, now, "ml.trn2.48xlarge", count, 7, target) == []
        for count, days in [(1, 1), (8, 3), (64, 14)]:
            assert search(inventory, now, "ml.p6-b300.48xlarge", count, days, target) == []


def test_ultra_servers_of_offered_instance_types_have_capacity():
    """The UltraServer types (data, sourced) the model names, for the instance types on sale."""
    request = service_model().operation_model("SearchTrainingPlanOfferings").input_shape
    named = set(re.findall(r"ml\.u-[a-z0-9-]+", request.members["UltraServerType"].documentation))
    assert named and named <= set(ultra_server_types())
    now = NOWS[1]
    blocks = default_inventory(ENUM, "us-east-1", now)
    ultra = {b.instance_type for b in blocks if b.instance_type.startswith("ml.u-")}
    assert ultra == {name for name, kind in ultra_server_types().items() if kind.instance_type in ENUM}
    assert not [
        b
        for b in default_inventory(["ml.p5.48xlarge"], "us-east-1", now)
        if b.instance_type.startswith("ml.u-")
    ]
    inventory = loaded("us-east-1", now)
    kind = ultra_server_types()["ml.u-p6e-gb200x72"]
    offerings = search_offerings(
        inventory,
        PRICES,
        now=now,
        capacity=Capacity.ultra(kind, 1),
        duration_hours=48,
        target="hyperpod-cluster",
    )
    assert offerings and all(o.instance_count == kind.instances for o in offerings)


def test_unknown_types_get_a_modest_default():
    blocks = default_inventory(["ml.p9.96xlarge"], "us-east-1", NOWS[0])
    assert blocks == default_inventory(["ml.p9.96xlarge"], "us-east-1", NOWS[0])
    assert len({b.availability_zone for b in blocks}) == 2
    assert {b.count for b in blocks} <= {4, 8, 16}


def test_every_type_and_target_can_be_searched_and_priced():
    # Speed is measured by `make bench`, not asserted here.
    now = NOWS[1]
    inventory = loaded("us-east-1", now)
    for instance_type in ENUM + ["ml.p9.96xlarge"]:
        for target in ("training-job", "hyperpod-cluster"):
            for offering in search(inventory, now, instance_type, 4, 3, target):
                assert offering.upfront_fee > 0
