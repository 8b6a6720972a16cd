"""The cost report, recomputed from the describe answers the API gives (docs/cost-report.md)."""

import json
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.inspection.cost import ROW_HEADER, cost_report
from sagemaker_plans_local.inspection.prices import PRICES_VARIABLE, PriceFileError, TrainingPrices
from sagemaker_plans_local.inspection.snapshot import Snapshot
from tests.api.test_jobs_on_plans import plan_job
from tests.conftest import create_request
from tests.plan_helpers import advance_to, buy, day, own_inventory
from tests.server.clients import client

G4DN = "ml.g4dn.xlarge"
G4DN_HOURLY = Decimal("0.736")
P5 = "ml.p5.48xlarge"
SEED_START = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
ITEM_KEYS = {"kind", "resource", "instance_type", "instance_count", "seconds", "amount"}


def snapshot(backend):
    return Snapshot.collect(backend.client(), backend.clock.now())


def cents(hourly, count, seconds):
    """The expected amount, computed independently of the report's code."""
    return (Decimal(hourly) * count * seconds / 3600).quantize(Decimal("0.01"), ROUND_HALF_UP)


def seed_flow(backend, sm=None):
    """examples/warm_pools.py: job 1 keeps a pool, job 2 reuses it, job 2's pool is kept, then ended."""
    sm = sm or backend.client()
    sm.create_training_job(**create_request("my-training-job-1"))
    backend.clock.advance(25 * 60)
    sm.create_training_job(**create_request("my-training-job-2"))
    backend.clock.advance(16 * 60)
    sm.update_training_job(
        TrainingJobName="my-training-job-2", ResourceConfig={"KeepAlivePeriodInSeconds": 3600}
    )
    backend.clock.advance(40 * 60)
    sm.update_training_job(
        TrainingJobName="my-training-job-2", ResourceConfig={"KeepAlivePeriodInSeconds": 0}
    )


def expected_lines(taken):
    """(kind, job name, seconds) of every billed line, read from the describe answers."""
    lines = [("training", job["TrainingJobName"], job["BillableTimeInSeconds"]) for job in taken.jobs]
    for job in taken.jobs:
        retained = job["WarmPoolStatus"]["ResourceRetainedBillableTimeInSeconds"]
        lines.append(("warm-pool", job["TrainingJobName"], retained))
    return lines


def test_seed_warm_pool_flow_bills_both_jobs_and_both_pools():
    with LocalBackend(start_time=SEED_START) as backend:
        seed_flow(backend)
        taken = snapshot(backend)
    report = cost_report(taken, TrainingPrices.default())
    assert [(i.kind, i.resource.rsplit("/", 1)[1], i.seconds) for i in report.items] == [
        ("training", "my-training-job-1", 600),
        ("training", "my-training-job-2", 600),
        ("warm-pool", "my-training-job-1", 720),  # 09:13 -> 09:25, reused by job 2
        ("warm-pool", "my-training-job-2", 2750),  # 09:35:10 -> 10:21, ended by keep-alive 0
    ]
    assert [(i.kind, i.resource.rsplit("/", 1)[1], i.seconds) for i in report.items] == expected_lines(taken)
    assert [str(i.amount) for i in report.items] == ["0.12", "0.12", "0.15", "0.56"]
    assert [i.amount for i in report.items] == [cents(G4DN_HOURLY, 1, i.seconds) for i in report.items]
    assert report.total == Decimal("0.95") and report.by_instance_type() == {G4DN: Decimal("0.95")}
    assert report.unpriced == ()
    (start,) = report.savings.warm_starts
    assert (start.job.endswith("/my-training-job-2"), start.pool_of.endswith("/my-training-job-1")) == (
        True,
        True,
    )
    assert (start.cold_seconds, start.warm_seconds, start.avoided_seconds) == (180, 10, 170)
    assert (report.savings.seconds, report.savings.amount) == (170, cents(G4DN_HOURLY, 1, 170))


