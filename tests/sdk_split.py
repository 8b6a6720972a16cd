"""Which tests can depend on the SageMaker Python SDK major: the ``sdk`` marker.

``make test`` runs the whole suite under the default major (v3) and, under the other
(v2), only the tests marked ``sdk``: every test runs on every major it can differ on.
The package answers the same without an SDK (``installed_major()`` is read only by
``LocalBackend.activate()``, which enters the SDK layer, and by ``sdk/``), so a test
can differ by major only where it reaches the SDK. A test is ``sdk`` when

- it is under ``tests/sdk/`` or ``tests/sdk_v3/``, or marked ``@pytest.mark.sdk``;
- its own code (its function, or its class), a fixture it uses (``sagemaker_session``
  among them), or its module's imports and helpers reach the SDK: an import of
  ``sagemaker`` or ``sagemaker_plans_local.sdk``, the package's SDK names
  (``Session``, ``Estimator``, ``activate``, ``activated``), a call of ``.activate()``,
  or Python source in a string (run in a subprocess) importing either package.

The rules read the tests' source (``ast``), so a new test is classified as it is written;
``tests/test_sdk_split.py`` checks them on the suite.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SDK_FOLDERS = (TESTS / "sdk", TESTS / "sdk_v3")
#: The package's names that load the SDK layer (``sagemaker_plans_local/__init__.py``).
SDK_NAMES = frozenset({"Session", "Estimator", "activate", "activated"})
#: Python source in a string (run in a subprocess) that imports the SDK or our SDK layer.
SDK_SOURCE = re.compile(
    r"\b(?:import\s+(?:[\w.]+\s*,\s*)*|from\s+)sagemaker(?!\w)|sagemaker_plans_local\.sdk\b"
    r"|\bfrom\s+sagemaker_plans_local\s+import\s+[^\n;]*\b(?:Session|Estimator|activate|activated)\b"
)


def _sdk_module(name: str) -> bool:
    return name == "sagemaker" or name.startswith(("sagemaker.", "sagemaker_plans_local.sdk"))


def touches_sdk(tree: ast.AST) -> bool:
    """Whether code (a parsed node) reaches the SDK, by the rules above."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_sdk_module(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module:
            if _sdk_module(node.module):
                return True
            if node.module == "sagemaker_plans_local" and any(
                alias.name in SDK_NAMES for alias in node.names
            ):
                return True
        if isinstance(node, ast.Attribute) and node.attr == "activate":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SDK_SOURCE.search(node.value):
                return True
    return False


@functools.lru_cache(maxsize=None)
def _module_units(path: Path) -> tuple[bool, dict[str, bool]]:
    """(whether the module's own imports and helpers reach the SDK, {test function or class: reaches it})."""
    tree = ast.parse(path.read_text(), str(path))
    units, shared = {}, False
    for node in tree.body:
        named = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if named and node.name.startswith(("test", "Test")):
            units[node.name] = touches_sdk(node)
        elif touches_sdk(node):
            shared = True
    return shared, units


@functools.lru_cache(maxsize=None)
def _fixture_touches_sdk(function) -> bool:
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
    except (OSError, TypeError):  # no source to read: count it in
        return True
    return touches_sdk(ast.parse(source))


def sdk_dependent(item: pytest.Item) -> bool:
    """Whether ``item`` can depend on the SDK major (see the module docstring)."""
    path = Path(str(item.path)).resolve()
    if item.get_closest_marker("sdk") or any(folder in path.parents for folder in SDK_FOLDERS):
        return True
    if path.suffix == ".py":
        shared, units = _module_units(path)
        cls = getattr(item, "cls", None)
        name = cls.__name__ if cls is not None else getattr(item, "originalname", item.name)
        if shared or units.get(name, False):
            return True
    infos = getattr(item, "_fixtureinfo", None)
    definitions = infos.name2fixturedefs.values() if infos is not None else ()
    return any(_fixture_touches_sdk(d.func) for defs in definitions for d in defs)


def mark_sdk_tests(items: list[pytest.Item]) -> None:
    """Add the ``sdk`` marker to every item that can depend on the SDK major."""
    for item in items:
        if sdk_dependent(item) and not item.get_closest_marker("sdk"):
            item.add_marker(pytest.mark.sdk)
