"""Training plans through boto3: offerings, plans, statuses, capacity, extensions."""

from datetime import timedelta
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from tests.conformance import assert_conforms
from tests.plan_helpers import START, advance_to, buy, day, own_inventory

P5 = "ml.p5.48xlarge"


def code_and_message(excinfo):
    error = excinfo.value.response["Error"]
    return error["Code"], error["Message"]


@pytest.fixture
def inventory(backend):
    own_inventory(backend, (P5, 4, "us-east-1a", 2, 10), (P5, 4, "us-east-1b", 14, 20))
    return backend


def test_search_returns_conforming_offerings_ending_at_1130(sm, inventory):
    response = sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=2, DurationHours=30, TargetResources=["training-job"]
    )
    assert_conforms("SearchTrainingPlanOfferings", response)
    offerings = response["TrainingPlanOfferings"]
    assert 1 <= len(offerings) <= 3
    best = offerings[0]
    assert best["TrainingPlanOfferingId"].startswith("tpo-")
    assert best["CurrencyCode"] == "USD" and Decimal(best["UpfrontFee"]) > 0
    (block,) = best["ReservedCapacityOfferings"]  # contiguous
    assert block["EndTime"].astimezone().utcoffset() is not None
    end_utc = block["EndTime"].astimezone(START.tzinfo)
    assert (end_utc.hour, end_utc.minute) == (11, 30)
    assert block["AvailabilityZone"] == "us-east-1a"
    assert best["DurationHours"] == 48  # 30 h rounds up to two whole days


def test_nothing_available_is_an_empty_list(sm, inventory):
    response = sm.search_training_plan_offerings(
        InstanceType="ml.trn2.48xlarge", InstanceCount=1, DurationHours=24, TargetResources=["training-job"]
    )
    assert response["TrainingPlanOfferings"] == []


@pytest.mark.parametrize(
    "change,fragment",
    [
        ({"InstanceCount": 3}, "InstanceCount"),
        ({"DurationHours": 183 * 24}, "182"),
        ({"StartTimeAfter": START - timedelta(days=1)}, "future"),
    ],
)
def test_search_rules_are_validation_errors(sm, inventory, change, fragment):
    request = {
        "InstanceType": P5,
        "InstanceCount": 2,
        "DurationHours": 24,
        "TargetResources": ["training-job"],
    }
    request.update(change)
    with pytest.raises(ClientError) as excinfo:
        sm.search_training_plan_offerings(**request)
    code, message = code_and_message(excinfo)
    assert code == "ValidationException" and fragment in message


def test_search_needs_its_members(sm):
    with pytest.raises(ClientError) as excinfo:
        sm.search_training_plan_offerings(InstanceType=P5)
    code, message = code_and_message(excinfo)
    assert code == "ValidationException"
    assert message.startswith("3 validation errors detected: Value null at 'instanceCount'")


def test_plan_lifecycle_over_the_clock(sm, backend, inventory):
    arn, offering = buy(sm, backend, "my-plan", count=2, hours=48, pay=False)
    assert arn == "arn:aws:sagemaker:us-east-1:123456789012:training-plan/my-plan"
    plan = sm.describe_training_plan(TrainingPlanName="my-plan")
    assert_conforms("DescribeTrainingPlan", plan)
    assert (plan["Status"], plan["StatusMessage"]) == ("Pending", "Payment in progress.")
    backend.clock.advance(60)
    plan = sm.describe_training_plan(TrainingPlanName="my-plan")
    assert (plan["Status"], plan["StatusMessage"]) == (
        "Scheduled",
        "Payment confirmed, training plan scheduled.",
    )
    # AvailableInstanceCount is what can be used now: nothing before the block is active (chosen).
    assert (plan["TotalInstanceCount"], plan["AvailableInstanceCount"], plan["InUseInstanceCount"]) == (
        2,
        0,
        0,
    )
    assert (plan["UnhealthyInstanceCount"], plan["AvailableSpareInstanceCount"]) == (0, 0)
    assert "TotalUltraServerCount" not in plan
    (rc,) = plan["ReservedCapacitySummaries"]
    assert rc["Status"] == "Scheduled" and rc["ReservedCapacityArn"].split(":")[5].startswith(
        "reserved-capacity/"
    )
    assert (rc["ReservedCapacityType"], rc["AvailabilityZone"], rc["AvailabilityZoneId"]) == (
        "Instance",
        "us-east-1a",
        "use1-az1",
    )
    capacity = sm.describe_reserved_capacity(ReservedCapacityArn=rc["ReservedCapacityArn"])
    assert (capacity["AvailableInstanceCount"], capacity["InUseInstanceCount"]) == (0, 0)
    advance_to(backend, day(2))
    plan = sm.describe_training_plan(TrainingPlanName="my-plan")
    assert (plan["Status"], plan["AvailableInstanceCount"]) == ("Active", 2)
    capacity = sm.describe_reserved_capacity(ReservedCapacityArn=rc["ReservedCapacityArn"])
    assert_conforms("DescribeReservedCapacity", capacity)
    assert capacity["Status"] == "Active" and capacity["TotalInstanceCount"] == 2
    assert capacity["AvailableInstanceCount"] == 2 and "UltraServerSummary" not in capacity
    advance_to(backend, day(4))
    plan = sm.describe_training_plan(TrainingPlanName="my-plan")
    assert (plan["Status"], plan["AvailableInstanceCount"]) == ("Expired", 0)
    assert plan["ReservedCapacitySummaries"][0]["Status"] == "Expired"


