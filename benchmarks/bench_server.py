"""Section 9: describe_training_job over HTTP, our server against moto's server mode.

Both servers run in this process on a thread of their own (ours:
``sagemaker_plans_local.server.runner.LocalServer``; moto's: ``ThreadedMotoServer``),
bound to 127.0.0.1 on a free port, each with the same ``seeds`` training jobs.
The clients are the same: boto3 SageMaker clients with ``endpoint_url``, fake
keys, one attempt, the same botocore. Batches of ``calls`` describes take turns
(ours, moto, ours, ...); the table gives the best batch's calls per second by
CPU time (client and server are both in this process, so both are counted, as
in section 1) and by wall time, and ours/moto.
"""

from __future__ import annotations

import logging
import socket
import time

import boto3
from bench_measure import rate, ratio, table, timed
from bench_workload import FAKE_CREDENTIALS, REGION, START, job_request, seed_names
from botocore.config import Config

CLIENT_CONFIG = Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=30)


def client(url: str):
    """A SageMaker client of ``url``, as both servers get it."""
    return boto3.client(
        "sagemaker", region_name=REGION, endpoint_url=url, config=CLIENT_CONFIG, **FAKE_CREDENTIALS
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Served:
    """One server with its seeded client: ``describes(n)`` is the timed thunk."""

    def __init__(self, name: str, url: str, seeds: int, stop) -> None:
        self.name = name
        self.client = client(url)
        self.seeds = seed_names(seeds)
        self.stop = stop
        for job in self.seeds:
            self.client.create_training_job(**job_request(job))

    def describes(self, n: int):
        describe = self.client.describe_training_job
        names = [self.seeds[i % len(self.seeds)] for i in range(n)]

        def run() -> None:
            for job in names:
                describe(TrainingJobName=job)

        return run


def ours(seeds: int) -> _Served:
    from sagemaker_plans_local.server.runner import LocalServer

    server = LocalServer(start_time=START).start()
    server.backend().settings.instance_quota = None
    return _Served("ours", server.url, seeds, server.stop)


def moto(seeds: int) -> _Served | None:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        return None
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return _Served("moto", f"http://127.0.0.1:{port}", seeds, server.stop)


def _best(served: list[_Served], calls: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Per server: the best (CPU calls/s, wall calls/s) over ``repeats`` batches, in turns."""
    best: dict[str, tuple[float, float]] = {s.name: (0.0, 0.0) for s in served}
    for s in served:
        s.describes(max(5, calls // 10))()  # warm-up: connections, caches
    for repeat in range(repeats):
        turn = repeat % len(served)
        for s in served[turn:] + served[:turn]:
            run = s.describes(calls)
            started = time.perf_counter()
            cpu = timed(run)
            wall = time.perf_counter() - started
            cpu_best, wall_best = best[s.name]
            best[s.name] = (max(cpu_best, calls / cpu), max(wall_best, calls / wall))
    return best


def run_server(calls: int, repeats: int, seeds: int = 20) -> None:
    print(
        f"\n9. describe_training_job over HTTP: our server vs moto's ThreadedMotoServer "
        f"(best of {repeats} batches of {calls} calls; {seeds} jobs each; client and server in this process)"
    )
    werkzeug_log = logging.getLogger("werkzeug")  # moto's server logs every request line
    level = werkzeug_log.level
    werkzeug_log.setLevel(logging.WARNING)
    served = [ours(seeds)]
    other = moto(seeds)
    if other is None:
        print("   (moto's server mode is not installed here: pip install 'moto[server]'; our server alone)")
    else:
        served.append(other)
    try:
        best = _best(served, calls, repeats)
    finally:
        for s in served:
            s.stop()
        werkzeug_log.setLevel(level)
    rows = [[s.name, rate(best[s.name][0]), rate(best[s.name][1])] for s in served]
    print(table(["server", "calls/CPU s", "calls/wall s"], rows))
    if other is not None:
        cpu = best["ours"][0] / best["moto"][0]
        wall = best["ours"][1] / best["moto"][1]
        print(f"   ours/moto: {ratio(cpu)} by CPU time, {ratio(wall)} by wall time")
