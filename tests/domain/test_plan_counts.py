"""Random job traffic on a training plan: its instance counts always match who uses it."""

import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from sagemaker_plans_local.emulation import Emulation
from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript

from .conftest import job_spec

P5 = "ml.p5.48xlarge"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
DAY = datetime(2026, 1, 2, 11, 30, tzinfo=timezone.utc)


class PlanTraffic(RuleBasedStateMachine):
    @initialize()
    def buy_a_plan(self):
        self.root = Path(tempfile.mkdtemp(prefix="plan-counts-"))
        self.emulation = Emulation("123456789012", self.root, START)
        self.emulation.settings.plan_payment_seconds = 0
        self.emulation.capacity.add(P5, 4, "us-east-1a", DAY, DAY + timedelta(days=1))
        self.emulation.capacity.add(P5, 4, "us-east-1b", DAY + timedelta(days=2), DAY + timedelta(days=3))
        region = self.emulation.region("us-east-1")
        plans, self.jobs = region.training_plans, region.training_jobs
        offering = plans.search(instance_type=P5, instance_count=4, duration_hours=48, target="training-job")[
            0
        ]
        self.plan = plans.create("traffic", offering.offering_id)
        self.emulation.clock.advance(1)
        self.names = 0

    @rule(
        count=st.sampled_from([1, 2, 4]),
        keep_alive=st.sampled_from([0, 0, 1800]),
        runtime=st.integers(min_value=60, max_value=20 * 3600),
    )
    def create_job(self, count, keep_alive, runtime):
        if self.plan.status not in ("Scheduled", "Active"):
            return
        name = f"j{self.names}"
        self.names += 1
        self.emulation.script_job(name, JobScript(runtime_seconds=runtime))
        spec = job_spec(name, keep_alive=keep_alive, instance_type=P5, count=count)
        spec["ResourceConfig"]["TrainingPlanArn"] = self.plan.arn
        with self.emulation.lock:
            self.jobs.create(spec)

    @rule(hours=st.integers(min_value=0, max_value=30), minutes=st.integers(min_value=0, max_value=59))
    def advance(self, hours, minutes):
        self.emulation.clock.advance(timedelta(hours=hours, minutes=minutes))

    @rule(data=st.data())
    def stop_a_job(self, data):
        running = [job for job in self.jobs.all() if job.status == "InProgress"]
        if running:
            job = data.draw(st.sampled_from(running))
            with self.emulation.lock:
                self.jobs.stop(job.name)

    @invariant()
    def counts_match_users(self):
        if not hasattr(self, "plan"):
            return
        plan = self.plan
        on_instances = sum(
            job.instance_count
            for job in self.jobs.all()
            if job.block is not None and job.status in ("InProgress", "Stopping")
        )
        pools = sum(
            pool.instance_count for pool in self.jobs.pools.available_pools() if pool.plan_arn == plan.arn
        )
        assert plan.in_use == on_instances + pools
        assert 0 <= plan.in_use <= plan.instance_count
        if plan.status == "Active":
            assert plan.available == plan.instance_count - plan.in_use
        else:  # AvailableInstanceCount means usable now: nothing outside an active block
            assert plan.in_use == 0 and plan.available == 0

    def teardown(self):
        if hasattr(self, "root"):
            shutil.rmtree(self.root, ignore_errors=True)


TestPlanTraffic = PlanTraffic.TestCase
TestPlanTraffic.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
