"""The inspection commands (offerings, plans, jobs, pools, clock, cost, timeline) on a durable root, on a server and
on the default backend: ``--json`` against the API's own answers, tables with the key values, and
bad arguments refused with exit status 2."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagemaker_plans_local.__main__ import main
from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.cli.inspect_commands import parse_hours
from sagemaker_plans_local.cli.target import RootTarget, ServerTarget
from sagemaker_plans_local.inspection.cost import cost_report
from sagemaker_plans_local.inspection.snapshot import Snapshot
from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.sdk.default_backend import ENDPOINT_VARIABLE, default_backend_root
from tests.conftest import create_request
from tests.server.clients import client, control

SEARCH = {
    "InstanceType": "ml.p5.48xlarge",
    "InstanceCount": 2,
    "DurationHours": 48,
    "TargetResources": ["training-job"],
}
#: The state's end: prep ran 00:00-00:13 (180 s cold start, 600 s run), train reused its pool
#: 00:13:00-00:23:10 (10 s warm start), on-plan waits for its plan's block; then 120 s more.
END = FIXTURE_START + timedelta(seconds=780 + 610 + 120)


def make_state(sm: Any, advance: Callable[[float], None]) -> None:
    """A bought plan, a warm-pool chain prep -> train (train's pool Available) and a job queued on the plan."""
    offering = sm.search_training_plan_offerings(**SEARCH)["TrainingPlanOfferings"][0]
    plan = sm.create_training_plan(
        TrainingPlanName="big-plan", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )
    sm.create_training_job(**create_request("prep"))
    advance(780)
    sm.create_training_job(**create_request("train"))
    advance(610)
    on_plan = create_request("on-plan", keep_alive=None)
    on_plan["ResourceConfig"].update(
        InstanceType="ml.p5.48xlarge", InstanceCount=2, TrainingPlanArn=plan["TrainingPlanArn"]
    )
    sm.create_training_job(**on_plan)
    advance(120)


class Place:
    """Where a command looks: its arguments, a SageMaker client of the same state, and its cache knowledge."""

    def __init__(self, arguments: list[str], sm: Any, cache: Callable[[str], Path | None] | None) -> None:
        self.arguments, self.sm, self.cache = arguments, sm, cache


@pytest.fixture(params=["root", "server"])
def place(request, tmp_path):
    if request.param == "root":
        root = tmp_path / "root"
        backend = LocalBackend(start_time=FIXTURE_START, root=root)
        make_state(backend.client(), backend.clock.advance)
        yield Place(
            ["--root", str(root)], backend.client(), lambda name: backend.training_job(name).cache_dir
        )
        backend.close()
        return
    server = request.getfixturevalue("sagemaker_server")
    sm = client(server)
    make_state(sm, lambda seconds: control(server, "clock", {"advance_seconds": seconds}))
    yield Place(["--endpoint-url", server.url], sm, None)


def run(capsys, *arguments: str) -> tuple[int, str, str]:
    status = main(list(arguments))
    out, err = capsys.readouterr()
    return status, out, err


def as_json(capsys, *arguments: str) -> dict[str, Any]:
    status, out, err = run(capsys, *arguments, "--json")
    assert (status, err) == (0, "")
    return json.loads(out)  # stdout holds the document and nothing else


def iso(moment: datetime) -> str:
    return moment.astimezone(FIXTURE_START.tzinfo).isoformat()


def test_jobs_json_is_what_describe_answers(place, capsys):
    document = as_json(capsys, "jobs", *place.arguments)
    assert document["now"] == END.isoformat()
    assert [job["name"] for job in document["jobs"]] == ["prep", "train", "on-plan"]
    for record in document["jobs"]:
        job = place.sm.describe_training_job(TrainingJobName=record["name"])
        assert (
            record["status"] == job["TrainingJobStatus"]
            and record["secondary_status"] == job["SecondaryStatus"]
        )
        assert record["billable_seconds"] == job.get("BillableTimeInSeconds")
        assert record["creation_time"] == iso(job["CreationTime"])
        assert record["training_end_time"] == (
            iso(job["TrainingEndTime"]) if "TrainingEndTime" in job else None
        )
        assert record["training_plan_arn"] == job["ResourceConfig"].get("TrainingPlanArn")
    assert document["jobs"][0]["billable_seconds"] == 600 and document["jobs"][2]["status"] == "InProgress"


def test_jobs_table_shows_the_key_values(place, capsys):
    status, out, err = run(capsys, "jobs", *place.arguments)
    assert (status, err) == (0, "")
    assert "3 training jobs at 2026-01-01 00:25:10" in out
    for value in ("prep", "train", "on-plan", "Completed", "InProgress", "ml.p5.48xlarge", "big-plan", "600"):
        assert value in out


def test_plans_json_is_what_describe_answers_with_the_blocks(place, capsys):
    document = as_json(capsys, "plans", *place.arguments)
    (record,) = document["plans"]
    plan = place.sm.describe_training_plan(TrainingPlanName="big-plan")
    assert (record["name"], record["status"], record["upfront_fee"]) == (
        "big-plan",
        plan["Status"],
        plan["UpfrontFee"],
    )
    assert (record["start_time"], record["end_time"]) == (iso(plan["StartTime"]), iso(plan["EndTime"]))
    assert record["total_instance_count"] == plan["TotalInstanceCount"] == 2
    blocks = plan["ReservedCapacitySummaries"]
    assert [block["arn"] for block in record["blocks"]] == [block["ReservedCapacityArn"] for block in blocks]
    assert [block["availability_zone"] for block in record["blocks"]] == [
        block["AvailabilityZone"] for block in blocks
    ]
    assert [block["start_time"] for block in record["blocks"]] == [
        iso(block["StartTime"]) for block in blocks
    ]
    status, out, _ = run(capsys, "plans", *place.arguments)
    assert status == 0 and "big-plan" in out and f"{plan['UpfrontFee']} USD" in out
    assert blocks[0]["ReservedCapacityArn"].rpartition("/")[2] in out and blocks[0]["AvailabilityZone"] in out


def test_pools_show_the_chain_and_the_keep_alive_left(place, capsys):
    if place.cache is not None:
        (Path(place.cache("train")) / "weights.bin").write_bytes(b"12345")
    document = as_json(capsys, "pools", *place.arguments)
    (pool,) = document["pools"]
    train = place.sm.describe_training_job(TrainingJobName="train")
    expires = train["TrainingEndTime"] + timedelta(seconds=1800)
    assert (pool["job"], pool["chain"], pool["chain_length"]) == ("train", ["prep", "train"], 2)
    assert pool["status"] == train["WarmPoolStatus"]["Status"] == "Available"
    assert (pool["expires_at"], pool["remaining_seconds"]) == (iso(expires), (expires - END).total_seconds())
    prep = place.sm.describe_training_job(TrainingJobName="prep")["WarmPoolStatus"]
    assert (prep["Status"], prep["ReusedByJob"]) == ("Reused", "train")
    assert pool["retained_billable_seconds"] == prep["ResourceRetainedBillableTimeInSeconds"]
    assert document["cache_sizes_known"] is (place.cache is not None)
    assert pool["cache_bytes"] == (5 if place.cache is not None else None)
    status, out, _ = run(capsys, "pools", *place.arguments)
    assert status == 0 and "train" in out and "Available" in out and "28m" in out
    assert ("5 bytes" if place.cache is not None else "n/a") in out


def test_offerings_json_is_what_the_search_answers(place, capsys):
    arguments = ["--instance-type", "ml.p5.48xlarge", "--instance-count", "2", "--duration", "2d"]
    document = as_json(capsys, "offerings", *arguments, *place.arguments)
    offerings = place.sm.search_training_plan_offerings(**SEARCH)["TrainingPlanOfferings"]
    assert [record["upfront_fee"] for record in document["offerings"]] == [o["UpfrontFee"] for o in offerings]
    for record, offering in zip(document["offerings"], offerings):
        blocks = offering["ReservedCapacityOfferings"]
        assert [
            (b["instance_type"], b["instance_count"], b["availability_zone"]) for b in record["blocks"]
        ] == [(b["InstanceType"], b["InstanceCount"], b["AvailabilityZone"]) for b in blocks]
        assert [b["end_time"] for b in record["blocks"]] == [iso(b["EndTime"]) for b in blocks]
    status, out, _ = run(capsys, "offerings", *arguments, *place.arguments)
    assert (
        status == 0
        and offerings[0]["UpfrontFee"] in out
        and offerings[0]["ReservedCapacityOfferings"][0]["AvailabilityZone"] in out
    )
    offering_id = out.split("tpo-")[1].split()[0]  # each search numbers its offerings: the table's latest
    plan = place.sm.create_training_plan(
        TrainingPlanName="bought", TrainingPlanOfferingId="tpo-" + offering_id
    )
    assert plan["TrainingPlanArn"].endswith("/bought")


def test_clock_show_and_advance_apply_what_falls_due(place, capsys):
    assert as_json(capsys, "clock", "show", *place.arguments) == {"now": END.isoformat(), "manual": True}
    status, out, err = run(capsys, "clock", "advance", "1h", *place.arguments)
    assert (status, out, err) == (0, (END + timedelta(hours=1)).isoformat() + "\n", "")
    assert place.sm.describe_training_job(TrainingJobName="train")["WarmPoolStatus"]["Status"] == "Terminated"
    assert as_json(capsys, "pools", *place.arguments)["pools"][0]["remaining_seconds"] is None


def test_clock_advance_shows_progress_on_a_terminal_only(place, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # the captured stderr, as a terminal
    status, out, err = run(capsys, "clock", "advance", "3d", *place.arguments)
    assert (status, out) == (0, (END + timedelta(days=3)).isoformat() + "\n")
    assert "advancing 3d" in err  # the bar, on stderr; stdout has the answer only
    assert place.sm.describe_training_plan(TrainingPlanName="big-plan")["Status"] in ("Active", "Expired")


def test_cost_json_is_the_cost_report_of_the_apis_answers(place, capsys):
    document = as_json(capsys, "cost", *place.arguments)
    assert document == cost_report(Snapshot.collect(place.sm, END)).to_json()
    fee = place.sm.describe_training_plan(TrainingPlanName="big-plan")["UpfrontFee"]
    assert {"kind": "training-plan", "amount": fee} in [
        {k: i[k] for k in ("kind", "amount")} for i in document["items"]
    ]
    pools = [
        (i["resource"].rpartition("/")[2], i["seconds"])
        for i in document["items"]
        if i["kind"] == "warm-pool"
    ]
    assert pools == [("train", 120)]  # train's pool, kept since 00:23:10, billed so far
    status, out, _ = run(capsys, "cost", *place.arguments)
    assert (
        status == 0
        and f"total: {document['total']} USD" in out
        and fee in out
        and "warm pools saved 170 s" in out
    )


def test_cost_takes_a_price_file(place, capsys, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"per_instance_hour": {"ml.g4dn.xlarge": "36.00"}}))
    items = as_json(capsys, "cost", "--prices", str(prices), *place.arguments)["items"]
    trained = {i["resource"].rpartition("/")[2]: i["amount"] for i in items if i["kind"] == "training"}
    assert trained == {
        "prep": "6.00",
        "train": "6.00",
        "on-plan": "0.00",
    }  # 600 s at 36 an hour; the plan's job: 0
    prices.write_text("{}")
    status, out, err = run(capsys, "cost", "--prices", str(prices), *place.arguments)
    assert (status, out) == (1, "") and "per_instance_hour" in err


