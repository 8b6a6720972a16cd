"""The root of the domain: one account's state across regions, on one clock."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

from .clock import VirtualClock
from .settings import Settings
from .timeline import JobScript
from .training_jobs import TrainingJobs

DEFAULT_SCRIPT = JobScript()


class Region:
    """Everything one region of the account holds."""

    def __init__(self, name: str, emulation: "Emulation") -> None:
        self.name = name
        self.training_jobs = TrainingJobs(
            emulation.clock, emulation.settings, name, emulation.account_id,
            cache_root=emulation.root / "warm-pool-cache" / name,
            script_for=emulation.script_for)


class Emulation:
    """Clock, settings, job scripts and per-region state, guarded by one lock."""

    def __init__(self, account_id: str, root: Path, start_time: datetime | None) -> None:
        self.lock = threading.RLock()
        self.account_id = account_id
        self.root = root
        self.clock = VirtualClock(start_time, self.lock)
        self.settings = Settings()
        self._scripts: dict[str, JobScript] = {}
        self._regions: dict[str, Region] = {}

    def region(self, name: str) -> Region:
        region = self._regions.get(name)
        if region is None:
            with self.lock:
                region = self._regions.setdefault(name, Region(name, self))
        return region

    def script_for(self, job_name: str) -> JobScript:
        return self._scripts.get(job_name, DEFAULT_SCRIPT)

    def script_job(self, job_name: str, script: JobScript) -> None:
        with self.lock:
            self._scripts[job_name] = script
            for region in self._regions.values():
                region.training_jobs.rescript(job_name)
