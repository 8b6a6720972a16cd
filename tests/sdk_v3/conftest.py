"""tests/sdk_v3 runs under SDK v3 only (collected nowhere else, so no env reports skips).

``sagemaker.train`` creates boto3 clients when imported (``AIRHub``), so a
region must be configured before the test modules import it.
"""

import os

from sagemaker_plans_local.sdk.major import sdk_major

if sdk_major() < 3:
    collect_ignore_glob = ["test_*.py"]
else:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