def test_a_chain_measures_each_warm_start_against_the_cold_first_job(backend):
    sm = backend.client()
    for n in (1, 2, 3):
        sm.create_training_job(**create_request(f"job-{n}"))
        backend.clock.advance(15 * 60)
    report = cost_report(snapshot(backend), TrainingPrices.default())
    chain = [(s.job[-5:], s.pool_of[-5:], s.cold_seconds, s.warm_seconds) for s in report.savings.warm_starts]
    assert chain == [("job-2", "job-1", 180, 10), ("job-3", "job-2", 180, 10)]
    assert report.savings.seconds == 340
    # job 3's pool is still Available: billed for its idle time so far
    pool = [i for i in report.items if i.kind == "warm-pool" and i.resource.endswith("/job-3")]
    job3 = sm.describe_training_job(TrainingJobName="job-3")
    assert [i.seconds for i in pool] == [int((backend.clock.now() - job3["TrainingEndTime"]).total_seconds())]


def test_a_job_on_a_two_block_plan_costs_nothing_beyond_the_plans_fee(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 3), (P5, 2, "us-east-1b", 5, 6))
    arn, _ = buy(sm, backend, "plan", count=2, hours=48)
    backend.settings.job_runtime_seconds = 3 * 3600
    sm.create_training_job(**plan_job("on-plan", arn, count=2))
    advance_to(backend, day(7))
    taken = snapshot(backend)
    report = cost_report(taken, TrainingPrices.default())
    (plan,) = taken.plans
    assert len(plan["ReservedCapacitySummaries"]) == 2
    fee, job = report.items
    assert (fee.kind, fee.resource, fee.instance_type, fee.instance_count) == ("training-plan", arn, P5, 2)
    assert (fee.seconds, fee.amount) == (48 * 3600, Decimal(plan["UpfrontFee"]))
    assert (job.kind, job.instance_type, job.instance_count, job.amount) == (
        "training",
        P5,
        2,
        Decimal("0.00"),
    )
    assert job.seconds == taken.job("on-plan")["BillableTimeInSeconds"] == 3 * 3600
    assert report.total == Decimal(plan["UpfrontFee"]) == Decimal("5283.84")


def test_a_plan_whose_payment_failed_bills_nothing(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 4))
    backend.script_plan("broke")
    buy(sm, backend, "broke", count=2, hours=24)
    (item,) = cost_report(snapshot(backend), TrainingPrices.default()).items
    assert (item.kind, item.amount) == ("training-plan", Decimal("0.00"))


def test_an_unpriced_type_is_a_no_price_line_never_a_number(sm, backend):
    request = create_request("unpriced", keep_alive=None)
    request["ResourceConfig"]["InstanceType"] = "ml.trn2.48xlarge"
    sm.create_training_job(**request)
    sm.create_training_job(**create_request("priced", keep_alive=None))
    backend.clock.advance(3600)
    report = cost_report(snapshot(backend), TrainingPrices.default())
    assert TrainingPrices.default().price("ml.trn2.48xlarge") is None
    (line,) = report.unpriced
    assert (line.resource.endswith("/unpriced"), line.seconds, line.amount) == (True, 600, None)
    assert [i.resource.rsplit("/", 1)[1] for i in report.items] == ["priced"]
    assert report.total == cents(G4DN_HOURLY, 1, 600)
    assert report.to_json()["unpriced"] == [
        {
            "kind": "training",
            "resource": line.resource,
            "instance_type": "ml.trn2.48xlarge",
            "instance_count": 1,
            "seconds": 600,
            "reason": "no price",
        }
    ]
    assert report.rows()[-1] == ("training", "unpriced", "ml.trn2.48xlarge", "1", "600", "no price")


