"""--profile: cProfile of one operation on our client, split into the stages of a boto3 call."""

from __future__ import annotations

import cProfile
import pstats

from bench_measure import micros, table
from bench_workload import Ours

#: (label, function, caller): cumulative time of ``function`` -- as called from
#: ``caller`` when one is given -- per call.  Functions are (path suffix, name).
STAGES = [
    ("boto3 client call, total", ("botocore/client.py", "_api_call"), None),
    ("  botocore: validate + serialize request", ("botocore/client.py", "_convert_to_request_dict"), None),
    ("  ours: ServiceHook.__call__", ("sagemaker_plans_local/transport/service_hook.py", "__call__"), None),
    ("    JsonService._answer", ("sagemaker_plans_local/protocol/service.py", "_answer"), None),
    ("      read_request (JSON)", ("sagemaker_plans_local/protocol/json_wire.py", "read_request"), None),
    ("      validate (model)", ("sagemaker_plans_local/protocol/validation.py", "violations"), None),
    ("      clock.catch_up", ("sagemaker_plans_local/core/clock.py", "catch_up"), None),
    ("      handler (domain + response dict)", None, None),  # filled in per operation
    ("      encode_output", ("sagemaker_plans_local/protocol/json_wire.py", "encode_output"), None),
    (
        "    compiled decode of the answer",
        ("sagemaker_plans_local/transport/service_hook.py", "_decoded"),
        None,
    ),
    (
        "    botocore parser.parse (errors only)",
        ("botocore/parsers.py", "parse"),
        ("sagemaker_plans_local/transport/service_hook.py", "_response"),
    ),
]


def _find(stats: dict, function) -> list:
    suffix, name = function
    return [key for key in stats if key[2] == name and key[0].replace("\\", "/").endswith(suffix)]


def _cumulative(stats: dict, function, caller) -> float | None:
    total, found = 0.0, False
    for key in _find(stats, function):
        if caller is None:
            total += stats[key][3]
            found = True
            continue
        for caller_key in _find(stats, caller):
            edge = stats[key][4].get(caller_key)
            if edge is not None:
                total += edge[3]
                found = True
    return total if found else None


def run_profile(seeds: int, warmup_calls: int, profile_calls: int, op: str) -> None:
    """cProfile ``profile_calls`` calls of ``op`` on our client: a stage table, then top functions."""
    ours = Ours(seeds)
    try:
        ours.prepare(op, warmup_calls)()
        run = ours.prepare(op, profile_calls)
        profiler = cProfile.Profile()
        profiler.enable()
        run()
        profiler.disable()
    finally:
        ours.close()
    n = profile_calls
    stats = pstats.Stats(profiler).stats
    print(
        f"\n--profile: cProfile of our {op}, {n:,} calls (times per call in microseconds, "
        "inflated by the profiler; read the proportions)"
    )
    total = _cumulative(stats, STAGES[0][1], None) or 1e-12
    handler = ("sagemaker_plans_local/services/sagemaker/api/training_jobs.py", op)
    rows = []
    for label, function, caller in STAGES:
        value = _cumulative(stats, function or handler, caller)
        rows.append(
            [
                label,
                "-" if value is None else micros(value / n),
                "-" if value is None else f"{100 * value / total:.0f}%",
            ]
        )
    print(table(["stage", "us/call", "share"], rows, right=[False, True, True]))

    def listing(keys, sort_index: int, limit: int) -> None:
        ordered = sorted(keys, key=lambda key: stats[key][sort_index], reverse=True)[:limit]
        rows = []
        for key in ordered:
            calls, _, tottime, cumtime, _ = stats[key]
            path = key[0].replace("\\", "/")
            where = (
                path.split("sagemaker_plans_local/", 1)[-1]
                if "sagemaker_plans_local/" in path
                else "/".join(path.split("/")[-2:])
            )
            rows.append(
                [f"{where}:{key[1]}({key[2]})", f"{calls / n:.1f}", micros(tottime / n), micros(cumtime / n)]
            )
        print(table(["function", "calls/op", "self us", "cum us"], rows))

    ours_keys = [key for key in stats if "sagemaker_plans_local" in key[0].replace("\\", "/")]
    print("\n   top functions inside sagemaker_plans_local by cumulative time:")
    listing(ours_keys, 3, 20)
    print("\n   top functions anywhere by self time:")
    listing(list(stats), 2, 15)
