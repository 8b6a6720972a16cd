"""A wall-clock backend tells the truth: waits never move it ahead of real time unless asked."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.services.sagemaker.jobs.phases import STOPPING_SECONDS
from tests.conftest import create_request


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@pytest.fixture
def wall(tmp_path):
    with LocalBackend(root=tmp_path / "wall") as backend:
        yield backend


def test_waiting_for_a_job_keeps_the_clock_at_real_time(wall):
    client = wall.client()
    client.create_training_job(**create_request("truthful", keep_alive=1800))
    job = wall.wait_for_training_job("truthful")
    assert job.status == "Completed"
    assert wall.clock.now() <= utc_now()
    described = client.describe_training_job(TrainingJobName="truthful")
    assert described["TrainingEndTime"] <= utc_now()
    # A search built from datetime.now() is not "in the past", and the 1800 s pool is still there.
    offerings = client.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge",
        InstanceCount=1,
        DurationHours=24,
        TargetResources=["training-job"],
        StartTimeAfter=utc_now(),
    )
    assert offerings["TrainingPlanOfferings"]
    assert described["WarmPoolStatus"]["Status"] == "Available"


def test_service_phases_are_compressed_on_a_wall_clock_and_cold_costs_more_than_warm(wall):
    client = wall.client()
    client.create_training_job(**create_request("cold", keep_alive=600))
    wall.wait_for_training_job("cold")
    client.create_training_job(**create_request("warm", keep_alive=None))
    wall.wait_for_training_job("warm")
    cold = client.describe_training_job(TrainingJobName="cold")
    warm = client.describe_training_job(TrainingJobName="warm")
    assert cold["WarmPoolStatus"]["ReusedByJob"] == "warm"  # the second job started warm
    cold_start = cold["TrainingStartTime"] - cold["CreationTime"]
    warm_start = warm["TrainingStartTime"] - warm["CreationTime"]
    settings = wall.settings
    assert cold_start >= timedelta(seconds=settings.cold_start_seconds * settings.wall_clock_phase_scale)
    assert cold_start < timedelta(seconds=settings.cold_start_seconds)
    assert warm_start < cold_start


def test_durations_a_request_gives_are_not_compressed(wall):
    client = wall.client()
    client.create_training_job(**create_request("kept", keep_alive=1800))
    wall.wait_for_training_job("kept")
    pool = client.describe_training_job(TrainingJobName="kept")["WarmPoolStatus"]
    assert pool["Status"] == "Available"
    ended = client.describe_training_job(TrainingJobName="kept")["TrainingEndTime"]
    assert wall.clock.next_due() == ended + timedelta(seconds=1800)  # the pool expires on time


def test_fast_forward_is_explicit(wall):
    client = wall.client()
    client.create_training_job(**create_request("forwarded", keep_alive=1800))
    wall.wait_for_training_job("forwarded", fast_forward=False)
    assert wall.clock.now() <= utc_now()
    wall.wait_for_next_change(fast_forward=True)  # the pool's 1800 s expiry, now
    assert wall.clock.now() > utc_now() + timedelta(seconds=1700)
    described = client.describe_training_job(TrainingJobName="forwarded")
    assert described["WarmPoolStatus"]["Status"] == "Terminated"


def test_the_fast_forward_setting_makes_waits_move_the_clock(wall):
    wall.settings.fast_forward_waits = True
    wall.settings.wall_clock_phase_scale = 1.0  # real-length phases, passed at once
    client = wall.client()
    client.create_training_job(**create_request("quick", keep_alive=None))
    before = utc_now()
    wall.wait_for_training_job("quick")
    assert utc_now() - before < timedelta(seconds=60)
    assert wall.clock.now() >= before + timedelta(seconds=wall.settings.cold_start_seconds)


def test_a_manual_clock_is_never_compressed():
    settings = Settings()
    assert settings.service_seconds(180, manual_clock=True) == 180
    assert settings.service_seconds(STOPPING_SECONDS, manual_clock=False) == pytest.approx(
        STOPPING_SECONDS * settings.wall_clock_phase_scale
    )