def test_bought_capacity_leaves_the_inventory(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 4))
    buy(sm, backend, "first", count=2, hours=48)
    response = sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=1, DurationHours=24, TargetResources=["training-job"]
    )
    assert response["TrainingPlanOfferings"] == []


def test_an_offering_is_bought_once_and_expires_after_24_hours(sm, backend, inventory):
    search = dict(InstanceType=P5, InstanceCount=2, DurationHours=24, TargetResources=["training-job"])
    first = sm.search_training_plan_offerings(**search)["TrainingPlanOfferings"][0]["TrainingPlanOfferingId"]
    sm.create_training_plan(TrainingPlanName="a", TrainingPlanOfferingId=first)
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.create_training_plan(TrainingPlanName="b", TrainingPlanOfferingId=first)
    later = sm.search_training_plan_offerings(**search)["TrainingPlanOfferings"][0]["TrainingPlanOfferingId"]
    backend.clock.advance(timedelta(hours=24))
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.create_training_plan(TrainingPlanName="b", TrainingPlanOfferingId=later)
    assert [p["TrainingPlanName"] for p in sm.list_training_plans()["TrainingPlanSummaries"]] == ["a"]


def test_capacity_sold_to_another_plan_invalidates_offerings(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 4))
    search = dict(InstanceType=P5, InstanceCount=2, DurationHours=24, TargetResources=["training-job"])
    ids = [
        o["TrainingPlanOfferingId"]
        for o in sm.search_training_plan_offerings(**search)["TrainingPlanOfferings"]
    ]
    again = sm.search_training_plan_offerings(**search)["TrainingPlanOfferings"][0]["TrainingPlanOfferingId"]
    sm.create_training_plan(TrainingPlanName="a", TrainingPlanOfferingId=ids[0])
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.create_training_plan(TrainingPlanName="b", TrainingPlanOfferingId=again)


def test_duplicate_plan_name_is_in_use(sm, backend, inventory):
    buy(sm, backend, "dup", count=1, hours=24)
    offering = sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=1, DurationHours=24, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    with pytest.raises(sm.exceptions.ResourceInUse):
        sm.create_training_plan(
            TrainingPlanName="dup", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )


def test_failed_payment_returns_the_capacity(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 4))
    backend.script_plan("broke")
    buy(sm, backend, "broke", count=2, hours=24)
    plan = sm.describe_training_plan(TrainingPlanName="broke")
    assert plan["Status"] == "Failed"
    assert {rc["Status"] for rc in plan["ReservedCapacitySummaries"]} == {"Failed"}
    assert sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=2, DurationHours=24, TargetResources=["training-job"]
    )["TrainingPlanOfferings"]


def test_two_block_plan_goes_back_to_scheduled_between_blocks(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 3), (P5, 2, "us-east-1b", 5, 6))
    arn, offering = buy(sm, backend, "split", count=2, hours=48)
    assert len(offering["ReservedCapacityOfferings"]) == 2
    statuses = []
    for moment in (day(2), day(3), day(5), day(6)):
        advance_to(backend, moment)
        statuses.append(sm.describe_training_plan(TrainingPlanName="split")["Status"])
    assert statuses == ["Active", "Scheduled", "Active", "Expired"]


def test_describe_takes_an_arn_only_where_the_model_allows_it(sm, backend, inventory):
    from sagemaker_plans_local.protocol.validation import violations

    arn, _ = buy(sm, backend, "named", count=1, hours=24)
    shape = sm.meta.service_model.operation_model("DescribeTrainingPlan").input_shape
    if violations(shape, {"TrainingPlanName": arn}):  # older models: a name only
        with pytest.raises(ClientError) as excinfo:
            sm.describe_training_plan(TrainingPlanName=arn)
        assert "at 'trainingPlanName' failed to satisfy constraint" in code_and_message(excinfo)[1]
    else:  # newer models (TrainingPlanNameOrArn)
        assert sm.describe_training_plan(TrainingPlanName=arn)["TrainingPlanArn"] == arn


