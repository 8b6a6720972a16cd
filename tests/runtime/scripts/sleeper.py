"""Prints 'ready' then sleeps; --ignore-term ignores SIGTERM; --save writes the model on SIGTERM."""

import signal
import sys
import time

if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
