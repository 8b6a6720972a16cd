"""``Estimator`` (SDK v2 only): ``sagemaker.estimator.Estimator`` with a local ``Session`` by default."""

from __future__ import annotations

from typing import Any

import sagemaker.estimator
import sagemaker.session

from sagemaker_plans_local.sdk.v2.session import default_session


class Estimator(sagemaker.estimator.Estimator):
    """The SDK's generic Estimator; without ``sagemaker_session`` it gets the process's shared
    local session (``default_session()``; a new AWS session when ``SAGEMAKER_PLANS_LOCAL=0``)."""

    def __init__(
        self, *args: Any, sagemaker_session: sagemaker.session.Session | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, sagemaker_session=sagemaker_session or default_session(), **kwargs)