def test_missing_plan_and_capacity_are_resource_not_found(sm):
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.describe_training_plan(TrainingPlanName="nope")
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.describe_reserved_capacity(
            ReservedCapacityArn="arn:aws:sagemaker:us-east-1:123456789012:reserved-capacity/rc-0000000000000000"
        )


def test_list_training_plans_filters_sorts_and_pages(sm, backend, inventory):
    for name in ("charlie", "alpha", "bravo"):
        buy(sm, backend, name, count=1, hours=24)
    backend.script_plan("delta")
    buy(sm, backend, "delta", count=1, hours=24)
    listed = sm.list_training_plans(SortBy="TrainingPlanName")
    assert_conforms("ListTrainingPlans", listed)
    assert [p["TrainingPlanName"] for p in listed["TrainingPlanSummaries"]] == [
        "alpha",
        "bravo",
        "charlie",
        "delta",
    ]
    failed = sm.list_training_plans(Filters=[{"Name": "Status", "Value": "Failed"}])
    assert [p["TrainingPlanName"] for p in failed["TrainingPlanSummaries"]] == ["delta"]
    pages = sm.get_paginator("list_training_plans").paginate(
        SortBy="TrainingPlanName", SortOrder="Descending", PaginationConfig={"PageSize": 3}
    )
    assert [p["TrainingPlanName"] for page in pages for p in page["TrainingPlanSummaries"]] == [
        "delta",
        "charlie",
        "bravo",
        "alpha",
    ]
    late = sm.list_training_plans(StartTimeAfter=day(30))
    assert late["TrainingPlanSummaries"] == []


def test_extension_moves_the_end_and_is_in_the_history(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 12))
    arn, _ = buy(sm, backend, "grow", count=2, hours=48)
    end = sm.describe_training_plan(TrainingPlanName="grow")["EndTime"]
    response = sm.search_training_plan_offerings(TrainingPlanArn=arn, DurationHours=72)
    assert_conforms("SearchTrainingPlanOfferings", response)
    (extension,) = response["TrainingPlanExtensionOfferings"]
    assert extension["TrainingPlanExtensionOfferingId"].startswith("tpeo-")
    assert extension["StartDate"] == end and extension["EndDate"] == end + timedelta(days=3)
    extended = sm.extend_training_plan(
        TrainingPlanExtensionOfferingId=extension["TrainingPlanExtensionOfferingId"]
    )
    assert_conforms("ExtendTrainingPlan", extended)
    (bought,) = extended["TrainingPlanExtensions"]
    # As in AWS's sample response: the extension's payment is Pending at first.
    assert (bought["Status"], bought["PaymentStatus"], bought["AvailabilityZoneId"]) == (
        "Pending",
        "Pending",
        "use1-az1",
    )
    plan = sm.describe_training_plan(TrainingPlanName="grow")
    assert plan["EndTime"] == end + timedelta(days=3)
    with pytest.raises(ClientError) as excinfo:  # never while a payment is pending
        sm.search_training_plan_offerings(TrainingPlanArn=arn, DurationHours=24)
    assert code_and_message(excinfo) == (
        "ValidationException",
        (
            "Training plan grow has a payment pending; only Active or Scheduled training plans "
            "without a pending payment can be extended."
        ),
    )
    backend.clock.advance(60)
    history = sm.describe_training_plan_extension_history(TrainingPlanArn=arn)
    assert_conforms("DescribeTrainingPlanExtensionHistory", history)
    assert [
        (e["TrainingPlanExtensionOfferingId"], e["Status"], e["PaymentStatus"])
        for e in history["TrainingPlanExtensions"]
    ] == [(extension["TrainingPlanExtensionOfferingId"], "Scheduled", "Completed")]
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.extend_training_plan(TrainingPlanExtensionOfferingId=extension["TrainingPlanExtensionOfferingId"])
    # No capacity left after day 7: a further 14-day extension finds nothing.
    assert (
        sm.search_training_plan_offerings(TrainingPlanArn=arn, DurationHours=14 * 24)[
            "TrainingPlanExtensionOfferings"
        ]
        == []
    )
    with pytest.raises(ClientError) as excinfo:
        sm.search_training_plan_offerings(TrainingPlanArn=arn, DurationHours=15 * 24)
    assert code_and_message(excinfo)[0] == "ValidationException"


def test_default_inventory_is_there_and_deterministic(tmp_path):
    from sagemaker_plans_local import LocalBackend

    def offerings(root):
        with LocalBackend(start_time=START, root=root) as backend:
            sm = backend.client()
            return sm.search_training_plan_offerings(
                InstanceType=P5, InstanceCount=8, DurationHours=72, TargetResources=["training-job"]
            )["TrainingPlanOfferings"]

    first, second = offerings(tmp_path / "a"), offerings(tmp_path / "b")
    assert first

    def strip(offers):
        return [{k: v for k, v in o.items() if k != "TrainingPlanOfferingId"} for o in offers]

    assert strip(first) == strip(second)