@pytest.mark.parametrize("suffix", [".svg", ".html", ".png"])
def test_timeline_draws_the_picture(place, capsys, tmp_path, suffix):
    out = tmp_path / f"picture{suffix}"
    status, printed, err = run(capsys, "timeline", "--out", str(out), *place.arguments)
    assert (status, err) == (0, "") and printed == f"wrote {out} (3 jobs, 1 plans, at {END.isoformat()})\n"
    if suffix == ".png":
        assert out.read_bytes().startswith(b"\x89PNG")
    else:
        assert all(name in out.read_text() for name in ("<svg", "big-plan", "prep", "train", "on-plan"))


def test_timeline_zooms_with_since_and_until(place, capsys, tmp_path):
    out = tmp_path / "zoom.svg"
    since, until = FIXTURE_START.isoformat(), (FIXTURE_START + timedelta(minutes=30)).isoformat()
    arguments = ["timeline", "--out", str(out), "--since", since, "--until", until]
    status, _, err = run(capsys, *arguments, *place.arguments)
    assert (status, err) == (0, "") and "prep" in out.read_text()
    status, out_text, err = run(
        capsys, "timeline", "--out", str(out), "--since", until, "--until", since, *place.arguments
    )
    assert (status, out_text) == (1, "") and "must come before" in err


