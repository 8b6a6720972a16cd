import threading
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import (
    Handover,
    PoolEnded,
    PoolKept,
    WarmPools,
    match_key,
)

from .conftest import START, job_spec

RUN = 180 + 600  # cold start + default runtime


def finish(emulation, seconds=RUN):
    emulation.clock.advance(seconds)


def test_seed_flow(emulation, jobs):
    first = jobs.create(job_spec("my-training-job-1"))
    finish(emulation)
    assert first.warm_pool.status == "Available"
    emulation.clock.advance(1000)
    second = jobs.create(job_spec("my-training-job-2"))
    assert (first.warm_pool.status, first.warm_pool.reused_by) == ("Reused", "my-training-job-2")
    assert first.warm_pool.retained_seconds == 1000
    assert second.warm_pool.status == "InUse" and second.warm_start
    emulation.clock.advance(emulation.settings.warm_start_seconds)
    assert second.training_start - second.created_at == timedelta(seconds=10)
    finish(emulation, 600)
    assert second.warm_pool.status == "Available"
    jobs.update_keep_alive("my-training-job-2", 3600)
    emulation.clock.advance(1800)
    assert second.warm_pool.status == "Available"  # the new keep-alive counts from the end
    jobs.update_keep_alive("my-training-job-2", 0)
    assert (second.warm_pool.status, second.warm_pool.retained_seconds) == ("Terminated", 1800)


def test_keep_alive_runs_out(emulation, jobs):
    job = jobs.create(job_spec("j", keep_alive=600))
    finish(emulation)
    emulation.clock.advance(599)
    assert job.warm_pool.status == "Available"
    emulation.clock.advance(1)
    assert (job.warm_pool.status, job.warm_pool.retained_seconds) == ("Terminated", 600)


def test_persistent_cache_is_shared_by_the_chain_and_deleted_with_the_pool(emulation, jobs):
    first = jobs.create(job_spec("a"))
    assert first.cache_dir is None  # made when the job starts
    emulation.clock.advance(180)
    cache = first.cache_dir
    assert cache.is_dir()
    (cache / "pip").mkdir()
    finish(emulation, 600)
    second = jobs.create(job_spec("b"))
    assert second.cache_dir == cache and (cache / "pip").is_dir()
    finish(emulation, 610)
    jobs.update_keep_alive("b", 0)
    assert not cache.exists() and second.cache_dir is None


def test_a_chain_of_simulated_jobs_makes_no_directory_until_its_cache_is_asked_for(emulation, jobs, tmp_path):
    first = jobs.create(job_spec("a"))
    finish(emulation)
    second = jobs.create(job_spec("b"))  # takes a's pool
    finish(emulation, 610)
    assert second.pool is first.pool and second.warm_pool.status == "Available"
    assert not any(path.is_dir() for path in tmp_path.rglob("wp-*"))  # nothing on disk
    cache = second.cache_dir
    assert cache.is_dir() and cache.name == second.pool.pool_id
    jobs.update_keep_alive("b", 0)
    assert not cache.exists() and second.pool.cache_dir == cache and not cache.exists()  # not remade


def test_jobs_without_keep_alive_get_no_cache(emulation, jobs):
    job = jobs.create(job_spec("plain", keep_alive=None))
    emulation.clock.advance(200)
    assert job.cache_dir is None


def test_earliest_available_pool_wins_and_each_pool_is_reused_once(emulation, jobs):
    a = jobs.create(job_spec("a"))
    emulation.clock.advance(10)
    b = jobs.create(job_spec("b"))
    finish(emulation)
    assert a.warm_pool.status == b.warm_pool.status == "Available"
    c = jobs.create(job_spec("c"))
    d = jobs.create(job_spec("d"))
    e = jobs.create(job_spec("e"))
    assert a.warm_pool.reused_by == "c" and b.warm_pool.reused_by == "d"
    assert (c.warm_start, d.warm_start, e.warm_start) == (True, True, False)
    assert e.warm_pool is None


@pytest.mark.parametrize(
    "change",
    [
        {"RoleArn": "arn:aws:iam::123456789012:role/other"},
        {"EnableNetworkIsolation": True},
        {"EnableInterContainerTrafficEncryption": True},
        {"VpcConfig": {"SecurityGroupIds": ["sg-1"], "Subnets": ["subnet-1"]}},
        {"SessionChainingConfig": {"EnableSessionTagChaining": True}},
        {
            "ResourceConfig": {
                "InstanceType": "ml.g4dn.xlarge",
                "InstanceCount": 2,
                "VolumeSizeInGB": 250,
                "KeepAlivePeriodInSeconds": 1800,
            }
        },
        {
            "ResourceConfig": {
                "InstanceType": "ml.g5.xlarge",
                "InstanceCount": 1,
                "VolumeSizeInGB": 250,
                "KeepAlivePeriodInSeconds": 1800,
            }
        },
        {
            "ResourceConfig": {
                "InstanceType": "ml.g4dn.xlarge",
                "InstanceCount": 1,
                "VolumeSizeInGB": 100,
                "KeepAlivePeriodInSeconds": 1800,
            }
        },
        {
            "ResourceConfig": {
                "InstanceType": "ml.g4dn.xlarge",
                "InstanceCount": 1,
                "VolumeSizeInGB": 250,
                "VolumeKmsKeyId": "key",
                "KeepAlivePeriodInSeconds": 1800,
            }
        },
    ],
)
def test_any_difference_in_the_criteria_prevents_a_match(emulation, jobs, change):
    jobs.create(job_spec("a"))
    finish(emulation)
    other = jobs.create(job_spec("b", **change))
    assert not other.warm_start


