"""Leaves sleepers behind: one in a new session, one double-forked (and in a new session too).

Each sleeper appends its pid to ``--pids``; then this script appends its own
pid and its parent's, prints ``ready``, and exits after ``--stay`` seconds.
``--ignore-term``: the sleepers ignore SIGTERM (only SIGKILL ends them).
"""

import argparse
import os
import signal
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--pids", required=True)
parser.add_argument("--stay", type=float, default=0)
parser.add_argument("--ignore-term", default="False")
args = parser.parse_args()


def record(pid: int) -> None:
    fd = os.open(args.pids, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{pid}\n".encode())
    os.close(fd)


def sleep_forever() -> None:
    if args.ignore_term == "True":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.setsid()
    record(os.getpid())
    time.sleep(600)
    os._exit(0)


def recorded() -> int:
    try:
        with open(args.pids) as handle:
            return len(handle.read().split())
    except FileNotFoundError:
        return 0


if os.fork() == 0:  # a child in a new session
    sleep_forever()
if os.fork() == 0:  # a double fork: the middle process exits at once
    if os.fork() == 0:
        sleep_forever()
    os._exit(0)
while recorded() < 2:
    time.sleep(0.01)
record(os.getpid())
record(os.getppid())
print("ready", flush=True)
time.sleep(args.stay)
sys.exit(0)
