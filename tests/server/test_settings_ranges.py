"""Settings have ranges (docs/backend.md, "Settings"): a value out of range is refused in process
(ValueError) and over the control API (400, nothing stored), and a root whose journal holds one
(written before the ranges) still opens."""

from __future__ import annotations

import json
import logging
import math
import re
from datetime import timedelta

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.core import settings as ranges
from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import create_request
from tests.server.clients import client, control
from tests.server.test_guard import START

SEVERAL = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=40,
)
DURATIONS = ("job_runtime_seconds", "cold_start_seconds", "warm_start_seconds", "plan_payment_seconds")
WHOLE = st.integers(min_value=-(10**30), max_value=10**30)
NOT_NUMBERS = st.one_of(st.text(max_size=5), st.booleans(), st.lists(st.integers(), max_size=2))


def out_of_range(name: str) -> st.SearchStrategy:
    """Values setting ``name`` must refuse, by what it means."""
    if name in DURATIONS:
        high = ranges.MAX_DURATION_SECONDS
        numbers = st.one_of(WHOLE, st.floats())
        return st.one_of(numbers.filter(lambda v: not 0 <= v <= high), NOT_NUMBERS)
    if name == "max_keep_alive_seconds":
        return st.one_of(WHOLE.filter(lambda v: not 0 <= v <= ranges.MAX_KEEP_ALIVE_SECONDS), NOT_NUMBERS)
    if name in ("instance_quota", "warm_pool_quota"):
        count = WHOLE.filter(lambda v: not 0 <= v <= ranges.MAX_QUOTA)
        return st.one_of(
            count,
            st.floats(),
            NOT_NUMBERS,
            st.dictionaries(st.sampled_from(["ml.m5.large", "ml.p5.48xlarge"]), count, min_size=1),
            st.dictionaries(st.integers(), st.integers(0, 3), min_size=1),
        )
    if name == "max_instance_processes":
        return st.one_of(WHOLE.filter(lambda v: not 0 <= v <= ranges.MAX_INSTANCE_PROCESSES), NOT_NUMBERS)
    if name == "wall_clock_phase_scale":
        return st.one_of(st.floats().filter(lambda v: not 0 <= v <= 1), NOT_NUMBERS, st.just(10**400))
    if name == "runner_idle_seconds":
        high = ranges.MAX_RUNNER_IDLE_SECONDS
        return st.one_of(st.floats().filter(lambda v: not 0 <= v <= high), NOT_NUMBERS)
    assert name == "fast_forward_waits"
    return st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none())


NAMES = [field.name for field in attrs.fields(Settings)]


@SEVERAL
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_an_out_of_range_setting_is_refused_in_process_and_changes_nothing(data, name):
    current = Settings()
    value = data.draw(out_of_range(name))
    with pytest.raises(ValueError, match=re.escape(repr(name))):
        setattr(current, name, value)
    assert current == Settings()


def test_a_quota_names_at_most_a_bounded_number_of_types():
    current = Settings()
    with pytest.raises(ValueError):
        current.instance_quota = {f"ml.type{i}.large": 1 for i in range(ranges.MAX_QUOTA_TYPES + 1)}
    current.instance_quota = {f"ml.type{i}.large": 1 for i in range(ranges.MAX_QUOTA_TYPES)}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("job_runtime_seconds", 0),
        ("job_runtime_seconds", ranges.MAX_DURATION_SECONDS),
        ("job_runtime_seconds", 0.4),  # a local run's fraction of a second
        ("cold_start_seconds", 0),
        ("max_keep_alive_seconds", 21600),
        ("instance_quota", None),
        ("instance_quota", {"ml.m5.large": 0}),
        ("warm_pool_quota", ranges.MAX_QUOTA),
        ("wall_clock_phase_scale", 0),
        ("wall_clock_phase_scale", 1),
        ("runner_idle_seconds", 0.5),
        ("max_instance_processes", 0),
        ("fast_forward_waits", True),
    ],
)
def test_a_value_in_range_is_taken(name, value):
    current = Settings()
    setattr(current, name, value)
    assert getattr(current, name) == value


def test_the_duration_ranges_are_the_models():
    """KeepAlivePeriodInSeconds' and MaxPendingTimeInSeconds' maxima, and MaxRuntimeInSeconds'
    documented one ("The maximum value is 28 days"), as botocore's SageMaker model gives them."""
    model = service_model("sagemaker")
    assert model.shape_for("KeepAlivePeriodInSeconds").metadata["max"] == ranges.MAX_KEEP_ALIVE_SECONDS
    assert model.shape_for("MaxPendingTimeInSeconds").metadata["max"] == ranges.MAX_DURATION_SECONDS
    runtime = model.shape_for("StoppingCondition").members["MaxRuntimeInSeconds"].documentation
    days = re.search(r"The maximum value is (\d+) days", runtime)
    assert days is not None and int(days.group(1)) * 86400 == ranges.MAX_DURATION_SECONDS


