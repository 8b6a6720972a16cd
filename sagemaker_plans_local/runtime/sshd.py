"""A container instance's ``sshd``: it listens, and says where, so its instance counts as reachable.

Run as ``python -I -S sshd.py <instance's system directory> [sshd options]`` (standard
library only), which is what ``/usr/sbin/sshd`` runs in a container's view. It
listens on its instance's address (its hostname, ``algo-<i>``, resolved through
the view's ``/etc/hosts``) on a port the system gives it, writes that port to
``sshd.port`` in the directory, and accepts and closes connections until it is
killed. In the foreground with ``-D``, else it forks (as ``sshd`` does) and the
parent exits 0. It speaks no SSH: what a job runs on another instance goes
through the view's ``ssh`` (:mod:`.remote_shell`), and paramiko's check of
port 22 is answered by :func:`up` (``instance_site/sitecustomize.py``).
"""

from __future__ import annotations

import os
import socket
import sys

PORT_FILE = "sshd.port"


def up(host: str, system: str, timeout: float = 30.0) -> bool:
    """Whether ``host``'s sshd listens: its port is written and a connection to it is accepted."""
    try:
        with open(os.path.join(system, PORT_FILE)) as handle:
            port = int(handle.read().strip())
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def serve(system: str, foreground: bool) -> None:
    """Listen on this instance's address and publish the port; accept until killed."""
    server = socket.create_server((socket.gethostbyname(socket.gethostname()), 0))
    if not foreground and os.fork() != 0:
        os._exit(0)
    path = os.path.join(system, PORT_FILE)
    with open(path + ".tmp", "w") as handle:
        handle.write(str(server.getsockname()[1]))
    os.replace(path + ".tmp", path)
    while True:
        connection, _ = server.accept()
        connection.close()


if __name__ == "__main__":
    serve(sys.argv[1], "-D" in sys.argv[2:])
