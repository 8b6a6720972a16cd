"""The house rules on the package's shape: no module over 400 lines, no function over 50."""

from __future__ import annotations

import ast
from pathlib import Path

import sagemaker_plans_local

PACKAGE = Path(sagemaker_plans_local.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def test_no_module_is_over_400_lines():
    sizes = {_name(path): len(path.read_text("utf-8").splitlines()) for path in MODULES}
    assert {name: lines for name, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}


def test_no_function_is_over_50_lines():
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{_name(path)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_the_walk_sees_the_whole_package():
    names = {_name(path) for path in MODULES}
    assert {"backend.py", "services/sagemaker/jobs/lifecycle.py", "services/s3/api.py"} <= names
    assert len(names) > 100
