"""The cyclic garbage collector paused while a root's state is rebuilt (a replay, a snapshot's load).

Both make many objects and no garbage, and the collector would walk them over
and over: a third of a long replay's time. Pauses nest across threads; the
collector is enabled again (if it was) when the last one ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

_gc_lock = threading.Lock()
_gc_pauses = 0  # blocks running with the collector paused
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector in the block: a long replay makes many objects and no garbage."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()
