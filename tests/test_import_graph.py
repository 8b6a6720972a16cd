"""The package's import graph: acyclic, and the domain free of boto3 and of the outer layers.

The graph is built with ``ast`` from every module of ``sagemaker_plans_local``.
An edge is any import statement naming a module of the package: at module
level, inside functions, and inside ``if TYPE_CHECKING:`` blocks alike (a
circle hidden from the interpreter still ties the modules together). Relative
imports are resolved. ``from package import name`` points at
``package.name`` when that is a module, else at ``package``; the implicit
import of a module's parent packages is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sagemaker_plans_local

PACKAGE = "sagemaker_plans_local"
ROOT = Path(sagemaker_plans_local.__file__).parent

#: The layers, outer to inner (docs/architecture.md); an import never points outward.
LAYERS = (
    (
        "public surface",
        lambda m: m in (PACKAGE, "__main__", "pytest_plugin") or m.startswith(("sdk", "server", "cli")),
    ),
    (
        "facade",
        lambda m: (
            m in ("backend", "backend_root", "backend_state", "service_registry")
            or m.startswith(("durable", "inspection", "simulation"))
        ),
    ),
    ("transport", lambda m: m.startswith("transport")),
    ("runtime", lambda m: m.startswith("runtime")),
    ("protocol and service APIs", lambda m: m.startswith("protocol") or m in SERVICE_APIS or ".api" in m),
    ("core", lambda m: m.startswith("core")),
)
#: The service modules that answer a protocol (beside each service's ``api``).
SERVICE_APIS = ("services.s3.protocol", "services.s3.rules", "services.iam_sts.iam", "services.iam_sts.sts")
DOMAIN_DEPTH = len(LAYERS) - 1  # between the service APIs and the core

#: The domain: plain Python on the core, answering no protocol and knowing no transport.
DOMAIN = (
    "core",
    "services.sagemaker.jobs",
    "services.sagemaker.warm_pools",
    "services.sagemaker.plans",
    "services.sagemaker.clusters",
    "services.sagemaker.tags",
    "services.sagemaker.statuses",
    "services.sagemaker.region",
    "services.s3.objects",
    "services.s3.object_*",
    "services.s3.bucket_tags",
    "services.tagging.resources",
    "services.logs.streams",
)
FORBIDDEN_IN_DOMAIN = ("protocol", "transport", "backend", "sdk")
FORBIDDEN_DISTRIBUTIONS = ("boto3", "botocore")


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((PACKAGE, *parts))] = path
    return modules


MODULES = _modules()


def _imports(module: str, path: Path) -> set[str]:
    """Every absolute module name an import statement of ``module`` names (resolved, deduplicated)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                names.add(sub if sub in MODULES else base)
    return names


def _short(name: str) -> str:
    return name.removeprefix(PACKAGE + ".")


GRAPH = {
    _short(module): {_short(name) for name in _imports(module, path) if name in MODULES and name != module}
    for module, path in MODULES.items()
}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` (as its modules in order), or None if it is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def _in_domain(module: str) -> bool:
    for entry in DOMAIN:
        if entry.endswith("*"):
            if module.startswith(entry[:-1]):
                return True
        elif module == entry or module.startswith(entry + "."):
            return True
    return False


def test_the_graph_sees_hidden_imports():
    # pools.py once imported job_records only under TYPE_CHECKING; execution.py still does.
    assert "services.sagemaker.jobs.job_records" in GRAPH["services.sagemaker.jobs.execution"]
    assert "runtime.supervisor" in GRAPH["runtime.processes"]  # a function-level import


def test_the_package_has_no_import_circle():
    assert _cycle(GRAPH) is None


def _depth(module: str) -> float:
    """0 for the public surface, growing inward; the domain sits just above the core."""
    for depth, (_, member) in enumerate(LAYERS):
        if member(module):
            return depth if depth < DOMAIN_DEPTH else depth + 0.5
    return DOMAIN_DEPTH


def test_imports_point_inward():
    outward = sorted((m, t) for m, targets in GRAPH.items() for t in targets if _depth(t) < _depth(m))
    assert outward == []


def test_the_layers_are_told_apart():
    assert _depth("sdk.v3.waits") < _depth("backend") < _depth("transport.service_hook")
    assert _depth("transport.service_hook") < _depth("runtime.executor") < _depth("protocol.service")
    assert _depth("services.sagemaker.api.training_jobs") < _depth("services.sagemaker.jobs.training_jobs")
    assert _depth("services.sagemaker.jobs.training_jobs") < _depth("core.clock")


def test_the_domain_imports_neither_boto_nor_the_outer_layers():
    offending = {}
    for module, path in MODULES.items():
        if not _in_domain(_short(module)):
            continue
        names = _imports(module, path)
        bad = {name for name in names if name.split(".")[0] in FORBIDDEN_DISTRIBUTIONS}
        bad |= {
            name
            for name in names
            if name.startswith(PACKAGE + ".")
            and any(
                _short(name) == layer or _short(name).startswith(layer + ".") for layer in FORBIDDEN_IN_DOMAIN
            )
        }
        if bad:
            offending[_short(module)] = sorted(bad)
    assert offending == {}


def test_the_domain_imports_only_the_domain_and_core_only_core():
    outside = {
        module: sorted(target for target in targets if not _in_domain(target))
        for module, targets in GRAPH.items()
        if _in_domain(module)
    }
    assert {module: targets for module, targets in outside.items() if targets} == {}
    beyond_core = {
        module: sorted(target for target in targets if target != "core" and not target.startswith("core."))
        for module, targets in GRAPH.items()
        if module == "core" or module.startswith("core.")
    }
    assert {module: targets for module, targets in beyond_core.items() if targets} == {}


def test_the_domain_list_names_real_modules():
    for entry in DOMAIN:
        assert any(_in_domain(module) and module.startswith(entry.rstrip("*")) for module in GRAPH), entry
