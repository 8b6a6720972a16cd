"""Upfront fees of training plans: a per-instance-hour price list."""

from __future__ import annotations

import functools
import json
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources
from typing import Mapping

import attrs

CENT = Decimal("0.01")
_MICROSECONDS_PER_HOUR = Decimal(3_600_000_000)


def _decimal_prices(prices: Mapping[str, object]) -> dict[str, Decimal]:
    return {kind: Decimal(str(price)) for kind, price in prices.items()}


def _optional_decimal(value: object) -> Decimal | None:
    return None if value is None else Decimal(str(value))


@attrs.frozen
class PriceList:
    """Per-instance-hour prices in USD; ``source`` says where the figures come from.

    ``unlisted`` prices instance types the list does not name (new types the
    SageMaker model adds); without it such a type is a KeyError.
    """

    prices: Mapping[str, Decimal] = attrs.field(converter=_decimal_prices)
    source: str = "user supplied"
    unlisted: Decimal | None = attrs.field(default=None, converter=_optional_decimal)

    @classmethod
    def default(cls) -> "PriceList":
        """The bundled illustrative prices (``sagemaker_plans_local/data/plan_prices.json``)."""
        return _bundled()

    def per_instance_hour(self, instance_type: str) -> Decimal:
        """The hourly price of one instance; KeyError for a type the list does not price."""
        try:
            return self.prices[instance_type]
        except KeyError:
            if self.unlisted is not None:
                return self.unlisted
            raise KeyError(
                f"no training plan price for instance type {instance_type!r}; "
                f"priced types: {', '.join(sorted(self.prices))}"
            ) from None

    def fee(self, instance_type: str, count: int, duration: timedelta) -> Decimal:
        """Price of ``count`` instances for ``duration`` (fractional hours count), to the cent."""
        hours = Decimal(duration // timedelta(microseconds=1)) / _MICROSECONDS_PER_HOUR
        return (hours * count * self.per_instance_hour(instance_type)).quantize(CENT, ROUND_HALF_UP)


@functools.lru_cache(maxsize=None)
def _bundled() -> PriceList:
    text = (resources.files("sagemaker_plans_local") / "data" / "plan_prices.json").read_text("utf-8")
    data = json.loads(text)
    return PriceList(data["per_instance_hour"], data["source"], data.get("unlisted_per_instance_hour"))
