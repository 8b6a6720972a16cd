"""``Estimator``: SDK v2's generic Estimator with a local ``Session``; SDK v3 has ``ModelTrainer`` instead."""

from __future__ import annotations

from sagemaker_plans_local.sdk.major import sdk_major

V3_MESSAGE = (
    "sagemaker_plans_local.Estimator needs SageMaker Python SDK v2; SDK {major} has no Estimator. "
    "Use sagemaker.train.ModelTrainer(..., sagemaker_session=sagemaker_plans_local.Session()) "
    "(see docs/sdk.md)."
)


def estimator_class() -> type:
    """Our ``Estimator`` (ImportError naming ``ModelTrainer`` under SDK v3)."""
    major = sdk_major()
    if major != 2:
        raise ImportError(V3_MESSAGE.format(major=major), name="Estimator")
    from sagemaker_plans_local.sdk.v2.estimator import Estimator

    return Estimator


def __getattr__(name: str):
    if name == "Estimator":
        return estimator_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