# -- over HTTP ---------------------------------------------------------------------------


@SEVERAL
@given(data=st.data(), bad=st.sampled_from(NAMES))
def test_one_bad_setting_in_a_post_stores_none_of_them(sagemaker_server, data, bad):
    before = control(sagemaker_server, "settings", method="GET")[1]
    document = {"job_runtime_seconds": 42, "cold_start_seconds": 7, "instance_quota": 3}
    document[bad] = data.draw(out_of_range(bad).filter(_json_safe))
    status, answer = control(sagemaker_server, "settings", document)
    assert (status, answer["error"]) == (400, "BadRequest")
    assert control(sagemaker_server, "settings", method="GET") == (200, before)
    assert attrs.asdict(sagemaker_server.backend().settings) == before


def _json_safe(value) -> bool:
    """Whether JSON carries ``value`` as it is (no NaN, no int keys made strings)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False)) == value
    except (ValueError, TypeError):
        return False


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("job_runtime_seconds", 10**18),
        ("cold_start_seconds", 10**18),
        ("wall_clock_phase_scale", 1e20),
        ("wall_clock_phase_scale", 1e308),
    ],
)
def test_the_settings_that_bricked_a_root_are_a_400_and_the_root_stays_usable(tmp_path, name, value):
    """Once stored, these made CreateTrainingJob a 500 (the job kept, then lost at a restart) or the
    root unopenable (an OverflowError replaying the clock)."""
    start = None if name == "wall_clock_phase_scale" else START  # the scale acts on a wall clock
    with LocalServer(start_time=start, root=tmp_path / "root") as server:
        status, answer = control(server, "settings", {name: value})
        assert (status, answer["error"]) == (400, "BadRequest")
        assert name in answer["message"]
        client(server).create_training_job(**create_request("after"))
        if start is not None:
            assert control(server, "clock", {"advance_seconds": 3600})[0] == 200
    with LocalServer(start_time=start, root=tmp_path / "root") as server:
        described = client(server).describe_training_job(TrainingJobName="after")
        assert described["TrainingJobName"] == "after"


# -- roots written before the ranges -----------------------------------------------------


def test_a_root_whose_journal_holds_an_out_of_range_setting_opens(tmp_path, caplog):
    """Today's journal may hold one: replay passes over it with a warning (the default stays)."""
    root = tmp_path / "root"
    with LocalServer(start_time=START, root=root) as server:
        server.backend()  # the default account's root
    journal = Journal(root / "accounts" / DEFAULT_ACCOUNT)
    journal.append(START.isoformat(), "setting", {"name": "job_runtime_seconds", "value": 10**18})
    journal.close()
    with LocalServer(start_time=START, root=root) as server:
        client(server).create_training_job(**create_request("kept"))
        assert control(server, "clock", {"advance_seconds": 3600})[0] == 200
    caplog.clear()
    with caplog.at_level(logging.WARNING), LocalServer(start_time=START, root=root) as server:
        described = client(server).describe_training_job(TrainingJobName="kept")
        assert described["TrainingJobStatus"] == "Completed"
        assert described["TrainingTimeInSeconds"] == Settings().job_runtime_seconds
        assert server.backend().settings.job_runtime_seconds == Settings().job_runtime_seconds
    warnings = [
        r for r in caplog.records if r.levelno == logging.WARNING and "job_runtime_seconds" in r.message
    ]
    assert warnings and "passing over" in warnings[0].message


def test_a_snapshot_holding_an_out_of_range_setting_is_passed_over(tmp_path, caplog):
    """A snapshot taken with such a setting in force: the journal is replayed instead."""
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        durable = backend._durable
        with durable.transaction() as txn:  # what today's code journaled and applied
            txn.append("setting", {"name": "cold_start_seconds", "value": 10**18})
            object.__setattr__(backend.settings, "cold_start_seconds", 10**18)
        assert durable.snapshot()
    with caplog.at_level(logging.WARNING), LocalBackend(root=tmp_path) as reopened:
        assert reopened.settings.cold_start_seconds == Settings().cold_start_seconds
        reopened.client().create_training_job(**create_request("kept"))
        reopened.clock.advance(timedelta(hours=1))
        status = reopened.client().describe_training_job(TrainingJobName="kept")["TrainingJobStatus"]
        assert status == "Completed"
    assert "passing over the snapshot" in caplog.text


def test_a_scale_is_finite():
    with pytest.raises(ValueError):
        Settings().wall_clock_phase_scale = math.nan