def test_hyperparameters_and_image_do_not_matter(emulation, jobs):
    jobs.create(job_spec("a", HyperParameters={"epochs": "1"}))
    finish(emulation)
    other = jobs.create(
        job_spec(
            "b",
            HyperParameters={"epochs": "2"},
            AlgorithmSpecification={"TrainingImage": "other", "TrainingInputMode": "Pipe"},
        )
    )
    assert other.warm_start


@given(st.permutations(["sg-1", "sg-2", "sg-3"]), st.permutations(["s-1", "s-2"]))
def test_security_group_and_subnet_order_does_not_matter(groups, subnets):
    base = job_spec("a", VpcConfig={"SecurityGroupIds": ["sg-1", "sg-2", "sg-3"], "Subnets": ["s-1", "s-2"]})
    other = job_spec("b", VpcConfig={"SecurityGroupIds": list(groups), "Subnets": list(subnets)})
    assert match_key(base) == match_key(other)


def test_chain_ends_after_28_days(emulation, jobs):
    emulation.settings.max_keep_alive_seconds = 21600
    emulation.settings.job_runtime_seconds = 20000
    index = 0
    job = jobs.create(job_spec(f"j{index}", keep_alive=21600))
    emulation.clock.advance(180 + 20000)
    first_end = job.ended_at
    while job.warm_pool.status == "Available":
        index += 1
        job = jobs.create(job_spec(f"j{index}", keep_alive=21600))
        emulation.clock.advance(10 + 20000)
    assert job.warm_pool.status == "Terminated"
    assert job.ended_at - first_end >= timedelta(days=28)
    assert job.ended_at - first_end < timedelta(days=28, seconds=20010)


def test_warm_pool_quota(emulation, jobs):
    emulation.settings.warm_pool_quota = {"ml.g4dn.xlarge": 1}
    a = jobs.create(job_spec("a"))
    b = jobs.create(job_spec("b", RoleArn="arn:aws:iam::123456789012:role/b"))
    finish(emulation)
    assert a.warm_pool.status == "Available"
    assert (b.warm_pool.status, b.warm_pool.retained_seconds) == ("Terminated", 0)
    emulation.settings.warm_pool_quota = 0
    c = jobs.create(job_spec("c", RoleArn="arn:aws:iam::123456789012:role/c"))
    finish(emulation)
    assert c.warm_pool.status == "Terminated"


def test_a_reusing_job_without_keep_alive_ends_the_chain(emulation, jobs):
    jobs.create(job_spec("a"))
    finish(emulation)
    b = jobs.create(job_spec("b", keep_alive=0))
    assert b.warm_pool.status == "InUse"
    finish(emulation, 700)
    assert (b.warm_pool.status, b.warm_pool.retained_seconds) == ("Terminated", 0)


def test_update_keep_alive_needs_an_available_pool(emulation, jobs):
    jobs.create(job_spec("a"))
    with pytest.raises(InvalidRequest, match="has finished"):
        jobs.update_keep_alive("a", 100)
    finish(emulation)
    jobs.create(job_spec("b"))
    with pytest.raises(InvalidRequest, match="warm pool status of training job a is Reused"):
        jobs.update_keep_alive("a", 100)


def test_update_shorter_than_elapsed_terminates_now(emulation, jobs):
    job = jobs.create(job_spec("a"))
    finish(emulation)
    emulation.clock.advance(500)
    jobs.update_keep_alive("a", 100)
    assert (job.warm_pool.status, job.warm_pool.retained_seconds) == ("Terminated", 500)


def test_matching_at_scale_uses_the_index(emulation, jobs):
    for i in range(200):
        jobs.create(job_spec(f"n{i}", RoleArn=f"arn:aws:iam::123456789012:role/r{i}"))
    finish(emulation)
    assert len(jobs.pools.available_pools()) == 200
    assert jobs.create(job_spec("m", RoleArn="arn:aws:iam::123456789012:role/r150")).warm_start


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=2, max_value=6))
def test_concurrent_matching_jobs_reuse_one_pool_once(tmp_path_factory, threads):
    from datetime import datetime, timezone

    from sagemaker_plans_local.emulation import Emulation

    emulation = Emulation(
        "123456789012", tmp_path_factory.mktemp("c"), datetime(2026, 1, 1, tzinfo=timezone.utc)
    )
    jobs = emulation.region("us-east-1").training_jobs
    jobs.create(job_spec("seed"))
    emulation.clock.advance(RUN)
    barrier = threading.Barrier(threads)

    def create(i):
        barrier.wait()
        with emulation.lock:
            jobs.create(job_spec(f"t{i}"))

    workers = [threading.Thread(target=create, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sum(jobs.get(f"t{i}").warm_start for i in range(threads)) == 1


def test_warm_pools_return_what_changed_and_leave_jobs_and_clock_alone(tmp_path):
    pools = WarmPools(Settings(), tmp_path)
    spec = job_spec("first")
    pool = pools.open("first", spec, None)
    assert pool.cache_dir.is_dir() and pool.holder == "first"
    kept = pools.release(pool, 1800, START, keep=True)
    assert kept == PoolKept(pool, START + timedelta(seconds=1800))
    assert pools.find_match(spec) is pool and pools.idle("ml.g4dn.xlarge") == 1
    assert pools.claim(pool, "second", START + timedelta(seconds=100)) == Handover("first", 100)
    assert pool.holder == "second" and pools.find_match(spec) is None and pools.idle("ml.g4dn.xlarge") == 0
    ended = pools.release(pool, 1800, START + timedelta(seconds=900), keep=False)
    assert ended == PoolEnded(pool, START + timedelta(seconds=900))
    assert pool.state == "Terminated" and not pool.cache_dir.exists()
    assert pools.terminate(pool, START + timedelta(seconds=901)) is None  # already ended
