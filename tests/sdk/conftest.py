"""tests/sdk runs under both SDK majors; the Estimator (v2-only) modules are collected under v2 only."""

from sagemaker_plans_local.sdk.major import sdk_major

V2_ONLY = [
    "test_distributed_v2.py",
    "test_fit.py",
    "test_flag.py",
    "test_local_runs.py",
    "test_remote_fit.py",
    "test_v2_output.py",
]

collect_ignore = V2_ONLY if sdk_major() != 2 else []
