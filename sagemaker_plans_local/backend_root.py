"""A backend's root directory: a given one is kept (and may be shared); a temporary one is removed."""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from sagemaker_plans_local.core.root_files import DIRECTORY_MODE


class BackendRoot:
    """The root directory of one backend: ``path``, and whether the backend made it (``owned``).

    An owned (temporary) root may be given to ``LocalBackend(root=...)`` by whoever made it (a
    server): its emulation is then made ``created`` then (None: when the backend is made), or
    resumed from the state ``backend_state.suspend`` left in it (``kept`` meanwhile).
    """

    def __init__(self, path: str | os.PathLike | None, created: datetime | None = None) -> None:
        self.owned = path is None
        self.created = created
        #: An owned root kept past its backend's close, holding that backend's suspended state.
        self.kept = False
        if path is None:
            self.path = Path(tempfile.mkdtemp(prefix="sagemaker-plans-local-"))
        else:
            self.path = Path(path).absolute()  # once, here: processes in other directories use it
            self.path.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)  # private when made here

    def release(self) -> None:
        """Let the root go, removing it if the backend made it (called once, by the backend's close)."""
        if self.owned and not self.kept:
            shutil.rmtree(self.path, ignore_errors=True)

    def discard(self) -> None:
        """Remove an owned root, kept or not (a suspended state no backend will resume)."""
        self.kept = False
        self.release()
