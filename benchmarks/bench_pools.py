"""Section 2: CreateTrainingJob latency with many Available non-matching warm pools vs none.

Three backends built through boto3 (fresh; ``pools`` jobs with an Available pool each; a
control with as many jobs and no pools) take timed CreateTrainingJob probes in turns, block by
block, in CPU time with the collector off.
"""

from __future__ import annotations

import gc
import time

from bench_measure import Latencies, micros, ratio, table, verdict
from bench_workload import START, job_request

#: Target for CreateTrainingJob latency with many non-matching Available pools vs none.
POOL_LATENCY_RATIO = 1.3


def build_backend(jobs: int, keep_alive: int):
    """A backend with ``jobs`` Completed jobs, each on its own RoleArn (so no two match).

    With ``keep_alive`` every job leaves an Available warm pool; without, none.
    Everything goes through the public boto3 client and clock.
    """
    from sagemaker_plans_local import LocalBackend

    backend = LocalBackend(start_time=START)
    backend.settings.instance_quota = None  # a load test holds more instances than any account quota
    client = backend.client()
    names = [f"pool-{i:05d}" for i in range(jobs)]
    started = time.perf_counter()
    for name in names:
        client.create_training_job(**job_request(name, role=name, keep_alive=keep_alive))
    created = time.perf_counter() - started
    started = time.perf_counter()
    backend.clock.advance(900)  # cold start 180 s + runtime 600 s: all Completed
    advanced = time.perf_counter() - started
    for name in sorted({names[0], names[len(names) // 2], names[-1]}) if names else ():
        described = client.describe_training_job(TrainingJobName=name)
        pool = (described.get("WarmPoolStatus") or {}).get("Status")
        expected = "Available" if keep_alive else None
        if described["TrainingJobStatus"] != "Completed" or pool != expected:
            raise RuntimeError(
                f"{name}: {described['TrainingJobStatus']}, warm pool {pool}; "
                f"expected Completed, warm pool {expected}"
            )
    return backend, client, names, created, advanced


class Probes:
    """Distinct CreateTrainingJob requests whose RoleArn matches no pool."""

    def __init__(self) -> None:
        self.count = 0

    def next(self, count: int) -> list[dict]:
        start, self.count = self.count, self.count + count
        return [job_request(f"probe-{start + i:06d}", role="probe", keep_alive=3600) for i in range(count)]


def probe_latencies(configurations: list, probes: int, block: int) -> dict[str, Latencies]:
    """``probes`` timed creates per configuration, in turns by blocks of ``block``, after a warm-up block."""
    latencies = {label: Latencies() for label, _, _ in configurations}
    requests = Probes()
    for _, _, client in configurations:  # warm-up, unmeasured
        for request in requests.next(block):
            client.create_training_job(**request)
    # A full (generation-2) collection scans every live object in the process,
    # i.e. all three backends at once (~0.3 s with 20,000 jobs alive), and
    # lands on whichever configuration happens to be running.  As timeit does,
    # keep the collector off while timing, so the figures are the calls' own cost.
    gc.collect()
    gc.disable()
    try:
        clock = time.process_time  # CPU time: other processes on the machine do not count
        for number in range(probes // block):
            turn = number % len(configurations)
            for label, _, client in configurations[turn:] + configurations[:turn]:
                create, record = client.create_training_job, latencies[label].record
                for request in requests.next(block):
                    started = clock()
                    create(**request)
                    record(clock() - started)
    finally:
        gc.enable()
    return latencies


def report(configurations: list, latencies: dict[str, Latencies], block: int) -> None:
    summaries = {label: latencies[label].summary() for label, _, _ in configurations}
    probes = len(latencies[configurations[0][0]].values)
    print(
        f"   {probes:,} timed calls per configuration (distinct names, RoleArn matching no pool; "
        f"interleaved in blocks of {block}; garbage collector off while timing); "
        "latency in microseconds"
    )
    rows = [
        [label, *(micros(s[stat]) for stat in ("mean", "median", "p90", "p99", "max"))]
        for label, s in summaries.items()
    ]
    print(table(["configuration", "mean", "median", "p90", "p99", "max"], rows))
    fresh, pools, control = (summaries[label] for label, _, _ in configurations)
    for stat in ("median", "mean"):
        value = pools[stat] / fresh[stat]
        print(
            f"   {stat:>6} ratio pools/fresh: {ratio(value)}  "
            f"{verdict(value <= POOL_LATENCY_RATIO)} (target within {POOL_LATENCY_RATIO:g}x)"
            f"   [control/fresh {ratio(control[stat] / fresh[stat])}, "
            f"pools/control {ratio(pools[stat] / control[stat])}]"
        )


def run_pool_latency(pools: int, probes: int, block: int) -> None:
    n = pools
    print(f"\n2. CreateTrainingJob latency with {n:,} Available non-matching warm pools vs none")
    configurations = []  # (label, backend, client)
    try:
        backend, client, _, _, _ = build_backend(0, keep_alive=0)
        configurations.append(("fresh: no jobs, no pools", backend, client))
        backend, client, pool_names, created, advanced = build_backend(n, keep_alive=3600)
        configurations.append((f"{n:,} jobs, {n:,} Available pools", backend, client))
        print(
            f"   built {n:,} pools through boto3: {created:.1f} s of CreateTrainingJob "
            f"({n / created:,.0f}/s), {advanced:.2f} s of clock.advance(900); sampled "
            "describe: WarmPoolStatus Available"
        )
        backend, client, _, created, _ = build_backend(n, keep_alive=0)
        configurations.append((f"control: {n:,} jobs, no pools", backend, client))
        latencies = probe_latencies(configurations, probes, block)
        # The probes must not have claimed any pool (their RoleArn matches none).
        loaded = configurations[1][2]
        reused = loaded.list_training_jobs(WarmPoolStatusEquals="Reused", MaxResults=1)
        sample = loaded.describe_training_job(TrainingJobName=pool_names[0])["WarmPoolStatus"]["Status"]
        if reused["TrainingJobSummaries"] or sample != "Available":
            raise RuntimeError("a probe job claimed a warm pool it should not match")
        report(configurations, latencies, block)
    finally:
        for _, backend, _ in configurations:
            backend.close()
