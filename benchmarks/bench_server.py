"""Section 9: describe_training_job over HTTP: our server, moto's server mode, a bare HTTP server.

Three servers run in this process on threads of their own, bound to 127.0.0.1 on a free port:
ours (``sagemaker_plans_local.server.runner.LocalServer``), moto's (``ThreadedMotoServer``), each
with the same ``seeds`` training jobs, and a bare keep-alive ``http.server`` (HTTP/1.1,
``ThreadingHTTPServer``) answering every request with one fixed body: our own answer to a
describe, so that the clients parse the same bytes. The clients are the same: boto3 SageMaker
clients with ``endpoint_url``, fake keys, one attempt, the same botocore (keep-alive: botocore
reuses its connections when the server lets it). Batches of ``calls`` describes take turns
(ours, moto, bare, ...), sequential (one client) and from 8 threads (a client each, ``calls``
in all); the table gives the best batch's calls per second by CPU time (client and server are
both in this process, so both are counted, as in section 1) and by wall time. Goal: ours at
least 0.8x the bare server by wall time, sequential and with 8 threads (PASS/MISS).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
from bench_measure import rate, ratio, table, timed, verdict
from bench_workload import FAKE_CREDENTIALS, REGION, START, job_request, seed_names
from botocore.config import Config

CLIENT_CONFIG = Config(
    retries={"max_attempts": 1}, connect_timeout=5, read_timeout=30, max_pool_connections=16
)
THREADS = 8
GOAL = 0.8


def client(url: str):
    """A SageMaker client of ``url``, as every server gets it."""
    return boto3.client(
        "sagemaker", region_name=REGION, endpoint_url=url, config=CLIENT_CONFIG, **FAKE_CREDENTIALS
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Served:
    """One server with its clients (seeded unless ``seeds`` is empty): ``describes(n, threads)``."""

    def __init__(self, name: str, url: str, seeds: list[str], stop) -> None:
        self.name = name
        self.seeds = seeds or ["any"]
        self.stop = stop
        self.clients = [client(url) for _ in range(THREADS)]
        for job in seeds:
            self.clients[0].create_training_job(**job_request(job))

    def describes(self, n: int, threads: int = 1):
        """The timed thunk: ``n`` describes in all, from ``threads`` threads (a client each)."""
        names = [self.seeds[i % len(self.seeds)] for i in range(n)]
        shares = [names[i::threads] for i in range(threads)]

        def share(describe, mine: list[str]) -> None:
            for job in mine:
                describe(TrainingJobName=job)

        def run() -> None:
            if threads == 1:
                return share(self.clients[0].describe_training_job, names)
            workers = [
                threading.Thread(target=share, args=(c.describe_training_job, mine))
                for c, mine in zip(self.clients, shares)
            ]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()

        return run


def ours(seeds: int) -> tuple[_Served, bytes]:
    """Our server, and the bytes of its answer to a describe (the bare server's fixed body)."""
    from sagemaker_plans_local.server.runner import LocalServer

    server = LocalServer(start_time=START).start()
    server.backend().settings.instance_quota = None
    served = _Served("ours", server.url, seed_names(seeds), server.stop)
    body = bytearray()
    capture = lambda http_response, **_: body.extend(http_response.content)  # noqa: E731
    events = served.clients[0].meta.events
    events.register("after-call.sagemaker.DescribeTrainingJob", capture)
    served.clients[0].describe_training_job(TrainingJobName=served.seeds[0])
    events.unregister("after-call.sagemaker.DescribeTrainingJob", capture)
    return served, bytes(body)


def moto(seeds: int) -> _Served | None:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        return None
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return _Served("moto", f"http://127.0.0.1:{port}", seed_names(seeds), server.stop)


def bare(body: bytes) -> _Served:
    """A bare HTTP/1.1 keep-alive ``ThreadingHTTPServer`` answering ``body`` to every request."""

    class Fixed(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no delayed-ACK stall

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Fixed)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return _Served("bare", f"http://127.0.0.1:{server.server_port}", [], stop)


Best = dict[tuple[str, int], tuple[float, float]]


def _best(served: list[_Served], calls: int, repeats: int) -> Best:
    """Per (server, threads): the best (CPU calls/s, wall calls/s) over ``repeats`` batches, in turns."""
    best: Best = {}
    for threads in (1, THREADS):
        for s in served:
            s.describes(max(THREADS, calls // 10), threads)()  # warm-up: connections, caches
            best[s.name, threads] = (0.0, 0.0)
        for repeat in range(repeats):
            turn = repeat % len(served)
            for s in served[turn:] + served[:turn]:
                run = s.describes(calls, threads)
                started = time.perf_counter()
                cpu = timed(run)
                wall = time.perf_counter() - started
                cpu_best, wall_best = best[s.name, threads]
                best[s.name, threads] = (max(cpu_best, calls / cpu), max(wall_best, calls / wall))
    return best


def _servers(seeds: int) -> list[_Served]:
    mine, body = ours(seeds)
    served = [mine]
    other = moto(seeds)
    if other is None:
        print("   (moto's server mode is not installed here: pip install 'moto[server]'; no moto row)")
    else:
        served.append(other)
    served.append(bare(body))
    return served


def _report(served: list[_Served], best: Best) -> None:
    names = [s.name for s in served]
    rows = []
    for threads in (1, THREADS):
        for name in names:
            cpu, wall = best[name, threads]
            mode = "sequential" if threads == 1 else f"{threads} threads"
            rows.append([name, mode, rate(cpu), rate(wall)])
    print(table(["server", "clients", "calls/CPU s", "calls/wall s"], rows))
    for threads in (1, THREADS):
        mode = "sequential" if threads == 1 else f"{threads} threads"
        ours_cpu, ours_wall = best["ours", threads]
        line = [f"   {mode}:"]
        if "moto" in names:
            moto_cpu, moto_wall = best["moto", threads]
            line.append(f"ours/moto {ratio(ours_cpu / moto_cpu)} CPU, {ratio(ours_wall / moto_wall)} wall;")
        bare_cpu, bare_wall = best["bare", threads]
        wall_ratio = ours_wall / bare_wall
        line.append(f"ours/bare {ratio(ours_cpu / bare_cpu)} CPU, {ratio(wall_ratio)} wall")
        line.append(f"(goal >= {GOAL}x by wall time: {verdict(wall_ratio >= GOAL)})")
        print(" ".join(line))


def run_server(calls: int, repeats: int, seeds: int = 20) -> None:
    print(
        f"\n9. describe_training_job over HTTP: our server vs moto's ThreadedMotoServer vs a bare "
        f"keep-alive http.server with a fixed body (best of {repeats} batches of {calls} calls, "
        f"sequential and from {THREADS} threads; {seeds} jobs each; client and server in this process)"
    )
    werkzeug_log = logging.getLogger("werkzeug")  # moto's server logs every request line
    level = werkzeug_log.level
    werkzeug_log.setLevel(logging.WARNING)
    served = _servers(seeds)
    try:
        best = _best(served, calls, repeats)
    finally:
        for s in served:
            s.stop()
        werkzeug_log.setLevel(level)
    _report(served, best)
