"""``/opt/ml`` on this machine: an instance's local tree and the mapping of ``/opt/ml`` paths onto it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import attrs

OPT_ML = "/opt/ml"
WARM_POOL_CACHE = "/opt/ml/sagemaker/warmpoolcache"
_OPT_ML = re.compile(r"(?<![\w./~-])/opt/ml(/sagemaker/warmpoolcache)?(?=/|$|[^\w.~-])")


@attrs.frozen
class PathMapper:
    """Rewrites ``/opt/ml`` paths onto an instance's local tree.

    ``/opt/ml/sagemaker/warmpoolcache`` goes to the warm-pool chain's cache
    directory. A path is rewritten where it starts a string or follows a
    character that cannot be part of a path (``:``, ``=``, a space, a quote...),
    so ``PATH``-style lists and JSON-encoded strings are mapped too, and
    ``s3://bucket/opt/ml`` is not.
    """

    opt_ml: Path
    warm_pool_cache: Path

    def text(self, value: str) -> str:
        def replace(match: re.Match) -> str:
            return str(self.warm_pool_cache) if match.group(1) else str(self.opt_ml)

        return _OPT_ML.sub(replace, value)

    def value(self, value: Any) -> Any:
        """Map every string inside a decoded (JSON) value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value

    def path(self, value: str) -> Path:
        return Path(self.text(value))


# -- the instance tree --------------------------------------------------------------
@attrs.frozen
class InstanceTree:
    """One instance's directory: ``opt/ml`` (the contract's tree) and scratch space."""

    root: Path

    @property
    def opt_ml(self) -> Path:
        return self.root / "opt" / "ml"

    @property
    def input(self) -> Path:
        return self.opt_ml / "input"

    @property
    def input_config(self) -> Path:
        return self.input / "config"

    @property
    def input_data(self) -> Path:
        return self.input / "data"

    @property
    def model(self) -> Path:
        return self.opt_ml / "model"

    @property
    def output(self) -> Path:
        return self.opt_ml / "output"

    @property
    def output_data(self) -> Path:
        return self.output / "data"

    @property
    def output_intermediate(self) -> Path:
        return self.output / "intermediate"

    @property
    def failure_file(self) -> Path:
        return self.output / "failure"

    @property
    def code(self) -> Path:
        return self.opt_ml / "code"

    @property
    def checkpoints(self) -> Path:
        return self.opt_ml / "checkpoints"

    @property
    def own_warm_pool_cache(self) -> Path:
        """Where ``/opt/ml/sagemaker/warmpoolcache`` points when the job has no warm pool."""
        return self.opt_ml / "sagemaker" / "warmpoolcache"

    @property
    def scratch(self) -> Path:
        return self.root / "scratch"

    @property
    def system(self) -> Path:
        """A container instance's own system files (``runtime/systems.py``)."""
        return self.root / "system"

    def channel(self, name: str) -> Path:
        return self.input_data / name

    def reset(self) -> None:
        """A fresh ``/opt/ml`` and scratch space, as a reused warm-pool instance gets."""
        for stale in (self.opt_ml, self.scratch, self.system):
            if stale.exists():
                shutil.rmtree(stale)
        for directory in (
            self.input_config,
            self.input_data,
            self.model,
            self.output_data,
            self.code,
            self.scratch,
        ):
            directory.mkdir(parents=True, exist_ok=True)
