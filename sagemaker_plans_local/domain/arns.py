"""Amazon Resource Names for the resources the backend owns."""

from __future__ import annotations


def partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def sagemaker_arn(region: str, account_id: str, resource_type: str, name: str) -> str:
    """``arn:aws:sagemaker:<region>:<account>:<type>/<name>`` (SageMaker lowercases names)."""
    return f"arn:{partition(region)}:sagemaker:{region}:{account_id}:{resource_type}/{name.lower()}"
