"""tests/sdk_v3 runs under SDK v3 only (collected nowhere else, so no env reports skips).

``sagemaker.train`` creates boto3 clients when imported (``AIRHub``) and so
needs a configured region: it is imported here with one, which is then
taken back so that no other test sees it.
"""

import os

from sagemaker_plans_local.sdk.major import sdk_major

if sdk_major() < 3:
    collect_ignore_glob = ["test_*.py"]
else:
    _previous = os.environ.get("AWS_DEFAULT_REGION")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    try:
        import sagemaker.ai_registry.air_hub  # noqa: F401
        import sagemaker.train.model_trainer  # noqa: F401
    finally:
        if _previous is None:
            del os.environ["AWS_DEFAULT_REGION"]
