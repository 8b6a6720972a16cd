"""On-demand prices of SageMaker training instances, for the cost report (docs/cost-report.md).

The bundled list (``sagemaker_plans_local/data/training_prices.json``) is
illustrative: its ``source`` and ``date`` say where the figures come from. A
file of the same shape replaces it: :meth:`TrainingPrices.from_file`, or the
environment variable ``SAGEMAKER_PLANS_LOCAL_PRICES`` naming one. A type the
list does not name has no price (``None``), never a made-up one.
"""

from __future__ import annotations

import functools
import json
import os
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import attrs

PRICES_VARIABLE = "SAGEMAKER_PLANS_LOCAL_PRICES"
CURRENCY = "USD"
CENT = Decimal("0.01")
_SECONDS_PER_HOUR = Decimal(3600)


class PriceFileError(ValueError):
    """A price file that cannot be read or does not have the price list's shape."""


def to_cent(amount: Decimal) -> Decimal:
    """``amount`` rounded to the cent, halves up (the report rounds each item so)."""
    return amount.quantize(CENT, ROUND_HALF_UP)


@attrs.frozen
class TrainingPrices:
    """Per-instance-hour on-demand USD prices of training instance types; ``source``/``date``: their origin."""

    per_instance_hour: Mapping[str, Decimal]
    source: str
    date: str = ""

    @classmethod
    def default(cls) -> "TrainingPrices":
        """The bundled illustrative list."""
        return _bundled()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "TrainingPrices":
        """The list in the JSON file ``path`` (the bundled file's shape); PriceFileError if it is not one."""
        try:
            data = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as error:
            raise PriceFileError(f"cannot read price file {str(path)!r}: {error}") from None
        return cls.from_json(data, f"user supplied: {path}")

    @classmethod
    def from_environment(cls) -> "TrainingPrices":
        """The file named by ``SAGEMAKER_PLANS_LOCAL_PRICES`` if set (and not empty), else the bundled list."""
        path = os.environ.get(PRICES_VARIABLE)
        return cls.from_file(path) if path else cls.default()

    @classmethod
    def from_json(cls, data: Any, origin: str) -> "TrainingPrices":
        """The list in parsed JSON ``data``; ``origin`` is the source when ``data`` names none."""
        if not isinstance(data, dict) or not isinstance(data.get("per_instance_hour"), dict):
            raise PriceFileError(f"{origin}: a price file is an object with a 'per_instance_hour' object")
        currency = data.get("currency", CURRENCY)
        if currency != CURRENCY:
            raise PriceFileError(f"{origin}: prices must be in {CURRENCY}, not {currency!r}")
        prices = {str(kind): _price(origin, kind, value) for kind, value in data["per_instance_hour"].items()}
        return cls(prices, str(data.get("source", origin)), str(data.get("date", "")))

    def price(self, instance_type: str) -> Decimal | None:
        """The hourly price of one ``instance_type`` instance, or None: no price."""
        return self.per_instance_hour.get(instance_type)

    def amount(self, instance_type: str, count: int, seconds: int) -> Decimal | None:
        """``count`` instances for ``seconds``, to the cent (ROUND_HALF_UP); None: no price."""
        hourly = self.price(instance_type)
        return None if hourly is None else to_cent(hourly * count * seconds / _SECONDS_PER_HOUR)


def _price(origin: str, kind: object, value: object) -> Decimal:
    try:
        price = (
            Decimal(str(value))
            if isinstance(value, (str, int, float)) and not isinstance(value, bool)
            else None
        )
    except InvalidOperation:
        price = None
    if price is None or not price.is_finite() or price < 0:
        raise PriceFileError(f"{origin}: the price of {kind!r} is not a non-negative number: {value!r}")
    return price


@functools.lru_cache(maxsize=None)
def _bundled() -> TrainingPrices:
    text = (resources.files("sagemaker_plans_local") / "data" / "training_prices.json").read_text("utf-8")
    return TrainingPrices.from_json(json.loads(text), "bundled")