def test_advance_steps_stop_at_each_change_on_a_root(tmp_path):
    with LocalBackend(start_time=FIXTURE_START, root=tmp_path / "root") as backend:
        make_state(backend.client(), backend.clock.advance)
    target = RootTarget(tmp_path / "root", "us-east-1")
    try:
        steps = list(target.advance_steps(7200))
        assert (
            steps == sorted(steps) and steps[-1] == 7200 and len(steps) > 2
        )  # the pool's end, the block's start...
        assert target.now() == END + timedelta(hours=2)
    finally:
        target.close()


def test_a_server_advance_moves_in_equal_steps(sagemaker_server):
    target = ServerTarget(sagemaker_server.url, "us-east-1")
    steps = list(target.advance_steps(5000))
    assert steps[-1] == 5000 and len(steps) == 50
    assert target.now() == FIXTURE_START + timedelta(seconds=5000)


def test_the_default_is_the_default_backends_root(capsys, monkeypatch):
    monkeypatch.delenv(ENDPOINT_VARIABLE, raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with LocalBackend(start_time=FIXTURE_START, root=default_backend_root()) as backend:
        make_state(backend.client(), backend.clock.advance)
    assert [job["name"] for job in as_json(capsys, "jobs")["jobs"]] == ["prep", "train", "on-plan"]
    assert as_json(capsys, "clock", "advance", "90s")["now"] == (END + timedelta(seconds=90)).isoformat()


def test_the_endpoint_variable_names_a_server(sagemaker_server, capsys, monkeypatch):
    monkeypatch.setenv(ENDPOINT_VARIABLE, sagemaker_server.url)
    client(sagemaker_server).create_training_job(**create_request("remote"))
    assert [job["name"] for job in as_json(capsys, "jobs")["jobs"]] == ["remote"]
    assert as_json(capsys, "pools")["cache_sizes_known"] is False


@pytest.mark.parametrize(
    "arguments",
    [
        ["jobs", "--root", "r", "--endpoint-url", "http://127.0.0.1:1"],
        ["clock", "advance", "soon"],
        ["clock", "advance"],
        ["clock", "rewind", "1h"],
        ["offerings", "--duration", "90m"],
        ["offerings", "--duration", "0"],
        ["offerings", "--start-after", "tomorrow"],
        ["offerings", "--instance-count", "two"],
        ["pools", "--colour"],
        ["timeline", "--out", "picture.pdf"],
        ["timeline"],
        ["timeline", "--out", "p.png", "--since", "yesterday"],
    ],
)
def test_bad_arguments_exit_2_with_a_message(arguments, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main([*arguments, "--root", str(tmp_path)] if "--root" not in arguments else arguments)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == "" and "error:" in err


def test_a_missing_root_a_refused_search_and_an_unreachable_server_exit_1(tmp_path, capsys):
    assert run(capsys, "jobs", "--root", str(tmp_path / "nowhere"))[1:] == (
        "",
        f"sagemaker-plans-local: no backend root at {tmp_path / 'nowhere'}\n",
    )
    nothing = ["--instance-type", "ml.nothing", "--instance-count", "1", "--duration", "24"]
    status, out, err = run(capsys, "offerings", *nothing, "--root", str(tmp_path))
    assert (status, out) == (1, "") and "refused it" in err and "ml.nothing" in err
    status, out, err = run(capsys, "jobs", "--endpoint-url", "http://127.0.0.1:9")
    assert (status, out) == (1, "") and "cannot" in err


@pytest.mark.parametrize(
    "arguments, missing",
    [
        (
            [],
            "--instance-type and --instance-count (or --ultraserver-type and --ultraserver-count) and --duration",
        ),
        (["--instance-type", "ml.p5.48xlarge", "--duration", "24"], "--instance-type and --instance-count"),
        (["--ultraserver-type", "ml.u-p6e-gb200x72", "--duration", "24"], "--ultraserver-count"),
        (["--instance-type", "ml.p5.48xlarge", "--instance-count", "2"], "needs --duration"),
    ],
)
def test_offerings_names_the_flags_a_search_needs(arguments, missing, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["offerings", *arguments, "--root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == "" and missing in err and "validation error" not in err


@given(hours=st.integers(min_value=1, max_value=87600))
def test_an_offering_duration_is_hours_or_a_duration(hours):
    assert parse_hours(str(hours)) == parse_hours(f"{hours}h") == parse_hours(f"{hours * 60}m") == hours
    if hours % 24 == 0:
        assert parse_hours(f"{hours // 24}d") == hours


@pytest.mark.parametrize("terminal", [True, False])
def test_an_sdk_wait_shows_progress_on_a_terminal_only(terminal, capsys, monkeypatch):
    from types import SimpleNamespace

    from sagemaker_plans_local.sdk import local_waits

    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)  # the captured stderr
    with LocalBackend(start_time=FIXTURE_START) as backend:
        sm = backend.client()
        sm.create_training_job(**create_request("waited"))
        session = SimpleNamespace(boto_region_name="us-east-1", sagemaker_client=sm)
        checked = []
        helpers = SimpleNamespace(_check_job_status=lambda *arguments: checked.append(arguments[0]))
        description = local_waits.wait_for_job(session, backend, "waited", helpers)
    assert description["TrainingJobStatus"] == "Completed" and checked == ["waited"]
    out, err = capsys.readouterr()
    assert out == "" and (("waited: waiting" in err) if terminal else err == "")
