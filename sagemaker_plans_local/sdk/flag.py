"""The one switch: ``SAGEMAKER_PLANS_LOCAL=0`` sends everything of the SDK layer to AWS."""

from __future__ import annotations

import os

#: ``0`` sends sessions, activations, the CLI and the fixtures' sessions to AWS; anything else keeps them local.
FLAG = "SAGEMAKER_PLANS_LOCAL"


def local_by_default() -> bool:
    """False when the flag is ``0`` (surrounding spaces ignored), True otherwise."""
    return os.environ.get(FLAG, "1").strip() != "0"
