"""``sagemaker-plans-local simulate``: the JSON contract, the table, the pictures, and bad input refused."""

from __future__ import annotations

import json

import pytest

from sagemaker_plans_local.__main__ import main

WORKLOAD = """submit_time,name,instance_type,instance_count,run_seconds,keep_alive_seconds
0,prep,ml.g4dn.xlarge,1,600,600
900,train,ml.g4dn.xlarge,1,600,
"""
KEYS = [
    "policy", "total", "plan_fees", "training", "warm_pool", "jobs", "completed", "failed", "warm_starts",
    "wait_seconds", "plan_utilization", "makespan_seconds",
]  # fmt: skip


@pytest.fixture
def workload(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text(WORKLOAD)
    return path


def test_json_has_the_documented_keys(workload, capsys):
    assert (
        main(
            [
                "simulate",
                str(workload),
                "--policy",
                "on-demand",
                "--policy",
                "as-is",
                "--json",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["currency"] == "USD"
    on_demand, as_is = document["policies"]
    assert list(on_demand)[: len(KEYS)] == KEYS
    assert (on_demand["policy"], on_demand["total"], on_demand["warm_starts"]) == ("on-demand", "0.24", 0)
    # as-is: prep's 600 s pool is reused after 120 s (0.02); train starts warm
    assert (as_is["total"], as_is["warm_pool"], as_is["warm_starts"]) == ("0.26", "0.02", 1)
    assert (
        on_demand["wait_seconds"] == {"p50": 0, "p95": 0, "max": 0} and on_demand["plan_utilization"] is None
    )
    assert on_demand["makespan_seconds"] == 900 + 180 + 600


def test_the_table_the_sweep_and_the_pictures(workload, tmp_path, capsys):
    chart, timeline = tmp_path / "what-if.svg", tmp_path / "timeline.html"
    argv = [
        "simulate",
        str(workload),
        "--policy",
        "as-is",
        "--sweep",
        "keep-alive=0..600/300",
        "--workers",
        "2",
    ]
    assert (
        main([*argv, "--out", str(chart), "--timeline", str(timeline), "--timeline-policy", "keep-alive=300"])
        == 0
    )
    out = capsys.readouterr().out
    for label in ("keep-alive=0", "keep-alive=300", "keep-alive=600", "cheapest: keep-alive=0", "prices:"):
        assert label in out
    assert "cost against queue wait" in chart.read_text() and "keep-alive=600" in chart.read_text()
    assert (
        timeline.read_text().startswith("<!DOCTYPE html>")
        and "what-if: keep-alive=300" in timeline.read_text()
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "keep-alive=9000"], "keep-alive takes whole seconds from 0 to 3600"),
        (["--policy", "spot"], "unknown term 'spot'"),
        (["--sweep", "plan-count=1..8"], "needs exactly one"),
        (["--out", "chart.pdf"], "--out must end in .png, .svg, .html"),
    ],
)
def test_bad_options_are_usage_errors(workload, argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["simulate", str(workload), *argv])
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_a_bad_workload_changes_nothing_and_says_where(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(WORKLOAD + "x,broken,ml.g4dn.xlarge,1,600,\n")
    out = tmp_path / "chart.png"
    assert main(["simulate", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "row 3, field submit_time: 'x' is neither seconds nor an ISO 8601 time" in err
    assert not out.exists()


def test_a_missing_root_and_a_bad_price_file(tmp_path, workload, capsys):
    assert main(["simulate", "--root", str(tmp_path / "nowhere")]) == 1
    assert "no backend root there" in capsys.readouterr().err
    prices = tmp_path / "prices.json"
    prices.write_text('{"per_instance_hour": {"ml.g4dn.xlarge": "-1"}}')
    assert main(["simulate", str(workload), "--prices", str(prices)]) == 1
    assert "is not a non-negative number" in capsys.readouterr().err
