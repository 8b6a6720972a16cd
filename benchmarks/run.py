#!/usr/bin/env python3
"""sagemaker-plans-local benchmarks: throughput against moto and Stubber, warm-pool scaling,
offering searches, SDK fit(), List scaling, the HTTP server against moto's.

Usage::

    python benchmarks/run.py              # full run (a few minutes on 2 cores)
    python benchmarks/run.py --quick      # reduced iterations (smoke test, rough figures)
    python benchmarks/run.py --profile    # also cProfile our describe_training_job path

Targets are printed as PASS/MISS next to the figures; they are never asserted,
and the script exits 0 whatever the figures are.  See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helpers next to this file, also when imported as a module
    sys.path.insert(0, str(HERE))
if importlib.util.find_spec("sagemaker_plans_local") is None:  # not installed: use the checkout
    sys.path.insert(0, str(HERE.parent))

import boto3  # noqa: E402
import botocore  # noqa: E402
from bench_accounts import run_accounts  # noqa: E402
from bench_capacity import run_capacity  # noqa: E402
from bench_durable import run_durable  # noqa: E402
from bench_engine import run_engine  # noqa: E402
from bench_fit import run_fit  # noqa: E402
from bench_lists import run_lists  # noqa: E402
from bench_measure import micros, rate, ratio, table, timed, verdict  # noqa: E402
from bench_multinode import run_multinode  # noqa: E402
from bench_pools import run_pool_latency  # noqa: E402
from bench_profile import run_profile  # noqa: E402
from bench_s3_bodies import run_s3_bodies  # noqa: E402
from bench_search import run_search  # noqa: E402
from bench_server import run_server  # noqa: E402
from bench_simulate import run_simulate  # noqa: E402
from bench_startup import run_startup  # noqa: E402
from bench_train import run_train  # noqa: E402
from bench_workload import LIST_PAGE, OPERATIONS, Moto, Ours, Stubbed  # noqa: E402

#: Targets for describe_training_job throughput (ours / other implementation).
DESCRIBE_VS_MOTO = 10.0
DESCRIBE_VS_STUBBER = 0.4


@dataclass(frozen=True)
class Config:
    name: str
    seeds: int  # jobs behind describe/list (list pages MaxResults=10 over these)
    warmup_calls: int  # unmeasured calls per implementation and operation, then as many to size batches
    batch_seconds: float  # each measured batch is sized to take about this much CPU time
    min_calls: int
    max_calls: int
    repeats: int  # measured batches per implementation and operation
    pools: int  # Available non-matching warm pools for the latency comparison
    probes: int  # timed CreateTrainingJob calls per configuration
    block: int  # probes are interleaved across configurations in blocks of this size
    profile_calls: int
    # gc.freeze() what is alive before each section and the throughput set-up (moto's models,
    # the seed jobs), so the full collections before timed batches skip it (0.15 s each once
    # moto is loaded). Quick only: full runs keep the collector seeing everything, as their
    # published figures were measured.
    freeze_setup: bool = False


FULL = Config(
    "full",
    seeds=100,
    warmup_calls=100,
    batch_seconds=0.4,
    min_calls=50,
    max_calls=50_000,
    repeats=7,
    pools=10_000,
    probes=3_000,
    block=100,
    profile_calls=3_000,
)
QUICK = Config(
    "quick",
    seeds=20,
    warmup_calls=10,
    batch_seconds=0.02,
    min_calls=10,
    max_calls=2_000,
    repeats=2,
    pools=300,
    probes=60,
    block=20,
    profile_calls=200,
    freeze_setup=True,
)


def banner(config: Config) -> str:
    try:
        from importlib.metadata import version

        moto_version = version("moto")
    except Exception:  # moto missing: reported again where it is used
        moto_version = "not installed"
    return (
        f"sagemaker-plans-local benchmarks ({config.name} run) -- python {platform.python_version()}, "
        f"boto3 {boto3.__version__}, botocore {botocore.__version__}, moto {moto_version}, "
        f"{os.cpu_count()} CPUs"
    )


# -- 1. throughput -------------------------------------------------------------


def measure_throughput(implementations, config: Config) -> dict[tuple[str, str], list[float]]:
    """calls/s of every (implementation, operation): ``config.repeats`` batches each.

    Operations run one after the other (describe, list, then create, so list
    sees the seed jobs only); within an operation the implementations take
    turns batch by batch, in a rotating order, so drift in machine load hits
    all of them alike.
    """
    results: dict[tuple[str, str], list[float]] = {}
    order = ("describe_training_job", "list_training_jobs", "create_training_job")
    for op in order:
        sizes = {}
        for impl in implementations:
            impl.prepare(op, config.warmup_calls)()  # warm-up
            probe = config.warmup_calls
            seconds = timed(impl.prepare(op, probe))
            sizes[impl.name] = max(
                config.min_calls, min(config.max_calls, int(probe / seconds * config.batch_seconds))
            )
        for repeat in range(config.repeats):
            turn = repeat % len(implementations)
            for impl in implementations[turn:] + implementations[:turn]:
                n = sizes[impl.name]
                run = impl.prepare(op, n)
                results.setdefault((impl.name, op), []).append(n / timed(run))
    return results


def report_throughput(results, names: list[str], config: Config) -> None:
    best = {key: max(values) for key, values in results.items()}
    median = {key: statistics.median(values) for key, values in results.items()}
    print(
        f"\n1. Throughput (calls per CPU second; best of {config.repeats} batches of ~{config.batch_seconds:g} s; "
        f"list = MaxResults={LIST_PAGE} over {config.seeds} jobs)"
    )
    headers = ["operation", *names]
    others = [name for name in names if name != "ours"]
    headers += [f"ours/{name}" for name in others]
    rows = []
    for op in OPERATIONS:
        row = [op, *(rate(best[(name, op)]) for name in names)]
        for other in others:
            value = best[("ours", op)] / best[(other, op)]
            cell = ratio(value)
            if op == "describe_training_job":
                target = {"moto": DESCRIBE_VS_MOTO, "Stubber": DESCRIBE_VS_STUBBER}.get(other)
                if target is not None:
                    cell += f" {verdict(value >= target)} (>= {target:g}x)"
            row.append(cell)
        rows.append(row)
    print(table(headers, rows))
    print(
        "\n   medians (calls/s): "
        + "; ".join(
            f"{op}: " + ", ".join(f"{name} {rate(median[(name, op)])}" for name in names) for op in OPERATIONS
        )
    )
    for name in names:
        per_call = {op: 1 / best[(name, op)] for op in OPERATIONS}
        print(
            f"   {name:>7} per call (best): "
            + ", ".join(f"{op.split('_')[0]} {micros(per_call[op])} us" for op in OPERATIONS)
        )
    if "Stubber" in names:
        # Stubber does no work of its own beyond botocore's client pipeline, so its
        # per-call time is roughly that pipeline; the rest of ours is our answer.
        op = "describe_training_job"
        ours_us, stub_us = 1e6 / best[("ours", op)], 1e6 / best[("Stubber", op)]
        print(
            f"   describe: botocore client pipeline ~{stub_us:,.1f} us (Stubber), "
            f"our answer adds ~{ours_us - stub_us:,.1f} us "
            f"(request decode/validate, domain, encode, json round trip, botocore parse)"
        )


def run_throughput(config: Config) -> None:
    try:
        from moto import mock_aws
    except ImportError:
        mock_aws = None
        print("\n(moto is not installed: the moto column is skipped; pip install 'moto[sagemaker]')")
    implementations = []
    mock = mock_aws() if mock_aws is not None else None
    if mock is not None:
        # Kept active for the whole section so its state survives; it only
        # answers at before-send, which our and Stubber's clients never reach.
        mock.start()
    try:
        ours = Ours(config.seeds)
        implementations.append(ours)
        if mock is not None:
            implementations.append(Moto(config.seeds))
        implementations.append(Stubbed(ours))
        if config.freeze_setup:
            gc.collect()
            gc.freeze()
        results = measure_throughput(implementations, config)
    finally:
        if config.freeze_setup:
            gc.unfreeze()
        for impl in implementations:
            impl.close()
        if mock is not None:
            mock.stop()
    report_throughput(results, [impl.name for impl in implementations], config)


#: Each section's ``--skip-<name>`` flag and what it skips.
SECTIONS = (
    ("throughput", "section 1 (throughput against moto and Stubber)"),
    ("pools", "section 2 (CreateTrainingJob latency with many warm pools)"),
    ("search", "section 3 (SearchTrainingPlanOfferings vs describe_training_job)"),
    ("fit", "section 4 (SDK fit() vs the script by hand and moto; cold vs warm start)"),
    ("lists", "section 5 (ListTrainingJobs page and walk cost as jobs pile up)"),
    ("train", "section 6 (SDK v3 ModelTrainer.train() vs the script by hand)"),
    ("capacity", "section 7 (capacity inventory add and sell cost as blocks pile up)"),
    ("startup", "section 8 (first client in a fresh process; the README's Estimator().fit())"),
    ("server", "section 9 (describe_training_job over HTTP: our server vs moto's ThreadedMotoServer)"),
    ("durable", "section 10 (in-process calls on a durable root vs an ephemeral backend; reopening a root)"),
    ("s3-bodies", "section 11 (S3 request bodies over HTTP: server peak RSS; the raw HTTP fuzz)"),
    ("multinode", "section 12 (multi-instance jobs: start-up of 2 and 8 instances vs 1; peak RSS of 8)"),
    ("simulate", "section 13 (the what-if simulator: 10,000 and 100,000 jobs, a sweep of 8 policies)"),
    ("engine", "section 14 (the engine at scale: 30 days of jobs, create and list vs Stubber, close)"),
    ("accounts", "section 15 (10,000 accounts touched once over HTTP: the server's RSS before, peak, idle)"),
)


def section_runs(config: Config, quick: bool, engine_100k: bool = False) -> dict[str, Callable[[], None]]:
    """Each section's run (by its ``SECTIONS`` name), sized for ``config``; ``quick`` shrinks sizes and repeats."""
    engine_sizes = (500,) if quick else (1_000, 10_000, 50_000) + ((100_000,) if engine_100k else ())
    return {
        "throughput": lambda: run_throughput(config),
        "pools": lambda: run_pool_latency(config.pools, config.probes, config.block),
        "search": lambda: run_search(calls=200 if quick else 2_000, repeats=2 if quick else 5),
        "fit": lambda: run_fit(
            fits=1 if quick else 6,
            splits=1 if quick else 3,
            moto_waits=0 if quick else 3,
            moto_submits=1 if quick else 5,
            pairs=1 if quick else 3,
            what_ifs=0 if quick else 3,
        ),
        "lists": lambda: run_lists(
            small=200, large=1_000 if quick else 20_000, calls=5 if quick else 50, repeats=2 if quick else 7
        ),
        "train": lambda: run_train(trains=1 if quick else 6),
        "capacity": lambda: run_capacity(
            sizes=(300, 3_000) if quick else (300, 3_000, 10_000), repeats=1 if quick else 5
        ),
        "startup": lambda: run_startup(repeats=1 if quick else 9, later_fits=1 if quick else 6),
        "server": lambda: run_server(calls=20 if quick else 1_000, repeats=2 if quick else 7),
        "durable": lambda: run_durable(
            calls=40 if quick else 2_000,
            repeats=2 if quick else 7,
            histories=((100, 0), (100, 900))
            if quick
            else ((1_000, 0), (10_000, 0), (30_000, 0), (1_000, 99_000)),
        ),
        "s3-bodies": lambda: run_s3_bodies(
            requests=20_000 if quick else 200_000, raw=300 if quick else 3_000
        ),
        "multinode": lambda: run_multinode(repeats=1 if quick else 5),
        "simulate": lambda: run_simulate(
            sizes=(200, 600) if quick else (10_000, 100_000), sweep_jobs=40 if quick else 1_000
        ),
        "engine": lambda: run_engine(
            engine_sizes,
            (500,) if quick else (10_000, 61_000),
            calls=20 if quick else 200,
            repeats=2 if quick else 7,
        ),
        "accounts": lambda: run_accounts(count=200 if quick else 10_000, with_state=100 if quick else 2_000),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="reduced iterations and pools (a smoke test, figures are rough)"
    )
    parser.add_argument(
        "--pools",
        type=int,
        default=None,
        help="Available warm pools for the latency comparison "
        f"(default {FULL.pools:,}; {QUICK.pools:,} with --quick)",
    )
    parser.add_argument(
        "--profile",
        nargs="?",
        const="describe_training_job",
        choices=OPERATIONS,
        metavar="OPERATION",
        help="also cProfile our client on OPERATION (default describe_training_job)",
    )
    parser.add_argument(
        "--engine-100k", action="store_true", help="section 14 also at 100,000 jobs (about two minutes more)"
    )
    for name, what in SECTIONS:
        parser.add_argument(f"--skip-{name}", action="store_true", help=f"skip {what}")
    args = parser.parse_args(argv)
    config = QUICK if args.quick else FULL
    if args.pools is not None:
        config = Config(**{**config.__dict__, "pools": max(1, args.pools)})

    started = time.perf_counter()
    print(banner(config))
    runs = section_runs(config, args.quick, args.engine_100k)
    for name, _ in SECTIONS:
        if not getattr(args, f"skip_{name.replace('-', '_')}"):
            if config.freeze_setup:  # what earlier sections left alive is out of the collector's way
                gc.collect()
                gc.freeze()
            runs[name]()
    if args.profile:
        run_profile(config.seeds, config.warmup_calls, config.profile_calls, args.profile)
    print(f"\nTargets are reported, not enforced. Total time {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
