"""Section 15: the memory of many accounts, each touched once over HTTP (issue 29, item 9).

A fresh ``sagemaker-plans-local serve`` (no ``--root``, a manual clock) in a child process of
its own, its temporary directories in a directory of the benchmark's. Each of ``count`` distinct
12-digit access key ids (each its own account) sends one ListTrainingJobs over one keep-alive
connection; then the server is left alone until its resident memory settles. The table gives the
server's resident memory (``VmRSS``, Linux) after a warm-up in the default account ("before"),
its peak (``VmHWM``) and once idle, and the disk its temporary directories hold. A second run
does the same with one CreateBucket per account (an account with state: suspended on disk once
idle rather than dropped). Target (issue 29): at most 300 MB once 10,000 accounts touched once
are idle; on 843a0fb 5,000 such accounts took the server from 64 to 901 MB, and kept it.

``python benchmarks/bench_accounts.py [--quick]`` runs this section alone.
"""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_measure import table, verdict

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
TARGET_MB = 300
FIRST = 500_000_000_000  # the first account id
SCOPE = "AWS4-HMAC-SHA256 Credential={key}/20260101/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=0"
LIST = {"X-Amz-Target": "SageMaker.ListTrainingJobs", "Content-Type": "application/x-amz-json-1.1"}


class _Server:
    """``sagemaker-plans-local serve`` in a child process; its temporary files under ``temporary``."""

    def __init__(self, temporary: Path) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "TMPDIR": str(temporary),
        }
        command = [sys.executable, "-m", "sagemaker_plans_local", "serve", "--port", "0"]
        command += ["--start-time", "2026-01-01T00:00:00Z", "--no-run-code"]
        self.temporary = temporary
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if "serving on" not in line:
            self.process.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        host, port = line.rsplit("//", 1)[1].strip().rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=600)

    def memory_mb(self, field: str) -> float:
        """``VmRSS`` or ``VmHWM`` of the server process, in MB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024 / MB
        return float("nan")

    def settled_mb(self, seconds: float = 20.0) -> float:
        """The resident memory once it stops moving (two readings a second apart within 1 MB)."""
        deadline, last = time.monotonic() + seconds, self.memory_mb("VmRSS")
        while time.monotonic() < deadline:
            time.sleep(1.0)
            now = self.memory_mb("VmRSS")
            if abs(now - last) < 1.0:
                return now
            last = now
        return last

    def disk_mb(self) -> float:
        total = 0
        for folder, _, files in os.walk(self.temporary):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    continue
        return total / MB

    def send(self, method: str, path: str, key: str, service: str, headers: dict, body: bytes) -> int:
        headers = {**headers, "Authorization": SCOPE.format(key=key, service=service)}
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        response.read()
        return response.status

    def stop(self) -> None:
        self.connection.close()
        self.process.terminate()
        self.process.wait(timeout=120)


def _touch(server: _Server, account: str, state: bool) -> int:
    if state:
        return server.send("PUT", f"/bench-{account}", account, "s3", {}, b"")
    return server.send("POST", "/", account, "sagemaker", LIST, b"{}")


def _row(count: int, state: bool) -> list[str]:
    temporary = Path(tempfile.mkdtemp(prefix="bench-accounts-"))
    server = _Server(temporary)
    try:
        for _ in range(20):  # the modules of the operation loaded, in the default account
            _touch(server, "123456789012", False)
        before = server.settled_mb()
        started = time.perf_counter()
        statuses = {_touch(server, str(FIRST + number), state) for number in range(count)}
        seconds = time.perf_counter() - started
        peak, idle, disk = server.memory_mb("VmHWM"), server.settled_mb(), server.disk_mb()
    finally:
        server.stop()
        shutil.rmtree(temporary, ignore_errors=True)
    what = "CreateBucket" if state else "ListTrainingJobs"
    return [f"{count:,} accounts, one {what} each", ",".join(map(str, sorted(statuses))),
            f"{seconds / count * 1000:.1f}", f"{before:.0f}", f"{peak:.0f}", f"{idle:.0f}", f"{disk:.1f}",
            verdict(idle <= TARGET_MB)]  # fmt: skip


def run_accounts(count: int, with_state: int) -> None:
    """Section 15 (module docstring)."""
    print("\n== 15. Many accounts touched once over HTTP: the server's memory ==")
    if not Path("/proc/self/status").exists():
        print("(no /proc: resident memory needs Linux; skipped)")
        return
    rows = [_row(count, state=False), _row(with_state, state=True)]
    headers = ["run", "answers", "ms/account", "RSS before MB", "peak MB", "idle MB", "disk MB"]
    print(table([*headers, f"idle <= {TARGET_MB} MB"], rows))


if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    run_accounts(count=200 if quick else 10_000, with_state=100 if quick else 2_000)