def test_a_user_price_file_replaces_the_list(tmp_path, monkeypatch):
    with LocalBackend(start_time=SEED_START) as backend:
        seed_flow(backend)
        taken = snapshot(backend)
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"source": "my EDP rates", "per_instance_hour": {G4DN: "0.50"}}))
    report = cost_report(taken, TrainingPrices.from_file(path))
    assert report.prices_source == "my EDP rates"
    assert report.total == sum(cents("0.50", 1, s) for s in (600, 600, 720, 2750)) == Decimal("0.64")
    monkeypatch.setenv(PRICES_VARIABLE, str(path))
    assert cost_report(taken).total == Decimal("0.64")
    path.write_text(json.dumps({"per_instance_hour": {"ml.m5.xlarge": "0.23"}}))
    replaced = cost_report(taken)
    assert replaced.items == () and len(replaced.unpriced) == 4  # the bundled list is replaced, not merged
    assert replaced.prices_source == f"user supplied: {path}"
    monkeypatch.delenv(PRICES_VARIABLE)
    assert cost_report(taken).prices_source == TrainingPrices.default().source


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"prices": {}}', '{"per_instance_hour": {"ml.m5.xlarge": "-1"}}',
     '{"per_instance_hour": {"ml.m5.xlarge": "cheap"}}', '{"per_instance_hour": {"ml.m5.xlarge": true}}',
     '{"per_instance_hour": {"ml.m5.xlarge": "NaN"}}', '{"currency": "EUR", "per_instance_hour": {}}'],
)  # fmt: skip
def test_a_bad_price_file_is_a_clear_error(tmp_path, text):
    path = tmp_path / "prices.json"
    path.write_text(text)
    with pytest.raises(PriceFileError, match="prices.json"):
        TrainingPrices.from_file(path)


def test_a_missing_price_file_is_a_clear_error(tmp_path):
    with pytest.raises(PriceFileError, match="cannot read price file"):
        TrainingPrices.from_file(tmp_path / "absent.json")


def test_the_bundled_list_is_illustrative_dated_and_names_training_types(sm):
    prices = TrainingPrices.default()
    training_types = set(sm.meta.service_model.shape_for("TrainingInstanceType").enum)
    assert set(prices.per_instance_hour) <= training_types
    assert {"ml.m5.xlarge", G4DN, "ml.g5.xlarge", "ml.p4d.24xlarge", P5, "ml.trn1.32xlarge"} <= set(
        prices.per_instance_hour
    )
    assert "Illustrative" in prices.source and "aws.amazon.com/sagemaker/pricing" in prices.source
    assert "2024" in prices.date and prices.price(G4DN) == G4DN_HOURLY


def test_the_json_has_exactly_the_documented_shape():
    with LocalBackend(start_time=SEED_START) as backend:
        seed_flow(backend)
        report = cost_report(snapshot(backend), TrainingPrices.default())
    document = json.loads(json.dumps(report.to_json()))
    assert set(document) == {"currency", "total", "items"} and document["currency"] == "USD"
    assert document["total"] == "0.95"
    for item in document["items"]:
        assert set(item) == ITEM_KEYS
        assert item["kind"] in {"training-plan", "training", "warm-pool"}
        assert isinstance(item["instance_count"], int) and isinstance(item["seconds"], int)
        assert Decimal(item["amount"]) == Decimal(item["amount"]).quantize(Decimal("0.01"))
    assert sum(Decimal(item["amount"]) for item in document["items"]) == Decimal(document["total"])
    assert len(ROW_HEADER) == len(report.rows()[0])


def test_a_running_job_is_billed_for_its_time_on_instances_so_far(sm, backend):
    sm.create_training_job(**create_request("running", keep_alive=None))
    backend.clock.advance(180 + 300)  # provisioning (not billed), then five minutes on instances
    (item,) = cost_report(snapshot(backend), TrainingPrices.default()).items
    assert item.seconds == 300
    backend.clock.advance(3600)
    (item,) = cost_report(snapshot(backend), TrainingPrices.default()).items
    assert item.seconds == sm.describe_training_job(TrainingJobName="running")["BillableTimeInSeconds"] == 600


