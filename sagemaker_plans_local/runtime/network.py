"""The instances' network: one loopback address per instance, and the ``/etc/hosts`` naming them.

Every address of ``127.0.0.0/8`` reaches this machine's loopback interface
(Linux), so a job's instances ``algo-1..algo-N`` get ``127.X.Y.1..N``: a
``/24`` of their own (consecutive ones past 254 instances), chosen per run
and never given to two runs of this process at once. A socket bound to
``algo-2`` on one instance and connected from another meets, as on SageMaker,
and two jobs running at once each have their own ``algo-1``. The names
resolve through a per-run copy of this machine's ``/etc/hosts`` with one line
per instance, which the instance's view (:mod:`.namespace`) mounts on
``/etc/hosts``.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Sequence

#: The interface the addresses are on (what a local launcher must name; resourceconfig.json says eth0).
LOOPBACK_INTERFACE = "lo"
#: Blocks of 254 addresses: 127.X.Y.0/24 for X in 1..254, Y in 0..255 (127.0.0.0/16 left to the machine).
BLOCKS = 254 * 256
PER_BLOCK = 254
MACHINE_HOSTS = Path("/etc/hosts")


def block_address(block: int, index: int) -> str:
    """Address of instance ``index`` (0-based) in the run whose first block is ``block``."""
    block, offset = block + index // PER_BLOCK, index % PER_BLOCK
    return f"127.{1 + block // 256}.{block % 256}.{1 + offset}"


class AddressBlocks:
    """Hands out address blocks to runs; a random first block, so two processes rarely meet."""

    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._next = random.Random(seed).randrange(BLOCKS)
        self._taken: set[int] = set()

    def reserve(self, count: int) -> int:
        """The first of ``ceil(count / 254)`` consecutive free blocks (released with :meth:`release`)."""
        need = max(1, -(-count // PER_BLOCK))
        with self._lock:
            for _ in range(BLOCKS):
                first = self._next % (BLOCKS - need + 1)
                self._next = first + need
                blocks = set(range(first, first + need))
                if not blocks & self._taken:
                    self._taken |= blocks
                    return first
        raise RuntimeError("no free loopback address block")

    def release(self, first: int, count: int) -> None:
        need = max(1, -(-count // PER_BLOCK))
        with self._lock:
            self._taken -= set(range(first, first + need))


def hosts_file(names: Sequence[str], block: int, machine: Path = MACHINE_HOSTS) -> str:
    """This machine's ``/etc/hosts`` followed by one ``<address> <name>`` line per instance."""
    try:
        base = machine.read_text()
    except OSError:
        base = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    if base and not base.endswith("\n"):
        base += "\n"
    lines = [f"{block_address(block, i)}\t{name}\n" for i, name in enumerate(names)]
    return base + "# the job's instances (sagemaker-plans-local)\n" + "".join(lines)
