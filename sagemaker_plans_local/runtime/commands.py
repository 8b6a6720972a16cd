"""What one instance of a run starts: its command line and environment.

A ``ContainerEntrypoint`` job's command runs in its view (:mod:`.views`): the
instance's tree at ``/opt/ml``, the instances' names in ``/etc/hosts``, its
own hostname. A script-mode job's instance starts what the toolkit's launcher
for the job starts (:mod:`.launchers`), in a view with the names and the
hostname (no ``/opt/ml``: its paths are mapped) when it has more than one
instance or a distributed launcher, and this machine gives views.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

import attrs

from sagemaker_plans_local.runtime import launchers, systems, views
from sagemaker_plans_local.runtime.contract import CONTAINER_CWD, InstanceContract
from sagemaker_plans_local.runtime.environments import REQUIREMENTS, VirtualEnvironments, activated

#: The virtualenv's directory: in the job's directory (script mode) or the instance's (container).
VENV = "venv"
#: Fills a script-mode job's virtualenv: (venv, requirements, env) -> (its python, the script's env).
Installer = Callable[[Path, Path, dict], tuple[str, dict]]


class Environments(Protocol):
    """What the executor gives every instance: its Python, virtualenvs and base environments."""

    python: str
    environments: VirtualEnvironments

    def script_environment(self, contract: InstanceContract) -> dict[str, str]: ...

    def container_environment(self, contract: InstanceContract) -> dict[str, str]: ...


@attrs.frozen
class Network:
    """A run's hosts file, mpirun's agent, and whether processes get their view here."""

    hosts: Path
    agent: Path
    viewed: bool

    @property
    def base(self) -> Path:
        """The run's directory (the instances' directories are in it)."""
        return self.hosts.parent


@attrs.frozen
class Command:
    """An instance's process; with ``leader`` set it starts nothing and waits for that host's end."""

    argv: list[str]
    env: dict[str, str]
    leader: str | None = None


def command_of(
    executor: Environments, contract: InstanceContract, home: Path, network: Network, install: Installer
) -> Command:
    """The instance's command once the virtualenv in ``home`` is ready.

    A script-mode job's instances share one (``home`` is the job's directory,
    ``install`` serialises them). A container's own installs run on every
    instance, as on SageMaker, so each has its own (``home`` is the instance's).
    """
    tree, venv = contract.tree, home / VENV
    if contract.command is not None:
        executor.environments.ensure(venv)
        system = systems.System(tree.system)
        system.prepare()
        env = systems.environment(executor.container_environment(contract), network.base)
        argv = views.launcher(
            contract.command,
            opt_ml=tree.opt_ml,
            cache=contract.warm_pool_cache,
            cwd=CONTAINER_CWD,
            hosts=network.hosts,
            hostname=contract.host.name,
            system=system,
        )
        return Command(argv, activated(env, venv))
    env, python = executor.script_environment(contract), executor.python
    requirements = tree.code / REQUIREMENTS
    if requirements.is_file():
        python, env = install(venv, requirements, env)
    training_env = contract.training_env()
    launch = launchers.launch(training_env, python, contract.argv(python)[1:], env, network.agent)
    if launch.runner != launchers.PROCESS or launchers.pytorch_image(contract.job.spec):
        env.update(launchers.pytorch_environment(training_env))
    env.update(launch.env)
    if launch.argv is None:
        return Command([], env, leader=str(training_env["master_hostname"]))
    argv = launch.argv
    if network.viewed and (len(contract.hosts) > 1 or launch.runner != launchers.PROCESS):
        argv = views.launcher(argv, hosts=network.hosts, hostname=contract.host.name)
    return Command(argv, env)
