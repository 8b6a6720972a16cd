"""The cyclic garbage collector paused while a root's state is rebuilt (a replay, a snapshot's load).

Both make many objects and no garbage, and the collector would walk them over
and over: a third of a long replay's time. Pauses nest across threads; the
collector is enabled again (if it was) when the last one ends.

A loaded snapshot is long-lived state: walked by the three collections that follow its load
(young, middle, then the oldest generation), a 30,000-job state costs as much again as its
load. ``gc_paused(keep=True)`` moves what exists once it ends well out of the collector's
generations (``gc.freeze``); :func:`thaw` (a durable backend's close) gives it back, so that a
closed state's cycles are collected.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

_gc_lock = threading.Lock()
_gc_pauses = 0  # blocks running with the collector paused
_gc_was_enabled = False
_gc_keep = False  # a block asked that what it made be frozen when the last pause ends


@contextlib.contextmanager
def gc_paused(keep: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector in the block: a long replay makes many objects and no garbage.

    ``keep``: what the block made is long-lived; frozen (not walked again) if the block ends well.
    """
    global _gc_pauses, _gc_was_enabled, _gc_keep
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    ended_well = False
    try:
        yield
        ended_well = True
    finally:
        with _gc_lock:
            _gc_keep = _gc_keep or (keep and ended_well)
            _gc_pauses -= 1
            if _gc_pauses == 0:
                if _gc_keep:
                    gc.freeze()
                _gc_keep = False
                if _gc_was_enabled:
                    gc.enable()


def thaw() -> None:
    """Give what :func:`gc_paused` froze back to the collector (its oldest generation)."""
    with _gc_lock:
        gc.unfreeze()