def test_a_heterogeneous_job_bills_each_instance_group(sm, backend):
    request = create_request("hetero", keep_alive=None)
    request["ResourceConfig"] = {
        "InstanceGroups": [
            {"InstanceGroupName": "data", "InstanceType": "ml.c5.xlarge", "InstanceCount": 2},
            {"InstanceGroupName": "gpu", "InstanceType": G4DN, "InstanceCount": 1},
        ],
        "VolumeSizeInGB": 50,
    }
    sm.create_training_job(**request)
    backend.clock.advance(3600)
    report = cost_report(snapshot(backend), TrainingPrices.default())
    assert [(i.instance_type, i.instance_count, i.seconds) for i in report.items] == [
        ("ml.c5.xlarge", 2, 600),
        (G4DN, 1, 600),
    ]
    assert report.total == cents("0.204", 2, 600) + cents(G4DN_HOURLY, 1, 600)
    assert report.by_instance_type() == {
        "ml.c5.xlarge": cents("0.204", 2, 600),
        G4DN: cents(G4DN_HOURLY, 1, 600),
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    runtimes=st.lists(st.integers(60, 7200), min_size=1, max_size=4),
    keep_alive=st.integers(0, 3600),
    gaps=st.lists(st.integers(0, 5400), min_size=4, max_size=4),
    count=st.integers(1, 3),
)
def test_totals_are_the_sum_of_items_and_the_apis_seconds(runtimes, keep_alive, gaps, count):
    with LocalBackend(start_time=SEED_START) as backend:
        sm = backend.client()
        for n, (runtime, gap) in enumerate(zip(runtimes, gaps)):
            backend.settings.job_runtime_seconds = runtime
            request = create_request(f"job-{n}", keep_alive=keep_alive or None)
            request["ResourceConfig"]["InstanceCount"] = count
            sm.create_training_job(**request)
            backend.clock.advance(timedelta(seconds=180 + runtime + gap))
        backend.clock.advance(timedelta(hours=2))  # every job ended, every pool expired
        taken = snapshot(backend)
    report = cost_report(taken, TrainingPrices.default())
    billed = [(job["TrainingJobArn"], job["BillableTimeInSeconds"]) for job in taken.jobs]
    assert [(i.resource, i.seconds) for i in report.items if i.kind == "training"] == billed
    retained = [
        (job["TrainingJobArn"], job["WarmPoolStatus"]["ResourceRetainedBillableTimeInSeconds"])
        for job in taken.jobs
        if job.get("WarmPoolStatus") and job["WarmPoolStatus"]["ResourceRetainedBillableTimeInSeconds"]
    ]
    assert [(i.resource, i.seconds) for i in report.items if i.kind == "warm-pool"] == retained
    assert all(i.amount == cents(G4DN_HOURLY, count, i.seconds) for i in report.items)
    assert report.total == sum(i.amount for i in report.items) == sum(report.by_instance_type().values())
    reused = [job for job in taken.jobs if (job.get("WarmPoolStatus") or {}).get("ReusedByJob")]
    assert len(report.savings.warm_starts) == len(reused)
    assert report.savings.seconds == 170 * len(reused)


def test_a_warm_pool_on_a_plan_costs_nothing_beyond_the_plan(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 4))
    arn, _ = buy(sm, backend, "plan", count=1, hours=48)
    sm.create_training_job(**plan_job("kept", arn, keep_alive=600))
    advance_to(backend, day(3))
    taken = snapshot(backend)
    report = cost_report(taken, TrainingPrices.default())
    assert taken.job("kept")["WarmPoolStatus"]["ResourceRetainedBillableTimeInSeconds"] == 600
    assert [(i.kind, i.seconds, i.amount) for i in report.items if i.kind != "training-plan"] == [
        ("training", 600, Decimal("0.00")),
        ("warm-pool", 600, Decimal("0.00")),
    ]
    assert report.total == Decimal(taken.plans[0]["UpfrontFee"])


def test_a_server_gives_the_same_report_as_the_backend_in_process(sagemaker_server):
    backend = sagemaker_server.backend()
    advance_to(backend, SEED_START)
    sm = client(sagemaker_server)
    seed_flow(backend, sm)
    over_http = cost_report(Snapshot.collect(sm, backend.clock.now()), TrainingPrices.default())
    with LocalBackend(start_time=SEED_START) as in_process:
        seed_flow(in_process)
        local = cost_report(snapshot(in_process), TrainingPrices.default())
    assert over_http.to_json() == local.to_json() and over_http.total == Decimal("0.95")
    assert over_http.savings == local.savings
