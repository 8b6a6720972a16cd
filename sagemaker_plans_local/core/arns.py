"""Amazon Resource Names for the resources the backend owns, in the region's partition."""

from __future__ import annotations

import re

#: An account id: 12 ASCII digits (``\d`` would take any script's digits, ``$`` a trailing newline).
_ACCOUNT_ID = re.compile(r"[0-9]{12}")

#: Region-name prefixes of the partitions other than ``aws`` (longest first), as AWS names them.
_PARTITIONS = (
    ("us-isob-", "aws-iso-b"),
    ("us-isof-", "aws-iso-f"),
    ("eu-isoe-", "aws-iso-e"),
    ("us-iso-", "aws-iso"),
    ("us-gov-", "aws-us-gov"),
    ("eusc-", "aws-eusc"),
    ("cn-", "aws-cn"),
)


def partition(region: str) -> str:
    """The partition ``region`` belongs to: ``aws-cn`` for ``cn-north-1``, ``aws`` for ``us-east-1``.

    A global service's pseudo-region names its partition: ``aws-cn-global`` (IAM in China).
    """
    if region.startswith("aws") and region.endswith("-global"):
        return region.removesuffix("-global")
    for prefix, name in _PARTITIONS:
        if region.startswith(prefix):
            return name
    return "aws"


def is_account_id(text: object) -> bool:
    """Whether ``text`` is an AWS account id: exactly 12 ASCII digits, nothing before or after."""
    return isinstance(text, str) and _ACCOUNT_ID.fullmatch(text) is not None


def account_id(text: str) -> str:
    """``text`` if it is an account id (:func:`is_account_id`), else a ValueError."""
    if not is_account_id(text):
        raise ValueError(f"an account id is 12 digits (0-9), not {text!r}")
    return text


def arn(region: str, service: str, account_id: str, resource: str, regional: bool = True) -> str:
    """``arn:<partition>:<service>:<region>:<account>:<resource>``; IAM's have no region (``regional=False``)."""
    return f"arn:{partition(region)}:{service}:{region if regional else ''}:{account_id}:{resource}"


def sagemaker_arn(region: str, account_id: str, resource_type: str, name: str) -> str:
    """``arn:<partition>:sagemaker:<region>:<account>:<type>/<name>`` (SageMaker lowercases names)."""
    return arn(region, "sagemaker", account_id, f"{resource_type}/{name.lower()}")
